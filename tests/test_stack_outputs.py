"""Issue 21: the stack's outputs are one resource of the state; `platform.subscriptionOutputs: summary` keeps the
`subscriptions` output to counts (`maas/plan/outputs.py`)."""

from __future__ import annotations

import json

import yaml

from bench.render_scale import configuration
from maas.config import load_config
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.outputs import with_subscription_entries
from maas.tools.diffing.sides import render_side
from maas.tools.explaining.world import world_of
from maas.tools.render import render


def test_summary_exports_counts_and_the_plan_keeps_each_subscriptions_identity(dev_raw):
    dev_raw["platform"]["subscriptionOutputs"] = "summary"
    rendering = render(dev_raw)
    plan = rendering.plan.outputs["subscriptions"]
    identities = {"legacy": 2, "short": 5}  # the dev stack's premium-legacy and legacy-team
    assert rendering.stack_outputs["subscriptions"] == {"count": 7, "rateLimitIdentity": identities}
    assert sorted(entry["rateLimitIdentity"] for entry in plan.values()) == ["legacy"] * 2 + ["short"] * 5
    assert all(set(entry) == {"rateLimitIdentity"} for entry in plan.values())  # no entry is built
    assert rendering.stack_outputs["models"] == rendering.plan.outputs["models"]  # the others are exported whole


def test_under_summary_explain_and_diff_read_the_entries_full_would_export(dev_raw, tmp_path):
    full = render(dev_raw).plan.outputs
    dev_raw["platform"]["subscriptionOutputs"] = "summary"
    summarised = render(dev_raw).plan.outputs
    entries = with_subscription_entries(load_config(dev_raw), Observed.nothing(), summarised)
    assert entries == full
    assert world_of(dev_raw, "dev", Observed.nothing()).outputs == full
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": {f"maas:{key}": value for key, value in dev_raw.items()}}))
    assert render_side("HEAD", path, "dev", Observed.nothing()).outputs == full


def test_under_summary_and_a_scope_the_entries_are_the_scopes(dev_raw):
    dev_raw["platform"] |= {"subscriptionOutputs": "summary", "scope": "tenant:redteam"}
    summarised = render(dev_raw).plan.outputs
    entries = with_subscription_entries(load_config(dev_raw), Observed.nothing(), summarised)["subscriptions"]
    assert list(entries) == list(summarised["subscriptions"])
    assert list(entries) == ["ai-tenant-redteam/redteam-eval"] and "models" in entries["ai-tenant-redteam/redteam-eval"]


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
