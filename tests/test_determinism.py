"""Same configuration in any order of entries: byte-identical objects, so a preview shows no spurious diff; and
the same bytes whichever YAML emitter prints them."""

from __future__ import annotations

import copy
import json
import random

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from maas.config import load_config, raw_from_stack_file
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.tools.cli import dump
from maas.tools.render import render
from tests.conftest import DEV_STACK, ROOT

LISTS = ("tenants", "models", "authPolicies", "subscriptions", "unmanaged")


def shuffled(raw: dict, rng: random.Random) -> dict:
    """Every list of the configuration in a random order, down to rates, model references and subjects."""
    raw = copy.deepcopy(raw)

    def walk(value):
        if isinstance(value, list):
            rng.shuffle(value)
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                walk(item)

    for key in LISTS:
        walk(raw.get(key, []))
    return raw


def plan_text(raw: dict) -> str:
    plan = build_plan(load_config(raw), Observed.nothing())
    return json.dumps([(o.kind, o.name, [d.body for d in o.objects], o.outputs) for o in plan.owners]) + json.dumps(
        plan.outputs
    )


@settings(max_examples=40, deadline=None)
@given(st.randoms(use_true_random=False))
def test_shuffled_configuration_plans_identical_objects_and_outputs(dev_raw_static, rng):
    assert plan_text(shuffled(dev_raw_static, rng)) == plan_text(dev_raw_static)


@settings(max_examples=5, deadline=None)
@given(st.randoms(use_true_random=False))
def test_shuffled_configuration_renders_byte_identical_objects(dev_raw_static, rng):
    expected = json.dumps(render(dev_raw_static).objects())
    assert json.dumps(render(shuffled(dev_raw_static, rng)).objects()) == expected


def test_duplicate_rates_do_not_change_the_policy(dev_raw_static):
    raw = copy.deepcopy(dev_raw_static)
    rates = raw["subscriptions"][0]["modelRefs"][0]["tokenRateLimits"]
    rates.extend(copy.deepcopy(rates))
    assert plan_text(raw) == plan_text(dev_raw_static)


STACKS = [DEV_STACK, *sorted((ROOT / "tests" / "stacks").glob("*.yaml"))]


@pytest.fixture(scope="module")
def stack_documents() -> dict[str, list]:
    """Every object and status document of every test stack, as `render --status` prints them."""
    documents = {}
    for path in STACKS:
        rendering = render(raw_from_stack_file(path)[0])
        documents[path.name] = rendering.objects() + rendering.statuses()
    return documents


def pure_python_yaml(objects: list) -> str:
    return yaml.dump_all(objects, Dumper=yaml.SafeDumper, sort_keys=False, default_flow_style=False, width=4096)


def test_libyaml_prints_the_bytes_pure_python_pyyaml_prints_on_every_test_stack(stack_documents):
    """The stream `render` prints. (`--out` files keep PyYAML's own emitter: at their default width of 80 columns
    libyaml folds long quoted strings, a CEL predicate for one, at other places.)"""
    assert yaml.__with_libyaml__, "PyYAML without libyaml: nothing to compare"
    for name, objects in stack_documents.items():
        assert dump(objects, "yaml") == pure_python_yaml(objects), name


def test_without_libyaml_the_same_bytes_come_from_pure_python_pyyaml(stack_documents, monkeypatch):
    objects = stack_documents[DEV_STACK.name]
    expected = pure_python_yaml(objects)
    monkeypatch.delattr(yaml, "CSafeDumper")
    assert dump(objects, "yaml") == expected
