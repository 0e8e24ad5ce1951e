# Two entry points a fresh machine needs: `make render` and `make test`. Both create .venv on first use.
# Recipes are silent and installing writes to stderr only, so `make render > objects.yaml` holds the objects alone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STACK ?= dev
FORMAT ?= yaml

.PHONY: install render validate test lint bench

install: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	@echo "make: installing requirements.txt into $(VENV) (created if missing; the first time takes a few minutes)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(PY) -m pip install --disable-pip-version-check -r requirements.txt >&2
	@touch $@

render: $(VENV)/.installed
	@$(PY) -m maas render --stack $(STACK) --format $(FORMAT)

validate: $(VENV)/.installed
	@$(PY) -m maas validate --stack $(STACK)

lint: $(VENV)/.installed
	@$(PY) -m ruff check .
	@$(PY) -m ruff format --check .

test: lint
	@$(PY) -m pytest -q

bench: $(VENV)/.installed
	@$(PY) bench/render_scale.py
	@$(PY) bench/plan_profile.py
	@$(PY) bench/gateway_budget.py
	@$(PY) bench/state_growth.py
	@$(PY) bench/tenants.py
	@$(PY) bench/simulator.py
	@$(PY) bench/status_writes.py
	@$(PY) bench/plan_scale.py
	@$(PY) bench/scale_goals.py
