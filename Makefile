# Two entry points a fresh machine needs: `make render` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STACK ?= dev
FORMAT ?= yaml

.PHONY: render test lint bench

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

render: $(VENV)/.installed
	$(PY) -m maas render --stack $(STACK) --format $(FORMAT)

lint: $(VENV)/.installed
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

test: lint
	$(PY) -m pytest -q

bench: $(VENV)/.installed
	$(PY) bench/render_scale.py
	$(PY) bench/tenants.py
