"""What the program observes: exactly the scopes and objects its plan reads, derived from the configuration."""

from __future__ import annotations

from maas.config import load_config
from maas.observe import KINDS, ObjectRef, Scope, what_to_observe

CRDS = [
    "authpolicies.kuadrant.io",
    "certificates.cert-manager.io",
    "destinationrules.networking.istio.io",
    "envoyfilters.networking.istio.io",
    "externalmodels.maas.opendatahub.io",
    "gateways.gateway.networking.k8s.io",
    "httproutes.gateway.networking.k8s.io",
    "inferenceobjectives.llm-d.ai",
    "llminferenceservices.serving.kserve.io",
    "maasauthpolicies.maas.opendatahub.io",
    "maasmodelrefs.maas.opendatahub.io",
    "maassubscriptions.maas.opendatahub.io",
    "maastenantconfigs.maas.opendatahub.io",
    "persesdashboards.perses.dev",
    "podmonitors.monitoring.coreos.com",
    "serviceentries.networking.istio.io",
    "telemetries.telemetry.istio.io",
    "telemetrypolicies.extensions.kuadrant.io",
    "tokenratelimitpolicies.kuadrant.io",
]


def test_the_dev_stack_observes_exactly_what_its_plan_reads(dev_config):
    request = what_to_observe(dev_config)
    assert request.lists == (
        Scope("Gateway", "openshift-ingress"),
        Scope("HTTPRoute", "external-models"),
        Scope("HTTPRoute", "llm"),
        Scope("HTTPRoute", "redteam-models"),
        Scope("AuthPolicy", "external-models"),
        Scope("AuthPolicy", "llm"),
        Scope("AuthPolicy", "openshift-ingress"),
        Scope("AuthPolicy", "redteam-models"),
        Scope("TokenRateLimitPolicy", "external-models"),
        Scope("TokenRateLimitPolicy", "llm"),
        Scope("TokenRateLimitPolicy", "openshift-ingress"),
        Scope("TokenRateLimitPolicy", "redteam-models"),
        Scope("MaaSSubscription", "ai-tenant-redteam"),
        Scope("MaaSSubscription", "models-as-a-service"),
        Scope("LLMInferenceService", "llm"),
        Scope("LLMInferenceService", "redteam-models"),
    )
    assert request.gets == (
        *[ObjectRef("CustomResourceDefinition", None, name) for name in CRDS],
        ObjectRef("Deployment", "odh-ai-gateway-infra", "maas-api"),
        ObjectRef("Deployment", "odh-ai-gateway-infra", "maas-api-redteam"),
        ObjectRef("PersesDashboard", "opendatahub", "dashboard-3-maas-usage-admin"),
        ObjectRef("ConfigMap", "openshift-ingress", "payload-processing-plugins"),
        ObjectRef("ConfigMap", "openshift-ingress", "payload-processing-plugins-redteam"),
        ObjectRef("Secret", "odh-ai-gateway-infra", "maas-db-config"),
    )


def test_no_model_means_no_backend_or_route_scope_but_still_the_gateway_and_the_platform():
    request = what_to_observe(load_config({"platform": {"gateway": {"namespace": "gw"}, "infraNamespace": "infra"}}))
    assert request.lists == (
        Scope("Gateway", "gw"),
        Scope("AuthPolicy", "gw"),
        Scope("TokenRateLimitPolicy", "gw"),
        Scope("MaaSSubscription", "models-as-a-service"),
    )
    assert ObjectRef("Secret", "infra", "maas-db-config") in request.gets
    assert ObjectRef("ConfigMap", "gw", "payload-processing-plugins") in request.gets


def test_a_route_in_another_namespace_is_observed_there_with_its_policies():
    model = {
        "name": "m",
        "namespace": "models",
        "modelRef": {"kind": "LLMInferenceService", "name": "svc"},
        "route": {"name": "shared", "namespace": "routes"},
    }
    request = what_to_observe(load_config({"models": [model]}))
    assert Scope("LLMInferenceService", "models") in request.lists
    assert {s for s in request.lists if s.namespace == "routes"} == {
        Scope("HTTPRoute", "routes"),
        Scope("AuthPolicy", "routes"),
        Scope("TokenRateLimitPolicy", "routes"),
    }
    assert Scope("HTTPRoute", "models") not in request.lists


BUILT_IN = {"v1", "apps/v1", "batch/v1", "networking.k8s.io/v1", "rbac.authorization.k8s.io/v1"}


def test_every_custom_kind_the_program_writes_is_known_at_the_version_it_writes_and_its_crd_is_observed(
    dev_config, dev_rendering
):
    custom = {(o["apiVersion"], o["kind"]) for o in dev_rendering.objects() if o["apiVersion"] not in BUILT_IN}
    assert custom <= {(k.api_version, k.kind) for k in KINDS.values()}
    crds = {ref.name for ref in what_to_observe(dev_config).gets if ref.kind == "CustomResourceDefinition"}
    assert {KINDS[kind].crd_name for _, kind in custom} <= crds
