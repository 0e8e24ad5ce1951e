"""The gateway size model (`reference/gateway-budget.md`): the wasm configuration Kuadrant builds per Gateway and
its size as the API server stores it. `data/gateway/two-routes.json` is written by hand in Kuadrant's format from
the reference page (its hashes are SHA-256 of the path IDs and limit keys the page documents)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from maas.config import load_config
from maas.config.schema import ModelConfig
from maas.observe import Observed
from maas.observe.policy_views import LiveTokenRateLimitPolicy, limit_of, planned_limit
from maas.observe.views import LiveRoute, view_of
from maas.plan.build import build_plan
from maas.plan.gateway.budget import Sizing, around, measured, plan_policies, stored_size
from maas.plan.gateway.encoding import (
    NOTHING,
    Composite,
    CompositeList,
    Embedded,
    Measurer,
    Spliced,
    compact,
    stored_json,
)
from maas.plan.gateway.envelope import wasm_object
from maas.plan.gateway.policies import Policy, PolicyIndex
from maas.plan.gateway.routes import Gateway, Listener, Route, attached, gateway_of, kserve_rules, routes
from maas.plan.gateway.wasm import Builder, limit_id, wasm_config
from tests.conftest import ROOT

FIXTURE = Path(__file__).parent / "data" / "gateway" / "two-routes.json"
GW = ("openshift-ingress", "maas-default-gateway")
HEALTH = 'request.path != "/maas-api/health" || request.method != "GET"'
DENY = (
    '!request.path.startsWith("/maas-api") && !request.path.startsWith("/v1/models") && '
    '!request.path.startsWith("/v1/subscriptions") && !request.path.startsWith("/v1/api-keys")'
)
EXEMPT = ' && !request.url_path.endsWith("/v1/models")'
LEGACY = 'auth.identity.selected_subscription_key == "models-as-a-service/free@llm/granite"'
SHORT = 'auth.identity.selected_subscription_id in ["0123456789abcdef", "fedcba9876543210"]'


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def gateway(*listeners: Listener) -> Gateway:
    return Gateway(*GW, "openshift-default", "uid", listeners or (Listener("https", "maas.example.com"),))


def route(namespace: str, name: str, rules: list[dict], **spec: object) -> Route:
    parent = {"name": GW[1], "namespace": GW[0], **spec.pop("parent", {})}
    body = {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"parentRefs": [parent], "rules": rules, **spec},
    }
    return Route(namespace, name, body)


def prefix(value: str, **rule: object) -> dict:
    return {**rule, "matches": [{"path": {"type": "PathPrefix", "value": value}}]}


def on_gateway(kind: str, name: str, spec: dict) -> Policy:
    return Policy(kind, GW[0], name, {"targetRef": {"kind": "Gateway", "name": GW[1]}, **spec})


def on_route(kind: str, namespace: str, name: str, target: str, spec: dict) -> Policy:
    return Policy(kind, namespace, name, {"targetRef": {"kind": "HTTPRoute", "name": target}, **spec})


def token_limit(predicate: str, *counters: str) -> dict:
    return {
        "rates": [{"limit": 1000, "window": "1m"}],
        "when": [{"predicate": predicate}],
        "counters": [{"expression": c} for c in counters],
    }


GATEWAY_AUTH = on_gateway(
    "AuthPolicy",
    "maas-gateway-auth",
    {"defaults": {"strategy": "merge", "when": [{"predicate": HEALTH}], "rules": {"authentication": {"keys": {}}}}},
)
DEFAULT_DENY = on_gateway(
    "TokenRateLimitPolicy",
    "gateway-default-deny",
    {"defaults": {"limits": {"deny-all-by-default": token_limit(DENY, "auth.identity.userid")}}},
)
MODEL_AUTH = on_route(
    "AuthPolicy", "llm", "maas-auth-granite", "granite-kserve-route", {"rules": {"authorization": {"model-access": {}}}}
)
MODEL_TRLP = on_route(
    "TokenRateLimitPolicy",
    "llm",
    "maas-trlp-granite",
    "granite-kserve-route",
    {
        "limits": {
            "tokens-1000-per-1m-id": token_limit(
                SHORT + EXEMPT, "auth.identity.selected_subscription_id", "auth.identity.userid"
            ),
            "tokens-1000-per-1m": token_limit(
                LEGACY + EXEMPT, "auth.identity.selected_subscription_key", "auth.identity.userid"
            ),
        }
    },
)
TWO_ROUTES = [
    route("models-as-a-service", "maas-api-route", [prefix("/maas-api", name="maas-api")]),
    route("llm", "granite-kserve-route", [prefix("/llm/granite")]),
]


def two_routes_config():
    return wasm_config(gateway(), TWO_ROUTES, PolicyIndex([MODEL_TRLP, GATEWAY_AUTH, MODEL_AUTH, DEFAULT_DENY]))


# ------------------------------------------------------------------------------------------------ structure


def test_the_config_of_two_routes_is_the_hand_built_fixture_action_set_for_action_set():
    assert json.loads(compact(two_routes_config().body())) == json.loads(FIXTURE.read_text())


def test_action_set_names_and_auth_scopes_are_sha256_of_the_documented_path_ids():
    config = two_routes_config()
    path = "openshift-default|openshift-ingress/maas-default-gateway|openshift-ingress/maas-default-gateway#https|"
    granite = f"{path}llm/granite-kserve-route|llm/granite-kserve-route#rule-1"
    api = f"{path}models-as-a-service/maas-api-route|models-as-a-service/maas-api-route#maas-api"
    assert [a.body["name"] for a in config.action_sets] == [
        sha(f"{granite}|1|maas.example.com"),
        sha(f"{api}|1|maas.example.com"),
    ]
    assert [a.body["actions"][0]["scope"] for a in config.action_sets] == [sha(granite), sha(api)]


def test_limit_ids_sanitize_the_name_and_hash_namespace_policy_and_limit():
    assert limit_id("llm", "maas-trlp-granite", "tokens-1000-per-1m") == "tokenlimit.tokens_1000_per_1m__0d361a1b"
    assert limit_id("llm", "maas-trlp-granite", "tokens-1000-per-1m-id") == "tokenlimit.tokens_1000_per_1m_id__5c915111"
    assert (
        limit_id(*GW[:1], "gateway-default-deny", "deny-all-by-default") == "tokenlimit.deny_all_by_default__6d45535f"
    )
    # Go's unicode.IsLetter keeps non-ASCII letters
    assert limit_id("ns", "p", "zoë.tier 1").startswith("tokenlimit.zoë_tier_1__")


def test_the_gateway_counts_each_distinct_limit_once():
    assert two_routes_config().limits == {
        "tokenlimit.tokens_1000_per_1m__0d361a1b",
        "tokenlimit.tokens_1000_per_1m_id__5c915111",
        "tokenlimit.deny_all_by_default__6d45535f",
    }


def test_a_route_level_policy_replaces_the_gateway_default_deny_and_merged_auth_lists_both_sources():
    granite, api = (a.body["actions"] for a in two_routes_config().action_sets)
    assert [a["sources"] for a in granite] == [
        ["authpolicy.kuadrant.io:llm/maas-auth-granite", "authpolicy.kuadrant.io:openshift-ingress/maas-gateway-auth"],
        *[["tokenratelimitpolicy.kuadrant.io:llm/maas-trlp-granite"]] * 4,
    ]
    assert [a["service"] for a in api] == ["auth-service", "ratelimit-check-service", "ratelimit-report-service"]
    assert api[1]["sources"] == ["tokenratelimitpolicy.kuadrant.io:openshift-ingress/gateway-default-deny"]


def test_gateway_defaults_with_merge_add_their_limits_and_overrides_win():
    merge = on_gateway(
        "TokenRateLimitPolicy", "deny", {"defaults": {"strategy": "merge", **DEFAULT_DENY.spec["defaults"]}}
    )
    over = on_gateway("TokenRateLimitPolicy", "deny", {"overrides": DEFAULT_DENY.spec["defaults"]})
    granite = [TWO_ROUTES[1]]
    merged = wasm_config(gateway(), granite, PolicyIndex([merge, MODEL_TRLP])).limits
    overridden = wasm_config(gateway(), granite, PolicyIndex([over, MODEL_TRLP])).limits
    assert {i.split("__")[0] for i in merged} == {
        "tokenlimit.deny_all_by_default",
        "tokenlimit.tokens_1000_per_1m",
        "tokenlimit.tokens_1000_per_1m_id",
    }
    assert {i.split("__")[0] for i in overridden} == {"tokenlimit.deny_all_by_default"}


def test_token_actions_that_read_no_identity_run_before_auth():
    anonymous = on_gateway("TokenRateLimitPolicy", "anon", {"limits": {"all": {"when": [{"predicate": "true"}]}}})
    config = wasm_config(gateway(), [TWO_ROUTES[1]], PolicyIndex([anonymous, GATEWAY_AUTH]))
    assert [a["service"] for a in config.action_sets[0].body["actions"]] == [
        "ratelimit-check-service",
        "ratelimit-report-service",
        "auth-service",
    ]


def test_a_route_without_section_name_is_copied_into_every_listener():
    listeners = (Listener("https", "maas.example.com"), Listener("http", "maas.example.com"))
    everywhere = wasm_config(gateway(*listeners), [TWO_ROUTES[1]], PolicyIndex([DEFAULT_DENY]))
    one = route("llm", "granite-kserve-route", [prefix("/llm/granite")], parent={"sectionName": "https"})
    pinned = wasm_config(gateway(*listeners), [one], PolicyIndex([DEFAULT_DENY]))
    assert (len(everywhere.action_sets), len(pinned.action_sets)) == (2, 1)


def test_an_unobserved_gateways_one_listener_takes_a_route_whatever_section_it_names():
    named = route("llm", "r", [prefix("/p")], parent={"sectionName": "internal"})
    assumed = Gateway(*GW, "openshift-default", "uid", (Listener("https", None),), assumed=True)
    assert len(wasm_config(assumed, [named], PolicyIndex([DEFAULT_DENY])).action_sets) == 1
    assert wasm_config(gateway(), [named], PolicyIndex([DEFAULT_DENY])).action_sets == ()


def test_route_hostnames_are_kept_only_within_the_listener_hostname():
    hosts = route(
        "llm", "r", [prefix("/p")], hostnames=["a.example.com", "b.example.com", "other.org", "*.example.com"]
    )
    config = wasm_config(gateway(Listener("https", "*.example.com")), [hosts], PolicyIndex([DEFAULT_DENY]))
    assert [a.body["routeRuleConditions"]["hostnames"] for a in config.action_sets] == [
        ["a.example.com"],
        ["b.example.com"],
        ["*.example.com"],
    ]


def test_action_sets_are_sorted_exact_before_prefix_then_longer_paths_first():
    rules = [
        {"matches": [{"path": {"type": "PathPrefix", "value": "/a"}}, {"path": {"type": "Exact", "value": "/a"}}]},
        {
            "matches": [
                {
                    "method": "POST",
                    "path": {"type": "PathPrefix", "value": "/abc"},
                    "headers": [{"name": "X-A", "value": "1"}],
                }
            ]
        },
        {},  # no matches: one `PathPrefix /`
    ]
    config = wasm_config(gateway(), [route("llm", "r", rules)], PolicyIndex([DEFAULT_DENY]))
    assert [a.body["routeRuleConditions"]["predicates"] for a in config.action_sets] == [
        ["request.url_path == '/a'"],
        [
            "request.method == 'POST'",
            "request.url_path.startsWith('/abc')",
            "request.headers.exists(h, h.lowerAscii() == 'x-a' && request.headers[h] == '1')",
        ],
        ["request.url_path.startsWith('/a')"],
        ["request.url_path.startsWith('/')"],
    ]


def test_kserves_current_route_template_has_12_rules_and_19_matches():
    model = ModelConfig.model_validate(
        {"name": "m", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "m"}}
    )
    rules = kserve_rules(model, "org/Model-1")
    assert (len(rules), sum(len(r["matches"]) for r in rules)) == (12, 19)
    assert [r["name"] for r in rules][4:6] == ["v1-model-routing", "v1-completions-publisher-path"]
    config = wasm_config(gateway(), [route("llm", "m-kserve-route", rules)], PolicyIndex([DEFAULT_DENY]))
    predicates = [a.body["routeRuleConditions"]["predicates"] for a in config.action_sets]
    header = "request.headers.exists(h, h.lowerAscii() == 'x-gateway-model-name' && request.headers[h] == 'publishers/llm/models/org/Model-1')"
    assert predicates[0] == ["request.url_path == '/v1/chat/completions/'", header]
    assert predicates[-1] == ["request.url_path.startsWith('/')", header]
    assert ["request.url_path.startsWith('/llm/m/v1/messages')"] in predicates


# ---------------------------------------------------------------------------------------------------- sizes


def test_the_fixture_weighs_what_kuadrant_stores_on_1_4_and_1_5():
    config = two_routes_config()
    plain = compact(json.loads(FIXTURE.read_text()))
    assert (len(plain), plain.count("&"), plain.count('"'), plain.count("\\")) == (5442, 20, 532, 50)
    assert Measurer().measure(config.body()).size == 5442
    plugin, envoy_filter = (wasm_object(config.gateway, config.body(), v) for v in ("1.4", "1.5"))
    empty_plugin, empty_filter = (len(stored_json(wasm_object(config.gateway, Composite(), v))) for v in ("1.4", "1.5"))
    assert (empty_plugin, empty_filter) == (544, 1969)
    # 1.4: the config nested in place of `{}`, each `&` written \u0026 (5 bytes more)
    assert len(stored_json(plugin)) == 544 + 5442 - 2 + 5 * 20 == 6084
    # 1.5: the config as one JSON string: each quote and backslash escaped once more
    assert len(stored_json(envoy_filter)) == 1969 + 5442 + 532 + 50 - 2 + 5 * 20 == 8091
    assert Measurer().measure(plugin).stored == 6084 and Measurer().measure(envoy_filter).stored == 8091
    carried = json.loads(stored_json(envoy_filter))["spec"]["configPatches"][0]["patch"]["value"]["typed_config"]
    assert json.loads(carried["value"]["config"]["configuration"]["value"]) == json.loads(plain)


def test_stored_json_escapes_as_gos_encoding_json():
    assert stored_json({"b": 'x && <y> \u2028 "q" \\ é\n', "a": 1}) == (
        '{"a":1,"b":"x \\u0026\\u0026 \\u003cy\\u003e \\u2028 \\"q\\" \\\\ é\\n"}'
    )


def test_measuring_shared_parts_equals_writing_everything_out():
    shared = CompositeList([{"k": 'va"l & <x>'}, "zoë\u2028", {"n": [1, 2, None, True]}])
    run = ({"r": "ü"}, "two")
    plain = ({"q": 'a"b & <c>\u2028'}, [1, "é\\"])
    tree = Composite(
        a=shared,
        b=Composite(c=shared, d="plain"),
        e=Embedded(Composite(f=shared, g=[])),
        h=CompositeList(),
        i=Composite(),
        j=CompositeList([Spliced(run, ["x"]), Spliced((), run), Spliced(), Spliced(run)]),
        k=CompositeList([Spliced(plain, run), Spliced(plain)]),  # a run of plain items: one encoder call
    )
    assert json.loads(compact(tree))["j"] == [[{"r": "ü"}, "two", "x"], [{"r": "ü"}, "two"], [], [{"r": "ü"}, "two"]]
    assert Measurer().measure(tree).stored == len(stored_json(tree).encode())


@pytest.mark.parametrize("version", ["1.4", "1.5"])
def test_the_fast_size_of_a_rendered_plan_equals_its_full_serialisation_byte_for_byte(version):
    sys.path.insert(0, str(ROOT / "bench"))
    from render_scale import configuration

    raw = configuration(40, "legacy")
    raw["models"] = raw["models"][:12]
    kept = {m["name"] for m in raw["models"]}
    raw["subscriptions"] = [s for s in raw["subscriptions"] if all(r["name"] in kept for r in s["modelRefs"])]
    raw["authPolicies"] = [
        {
            "name": "everyone",
            "modelRefs": [{"name": "model-000", "namespace": "llm-0"}],
            "subjects": {"users": ["zoë & <bob>"]},
        }
    ]
    config = load_config(raw)
    plan = build_plan(config, Observed.nothing())
    built = wasm_config(
        gateway_of(config, Observed.nothing(), *GW),
        routes(config, plan, Observed.nothing()),
        PolicyIndex(plan_policies(plan, Observed.nothing())),
    )
    carrier = wasm_object(built.gateway, built.body(), version)
    assert len(built.action_sets) == 12 * 19 + 4
    assert Measurer().measure(carrier).stored == len(stored_json(carrier).encode("utf-8"))


def test_a_planned_limit_reads_directly_as_a_live_one_reads():
    """The budget reads the limits of the policies this program writes without nodes: in either predicate format,
    legacy, short, unlimited and the gateway's default deny, they read as `limit_of` reads them."""
    sys.path.insert(0, str(ROOT / "bench"))
    from render_scale import configuration

    raw = configuration(40, "legacy")
    raw["subscriptions"][0]["modelRefs"][0] = {**raw["subscriptions"][0]["modelRefs"][0], "unlimited": True}
    del raw["subscriptions"][0]["modelRefs"][0]["tokenRateLimits"]
    raw["subscriptions"][1]["rateLimitIdentity"] = "short"
    for predicate_format in ("default", "compact"):
        raw["platform"] = {**raw.get("platform", {}), "predicateFormat": predicate_format}
        plan = build_plan(load_config(raw), Observed.nothing())
        policies = [p for p in plan_policies(plan, Observed.nothing()) if p.kind == "TokenRateLimitPolicy"]
        assert all(p.planned for p in policies)
        limits = {(p.name, name): entry for p in policies for name, entry in p.proper.limits.items()}
        assert {"tokens-unlimited", "deny-all-by-default"} <= {name for _, name in limits}
        assert {k: planned_limit(e) for k, e in limits.items()} == {k: limit_of(e) for k, e in limits.items()}
        bodies = [obj.body for obj in plan.objects_of("TokenRateLimitPolicy")]  # whole, as the unmetered report
        assert [LiveTokenRateLimitPolicy.planned(b) for b in bodies] == [
            view_of(LiveTokenRateLimitPolicy, b) for b in bodies
        ]


@pytest.mark.parametrize("seed", range(4))
def test_a_planned_route_reads_directly_as_a_live_one_reads(seed):
    """The budget reads the routes this program renders and KServe's template of one without nodes: ExternalModel,
    KServe and maas-api routes, with and without hostnames, read as `view_of` reads them."""
    from tests.enforcement import generated_stack

    config = load_config(generated_stack(seed))
    found = routes(config, build_plan(config, Observed.nothing()), Observed.nothing())
    assert {r.model is None for r in found} == {True, False} and all(r.planned for r in found)
    assert [LiveRoute.planned(r.body) for r in found] == [view_of(LiveRoute, r.body) for r in found]


def test_a_planned_policy_not_yet_created_is_the_newest_on_its_level():
    """Kuadrant orders one level's policies by creation time: the one `up` is about to create comes last."""
    target = {"targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "r"}}
    planned = Policy("TokenRateLimitPolicy", "llm", "a-planned", target)
    live = Policy("TokenRateLimitPolicy", "llm", "z-live", target, created="2026-01-01T00:00:00Z")
    found = PolicyIndex([planned, live]).on_path("TokenRateLimitPolicy", ("gw", "g"), "https", ("llm", "r"), "rule-1")
    assert [p.name for p in found] == ["z-live", "a-planned"]


def test_building_again_from_what_a_builder_made_equals_a_fresh_build_byte_for_byte():
    """The levers build a Gateway again with routes left out, moved or pinned, and with other policies: one builder
    per Gateway and index, one measurer, and every figure as a fresh build written out would give."""
    sys.path.insert(0, str(ROOT / "bench"))
    from render_scale import configuration

    raw = configuration(40, "legacy")
    raw["models"] = raw["models"][:12]
    kept = {m["name"] for m in raw["models"]}
    raw["subscriptions"] = [s for s in raw["subscriptions"] if all(r["name"] in kept for r in s["modelRefs"])]
    config = load_config(raw)
    plan = build_plan(config, Observed.nothing())
    sizing = Sizing(config, plan, Observed.nothing())
    gateway = sizing.gateway(*GW)
    (budget,) = sizing.budgets()
    fewer = [r for r in sizing.routes if r.model not in {"llm-0/model-000", "llm-1/model-001"}]
    index = PolicyIndex([p for p in sizing.policies if p.name != "maas-trlp-model-002"])
    for carried, policies in ((None, None), (fewer, None), (None, index), (fewer, index), (None, None)):
        fresh = wasm_config(gateway, sizing.routes if carried is None else carried, policies or sizing.index)
        written = len(stored_json(wasm_object(gateway, fresh.body(), "1.5")).encode("utf-8"))
        assert sizing.size(gateway, carried, policies) == sizing.measure(gateway, carried, policies).bytes == written
    assert sizing.measure(gateway) == budget
    assert len(budget.models) == 12 and budget.models[: len(budget.largest)] == budget.largest[: len(budget.models)]


@pytest.mark.parametrize("version", ["1.4", "1.5"])
def test_each_routes_size_is_what_its_action_sets_weigh_written_out(version):
    """The budget measures a route's ActionSets without building them, each rule's action list once for every
    hostname and match that copies it and each limit's check once for its report too: per route and listener, and
    for the whole object, the same as the ActionSets built and written out."""
    listeners = (Listener("https", "*.example.com"), Listener("http", None))
    header = {"headers": [{"name": "X-Model", "value": "gran<ite>"}], "path": {"type": "Exact", "value": "/v1/x"}}
    granite = route(
        "llm",
        "granite-kserve-route",
        [prefix("/llm/granite"), {"name": "two", "matches": [header, {"method": "POST"}]}],
        hostnames=["a.example.com", "b.example.com"],
    )
    on_rule = {"targetRef": {"kind": "HTTPRoute", "name": "granite-kserve-route", "sectionName": "two"}}
    anonymous = {"limits": {"all": {"when": [{"predicate": "true"}], "counters": [{"expression": "é"}]}}}
    rule_limit = Policy("TokenRateLimitPolicy", "llm", "on-rule-two", {**on_rule, **anonymous})
    elsewhere = route("llm", "elsewhere", [prefix("/x")], hostnames=["other.org"])  # on the `http` listener only
    own_limit = on_route("TokenRateLimitPolicy", "llm", "elsewhere-limit", "elsewhere", anonymous)
    index = PolicyIndex([MODEL_TRLP, GATEWAY_AUTH, MODEL_AUTH, DEFAULT_DENY, rule_limit, own_limit])
    carried, gw = [TWO_ROUTES[0], granite, elsewhere], gateway(*listeners)
    built, builder, measurer = wasm_config(gw, carried, index), Builder(gw, index), Measurer()
    sizes = []
    for listener, carried_route in attached(carried, gw):
        size = builder.size(listener, carried_route, measurer)
        sets = [a for a in built.action_sets if a.route is carried_route and a.listener == listener]
        assert size.bodies == sum((Measurer().measure(a.body) for a in sets), NOTHING)
        assert (size.action_sets, size.limits) == (len(sets), {limit for a in sets for limit in a.limits})
        sizes.append(size)
    assert len(built.action_sets) == 2 * (1 + 2 * 3) + 1  # two listeners: maas-api once, granite per host and match
    carrier = wasm_object(gw, built.body(), version)
    budget = measured(gw, around(gw, version, measurer), sizes, version)
    assert stored_size(around(gw, version, measurer), sizes, version) == budget.bytes
    assert budget.bytes == len(stored_json(carrier).encode("utf-8"))
    embedded = version == "1.5"
    for contributor in budget.largest:
        shares = [Measurer().measure(a.body) for a in built.action_sets if contributor.name.endswith(a.route.key)]
        assert contributor.bytes == sum((m.as_string if embedded else m).stored + 1 for m in shares)
