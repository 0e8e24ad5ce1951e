"""The levers a gateway near its budget is offered (issue 20, item 6): each evaluated with the size model on this
configuration, printed with the bytes and the percent it leaves, best first; a lever that does not apply or does
not shrink the gateway is left out. Every figure is checked against the plan of the configuration changed as the
lever says."""

from __future__ import annotations

import copy

import pytest

from maas.config import ConfigError, load_config
from maas.observe import Observed, Scope
from maas.plan.build import build_plan
from maas.plan.gateway import BUDGET
from maas.tools.render import render
from tests.test_gateway_budget import gateway_object

GATEWAY = "openshift-ingress/maas-default-gateway"
RESEARCH = "openshift-ingress/research"


def model(name: str, namespace: str = "llm", **extra: object) -> dict:
    return {"name": name, "namespace": namespace, "modelRef": {"kind": "LLMInferenceService", "name": name}, **extra}


def subscription(name: str, *models: str, window: str = "1m", identity: str = "short", **extra: object) -> dict:
    refs = [{"name": m, "namespace": "llm", "tokenRateLimits": [{"limit": 100, "window": window}]} for m in models]
    owner = {"groups": [{"name": name}]}
    return {"name": name, "owner": owner, "modelRefs": refs, "rateLimitIdentity": identity, **extra}


def observed_gateway(*listeners: str) -> Observed:
    return Observed.of([gateway_object(*listeners)], listed=[Scope("Gateway", "openshift-ingress")])


def gateways(raw: dict, observed: Observed | None = None) -> dict:
    raw = {**raw, "platform": {"gatewayBudget": "warn", **raw.get("platform", {})}}
    return build_plan(load_config(raw), observed or Observed.nothing()).outputs["gateways"]


def levers(raw: dict, observed: Observed | None = None, gateway: str = GATEWAY) -> list[dict]:
    return gateways(raw, observed)[gateway]["levers"]


def budget_warning(raw: dict) -> str:
    plan = build_plan(load_config({**raw, "platform": {"gatewayBudget": "warn"}}), Observed.nothing())
    (warning,) = [w for w in plan.warnings if "wasm configuration" in w]
    return warning


# ------------------------------------------------------------------- the issue's 40-model configuration


def forty_models() -> dict:
    """40 KServe models on the default gateway, each with one subscription at 100/1m: every limit has one member,
    so the compact `in ["…"]` list is 2 bytes longer than `== "…"`, in both actions of each of 19 matches."""
    names = [f"model{i:02d}" for i in range(40)]
    return {
        "models": [model(name) for name in names],
        "subscriptions": [subscription(f"team-{i:02d}", name) for i, name in enumerate(names)],
    }


def test_the_40_model_configuration_where_compact_grows_the_gateway_is_not_offered_compact():
    raw = forty_models()
    default = gateways(raw)[GATEWAY]
    compact = gateways({**raw, "platform": {"predicateFormat": "compact"}})[GATEWAY]
    assert default["bytes"] > BUDGET
    assert compact["bytes"] - default["bytes"] == 40 * 19 * 2 * 2  # the issue's 1,574,187 -> 1,577,227 (+3,040)
    offered = [lever["lever"] for lever in default["levers"]]
    assert not [text for text in offered if "predicateFormat" in text]
    assert not [text for text in offered if "legacy" in text]  # every subscription is short
    warning = budget_warning(raw)
    assert "predicateFormat: compact leaves" not in warning and "retire legacy identities" not in warning


def test_over_the_budget_the_error_names_the_levers_that_help_with_their_figures():
    with pytest.raises(ConfigError) as caught:
        render(forty_models())
    (issue,) = [str(i) for i in caught.value.issues]
    assert "to shrink it, each lever alone as measured on this configuration, best first: (1) move the " in issue
    assert "predicateFormat: compact leaves" not in issue and "retire legacy identities" not in issue
    assert issue.endswith("; or set maas:platform.gatewayBudget: warn to update anyway")


def test_the_fewest_heaviest_models_that_bring_the_gateway_under_80_percent_move_to_a_new_tenant():
    (move,) = levers(forty_models())
    assert move["lever"].startswith("move the 9 largest models (llm/model00, llm/model01, llm/model02 and 6 more) ")
    assert move["lever"].endswith(" to a new tenant's gateway (maas:models[].tenant)")
    assert move["destination"] is None
    assert move["percent"] < 80 and move["destinationPercent"] < 80
    assert move["percent"] == round(100 * move["bytes"] / BUDGET, 1)
    eight = forty_models()
    eight["models"] = eight["models"][8:]  # one model fewer moved stays over 80 %
    assert gateways(eight)[GATEWAY]["percent"] >= 80


def test_no_legacy_subscription_no_retire_legacy_lever_and_a_legacy_one_gets_it():
    short = forty_models()
    assert not [lever for lever in levers(short) if "legacy" in lever["lever"]]
    legacy = copy.deepcopy(short)
    legacy["subscriptions"][3]["rateLimitIdentity"] = "legacy"
    (retire,) = [lever for lever in levers(legacy) if "legacy" in lever["lever"]]
    assert "on the 1 legacy subscription with models here (models-as-a-service/team-03, " in retire["lever"]
    retired = gateways(short)[GATEWAY]["bytes"]
    assert retire["bytes"] == retired < gateways(legacy)[GATEWAY]["bytes"]


def test_a_lever_that_does_not_shrink_the_gateway_is_left_out_and_none_left_says_so():
    raw = {"models": [model("granite", route={"hostnames": [f"h{i:03d}.example.com" for i in range(45)]})]}
    raw["subscriptions"] = [subscription("gold", "granite")]  # one member: compact would grow it
    assert levers(raw) == []
    assert "; none of the levers (maas:platform.predicateFormat: compact, moving models" in budget_warning(raw)


# ------------------------------------------------------------------------------- every lever at once


def every_lever() -> tuple[dict, Observed]:
    """8 models on a gateway with two listeners of one hostname, a second tenant, 24 subscriptions of every model,
    a third legacy, half at 100/60s and half at 100/1m."""
    names = [f"m{i}" for i in range(8)]
    subscriptions = [
        subscription(f"team-{i:02d}", *names, window="1m" if i % 2 else "60s", identity="legacy" if i % 3 else "short")
        for i in range(24)
    ]
    raw = {
        "tenants": [{"name": "models-as-a-service"}, {"name": "research"}],
        "models": [*(model(n) for n in names), model("qwen", "research-models", tenant="research")],
        "subscriptions": subscriptions,
    }
    return raw, observed_gateway("https", "http")


def test_each_lever_that_helps_shows_its_bytes_and_percent_best_first():
    raw, observed = every_lever()
    found = levers(raw, observed)
    assert [lever["lever"].split(" ", 2)[:2] for lever in found] == [
        ["move", "the"],
        ["one", "listener"],
        ["retire", "legacy"],
        ["write", "rate"],
        ["maas:platform.predicateFormat:", "compact"],
    ]
    assert [lever["bytes"] for lever in found][1:] == sorted(lever["bytes"] for lever in found[1:])
    ranks = [max(lever["bytes"], lever.get("destinationBytes") or 0) for lever in found]
    assert ranks == sorted(ranks) and ranks[-1] < gateways(raw, observed)[GATEWAY]["bytes"]
    for lever in found:
        assert lever["percent"] == round(100 * lever["bytes"] / BUDGET, 1)
    plan = build_plan(load_config({**raw, "platform": {"gatewayBudget": "warn"}}), observed)
    (warning,) = [w for w in plan.warnings if "wasm configuration" in w]
    shown = warning.split("best first: ", 1)[1]
    assert shown.startswith(f"(1) {found[0]['lever']} leaves {found[0]['bytes']} bytes ({found[0]['percent']}%) here ")
    assert (
        f"(5) maas:platform.predicateFormat: compact leaves {found[4]['bytes']} bytes ({found[4]['percent']}%)" in shown
    )


def test_each_figure_is_the_plan_of_the_configuration_changed_as_the_lever_says():
    raw, observed = every_lever()
    by_verb = {lever["lever"].split(" ")[0]: lever for lever in levers(raw, observed)}

    def size(changed: dict, seen: Observed = observed) -> int:
        return gateways(changed, seen)[GATEWAY]["bytes"]

    compact = {**raw, "platform": {"predicateFormat": "compact"}}
    assert by_verb["maas:platform.predicateFormat:"]["bytes"] == size(compact)
    short = copy.deepcopy(raw)
    for entry in short["subscriptions"]:
        entry["rateLimitIdentity"] = "short"
    assert by_verb["retire"]["bytes"] == size(short)
    alike = copy.deepcopy(raw)
    for entry in alike["subscriptions"]:
        for ref in entry["modelRefs"]:
            ref["tokenRateLimits"] = [{"limit": 100, "window": "1m"}]
    assert by_verb["write"]["bytes"] == size(alike)
    assert "100/60s as 100/1m on 8 models (llm/m0, llm/m1, llm/m2 and 5 more)" in by_verb["write"]["lever"]
    # the one listener each route keeps: as if the Gateway had no other (listener names enter hashes only)
    assert by_verb["one"]["bytes"] == size(raw, observed_gateway("https"))
    assert "now also copied into http" in by_verb["one"]["lever"]


def test_a_move_to_another_tenant_leaves_both_gateways_as_the_configuration_after_it_would():
    names = [f"m{i}" for i in range(6)]
    raw = {
        "tenants": [{"name": "models-as-a-service"}, {"name": "research"}],
        "models": [*(model(n) for n in names), model("qwen", "research-models", tenant="research")],
        "subscriptions": [subscription(f"team-{i}", n) for i, n in enumerate(names)]
        + [subscription(f"extra-{i:03d}", "m0") for i in range(400)],
    }
    compact, move = levers(raw)
    assert compact["lever"] == "maas:platform.predicateFormat: compact"  # leaves less than the move leaves there
    assert move["lever"] == (
        "move the largest model (llm/m0) to tenant research's gateway openshift-ingress/research (maas:models[].tenant)"
    )
    assert move["destination"] == RESEARCH and compact["bytes"] < move["destinationBytes"]
    moved = copy.deepcopy(raw)
    moved["models"][0]["tenant"] = "research"
    for entry in moved["subscriptions"]:  # a tenant's subscriptions live in its namespace
        if entry["modelRefs"][0]["name"] == "m0":
            entry["namespace"] = "ai-tenant-research"
    after = gateways(moved)
    assert (move["bytes"], move["destinationBytes"]) == (after[GATEWAY]["bytes"], after[RESEARCH]["bytes"])
    assert after[GATEWAY]["percent"] < 80 and after[RESEARCH]["percent"] < 80


def test_one_tenant_one_listener_one_spelling_only_short_ids_offer_a_new_tenant_and_compact():
    names = [f"m{i}" for i in range(8)]
    raw = {"models": [model(n) for n in names], "subscriptions": [subscription(f"t{i:02d}", *names) for i in range(48)]}
    texts = [lever["lever"] for lever in levers(raw)]
    assert [text.split(" ")[0] for text in texts] == ["maas:platform.predicateFormat:", "move"]
    assert texts[1] == "move the largest model (llm/m0) to a new tenant's gateway (maas:models[].tenant)"


def test_a_policy_pulumi_leaves_alone_counts_as_it_is_live_whatever_the_lever():
    raw = {
        "models": [model("a", route={"hostnames": [f"h{i}.example.com" for i in range(12)]}), model("b")],
        "subscriptions": [subscription(f"team-{i:02d}", "a", "b") for i in range(30)],
    }
    assert [lever["lever"].split(" ")[0] for lever in levers(raw)] == ["maas:platform.predicateFormat:", "move"]
    planned = build_plan(load_config(raw), Observed.nothing()).objects()
    live = [copy.deepcopy(obj.body) for obj in planned if obj.kind == "TokenRateLimitPolicy" and obj.namespace == "llm"]
    for body in live:  # the live opt-out: Pulumi leaves them as they are
        body["metadata"]["annotations"] = {"opendatahub.io/managed": "false"}
    observed = Observed.of(live, listed=[Scope("TokenRateLimitPolicy", "llm")])
    assert [lever["lever"].split(" ")[0] for lever in levers(raw, observed)] == ["move"]


def test_levers_are_evaluated_from_80_percent_and_reuse_what_the_report_built():
    from maas.plan.gateway.budget import Sizing
    from maas.plan.gateway.levers import Levers
    from maas.plan.policies.identity import effective_identities
    from maas.plan.policies.ratelimit import plan_rate_limits

    raw, observed = every_lever()
    config = load_config({**raw, "platform": {"gatewayBudget": "warn"}})
    plan = build_plan(config, observed)
    sizing = Sizing(config, plan, observed)
    budget = next(b for b in sizing.budgets() if b.key == GATEWAY)
    first = Levers(sizing, plan_rate_limits(config, effective_identities(config, observed).of)).of(budget)
    assert [lever.output() for lever in first] == plan.outputs["gateways"][GATEWAY]["levers"]
    assert sizing.measure(sizing.gateway(*GATEWAY.split("/"))) == budget  # measuring again changes nothing
    assert "levers" not in plan.outputs["gateways"][RESEARCH]


# ------------------------------------------------------------- the compact lever, derived from the plan's measure


def unlimited_in_both_generations() -> dict:
    """`tokens-unlimited` holding a legacy and a short member (two `in` lists when compact), beside rate limits of
    both generations on one rate set (`tokens-…` and `tokens-…-id`)."""
    raw = {"models": [model("a"), model("b")], "subscriptions": []}
    for i, identity in enumerate(["legacy", "short", "legacy", "short", "short"]):
        entry = subscription(f"team-{i}", "a", "b", identity=identity)
        if i < 2:
            entry["modelRefs"][0] = {"name": "a", "namespace": "llm", "unlimited": True}
        raw["subscriptions"].append(entry)
    return raw


def live_opt_out_of_one_model() -> tuple[dict, Observed]:
    """Model a's policy left alone as it is live (counted so whatever the format), model b's written by the plan."""
    raw = {"models": [model("a"), model("b")], "subscriptions": [subscription(f"t{i}", "a", "b") for i in range(6)]}
    planned = build_plan(load_config(raw), Observed.nothing()).objects()
    (live,) = [copy.deepcopy(o.body) for o in planned if o.kind == "TokenRateLimitPolicy" and o.name == "maas-trlp-a"]
    live["metadata"]["annotations"] = {"opendatahub.io/managed": "false"}
    return raw, Observed.of([live], listed=[Scope("TokenRateLimitPolicy", "llm")])


def compact_cases() -> list[tuple[str, dict, Observed]]:
    from bench.render_scale import configuration
    from maas.config import raw_from_stack_file
    from tests.conftest import DEV_STACK, ROOT
    from tests.enforcement import generated_stack

    stacks = [DEV_STACK, *sorted((ROOT / "tests" / "stacks").glob("*.yaml"))]
    cases = [(path.name, raw_from_stack_file(path)[0], Observed.nothing()) for path in stacks]
    cases += [(f"generated-{seed}", generated_stack(seed), Observed.nothing()) for seed in range(4)]
    mixed = configuration(300, "short", model_count=20)
    for entry in mixed["subscriptions"][::3]:
        entry["rateLimitIdentity"] = "legacy"
    cases += [("300 subscriptions, a third legacy", mixed, Observed.nothing())]
    cases += [("unlimited in both generations", unlimited_in_both_generations(), Observed.nothing())]
    wasm_plugin = {**unlimited_in_both_generations(), "platform": {"kuadrantVersion": "1.4.6"}}  # not embedded
    cases += [("Kuadrant 1.4, a WasmPlugin", wasm_plugin, Observed.nothing())]
    cases += [("every lever", *every_lever()), ("one model live", *live_opt_out_of_one_model())]
    return [*cases, ("forty models, compact grows", forty_models(), Observed.nothing())]


def derived_and_planned_compact(raw: dict, observed: Observed) -> list[tuple[str, int, int, int]]:
    """Per Gateway the compact lever applies to: its bytes, the lever's (derived from the plan's measurement), and
    the bytes of the plan of the configuration in the compact format (measured from its own policies)."""
    from maas.plan.gateway.budget import Sizing
    from maas.plan.gateway.levers import Levers
    from maas.plan.policies.identity import effective_identities
    from maas.plan.policies.ratelimit import plan_rate_limits

    config = load_config(raw)
    sizing = Sizing(config, build_plan(config, observed), observed)
    levers = Levers(sizing, plan_rate_limits(config, effective_identities(config, observed).of))
    compact = gateways({**raw, "platform": {**raw.get("platform", {}), "predicateFormat": "compact"}}, observed)
    found = []
    for budget in sizing.budgets():
        lever = levers._compact(sizing.gateway(budget.namespace, budget.name), budget)
        if lever is not None:
            found.append((budget.key, budget.bytes, lever.bytes, compact[budget.key]["bytes"]))
    return found


@pytest.mark.parametrize(("name", "raw", "observed"), [pytest.param(*case, id=case[0]) for case in compact_cases()])
def test_the_compact_lever_derived_from_each_predicate_is_the_compact_configurations_own_measure(name, raw, observed):
    found = derived_and_planned_compact(raw, observed)
    assert [(key, derived) for key, _, derived, _ in found] == [(key, planned) for key, _, _, planned in found]
    if raw.get("platform", {}).get("predicateFormat") == "compact":
        assert not found  # nothing to change
    if name == "forty models, compact grows":
        ((_, before, derived, _),) = found
        assert derived > before  # and so it is left out (test_the_40_model_configuration_where_compact_grows…)
    if name == "one model live":
        ((_, before, derived, _),) = found
        all_compact = gateways({**raw, "platform": {"predicateFormat": "compact"}})[GATEWAY]["bytes"]
        assert all_compact < derived < before  # model b's limits only
