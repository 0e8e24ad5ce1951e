"""Shared platform objects and RBAC (upstream-platform.md §4.2 "not renamed", §8): once, however many tenants."""

from __future__ import annotations

from collections import Counter

import pytest

from maas.config import load_config
from maas.plan.tenants.shared import shared_platform
from maas.tools.render import render
from tests.conftest import owned

SHARED = {
    ("Namespace", "odh-ai-gateway-infra"),
    ("ServiceAccount", "odh-ai-gateway-infra/maas-api"),
    ("ServiceAccount", "odh-ai-gateway-infra/maas-api-cleanup"),
    ("ConfigMap", "odh-ai-gateway-infra/openshift-service-ca.crt"),
    ("NetworkPolicy", "odh-ai-gateway-infra/maas-api-allow-gateway"),
    ("NetworkPolicy", "odh-ai-gateway-infra/maas-api-allow-deployment-ns"),
    ("NetworkPolicy", "odh-ai-gateway-infra/maas-api-allow-monitoring"),
    ("NetworkPolicy", "odh-ai-gateway-infra/maas-api-allow-cleanup"),
    ("NetworkPolicy", "odh-ai-gateway-infra/maas-api-cleanup-restrict"),
    ("NetworkPolicy", "odh-ai-gateway-infra/maas-authorino-allow"),
    ("PodMonitor", "odh-ai-gateway-infra/maas-api-metrics"),
    ("ClusterRole", "maas-api"),
    ("ClusterRole", "maas-api-supplemental"),
    ("ClusterRole", "payload-processing-reader"),
    ("ClusterRole", "payload-processing-credentials"),
    ("ClusterRoleBinding", "maas-api"),
    ("ClusterRoleBinding", "maas-api-supplemental"),
}


def _tenants(count):
    return [{"name": "models-as-a-service"}] + [{"name": f"t{i}"} for i in range(1, count)]


def _shared(platform=None):
    config = load_config({"platform": platform or {}})
    return {(o.kind, o.name): o.body for o in shared_platform(config.platform)}


@pytest.mark.parametrize("count", [1, 2, 5])
def test_shared_objects_exist_once_under_the_platform(count):
    rendering = render({"tenants": _tenants(count)})
    assert set(owned(rendering, "Platform", "platform")) == SHARED
    identities = Counter((r.inputs["kind"], r.name) for r in rendering.registrations if r.is_kubernetes_object)
    assert all(identities[key] == 1 for key in SHARED)
    tenant_components = [r for r in rendering.registrations if r.type == "maas:index:Tenant"]
    assert len(tenant_components) == count


def test_cluster_roles_of_upstream():
    shared = _shared()
    maas_api = shared[("ClusterRole", "maas-api")]["rules"]
    assert {
        "apiGroups": [""],
        "resources": ["secrets"],
        "verbs": ["get"],
        "resourceNames": ["maas-db-config"],
    } in maas_api
    assert {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]} in maas_api
    assert {
        "apiGroups": ["maas.opendatahub.io"],
        "resources": ["maasauthpolicies", "maasmodelrefs", "maassubscriptions"],
        "verbs": ["get", "list", "watch"],
    } in maas_api
    supplemental = shared[("ClusterRole", "maas-api-supplemental")]["rules"]
    assert len(supplemental) == 5
    assert all(rule["resources"] != ["tokenreviews"] for rule in supplemental)
    reader = shared[("ClusterRole", "payload-processing-reader")]["rules"]
    assert {
        "apiGroups": ["networking.istio.io"],
        "resources": ["serviceentries", "destinationrules"],
        "verbs": ["get", "list", "watch", "create", "update", "delete"],
    } in reader
    assert {
        "apiGroups": ["inference.opendatahub.io"],
        "resources": ["externalproviders/status", "externalmodels/status"],
        "verbs": ["get", "update", "patch"],
    } in reader


def test_bindings_name_the_maas_api_service_account_in_the_infra_namespace():
    shared = _shared({"infraNamespace": "maas-infra"})
    for name in ("maas-api", "maas-api-supplemental"):
        binding = shared[("ClusterRoleBinding", name)]
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "maas-api", "namespace": "maas-infra"}]


def test_network_policies_follow_platform_namespaces():
    shared = _shared({"gateway": {"namespace": "gateways"}, "controllerNamespace": "odh", "monitoringNamespace": "mon"})

    def peer(name):
        return shared[("NetworkPolicy", name)]["spec"]["ingress"][0]["from"][0]["namespaceSelector"]

    assert peer("maas-api-allow-gateway") == {"matchLabels": {"kubernetes.io/metadata.name": "gateways"}}
    assert peer("maas-api-allow-deployment-ns") == {"matchLabels": {"kubernetes.io/metadata.name": "odh"}}
    assert peer("maas-api-allow-monitoring") == {"matchLabels": {"kubernetes.io/metadata.name": "mon"}}
    gateway = shared[("NetworkPolicy", "maas-api-allow-gateway")]["spec"]
    assert gateway["podSelector"] == {
        "matchLabels": {
            "app.kubernetes.io/name": "maas-api",
            "app.kubernetes.io/component": "api",
            "app.kubernetes.io/part-of": "models-as-a-service",
        }
    }
    assert gateway["ingress"][0]["ports"] == [{"protocol": "TCP", "port": 8443}]


def test_cleanup_pods_reach_only_maas_api_and_dns():
    spec = _shared()[("NetworkPolicy", "maas-api-cleanup-restrict")]["spec"]
    assert spec["podSelector"] == {"matchLabels": {"app": "maas-api-cleanup"}}
    assert spec["ingress"] == []
    assert spec["egress"][0]["ports"] == [{"protocol": "TCP", "port": 8443}]
    assert {p["port"] for p in spec["egress"][1]["ports"]} == {53, 5353}


def test_xks_has_no_ca_configmap_pod_monitor_or_monitoring_policy():
    kinds_names = set(_shared({"flavor": "xks"}))
    assert ("PodMonitor", "maas-api-metrics") not in kinds_names
    assert ("ConfigMap", "openshift-service-ca.crt") not in kinds_names
    assert ("NetworkPolicy", "maas-api-allow-monitoring") not in kinds_names
    assert ("ClusterRole", "maas-api") in kinds_names


def test_empty_monitoring_namespace_disables_the_pod_monitor():
    kinds_names = set(_shared({"monitoringNamespace": ""}))
    assert ("PodMonitor", "maas-api-metrics") not in kinds_names
    assert ("NetworkPolicy", "maas-api-allow-monitoring") not in kinds_names


def test_service_ca_configmap_is_injected_on_openshift():
    body = _shared()[("ConfigMap", "openshift-service-ca.crt")]
    assert body["metadata"]["annotations"] == {"service.beta.openshift.io/inject-cabundle": "true"}
    assert "data" not in body


def test_cleanup_service_account_does_not_mount_a_token():
    assert _shared()[("ServiceAccount", "maas-api-cleanup")]["automountServiceAccountToken"] is False
