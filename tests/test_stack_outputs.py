"""Issue 21: the stack's outputs are one resource of the state; `platform.subscriptionOutputs: summary` keeps the
`subscriptions` output to counts (`maas/plan/outputs.py`)."""

from __future__ import annotations

import json

from bench.render_scale import configuration
from maas.config import load_config
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.tools.render import render


def test_summary_exports_counts_and_the_plan_keeps_every_subscription(dev_raw):
    dev_raw["platform"]["subscriptionOutputs"] = "summary"
    rendering = render(dev_raw)
    plan = rendering.plan.outputs["subscriptions"]
    identities = {"legacy": 2, "short": 5}  # the dev stack's premium-legacy and legacy-team
    assert rendering.stack_outputs["subscriptions"] == {"count": 7, "rateLimitIdentity": identities}
    assert sorted(entry["rateLimitIdentity"] for entry in plan.values()) == ["legacy"] * 2 + ["short"] * 5
    assert all("models" in entry for entry in plan.values())  # what maas explain reads
    assert rendering.stack_outputs["models"] == rendering.plan.outputs["models"]  # the others are exported whole


def test_full_is_the_default_and_exports_each_subscription(dev_raw):
    rendering = render(dev_raw)
    assert rendering.stack_outputs["subscriptions"] == rendering.plan.outputs["subscriptions"]


def test_a_full_output_over_1_mb_is_a_warning_naming_the_setting():
    raw = configuration(2000, "short")
    raw["platform"]["subscriptionOutputs"] = "full"
    plan = build_plan(load_config(raw), Observed.nothing())
    size = len(json.dumps(plan.outputs["subscriptions"], separators=(",", ":")))
    assert size > 1024 * 1024
    [warning] = [w for w in plan.warnings if w.startswith("the stack output subscriptions is ")]
    assert f"{size / 1e6:.1f} MB (2000 subscriptions)" in warning
    assert "maas:platform.subscriptionOutputs: summary" in warning
    raw["platform"]["subscriptionOutputs"] = "summary"
    plan = build_plan(load_config(raw), Observed.nothing())
    assert not [w for w in plan.warnings if w.startswith("the stack output subscriptions is ")]
