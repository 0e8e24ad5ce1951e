"""Per-model AuthPolicies from MaaSAuthPolicies, their CEL predicate, outputs, and the program under mocks."""

from __future__ import annotations

import pytest

from maas import crdschema
from maas.config import ConfigError, load_config
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.policies import access
from maas.tools import cel
from maas.tools.render import render
from tests.conftest import objects_of

AUTH_POLICY = "kubernetes:kuadrant.io/v1:AuthPolicy"
TRLP = "kubernetes:kuadrant.io/v1alpha1:TokenRateLimitPolicy"
KEY_HEADERS = {"authorization": "Bearer sk-oai-abc"}


def model(name: str, namespace: str = "llm", **extra) -> dict:
    return {"name": name, "namespace": namespace, "modelRef": {"kind": "LLMInferenceService", "name": name}, **extra}


def auth_policy(name: str, models: list[str], groups=(), users=(), namespace: str | None = None) -> dict:
    entry = {
        "name": name,
        "modelRefs": [{"name": m, "namespace": "llm"} for m in models],
        "subjects": {"groups": [{"name": g} for g in groups], "users": list(users)},
    }
    if namespace:
        entry["namespace"] = namespace
    return entry


def plan_access(raw: dict) -> access.AccessPlan:
    return access.plan_model_access(load_config(raw))


def admitted(predicate: str, **context) -> bool:
    return cel.matches(predicate, cel.request(**context))


# --------------------------------------------------------------------------------------- the CEL predicate

PREDICATE = access.model_access_predicate(["premium-users", "basic-users"], ["alice"])


@pytest.mark.parametrize(
    ("context", "allowed"),
    [
        ({"metadata": {"apiKeyValidation": {"groups": ["basic-users"], "username": "bob"}}}, True),
        ({"metadata": {"apiKeyValidation": {"groups": ["other"], "username": "alice"}}}, True),
        ({"metadata": {"apiKeyValidation": {"groups": ["other"], "username": "bob"}}}, False),
        ({"identity": {"preferred_username": "bob", "groups": ["premium-users"]}}, True),
        ({"identity": {"preferred_username": "alice", "groups": []}}, True),
        ({"identity": {"sub": "alice"}}, True),
        ({"identity": {"preferred_username": "bob", "groups": ["others"]}}, False),
        ({"identity": {"user": {"username": "carol", "groups": ["system:authenticated", "basic-users"]}}}, True),
        ({"identity": {"user": {"username": "alice", "groups": ["system:authenticated"]}}}, True),
        ({"identity": {"user": {"username": "carol", "groups": ["system:authenticated"]}}}, False),
    ],
    ids=[
        "api-key-group",
        "api-key-user",
        "api-key-neither",
        "oidc-group",
        "oidc-preferred-username",
        "oidc-sub",
        "oidc-neither",
        "token-review-group",
        "token-review-user",
        "token-review-neither",
    ],
)
def test_predicate_admits_granted_groups_and_users_from_every_identity_source(context, allowed):
    assert admitted(PREDICATE, **context) is allowed


@pytest.mark.parametrize(
    "context",
    [
        {"identity": {}},
        {"identity": {"user": {}}},
        {"metadata": {"apiKeyValidation": {}}},
        {"metadata": {}, "identity": {"groups": []}},
    ],
    ids=["no-attributes", "empty-user", "empty-key-validation", "no-groups-no-name"],
)
def test_missing_attributes_deny(context):
    assert admitted(PREDICATE, **context) is False


def test_api_key_metadata_wins_over_the_token_identity():
    """An API key caller is judged by the key's groups, never by other identity attributes."""
    context = {"metadata": {"apiKeyValidation": {"groups": ["x"], "username": "bob"}}, "headers": KEY_HEADERS}
    assert admitted(PREDICATE, identity={"groups": ["premium-users"]}, **context) is False


def test_predicate_lists_are_deduplicated_and_sorted():
    predicate = access.model_access_predicate(["b", "a", "b"], ["zed", "amy", "zed"])
    assert predicate.endswith('.exists(g, g in ["a", "b"]) || ' + access.GUARDED_CALLER_USERNAME + ' in ["amy", "zed"]')
    assert predicate == access.model_access_predicate(["a", "b"], ["amy", "zed"])


def test_groups_only_and_users_only_predicates():
    groups_only = access.model_access_predicate(["team"], [])
    users_only = access.model_access_predicate([], ["alice"])
    assert 'in ["alice"]' not in groups_only and ".exists(" not in users_only
    assert admitted(groups_only, identity={"groups": ["team"]}) and not admitted(groups_only, identity={"sub": "x"})
    assert admitted(users_only, identity={"sub": "alice"}) and not admitted(users_only, identity={"groups": ["alice"]})


def test_no_subjects_deny_everyone():
    assert access.model_access_predicate([], []) == "false"


def test_names_with_quotes_are_literal_strings_not_cel():
    predicate = access.model_access_predicate(['a" || true || "'], [])
    assert not admitted(predicate, identity={"groups": ["b"]})
    assert admitted(predicate, identity={"groups": ['a" || true || "']})


# ----------------------------------------------------------------------------------- the per-model policy


def test_dev_policy_aggregates_every_contributing_auth_policy(dev_config):
    body = access.plan_model_access(dev_config).policies["llm/granite-7b"]
    assert body["apiVersion"] == "kuadrant.io/v1" and body["kind"] == "AuthPolicy"
    assert body["metadata"] == {
        "name": "maas-auth-granite-7b",
        "namespace": "llm",
        "labels": {
            "maas.opendatahub.io/model": "granite-7b",
            "maas.opendatahub.io/model-namespace": "llm",
            "app.kubernetes.io/managed-by": "pulumi",
            "app.kubernetes.io/part-of": "maas-auth-policy",
            "app.kubernetes.io/component": "auth-policy",
        },
        "annotations": {
            "maas.opendatahub.io/auth-policies": "models-as-a-service/basic-access,models-as-a-service/premium-access,"
            "models-as-a-service/team-access"
        },
    }
    assert body["spec"] == {
        "targetRef": {
            "group": "gateway.networking.k8s.io",
            "kind": "HTTPRoute",
            "name": "granite-7b-instruct-kserve-route",
        },
        "rules": {
            "authorization": {
                "model-access": {
                    "patternMatching": {
                        "patterns": [
                            {
                                "predicate": access.model_access_predicate(
                                    ["basic-users", "platform-admins", "premium-users", "team-x", "team-y"],
                                    ["alice", "bob"],
                                )
                            }
                        ]
                    },
                    "metrics": False,
                    "priority": 0,
                },
                "subscription-for-model": {
                    "patternMatching": {
                        "patterns": [
                            {
                                "predicate": 'has(auth.metadata) && "subscription-info" in auth.metadata && '
                                'has(auth.metadata["subscription-info"].resolvedModel) && '
                                'auth.metadata["subscription-info"].resolvedModel == "llm/granite-7b"'
                            }
                        ]
                    },
                    "metrics": False,
                    "priority": 0,
                },
            }
        },
    }


@pytest.mark.parametrize(
    ("resolved", "admitted"), [("llm/granite-7b", True), ("ext-a/cheap", False), ("", False), (None, False)]
)
def test_a_model_admits_only_a_subscription_selected_for_it(dev_config, resolved, admitted):
    """The gateway may route a request to another model's rule than the one maas-api selected for: the model's
    own policy then refuses the subscription (issue 17: model A's subscription spent on model B)."""
    body = access.plan_model_access(dev_config).policies["llm/granite-7b"]
    rule = body["spec"]["rules"]["authorization"]["subscription-for-model"]
    selection = {"name": "premium", "namespace": "models-as-a-service"}
    if resolved is not None:
        selection["resolvedModel"] = resolved
    context = cel.request(metadata={"subscription-info": selection})
    assert cel.matches(rule["patternMatching"]["patterns"][0]["predicate"], context) is admitted


def test_without_a_selection_the_model_admits_nobody(dev_config):
    body = access.plan_model_access(dev_config).policies["llm/granite-7b"]
    predicate = body["spec"]["rules"]["authorization"]["subscription-for-model"]["patternMatching"]["patterns"][0]
    assert cel.matches(predicate["predicate"], cel.request()) is False
    assert cel.matches(predicate["predicate"], cel.request(metadata={"apiKeyValidation": {}})) is False


def test_policy_lives_in_the_route_namespace_and_targets_the_route():
    raw = {
        "models": [model("m", route={"name": "custom-route", "namespace": "routes"})],
        "authPolicies": [auth_policy("p", ["m"], groups=["g"])],
    }
    body = plan_access(raw).policies["llm/m"]
    assert (body["metadata"]["namespace"], body["metadata"]["name"]) == ("routes", "maas-auth-m")
    assert body["spec"]["targetRef"]["name"] == "custom-route"
    assert body["metadata"]["labels"]["maas.opendatahub.io/model-namespace"] == "llm"


def test_external_model_policy_targets_its_maas_route(dev_config):
    body = access.plan_model_access(dev_config).policies["external-models/gpt-4o"]
    assert body["spec"]["targetRef"]["name"] == "maas-gpt-4o"


def test_a_model_without_auth_policy_gets_a_policy_that_admits_nobody():
    """Without one, whatever path or header leads to its route would meet only the gateway's rules."""
    result = plan_access({"models": [model("a"), model("b")], "authPolicies": [auth_policy("p", ["a"], users=["u"])]})
    assert list(result.policies) == ["llm/a", "llm/b"]
    rules = result.policies["llm/b"]["spec"]["rules"]["authorization"]
    assert rules["model-access"]["patternMatching"]["patterns"] == [{"predicate": "false"}]
    assert result.policies["llm/b"]["metadata"]["annotations"] == {"maas.opendatahub.io/auth-policies": ""}


def test_missing_model_warns_and_contributes_nothing():
    raw = {"models": [model("a")], "authPolicies": [auth_policy("p", ["a", "ghost"], groups=["g"])]}
    result = plan_access(raw)
    assert list(result.policies) == ["llm/a"]
    assert result.warnings == [
        "auth policy models-as-a-service/p: model llm/ghost is not in maas:models, so it grants no access there; "
        "add the model or remove the reference"
    ]


def test_order_of_policies_and_subjects_does_not_change_the_policy():
    policies = [
        auth_policy("p1", ["a"], groups=["g2", "g1"], users=["u2"]),
        auth_policy("p2", ["a"], groups=["g1"], users=["u1", "u2"]),
    ]
    forward = plan_access({"models": [model("a")], "authPolicies": policies}).policies
    reversed_subjects = [
        {**p, "subjects": {"groups": p["subjects"]["groups"][::-1], "users": p["subjects"]["users"][::-1]}}
        for p in policies[::-1]
    ]
    assert plan_access({"models": [model("a")], "authPolicies": reversed_subjects}).policies == forward


def test_outputs_say_who_is_admitted_and_by_which_policies(dev_config):
    plan = build_plan(dev_config, Observed.nothing())
    assert plan.outputs["models"]["llm/granite-7b"]["access"] == {
        "authPolicy": "llm/maas-auth-granite-7b",
        "groups": {
            "basic-users": ["models-as-a-service/basic-access"],
            "platform-admins": ["models-as-a-service/team-access"],
            "premium-users": ["models-as-a-service/basic-access", "models-as-a-service/premium-access"],
            "team-x": ["models-as-a-service/team-access"],
            "team-y": ["models-as-a-service/team-access"],
        },
        "users": {"alice": ["models-as-a-service/premium-access"], "bob": ["models-as-a-service/team-access"]},
    }


def test_outputs_of_an_ungoverned_model_admit_nobody():
    plan = build_plan(load_config({"models": [model("a")]}), Observed.nothing())
    assert plan.outputs["models"]["llm/a"]["access"] == {"authPolicy": "llm/maas-auth-a", "groups": {}, "users": {}}


def test_tenant_outputs_name_the_gateway_policies(dev_config):
    outputs = build_plan(dev_config, Observed.nothing()).owner("Tenant", "redteam").outputs
    assert outputs["gatewayAuthPolicy"] == "openshift-ingress/redteam-maas-auth"
    assert outputs["defaultDenyPolicy"] == "openshift-ingress/gateway-default-deny-redteam"


# ---------------------------------------------------------------------------- configuration cross-checks


def test_auth_policy_may_reference_its_own_tenants_models(dev_raw):
    load_config(dev_raw)  # redteam-access in ai-tenant-redteam references redteam-models/* only


def test_tenant_auth_policy_may_not_reach_the_default_tenants_models(dev_raw):
    dev_raw["authPolicies"][2]["modelRefs"].append({"name": "granite-7b", "namespace": "llm"})
    with pytest.raises(ConfigError) as error:
        load_config(dev_raw)
    assert (
        "maas:authPolicies[2] (ai-tenant-redteam/redteam-access).modelRefs[2]: model llm/granite-7b is served by "
        "tenant 'models-as-a-service', not by 'redteam' (tenant isolation)"
    ) in str(error.value)


def test_auth_policy_of_a_removed_tenant_namespace_is_an_error(dev_raw):
    dev_raw["tenants"] = [t for t in dev_raw["tenants"] if t["name"] != "redteam"]
    dev_raw["models"] = [m for m in dev_raw["models"] if m.get("tenant") != "redteam"]
    dev_raw["subscriptions"] = [s for s in dev_raw["subscriptions"] if s.get("namespace") != "ai-tenant-redteam"]
    with pytest.raises(ConfigError, match=r"authPolicies\[2\] \(ai-tenant-redteam/redteam-access\)\.namespace: "):
        load_config(dev_raw)


# ---------------------------------------------------------------------------------------- the program


def registrations(rendering, type_):
    return {r.name: r for r in rendering.registrations if r.type == type_}


def component(rendering, kind, name):
    return registrations(rendering, f"maas:index:{kind}")[name]


def test_dev_stack_has_one_gateway_policy_and_default_deny_per_tenant(dev_rendering):
    policies = registrations(dev_rendering, AUTH_POLICY)
    assert (
        policies["openshift-ingress/maas-gateway-auth"].parent
        == component(dev_rendering, "Tenant", "models-as-a-service").urn
    )
    assert policies["openshift-ingress/redteam-maas-auth"].parent == component(dev_rendering, "Tenant", "redteam").urn
    trlps = registrations(dev_rendering, TRLP)
    assert (
        trlps["openshift-ingress/gateway-default-deny"].parent
        == component(dev_rendering, "Tenant", "models-as-a-service").urn
    )
    assert (
        trlps["openshift-ingress/gateway-default-deny-redteam"].parent
        == component(dev_rendering, "Tenant", "redteam").urn
    )


def test_dev_stack_has_one_policy_per_governed_model_under_its_model(dev_rendering):
    per_model = {n: r for n, r in registrations(dev_rendering, AUTH_POLICY).items() if "/maas-auth-" in n}
    assert sorted(per_model) == [
        "external-models/maas-auth-gpt-4o",
        "llm/maas-auth-granite-7b",
        "llm/maas-auth-llama-3-8b",
        "redteam-models/maas-auth-claude-sonnet",
        "redteam-models/maas-auth-qwen-coder",
    ]
    assert per_model["llm/maas-auth-granite-7b"].parent == component(dev_rendering, "Model", "llm/granite-7b").urn
    assert all(r.retain_on_delete is False and r.ignore_changes == () for r in per_model.values())


def test_dev_stack_redteam_gateway_has_oidc_and_x_api_key_and_default_has_neither(dev_rendering):
    policies = objects_of(dev_rendering, "AuthPolicy")
    redteam = policies["openshift-ingress/redteam-maas-auth"]["spec"]["defaults"]["rules"]["authentication"]
    default = policies["openshift-ingress/maas-gateway-auth"]["spec"]["defaults"]["rules"]["authentication"]
    assert {"oidc-identities", "api-keys-x-api-key"} <= set(redteam)
    assert set(default) == {"api-keys", "openshift-identities"}


def test_every_rendered_access_object_is_valid_against_the_crds(dev_rendering):
    bodies = [
        *objects_of(dev_rendering, "AuthPolicy").values(),
        *objects_of(dev_rendering, "TokenRateLimitPolicy").values(),
    ]
    assert len(bodies) >= 13
    for body in bodies:
        assert crdschema.validate(body) == []


def test_gateway_policies_disappear_with_their_tenant(dev_raw):
    dev_raw["tenants"] = [t for t in dev_raw["tenants"] if t["name"] != "redteam"]
    dev_raw["models"] = [m for m in dev_raw["models"] if m.get("tenant") != "redteam"]
    for key in ("authPolicies", "subscriptions"):
        dev_raw[key] = [e for e in dev_raw[key] if e.get("namespace") != "ai-tenant-redteam"]
    rendering = render(dev_raw)
    assert "openshift-ingress/redteam-maas-auth" not in registrations(rendering, AUTH_POLICY)
    assert "openshift-ingress/gateway-default-deny-redteam" not in registrations(rendering, TRLP)
    assert "openshift-ingress/maas-gateway-auth" in registrations(rendering, AUTH_POLICY)


def test_gateway_policies_appear_with_a_new_tenant(dev_raw):
    dev_raw["tenants"].append({"name": "blue", "gateway": {"name": "blue-gw"}})
    rendering = render(dev_raw)
    policy = registrations(rendering, AUTH_POLICY)["openshift-ingress/blue-gw-maas-auth"]
    assert policy.parent == component(rendering, "Tenant", "blue").urn
    assert "openshift-ingress/gateway-default-deny-blue" in registrations(rendering, TRLP)


def test_per_model_policy_follows_its_auth_policies(dev_raw):
    dev_raw["authPolicies"] = [p for p in dev_raw["authPolicies"] if p["name"] not in ("basic-access", "team-access")]
    rendering = render(dev_raw)
    granite = objects_of(rendering, "AuthPolicy")["llm/maas-auth-granite-7b"]
    assert (
        granite["metadata"]["annotations"]["maas.opendatahub.io/auth-policies"] == "models-as-a-service/premium-access"
    )
    dev_raw["authPolicies"] = [p for p in dev_raw["authPolicies"] if p["name"] != "premium-access"]
    policies = objects_of(render(dev_raw), "AuthPolicy")
    for name in ("llm/maas-auth-granite-7b", "llm/maas-auth-llama-3-8b", "external-models/maas-auth-gpt-4o"):
        assert policies[name]["metadata"]["annotations"]["maas.opendatahub.io/auth-policies"] == ""
        model_access = policies[name]["spec"]["rules"]["authorization"]["model-access"]
        assert model_access["patternMatching"]["patterns"] == [{"predicate": "false"}]
    qwen = policies["redteam-models/maas-auth-qwen-coder"]["metadata"]["annotations"]
    assert qwen["maas.opendatahub.io/auth-policies"] == "ai-tenant-redteam/redteam-access"


def test_removing_a_model_removes_its_policy_and_warns_about_the_reference(dev_raw):
    dev_raw["models"] = [m for m in dev_raw["models"] if m["name"] != "llama-3-8b"]
    dev_raw["subscriptions"] = [
        {**s, "modelRefs": [r for r in s["modelRefs"] if r["name"] != "llama-3-8b"]} for s in dev_raw["subscriptions"]
    ]
    dev_raw["subscriptions"] = [s for s in dev_raw["subscriptions"] if s["modelRefs"]]
    plan = build_plan(load_config(dev_raw), Observed.nothing())
    assert "llm/maas-auth-llama-3-8b" not in {obj.logical_name for obj in plan.objects()}
    assert any(
        "auth policy models-as-a-service/premium-access: model llm/llama-3-8b is not in maas:models" in w
        for w in plan.warnings
    )


def test_model_component_outputs_carry_access(dev_rendering):
    model = component(dev_rendering, "Model", "redteam-models/claude-sonnet")
    assert dev_rendering.component_outputs[model.urn]["access"] == {
        "authPolicy": "redteam-models/maas-auth-claude-sonnet",
        "groups": {"redteam": ["ai-tenant-redteam/redteam-access"]},
        "users": {},
    }


def test_unmanaged_auth_policies_are_kept_but_never_changed_or_deleted(dev_raw):
    dev_raw["unmanaged"] = [
        {"kind": "AuthPolicy", "namespace": "llm", "name": "maas-auth-granite-7b"},
        {"kind": "AuthPolicy", "namespace": "openshift-ingress", "name": "redteam-maas-auth"},
    ]
    policies = registrations(render(dev_raw), AUTH_POLICY)
    for name in ("llm/maas-auth-granite-7b", "openshift-ingress/redteam-maas-auth"):
        assert policies[name].retain_on_delete is True
        assert policies[name].ignore_changes == ("apiVersion", "kind", "metadata", "spec")
    assert policies["llm/maas-auth-llama-3-8b"].retain_on_delete is False
    assert policies["openshift-ingress/maas-gateway-auth"].ignore_changes == ()


def test_unmanaged_auth_policy_without_source_warns_that_it_is_orphaned(dev_raw):
    dev_raw["models"] = [m for m in dev_raw["models"] if m["name"] != "gpt-4o"]
    dev_raw["unmanaged"] = [{"kind": "AuthPolicy", "namespace": "external-models", "name": "maas-auth-gpt-4o"}]
    plan = build_plan(load_config(dev_raw), Observed.nothing())
    assert "external-models/maas-auth-gpt-4o" not in {obj.logical_name for obj in plan.objects()}
    assert any(
        w.startswith("AuthPolicy external-models/maas-auth-gpt-4o (maas:unmanaged) has no source left")
        for w in plan.warnings
    )


def test_coexist_mode_hands_access_objects_over(dev_raw):
    dev_raw["platform"]["controllerMode"] = "coexist"
    policies = [
        obj for obj in build_plan(load_config(dev_raw), Observed.nothing()).objects() if obj.kind == "AuthPolicy"
    ]
    assert len(policies) == 7
    for obj in policies:
        assert obj.body["metadata"]["annotations"]["opendatahub.io/managed"] == "false"


def test_a_subscription_whose_owners_no_policy_admits_is_a_warning():
    raw = {
        "models": [model("a"), model("b")],
        "authPolicies": [auth_policy("p", ["a"], groups=["team"])],
        "subscriptions": [
            {
                "name": "s",
                "owner": {"groups": [{"name": "team"}], "users": ["carol"]},
                "modelRefs": [{"name": n, "namespace": "llm", "unlimited": True} for n in ("a", "b")],
            }
        ],
    }
    assert plan_access(raw).warnings == [
        "subscription models-as-a-service/s: no maas:authPolicies entry admits its owners to model llm/b, so its "
        "callers get 403 there; grant them access or drop the model reference"
    ]


def test_a_subscription_refused_on_several_models_is_one_warning_naming_them():
    raw = {
        "models": [model(n) for n in "abcdefg"],
        "authPolicies": [auth_policy("p", ["a"], groups=["team"])],
        "subscriptions": [
            {
                "name": "s",
                "owner": {"groups": [{"name": "team"}]},
                "modelRefs": [{"name": n, "namespace": "llm", "unlimited": True} for n in "gfedcba"],
            }
        ],
    }
    assert plan_access(raw).warnings == [
        "subscription models-as-a-service/s: no maas:authPolicies entry admits its owners to models llm/b, llm/c, "
        "llm/d, llm/e, llm/f and 1 more, so its callers get 403 there; grant them access or drop the model "
        "references"
    ]


def unusable_stack(subscriptions: int) -> dict:
    """`subscriptions` subscriptions to models a and b, and no auth policy at all."""
    refs = [{"name": n, "namespace": "llm", "unlimited": True} for n in "ab"]
    return {
        "models": [model("a"), model("b")],
        "subscriptions": [
            {"name": f"s{i:03d}", "owner": {"groups": [{"name": f"team-{i}"}]}, "modelRefs": refs}
            for i in reversed(range(subscriptions))
        ],
    }


def test_past_twenty_unusable_subscriptions_the_rest_are_counted_in_one_line():
    warnings = plan_access(unusable_stack(250)).warnings
    assert len(warnings) == access.UNUSABLE_LISTED + 1
    assert [w.split(":")[0] for w in warnings[:3]] == [f"subscription models-as-a-service/s00{i}" for i in range(3)]
    assert warnings[-1] == (
        "230 more subscriptions (models-as-a-service/s020, models-as-a-service/s021, models-as-a-service/s022, "
        "models-as-a-service/s023, models-as-a-service/s024 and 225 more) name models no maas:authPolicies entry "
        "admits their owners to (460 model references), so their callers get 403 there; `python -m maas explain "
        "subscription NAME` shows one subscription's access per model"
    )


def test_one_unusable_subscription_past_twenty_is_listed_rather_than_counted():
    warnings = plan_access(unusable_stack(access.UNUSABLE_LISTED + 1)).warnings
    assert len(warnings) == access.UNUSABLE_LISTED + 1
    assert all(w.startswith("subscription models-as-a-service/s") for w in warnings)


def test_dev_stack_subscriptions_are_all_usable(dev_config):
    assert [w for w in access.plan_model_access(dev_config).warnings if "get 403" in w] == []
