"""No entry may produce an object with another object's identity, whatever concern rendered each of them."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maas.config import ConfigError, load_config
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.checks.identities import identity_issues
from maas.plan.desired import Desired, Plan, k8s_object
from maas.tools.render import RecordingMonitor, render


def service(namespace: str, name: str) -> Desired:
    return Desired(k8s_object("v1", "Service", name, namespace, spec={"type": "ExternalName", "externalName": "x"}))


def test_two_entries_rendering_one_object_are_both_named():
    plan = Plan()
    plan.add("Tenant", "models-as-a-service", service("odh-ai-gateway-infra", "maas-api"))
    plan.add("Model", "odh-ai-gateway-infra/api", service("odh-ai-gateway-infra", "maas-api"))
    assert [str(issue) for issue in identity_issues(plan)] == [
        "maas:tenants (models-as-a-service): renders Service odh-ai-gateway-infra/maas-api, which "
        "maas:models (odh-ai-gateway-infra/api) renders too; one object cannot belong to two entries, so rename or "
        "move this entry"
    ]


def test_one_entry_rendering_an_object_twice_is_an_error():
    plan = Plan()
    plan.add("Model", "llm/x", service("llm", "maas-x"), service("llm", "maas-x"))
    assert [issue.message.split(";")[0] for issue in identity_issues(plan)] == ["renders Service llm/maas-x twice"]


def test_same_name_in_another_group_kind_or_namespace_is_another_object():
    plan = Plan()
    plan.add("Model", "llm/x", service("llm", "maas-x"), service("other", "maas-x"))
    route = Desired(k8s_object("gateway.networking.k8s.io/v1", "HTTPRoute", "maas-x", "llm", spec={}))
    plan.add("Model", "llm/y", route)
    assert identity_issues(plan) == []


def test_a_status_write_is_not_a_second_object():
    plan = Plan()
    body = k8s_object("maas.opendatahub.io/v1alpha1", "MaaSModelRef", "x", "llm", spec={})
    status = {**body, "status": {"phase": "Ready"}}
    plan.add("Model", "llm/x", Desired(body), Desired(status, subresource="status"))
    assert identity_issues(plan) == []


def test_a_model_policy_may_not_target_the_platforms_own_route():
    plan = Plan()
    route = Desired(k8s_object("gateway.networking.k8s.io/v1", "HTTPRoute", "maas-api-route", "infra", spec={}))
    plan.add("Tenant", "models-as-a-service", route)
    target = {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "maas-api-route"}
    policy = k8s_object("kuadrant.io/v1", "AuthPolicy", "maas-auth-x", "infra", spec={"targetRef": target})
    plan.add("Model", "llm/x", Desired(policy))
    assert [str(issue) for issue in identity_issues(plan)] == [
        "maas:models (llm/x): route infra/maas-api-route belongs to maas:tenants (models-as-a-service); a model's "
        "policies may only attach to the model's own route, so set route.name to the model's route"
    ]


EXTERNAL_API = {
    "name": "api",
    "namespace": "odh-ai-gateway-infra",
    "modelRef": {"kind": "ExternalModel", "name": "api"},
    "external": {
        "provider": "openai",
        "targetModel": "gpt",
        "endpoint": "evil.example.com",
        "credentialRef": {"name": "k"},
    },
}


def test_an_external_model_cannot_take_over_maas_api_and_nothing_is_registered():
    """The finding: ExternalModel `api` in the infra namespace rendered a second Service maas-api (ExternalName to
    any host), to which the gateway AuthPolicy sends API-key validation."""
    monitor = RecordingMonitor()
    with pytest.raises(ConfigError) as caught:
        render({"models": [EXTERNAL_API]}, monitor=monitor)
    assert [str(i) for i in caught.value.issues] == [
        "maas:models[0] (odh-ai-gateway-infra/api).namespace: 'odh-ai-gateway-infra' is platform.infraNamespace, "
        "where every tenant's maas-api runs; models may not live there, so use the namespace of the model's backend"
    ]
    assert monitor.registrations == []


def test_a_model_route_cannot_point_at_the_maas_api_route():
    model = {
        "name": "x",
        "namespace": "llm",
        "modelRef": {"kind": "LLMInferenceService", "name": "x"},
        "route": {"name": "maas-api-route", "namespace": "odh-ai-gateway-infra"},
    }
    with pytest.raises(ConfigError, match=r"route.namespace: 'odh-ai-gateway-infra' is platform.infraNamespace"):
        load_config({"models": [model]})


# ------------------------------------------------------------------------------------------ property


TENANTS = ["models-as-a-service", "a", "api", "route", "reader", "backend-tls"]
NAMESPACES = ["llm", "models-as-a-service", "ai-tenant-a", "ai-tenant-api", "odh-ai-gateway-infra", "openshift-ingress"]
NAMES = ["api", "maas-api", "default-tenant", "x", "payload-processing", "route", "a"]


@st.composite
def configurations(draw):
    tenants = draw(st.lists(st.sampled_from(TENANTS), min_size=1, max_size=3, unique=True))
    models = []
    for index in range(draw(st.integers(1, 5))):
        name, backend = draw(st.sampled_from(NAMES)), draw(st.sampled_from(NAMES))
        model = {"name": name, "namespace": draw(st.sampled_from(NAMESPACES)), "tenant": draw(st.sampled_from(tenants))}
        if draw(st.booleans()):
            model["modelRef"] = {"kind": "ExternalModel", "name": backend}
            model["external"] = {
                "provider": "p",
                "targetModel": f"t{index}",  # one routing header per model (a shared one is refused)
                "endpoint": "h.example.com",
                "credentialRef": {"name": "k"},
            }
        else:
            model["modelRef"] = {"kind": "LLMInferenceService", "name": backend}
            if draw(st.booleans()):
                model["route"] = {"name": draw(st.sampled_from([*NAMES, "maas-api-route", "maas-x"]))}
        models.append(model)
    entries = []
    for index, model in enumerate(models):
        tenant = model["tenant"]
        namespace = tenant if tenant == "models-as-a-service" else f"ai-tenant-{tenant}"
        ref = {"name": model["name"], "namespace": model["namespace"]}
        entries.append((index, namespace, ref))
    subscriptions = [
        {"name": f"s{i}", "namespace": ns, "owner": {"users": ["u"]}, "modelRefs": [{**ref, "unlimited": True}]}
        for i, ns, ref in entries
    ]
    policies = [
        {"name": f"p{i}", "namespace": ns, "subjects": {"users": ["u"]}, "modelRefs": [ref]} for i, ns, ref in entries
    ]
    platform = draw(
        st.sampled_from(
            [
                {},
                {"infraNamespace": "llm"},
                {"gateway": {"namespace": "ai-tenant-a"}},
                {"infraNamespace": "openshift-ingress"},
            ]
        )
    )
    return {
        "platform": platform,
        "tenants": [{"name": t} for t in tenants],
        "models": models,
        "subscriptions": subscriptions,
        "authPolicies": policies,
    }


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configurations())
def test_property_no_valid_configuration_renders_two_objects_with_one_identity(raw):
    try:
        config = load_config(raw)
    except ConfigError:
        return
    assert identity_issues(build_plan(config, Observed.nothing())) == []
