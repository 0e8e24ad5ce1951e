"""Same configuration in any order of entries: byte-identical objects, so a preview shows no spurious diff."""

from __future__ import annotations

import copy
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from maas.config import load_config
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.tools.render import render

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
