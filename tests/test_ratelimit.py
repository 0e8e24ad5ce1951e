"""Every rule of reference/ratelimit.md with a concrete input and its expected output."""

from __future__ import annotations

import pytest

from maas.config import load_config
from maas.plan.policies import ratelimit
from maas.plan.policies.ratelimit import Member, limit_groups, limit_name, limits, predicate, rate_set, short_id
from tests.conftest import identities

EXEMPT = ' && !request.url_path.endsWith("/v1/models")'


def model(name="granite-7b", namespace="llm", **extra) -> dict:
    return {"name": name, "namespace": namespace, "modelRef": {"kind": "LLMInferenceService", "name": name}, **extra}


def subscription(name, rates=None, namespace=None, identity=None, models=(("granite-7b", "llm"),)) -> dict:
    refs = []
    for model_name, model_namespace in models:
        ref = {"name": model_name, "namespace": model_namespace}
        ref.update(
            {"unlimited": True}
            if rates is None
            else {"tokenRateLimits": [dict(limit=limit, window=window) for limit, window in rates]}
        )
        refs.append(ref)
    entry = {"name": name, "owner": {"groups": [{"name": "g"}]}, "modelRefs": refs}
    if namespace:
        entry["namespace"] = namespace
    if identity:
        entry["rateLimitIdentity"] = identity
    return entry


def policies(subscriptions, models=None, **platform):
    raw = {"models": models or [model()], "subscriptions": subscriptions}
    if platform:
        raw["platform"] = platform
    config = load_config(raw)
    return ratelimit.plan_rate_limits(config, identities(config))


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("default/sub-a@default/llm", "e0b080a72144d7c5"),
        ("default/sub-b@default/llm", "be9f74e5073ace26"),
        ("tenant-a/gold@models/llm", "cc05b3560574a41d"),
        ("tenant-b/gold@models/llm", "c3b65908ead1f38d"),
    ],
)
def test_short_id_is_16_hex_of_sha256_of_the_model_scoped_key(key, expected):
    assert short_id(key) == expected


def test_model_scoped_key_names_subscription_then_model():
    assert ratelimit.model_scoped_key("tenant-a", "gold", "models", "llm") == "tenant-a/gold@models/llm"


def test_limit_name_sorts_segments_as_strings():
    assert limit_name(rate_set([(99999, "1s"), (1000, "1h")])) == "tokens-1000-per-1h-99999-per-1s"
    assert limit_name(rate_set([(20, "1m"), (100, "1m")])) == "tokens-100-per-1m-20-per-1m"
    assert limit_name(rate_set([(1000, "1m"), (1000, "1h")])) == "tokens-1000-per-1h-1000-per-1m"


def test_rate_set_removes_duplicates_and_keeps_windows_as_written():
    assert rate_set([(100, "1m"), (100, "1m"), (100, "60s")]) == ((100, "1m"), (100, "60s"))


def test_single_clause_stands_bare_with_the_discovery_exemption():
    clause = 'auth.identity.selected_subscription_id == "e0b080a72144d7c5"'
    assert predicate([clause], True) == clause + EXEMPT


def test_several_clauses_are_sorted_and_parenthesised():
    b = 'auth.identity.selected_subscription_id == "695aae76263a985a"'
    a = 'auth.identity.selected_subscription_id == "11da65b5a1ccaa3f"'
    assert predicate([b, a], True) == f"({a} || {b})" + EXEMPT


def test_exemption_can_be_switched_off():
    clause = 'auth.identity.selected_subscription_id == "x"'
    assert predicate([clause], False) == clause


def test_illustrative_36_policy_from_the_reference():
    """upstream-policies.md 1.2: legacy and short members of one rate set split; rate sets sorted as strings."""
    plan = policies(
        [
            subscription("premium-sub", [(50000, "1h")], identity="legacy"),
            subscription("team-x", [(50000, "1h")]),
            subscription("team-y", [(50000, "1h")]),
            subscription("basic-sub", [(20000, "1h"), (1000, "1m")]),
        ]
    )
    assert plan.policies["llm/granite-7b"]["spec"]["limits"] == {
        "tokens-1000-per-1m-20000-per-1h": {
            "rates": [{"limit": 1000, "window": "1m"}, {"limit": 20000, "window": "1h"}],
            "when": [{"predicate": 'auth.identity.selected_subscription_id == "f86517876ede911a"' + EXEMPT}],
            "counters": [
                {"expression": "auth.identity.selected_subscription_id"},
                {"expression": "auth.identity.userid"},
            ],
        },
        "tokens-50000-per-1h": {
            "rates": [{"limit": 50000, "window": "1h"}],
            "when": [
                {
                    "predicate": 'auth.identity.selected_subscription_key == "models-as-a-service/premium-sub@llm/granite-7b"'
                    + EXEMPT
                }
            ],
            "counters": [
                {"expression": "auth.identity.selected_subscription_key"},
                {"expression": "auth.identity.userid"},
            ],
        },
        "tokens-50000-per-1h-id": {
            "rates": [{"limit": 50000, "window": "1h"}],
            "when": [
                {
                    "predicate": '(auth.identity.selected_subscription_id == "11da65b5a1ccaa3f" || '
                    'auth.identity.selected_subscription_id == "695aae76263a985a")' + EXEMPT
                }
            ],
            "counters": [
                {"expression": "auth.identity.selected_subscription_id"},
                {"expression": "auth.identity.userid"},
            ],
        },
    }


def test_rate_set_with_only_short_members_has_no_id_suffix():
    plan = policies([subscription("team-x", [(50000, "1h")])])
    assert list(plan.policies["llm/granite-7b"]["spec"]["limits"]) == ["tokens-50000-per-1h"]


def test_rate_set_with_only_legacy_members_has_no_id_suffix():
    plan = policies([subscription("old", [(50000, "1h")], identity="legacy")])
    limit = plan.policies["llm/granite-7b"]["spec"]["limits"]["tokens-50000-per-1h"]
    assert limit["counters"][0] == {"expression": "auth.identity.selected_subscription_key"}


def test_unlimited_subscriptions_share_one_limit_mixing_generations_without_rates_or_counters():
    plan = policies([subscription("ops", None, identity="legacy"), subscription("sre", None)])
    sre = short_id("models-as-a-service/sre@llm/granite-7b")
    assert plan.policies["llm/granite-7b"]["spec"]["limits"] == {
        "tokens-unlimited": {
            "when": [
                {
                    "predicate": f'(auth.identity.selected_subscription_id == "{sre}" || '
                    'auth.identity.selected_subscription_key == "models-as-a-service/ops@llm/granite-7b")' + EXEMPT
                }
            ]
        }
    }


def test_limit_groups_split_a_shared_rate_set_by_generation_and_keep_member_order():
    """One group per limit, ordered by name, members in their own order: the short-ID members of a rate set that
    legacy members share move to `-id`; a rate set of one generation, and every unlimited member, stay together."""
    shared, alone = ((1, "1m"),), ((5, "1h"),)
    members = [
        Member("ns/b", "short", "ns/b@llm/m", shared),
        Member("ns/a", "legacy", "ns/a@llm/m", shared),
        Member("ns/c", "short", "ns/c@llm/m", shared),
        Member("ns/d", "legacy", "ns/d@llm/m", alone),
        Member("ns/e", "short", "ns/e@llm/m", None),
        Member("ns/f", "legacy", "ns/f@llm/m", None),
    ]
    groups = limit_groups(members)
    assert {name: [m.subscription for m in group] for name, group in groups.items()} == {
        "tokens-1-per-1m": ["ns/a"],
        "tokens-1-per-1m-id": ["ns/b", "ns/c"],
        "tokens-5-per-1h": ["ns/d"],
        "tokens-unlimited": ["ns/e", "ns/f"],
    }
    assert list(groups) == sorted(groups)
    assert limits(members, True, groups=groups) == limits(members, True)


def test_policy_identity_labels_annotation_and_target():
    plan = policies(
        [subscription("b-sub", [(10, "1m")]), subscription("a-sub", [(10, "1m")])],
        models=[model(route={"name": "custom-route", "namespace": "routes"})],
    )
    body = plan.policies["llm/granite-7b"]
    assert body["apiVersion"] == "kuadrant.io/v1alpha1"
    assert body["kind"] == "TokenRateLimitPolicy"
    assert body["metadata"] == {
        "name": "maas-trlp-granite-7b",
        "namespace": "routes",
        "labels": {
            "maas.opendatahub.io/model": "granite-7b",
            "maas.opendatahub.io/model-namespace": "llm",
            "app.kubernetes.io/managed-by": "pulumi",
            "app.kubernetes.io/part-of": "maas-subscription",
            "app.kubernetes.io/component": "token-rate-limit-policy",
        },
        "annotations": {"maas.opendatahub.io/subscriptions": "models-as-a-service/a-sub,models-as-a-service/b-sub"},
    }
    assert body["spec"]["targetRef"] == {
        "group": "gateway.networking.k8s.io",
        "kind": "HTTPRoute",
        "name": "custom-route",
    }


def test_llm_inference_service_route_defaults_to_the_kserve_route_in_the_model_namespace():
    backend = {"kind": "LLMInferenceService", "name": "granite-7b-instruct"}
    body = policies([subscription("s", [(10, "1m")])], models=[model(modelRef=backend)]).policies["llm/granite-7b"]
    assert body["metadata"]["namespace"] == "llm"
    assert body["spec"]["targetRef"]["name"] == "granite-7b-instruct-kserve-route"


def test_model_without_subscriptions_gets_no_policy():
    plan = policies([subscription("s", [(10, "1m")])], models=[model(), model("llama")])
    assert list(plan.policies) == ["llm/granite-7b"]


def test_missing_model_contributes_nothing_and_warns():
    plan = policies([subscription("s", [(10, "1m")], models=[("granite-7b", "llm"), ("ghost", "llm")])])
    assert list(plan.policies) == ["llm/granite-7b"]
    assert plan.warnings == [
        "subscription models-as-a-service/s: model llm/ghost is not in maas:models, so it contributes no token "
        "limit there; add the model or remove the reference"
    ]


def test_subscription_outputs_carry_identity_short_id_and_limit():
    plan = policies([subscription("s", [(10, "1m")], identity="legacy")])
    key = "models-as-a-service/s@llm/granite-7b"
    assert plan.subscriptions == {
        "models-as-a-service/s": {
            "rateLimitIdentity": "legacy",
            "models": {"llm/granite-7b": {"key": key, "shortId": short_id(key), "limit": "tokens-10-per-1m"}},
        }
    }


def test_each_member_names_the_limit_it_lands_in_and_none_on_a_model_not_configured():
    """The outputs read each member's `limit`, set once the model's members are grouped (`_land`)."""
    refs = (("granite-7b", "llm"), ("ghost", "llm"))
    plan = policies(
        [
            subscription("new", [(10, "1m")], identity="short", models=refs),
            subscription("old", [(10, "1m")], identity="legacy"),
        ]
    )
    limits_of = {
        key: {model: out["limit"] for model, out in found["models"].items()}
        for key, found in plan.subscriptions.items()
    }
    assert limits_of == {
        "models-as-a-service/new": {"llm/ghost": None, "llm/granite-7b": "tokens-10-per-1m-id"},
        "models-as-a-service/old": {"llm/granite-7b": "tokens-10-per-1m"},
    }


def test_members_of_different_tenants_with_equal_names_have_distinct_ids():
    a = Member("tenant-a/gold", "short", "tenant-a/gold@models/llm", ((1, "1m"),))
    b = Member("tenant-b/gold", "short", "tenant-b/gold@models/llm", ((1, "1m"),))
    text = limits([a, b], True)["tokens-1-per-1m"]["when"][0]["predicate"]
    assert "cc05b3560574a41d" in text and "c3b65908ead1f38d" in text
