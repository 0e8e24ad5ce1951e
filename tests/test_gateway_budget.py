"""The gateway budget at preview: a line per Gateway, the largest contributors, a warning from 80 %, an error above
100 % that registers nothing (unless `platform.gatewayBudget: warn`), the `gateways` stack output, and which
routes and policies it counts (rendered, observed, KServe's template; live bodies of opted-out policies). The
levers the warning and the error name are `test_budget_levers.py`'s."""

from __future__ import annotations

import re

import pulumi
import pytest

from maas.config import ConfigError, load_config
from maas.observe import Observed, Scope
from maas.plan.build import build_plan
from maas.plan.gateway import BUDGET
from maas.tools.render import RecordingMonitor, render

GATEWAY = "openshift-ingress/maas-default-gateway"
LINE = re.compile(
    r"gateway (?P<gw>\S+): wasm config (?P<bytes>\d+) bytes \((?P<percent>\d+\.\d)% of 1\.5 MiB\), "
    r"(?P<sets>\d+) action sets, (?P<limits>\d+) limits"
)


def model(name: str, namespace: str = "llm", tenant: str | None = None, **extra: object) -> dict:
    entry = {"name": name, "namespace": namespace, "modelRef": {"kind": "LLMInferenceService", "name": name}, **extra}
    return {**entry, "tenant": tenant} if tenant else entry


def hosts(count: int) -> dict:
    """A route with `count` hostnames is copied `count` times into the gateway: a cheap way to grow it."""
    return {"hostnames": [f"h{i:03d}.example.com" for i in range(count)]}


def subscription(name: str, *models: str, rates: int = 100, identity: str = "short") -> dict:
    refs = [{"name": m, "namespace": "llm", "tokenRateLimits": [{"limit": rates, "window": "1m"}]} for m in models]
    return {"name": name, "owner": {"groups": [{"name": name}]}, "modelRefs": refs, "rateLimitIdentity": identity}


def plan_of(raw: dict, observed: Observed | None = None):
    return build_plan(load_config(raw), observed or Observed.nothing())


def budget_lines(plan) -> dict[str, re.Match]:
    return {m["gw"]: m for m in map(LINE.fullmatch, plan.notes) if m}


# ----------------------------------------------------------------------------------------------- the report


def test_each_gateway_gets_one_budget_line_and_a_stack_output():
    raw = {
        "tenants": [{"name": "models-as-a-service"}, {"name": "research"}],
        "models": [model("granite"), model("qwen", "research-models", tenant="research")],
        "subscriptions": [subscription("gold", "granite")],
    }
    plan = plan_of(raw)
    lines = budget_lines(plan)
    assert sorted(lines) == [GATEWAY, "openshift-ingress/research"]
    output = plan.outputs["gateways"][GATEWAY]
    assert set(output) == {"object", "bytes", "percent", "actionSets", "limits", "largest"}  # below 80 %: no levers
    assert output["object"] == "EnvoyFilter openshift-ingress/kuadrant-maas-default-gateway"
    line = lines[GATEWAY]
    assert (int(line["bytes"]), float(line["percent"]), int(line["sets"]), int(line["limits"])) == (
        output["bytes"],
        round(100 * output["bytes"] / BUDGET, 1),
        19 + 4,  # KServe's template route (19 matches) and the tenant's maas-api route (4 rules)
        1 + 1,  # granite's limit and the default deny on maas-api's route
    )


def test_the_largest_contributors_are_the_heaviest_models_first():
    raw = {
        "models": [model("light"), model("heavy")],
        "subscriptions": [subscription(f"s{i}", "heavy", rates=100 + i) for i in range(5)],
    }
    plan = plan_of(raw)
    largest = plan.outputs["gateways"][GATEWAY]["largest"]
    assert [c["name"] for c in largest] == [
        "model llm/heavy",
        "model llm/light",
        "HTTPRoute odh-ai-gateway-infra/maas-api-route",
    ]
    assert [(c["actionSets"], c["limits"]) for c in largest] == [(19, 5), (19, 1), (4, 1)]
    assert largest[0]["bytes"] > largest[1]["bytes"] > largest[2]["bytes"]
    gateway_notes = [note for note in plan.notes if note.startswith(f"gateway {GATEWAY}: ")]
    assert gateway_notes[1].startswith(f"gateway {GATEWAY}: largest model llm/heavy ")


def test_kuadrant_1_4_counts_the_wasmplugin_where_the_config_is_nested_not_a_string():
    raw = {"models": [model("granite")]}
    filter_bytes = plan_of(raw).outputs["gateways"][GATEWAY]["bytes"]
    plugin = plan_of({**raw, "platform": {"kuadrantVersion": "1.4"}}).outputs["gateways"][GATEWAY]
    assert plugin["object"] == "WasmPlugin openshift-ingress/kuadrant-maas-default-gateway"
    assert 1.07 < filter_bytes / plugin["bytes"] < 1.13  # the reference's 1.07-1.13 x


def test_compact_predicates_shrink_the_gateway():
    subscriptions = [subscription(f"team-{i:03d}", "granite") for i in range(60)]
    raw = {"models": [model("granite")], "subscriptions": subscriptions}
    default = plan_of(raw).outputs["gateways"][GATEWAY]["bytes"]
    compact = plan_of({**raw, "platform": {"predicateFormat": "compact"}}).outputs["gateways"][GATEWAY]["bytes"]
    assert compact < 0.75 * default


def test_legacy_identities_weigh_more_than_short_ids():
    short = plan_of({"models": [model("granite")], "subscriptions": [subscription("gold", "granite")]})
    legacy = plan_of(
        {"models": [model("granite")], "subscriptions": [subscription("gold", "granite", identity="legacy")]}
    )
    assert legacy.outputs["gateways"][GATEWAY]["bytes"] > short.outputs["gateways"][GATEWAY]["bytes"]


# ------------------------------------------------------------------------------------- what it counts


def route_object(name: str, namespace: str, paths: list[str]) -> dict:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "parentRefs": [{"name": "maas-default-gateway", "namespace": "openshift-ingress"}],
            "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": p}}]} for p in paths],
        },
    }


def gateway_object(*listeners: str) -> dict:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "maas-default-gateway", "namespace": "openshift-ingress", "uid": "1234"},
        "spec": {
            "gatewayClassName": "istio",
            "listeners": [{"name": n, "port": 443, "protocol": "HTTPS"} for n in listeners],
        },
    }


def test_an_observed_route_replaces_kserves_template_and_observed_listeners_multiply_it():
    raw = {"models": [model("granite")]}
    live_route = route_object("granite-kserve-route", "llm", ["/llm/granite"])
    listed = [Scope("HTTPRoute", "llm"), Scope("Gateway", "openshift-ingress")]
    one = plan_of(raw, Observed.of([live_route, gateway_object("https")], listed=listed))
    two = plan_of(raw, Observed.of([live_route, gateway_object("https", "http")], listed=listed))
    assert plan_of(raw).outputs["gateways"][GATEWAY]["actionSets"] == 19 + 4
    assert one.outputs["gateways"][GATEWAY]["actionSets"] == 1 + 4
    assert two.outputs["gateways"][GATEWAY]["actionSets"] == 2 * (1 + 4)


def test_no_template_route_for_an_llminferenceservice_the_snapshot_shows_absent():
    raw = {"models": [model("granite")]}
    plan = plan_of(raw, Observed.of([], listed=[Scope("LLMInferenceService", "llm"), Scope("HTTPRoute", "llm")]))
    assert plan.outputs["gateways"][GATEWAY]["actionSets"] == 4  # only maas-api's route


def test_other_live_routes_on_the_gateway_count_with_the_gateway_policies():
    raw = {"models": [model("granite")]}
    other = route_object("dashboard", "llm", ["/dashboard", "/dashboard/api"])
    plan = plan_of(raw, Observed.of([other], listed=[Scope("HTTPRoute", "llm")]))
    assert plan.outputs["gateways"][GATEWAY]["actionSets"] == 19 + 4 + 2
    assert "HTTPRoute llm/dashboard" in [c["name"] for c in plan.outputs["gateways"][GATEWAY]["largest"]]


def test_an_opted_out_policy_counts_as_it_is_live():
    raw = {"models": [model("granite")], "subscriptions": [subscription("gold", "granite")]}
    live = {
        "apiVersion": "kuadrant.io/v1alpha1",
        "kind": "TokenRateLimitPolicy",
        "metadata": {
            "name": "maas-trlp-granite",
            "namespace": "llm",
            "annotations": {"opendatahub.io/managed": "false"},
        },
        "spec": {
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "granite-kserve-route"},
            "limits": {
                f"old-{i}": {"rates": [{"limit": 1, "window": "1m"}], "when": [{"predicate": "true"}]} for i in range(3)
            },
        },
    }
    plan = plan_of(raw, Observed.of([live], listed=[Scope("TokenRateLimitPolicy", "llm")]))
    assert plan.outputs["gateways"][GATEWAY]["limits"] == 3 + 1  # its three live limits, and maas-api's default deny
    assert plan_of(raw).outputs["gateways"][GATEWAY]["limits"] == 1 + 1


def test_the_budget_of_a_scoped_stack_is_the_whole_configurations():
    raw = {
        "tenants": [{"name": "models-as-a-service"}, {"name": "research"}],
        "models": [model("granite"), model("qwen", "research-models", tenant="research")],
    }
    whole = plan_of(raw).outputs["gateways"]
    scoped = plan_of({**raw, "platform": {"scope": "tenant:research"}}).outputs["gateways"]
    assert scoped["openshift-ingress/research"] == whole["openshift-ingress/research"]


# ------------------------------------------------------------------------------- warning and error


def test_no_warning_below_80_percent_and_a_warning_from_it():
    below = plan_of({"models": [model("granite", route=hosts(30))]})
    near = plan_of({"models": [model("granite", route=hosts(40))]})
    assert float(budget_lines(below)[GATEWAY]["percent"]) < 80 <= float(budget_lines(near)[GATEWAY]["percent"]) <= 100
    assert not [w for w in below.warnings if "wasm configuration" in w]
    (warning,) = [w for w in near.warnings if "wasm configuration" in w]
    assert warning.startswith(
        f"gateway {GATEWAY}: the wasm configuration Kuadrant builds for it (EnvoyFilter "
        "openshift-ingress/kuadrant-maas-default-gateway) weighs "
    )
    assert "past the limit the gateway's policies stop updating; none of the levers (" in warning
    assert plan_of({"models": [model("granite", route=hosts(40))]}).outputs["gateways"][GATEWAY]["levers"] == []
    assert "levers" not in below.outputs["gateways"][GATEWAY]  # evaluated from 80 % only


def test_over_the_budget_the_update_stops_before_anything_is_registered():
    monitor = RecordingMonitor()
    with pytest.raises(ConfigError) as caught:
        render({"models": [model("granite", route=hosts(50))]}, monitor=monitor)
    assert monitor.registrations == []
    (issue,) = [str(i) for i in caught.value.issues]
    assert re.fullmatch(
        r"maas:platform\.gatewayBudget: gateway openshift-ingress/maas-default-gateway: the wasm configuration Kuadrant "
        r"builds for it \(EnvoyFilter openshift-ingress/kuadrant-maas-default-gateway\) weighs \d+ bytes, 1\d\d\.\d% of "
        r"the 1572864 bytes \(1\.5 MiB\) etcd stores per object; largest: model llm/granite \d+ bytes, HTTPRoute "
        r"odh-ai-gateway-infra/maas-api-route \d+ bytes; it is over the limit, so the API server would refuse the object "
        r"and the gateway's policies stop updating; none of the levers \(maas:platform\.predicateFormat: compact, "
        r"moving models to another tenant's gateway, .*\) applies to this configuration or shrinks it; fewer models, "
        r"hostnames, route matches or distinct rate sets on this gateway would; or set maas:platform\.gatewayBudget: "
        r"warn to update anyway",
        issue,
    )


def test_with_gateway_budget_warn_an_update_over_the_budget_goes_ahead_with_a_warning():
    raw = {"models": [model("granite", route=hosts(50))], "platform": {"gatewayBudget": "warn"}}
    rendering = render(raw)
    (warning,) = [w for w in rendering.warnings if "wasm configuration" in w]
    assert "it is over the limit and maas:platform.gatewayBudget is warn, so the update goes ahead" in warning
    outputs = pulumi.runtime.settings.get_root_resource().outputs
    assert outputs["gateways"][GATEWAY]["bytes"] > BUDGET


def test_the_preview_and_the_render_summary_show_each_gateways_budget_line(capsys):
    """`pulumi preview` prints the program's `pulumi.log.info` lines; `render` prints the same on stderr."""
    from maas.tools.cli import main
    from tests.conftest import DEV_STACK

    assert main(["render", "--config-file", str(DEV_STACK)]) == 0
    summary = capsys.readouterr().err
    raw = {"models": [model("granite")], "subscriptions": [subscription("gold", "granite")]}
    rendering = render(raw)
    assert rendering.infos == rendering.plan.notes
    assert [m.group("gw") for m in map(LINE.match, rendering.infos) if m] == [GATEWAY]
    dev_lines = [line for line in summary.splitlines() if LINE.match(line)]
    assert [LINE.match(line).group("gw") for line in dev_lines] == [GATEWAY, "openshift-ingress/redteam"]
