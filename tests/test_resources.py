"""The MaaS resources published for maas-api, their intended status, and how the program registers them."""

from __future__ import annotations

import copy
import random

import pulumi
import pytest

from maas import crdschema
from maas.config import ConfigError, load_config
from maas.deploy.status_writer import batch_targets, stamp_conditions
from maas.observe import Observed
from maas.plan.models.resources import maas_auth_policy, maas_subscription, publish, subscription_status
from maas.tools.render import DYNAMIC_TYPE, render
from tests.conftest import identities, objects_of

# 3.6 status fields the mirror CRDs in shared/crds predate (seed 002); the API server prunes them there.
NEWER_THAN_MIRROR = {"MaaSSubscription": {"rateLimitIdentity", "flowControlStatuses"}}  # the latter: issue 22


def statuses_by_key(rendering) -> dict[str, dict]:
    return {f"{s['kind']} {s['metadata']['namespace']}/{s['metadata']['name']}": s for s in rendering.statuses()}


def with_status(obj: dict, status_object: dict) -> dict:
    """The CR as the API server would hold it after the status write (times stamped as the provider does)."""
    status = stamp_conditions(status_object["status"], None, "2026-01-01T00:00:00Z")
    status = {k: v for k, v in status.items() if k not in NEWER_THAN_MIRROR.get(obj["kind"], set())}
    return {**obj, "status": status}


def test_every_rendered_object_passes_the_crd_validator(dev_rendering):
    problems = [p for body in dev_rendering.objects() for p in crdschema.validate(body)]
    assert problems == []


def test_every_status_validates_against_its_crd_status_schema(dev_rendering):
    statuses = statuses_by_key(dev_rendering)
    assert statuses
    for status_object in statuses.values():
        kind = status_object["kind"].removesuffix("Status")
        key = f"{status_object['metadata']['namespace']}/{status_object['metadata']['name']}"
        obj = objects_of(dev_rendering, kind)[key]
        assert crdschema.validate(with_status(obj, status_object)) == [], key


def test_rate_limit_identity_is_the_only_status_field_the_mirror_crd_lacks(dev_rendering):
    sub = objects_of(dev_rendering, "MaaSSubscription")["models-as-a-service/platform-team"]
    status = statuses_by_key(dev_rendering)["MaaSSubscriptionStatus models-as-a-service/platform-team"]
    with_identity = {**sub, "status": stamp_conditions(status["status"], None, "2026-01-01T00:00:00Z")}
    problems = crdschema.validate(with_identity)
    assert problems and all(any(f in p for f in NEWER_THAN_MIRROR["MaaSSubscription"]) for p in problems)
    assert status["status"]["rateLimitIdentity"] == "legacy"


def test_model_ref_for_each_kind_with_annotations_and_tenant(dev_rendering):
    refs = objects_of(dev_rendering, "MaaSModelRef")
    granite = refs["llm/granite-7b"]
    assert granite["spec"] == {"modelRef": {"kind": "LLMInferenceService", "name": "granite-7b-instruct"}}
    assert granite["metadata"]["annotations"]["opendatahub.io/model-capabilities"] == '["text-generation","chat"]'
    assert refs["external-models/gpt-4o"]["spec"] == {"modelRef": {"kind": "ExternalModel", "name": "gpt-4o"}}
    assert refs["redteam-models/qwen-coder"]["spec"]["tenantRef"] == "redteam"


def test_model_status_ready_with_route_gateway_and_endpoint(dev_rendering):
    status = statuses_by_key(dev_rendering)["MaaSModelRefStatus external-models/gpt-4o"]["status"]
    assert {k: v for k, v in status.items() if k != "conditions"} == {
        "phase": "Ready",
        "endpoint": "https://maas.apps.example.com",
        "httpRouteName": "maas-gpt-4o",
        "httpRouteNamespace": "external-models",
        "httpRouteGatewayName": "maas-default-gateway",
        "httpRouteGatewayNamespace": "openshift-ingress",
        "httpRouteHostnames": [],
        "resolvedModelAlias": "gpt-4o",
    }
    conditions = {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}
    assert conditions == {
        "Ready": ("True", "Reconciled"),
        "GovernanceAttached": ("True", "GovernancePaired"),
        "RuntimeReady": ("Unknown", "NotObserved"),
    }


def test_llminferenceservice_status_has_no_alias_and_a_path_endpoint(dev_rendering):
    status = statuses_by_key(dev_rendering)["MaaSModelRefStatus llm/granite-7b"]["status"]
    assert status["endpoint"] == "https://maas.apps.example.com/granite-7b"
    assert status["httpRouteName"] == "granite-7b-instruct-kserve-route"
    assert "resolvedModelAlias" not in status  # maas-api then uses the MaaSModelRef name as model id


def test_llminferenceservice_alias_comes_from_configuration(dev_raw):
    """KServe publishes the served model id in its live status, which configuration cannot read: say it here so
    maas-api maps body-routed model names back to the MaaSModelRef."""
    next(m for m in dev_raw["models"] if m["name"] == "granite-7b")["modelAlias"] = "publishers/llm/models/granite"
    status = statuses_by_key(render(dev_raw))["MaaSModelRefStatus llm/granite-7b"]["status"]
    assert status["resolvedModelAlias"] == "publishers/llm/models/granite"


def test_model_alias_is_refused_on_an_external_model(dev_raw):
    next(m for m in dev_raw["models"] if m["name"] == "gpt-4o")["modelAlias"] = "gpt"
    with pytest.raises(
        ConfigError, match=r"'modelAlias' is only for LLMInferenceService; an ExternalModel's alias is modelRef.name"
    ):
        load_config(dev_raw)


def test_model_without_subscription_is_pending(dev_raw):
    dev_raw["subscriptions"] = [s for s in dev_raw["subscriptions"] if s["name"] != "premium"]
    status = statuses_by_key(render(dev_raw))["MaaSModelRefStatus external-models/gpt-4o"]["status"]
    assert (status["phase"], status["endpoint"]) == ("Pending", "")


# ------------------------------------------------------------------------------ subscriptions, auth policies


def sub_config(*refs, models=("a",)):
    return load_config(
        {
            "models": [
                {"name": m, "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": m}} for m in models
            ],
            "subscriptions": [{"name": "gold", "owner": {"users": ["bob"]}, "modelRefs": list(refs)}],
        }
    )


def ref(name, **extra):
    return {"name": name, "namespace": "llm", **({"tokenRateLimits": [{"limit": 10, "window": "1m"}]} | extra)}


@pytest.mark.parametrize(
    ("refs", "phase", "ready"),
    [
        ([ref("a")], "Active", ("True", "Reconciled")),
        ([ref("a"), ref("ghost")], "Degraded", ("False", "PartialFailure")),
        ([ref("ghost")], "Failed", ("False", "ReconcileFailed")),
    ],
)
def test_subscription_phase_by_missing_models(refs, phase, ready):
    config = sub_config(*refs)
    status = subscription_status(config, config.subscriptions[0], {"llm/a": "Ready"}, "short")
    assert status["phase"] == phase
    [condition] = status["conditions"]
    assert (condition["type"], condition["status"], condition["reason"]) == ("Ready", *ready)
    reasons = {(e["name"], e["ready"], e["reason"]) for e in status["modelRefStatuses"]}
    assert reasons == {(r["name"], r["name"] != "ghost", "Valid" if r["name"] != "ghost" else "NotFound") for r in refs}
    assert [(t["model"], t["name"], t["namespace"], t["ready"]) for t in status["tokenRateLimitStatuses"]] == (
        [("a", "maas-trlp-a", "llm", True)] if any(r["name"] == "a" for r in refs) else []
    )
    assert status["rateLimitIdentity"] == "short"


@pytest.mark.parametrize(
    ("phases", "expected"),
    [
        ({"llm/a": "Ready", "llm/b": "Pending"}, ("Active", [True, True])),
        ({"llm/a": "Ready", "llm/b": "Failed"}, ("Degraded", [True, False])),
        ({"llm/a": "Failed", "llm/b": "Failed"}, ("Failed", [False, False])),
    ],
)
def test_a_model_whose_backend_failed_cannot_serve_the_subscription(phases, expected):
    """A Pending model still serves once it is ready (its limits are in place); a Failed one has no backend."""
    config = sub_config(ref("a"), ref("b"), models=("a", "b"))
    status = subscription_status(config, config.subscriptions[0], phases, "short")
    assert (status["phase"], [e["ready"] for e in status["modelRefStatuses"]]) == expected
    failed = [e for e in status["modelRefStatuses"] if not e["ready"]]
    assert all((e["reason"], e["message"]) == ("BackendNotReady", f"model llm/{e['name']} is Failed") for e in failed)


def test_unlimited_reference_carries_the_largest_rate_and_an_annotation():
    config = sub_config({"name": "a", "namespace": "llm", "unlimited": True}, ref("b"), models=("a", "b"))
    body = maas_subscription(config.subscriptions[0], "short")
    assert body["spec"]["modelRefs"][0] == {
        "name": "a",
        "namespace": "llm",
        "tokenRateLimits": [{"limit": 1_000_000_000, "window": "1s"}],
    }
    assert body["metadata"]["annotations"]["maas.opendatahub.io/unlimited-model-refs"] == "llm/a"
    assert "rateLimitIdentity" not in body["spec"] and "unlimited" not in str(body["spec"])
    assert crdschema.validate(body) == []


def test_subscription_rates_are_deduplicated_and_sorted():
    rates = [{"limit": 20, "window": "1m"}, {"limit": 100, "window": "1m"}, {"limit": 20, "window": "1m"}]
    config = sub_config(ref("a", tokenRateLimits=rates))
    body = maas_subscription(config.subscriptions[0], "short")
    assert body["spec"]["modelRefs"][0]["tokenRateLimits"] == [
        {"limit": 100, "window": "1m"},
        {"limit": 20, "window": "1m"},
    ]


def test_subscriptions_listing_one_reference_share_its_parts_as_each_alone_would_build_them():
    """Publish builds each distinct reference's entries once (`_References`); what it shares is what the
    unshared functions give each subscription, and a different spelling of a reference is not shared."""
    raw = {
        "models": [{"name": "a", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "a"}}],
        "subscriptions": [
            {"name": name, "owner": {"users": ["bob"]}, "modelRefs": [ref("a", **extra)]}
            for name, extra in (("gold", {}), ("silver", {}), ("bronze", {"unlimited": True, "tokenRateLimits": []}))
        ],
    }
    config = load_config(raw)
    published = publish(config, Observed.nothing(), identities(config))
    bodies = {key: bodies[0] for (kind, key), bodies in published.objects.items() if kind == "Subscription"}
    writes = {
        key: writes[0].body["status"] for (kind, key), writes in published.statuses.items() if kind == "Subscription"
    }
    for subscription in config.subscriptions:
        assert bodies[subscription.key] == maas_subscription(subscription, "short")
        alone = subscription_status(config, subscription, {"llm/a": "Pending"}, "short")
        assert writes[subscription.key] == alone
    gold, silver, bronze = (
        bodies[f"models-as-a-service/{name}"]["spec"]["modelRefs"][0] for name in ("gold", "silver", "bronze")
    )
    assert gold is silver and gold is not bronze
    gold, silver = (writes[f"models-as-a-service/{name}"] for name in ("gold", "silver"))
    assert gold["modelRefStatuses"][0] is silver["modelRefStatuses"][0]
    assert gold["tokenRateLimitStatuses"][0] is silver["tokenRateLimitStatuses"][0]


def test_user_only_auth_policy_passes_the_subjects_cel_rule():
    config = load_config(
        {
            "authPolicies": [
                {"name": "p", "modelRefs": [{"name": "a", "namespace": "llm"}], "subjects": {"users": ["bob"]}}
            ]
        }
    )
    body = maas_auth_policy(config.authPolicies[0])
    assert body["spec"]["subjects"] == {"groups": [], "users": ["bob"]}
    assert crdschema.validate(body) == []


def test_subjects_cel_rule_rejects_empty_subjects():
    config = load_config(
        {
            "authPolicies": [
                {"name": "p", "modelRefs": [{"name": "a", "namespace": "llm"}], "subjects": {"users": ["bob"]}}
            ]
        }
    )
    body = copy.deepcopy(maas_auth_policy(config.authPolicies[0]))
    body["spec"]["subjects"]["users"] = []
    assert any("at least one group or user" in p for p in crdschema.validate(body))


def test_auth_policy_status_phase(dev_rendering):
    status = statuses_by_key(dev_rendering)["MaaSAuthPolicyStatus models-as-a-service/premium-access"]["status"]
    assert status["phase"] == "Active" and status["conditions"][0]["type"] == "Ready"


# ------------------------------------------------------------------------------------------ the program


def test_status_writes_depend_on_their_object_and_policies(dev_rendering):
    urns = {r.name: r.urn for r in dev_rendering.registrations}
    status = next(r for r in dev_rendering.registrations if r.name == "statuses/models-as-a-service")
    assert status.type == DYNAMIC_TYPE and "MaaSModelRef/llm/granite-7b" in batch_targets(status.inputs)
    expected = {
        "llm/granite-7b",
        "llm/maas-trlp-granite-7b",
        "llm/maas-auth-granite-7b",
        "openshift-ingress/maas-gateway-auth",
    }
    named = {r.name for r in dev_rendering.registrations if r.urn in status.dependencies}
    assert expected <= named and all(urns[n] in status.dependencies for n in expected)


def test_status_writes_live_under_their_tenant_with_the_models_it_serves(dev_rendering):
    """A tenant's own status, its subscriptions', its auth policies' and its models' under the tenant, in one
    resource while they fit a batch; each batch is replaced with any object it writes the status of."""
    parents = {r.urn: r for r in dev_rendering.registrations}
    writers = {r.name: r for r in dev_rendering.registrations if r.type == DYNAMIC_TYPE}
    assert sorted(writers) == ["statuses/models-as-a-service", "statuses/redteam"]
    tenant = writers["statuses/models-as-a-service"]
    assert parents[tenant.parent].type == "maas:index:Tenant"
    assert {
        "MaaSSubscription/models-as-a-service/premium",
        "MaaSAuthPolicy/models-as-a-service/premium-access",
        "MaasTenantConfig/models-as-a-service/default-tenant",
        "MaaSModelRef/llm/granite-7b",
    } <= set(batch_targets(tenant.inputs))
    assert "MaaSModelRef/redteam-models/qwen-coder" in batch_targets(writers["statuses/redteam"].inputs)
    names = {
        r.urn: (r.inputs["kind"], r.inputs["metadata"]["name"])
        for r in dev_rendering.registrations
        if r.is_kubernetes_object
    }
    replaced_with = {names[urn] for urn in tenant.replace_with}
    assert {("MaaSModelRef", "granite-7b"), ("MaaSSubscription", "premium")} <= replaced_with
    assert all(
        kind in ("MaaSModelRef", "MaaSSubscription", "MaaSAuthPolicy", "MaasTenantConfig") for kind, _ in replaced_with
    )
    assert objects_of(dev_rendering, "MaaSSubscription")  # the CRs themselves are Kubernetes objects


def test_status_connection_is_the_kubernetes_provider_context_as_a_secret(dev_rendering):
    status = next(r for r in dev_rendering.registrations if r.type == DYNAMIC_TYPE)
    connection = status.inputs["connection"]
    assert connection["value"] == {"context": "maas-dev"}  # wrapped as a Pulumi secret


def test_coexist_publishes_the_crs_but_no_status(dev_raw):
    dev_raw["platform"]["controllerMode"] = "coexist"
    rendering = render(dev_raw)
    assert rendering.statuses() == []
    assert (
        objects_of(rendering, "MaaSModelRef")["llm/granite-7b"]["metadata"]["annotations"]["opendatahub.io/managed"]
        == "false"
    )


def test_render_to_directory_writes_no_status(dev_raw):
    dev_raw["platform"]["kubernetes"] = {"renderYamlToDirectory": "out"}  # a stack of its own: no cluster named
    rendering = render(dev_raw)
    assert rendering.statuses() == [] and objects_of(rendering, "MaaSSubscription")


def test_stack_outputs_per_model(dev_raw):
    render(dev_raw)
    models = pulumi.runtime.settings.get_root_resource().outputs["models"]
    granite = models["llm/granite-7b"]
    assert (granite["route"], granite["endpoint"], granite["phase"]) == (
        "llm/granite-7b-instruct-kserve-route",
        "https://maas.apps.example.com/granite-7b",
        "Ready",
    )
    assert granite["modelDetails"] == {
        "displayName": "Granite 7B Instruct",
        "genaiUseCase": "chat",
        "contextWindow": "8192",
        "modelCapabilities": ["text-generation", "chat"],
    }
    assert "modelDetails" not in models["llm/llama-3-8b"]


def test_no_endpoint_is_a_warning(dev_raw):
    del dev_raw["platform"]["gateway"]["hostname"]
    warnings = render(dev_raw).warnings
    assert any(w.startswith("model llm/granite-7b: no endpoint can be derived from configuration") for w in warnings)


def test_same_configuration_in_any_order_publishes_identical_objects(dev_raw):
    shuffled = copy.deepcopy(dev_raw)
    rng = random.Random(7)
    for key in ("models", "authPolicies", "subscriptions"):
        rng.shuffle(shuffled[key])
        for entry in shuffled[key]:
            for field in ("modelRefs",):
                if field in entry:
                    rng.shuffle(entry[field])
    first, second = (
        publish(config := load_config(dev_raw), Observed.nothing(), identities(config)),
        publish(config := load_config(shuffled), Observed.nothing(), identities(config)),
    )
    assert first.objects == second.objects
    assert first.statuses == second.statuses
    assert first.outputs == second.outputs
