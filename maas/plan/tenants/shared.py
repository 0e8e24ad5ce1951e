"""Platform objects every tenant shares, each registered once (upstream-platform.md §4.2 "not renamed", §4.3).

Upstream, every tenant's reconcile re-applies these, so their tracking labels name the last writer; here they
belong to the `Platform` component and carry no tenant labels.
"""

from __future__ import annotations

from typing import Any

from ... import naming
from ...config import PlatformConfig
from ..desired import Desired, k8s_object
from .netpol import dns_egress, gateway_pods, namespace_peer, network_policy, tcp
from .rbac import shared_rbac

POD_MONITOR_API_VERSION = "monitoring.coreos.com/v1"
METRICS_PORT = 9090
CLEANUP_POD = {"app": naming.MAAS_API_CLEANUP}
AUTHORINO_NAMESPACES = ["kuadrant-system", "openshift-operators", "rh-connectivity-link"]


def shared_platform(platform: PlatformConfig) -> list[Desired]:
    """Everything shared, in the platform's infra namespace or cluster-scoped."""
    bodies = [*_service_accounts(platform), *_network_policies(platform)]
    if _monitored(platform):
        bodies.append(_pod_monitor(platform))
    desired = [Desired(body) for body in bodies]
    # The controller created the infra namespace at startup; it may exist already, and it holds the maas-db-config
    # Secret that operators provide, so it is adopted and never deleted.
    infra = k8s_object("v1", "Namespace", platform.infraNamespace, None, labels=_labels())
    desired.append(Desired(infra, retain_on_delete=True, adopt=True))
    if platform.flavor == "openshift":
        # OpenShift publishes this ConfigMap in every namespace itself: take it over, and leave it when we go.
        desired.append(Desired(_service_ca(platform), retain_on_delete=True, adopt=True))
    return desired + shared_rbac(platform)


def _monitored(platform: PlatformConfig) -> bool:
    """OpenShift only (xKS drops monitoring), and not when monitoring is switched off with `""`."""
    return platform.flavor == "openshift" and bool(platform.monitoringNamespace)


def _service_accounts(platform: PlatformConfig) -> list[dict[str, Any]]:
    """Every tenant's maas-api runs as `maas-api`, every key-cleanup job as `maas-api-cleanup`."""
    maas_api = k8s_object("v1", "ServiceAccount", naming.MAAS_API, platform.infraNamespace, labels=_labels())
    cleanup = k8s_object(
        "v1",
        "ServiceAccount",
        naming.MAAS_API_CLEANUP,
        platform.infraNamespace,
        labels=_labels(),
        automountServiceAccountToken=False,
    )
    return [maas_api, cleanup]


def _labels() -> dict[str, str]:
    return naming.platform_labels()


def _network_policies(platform: PlatformConfig) -> list[dict[str, Any]]:
    maas_api = {"matchLabels": naming.maas_api_selector()}

    def ingress(name: str, pods: dict[str, Any], peers: list[dict[str, Any]], ports: list[int]) -> dict[str, Any]:
        rule: dict[str, Any] = {"from": peers}
        if ports:
            rule["ports"] = tcp(*ports)
        spec = {"podSelector": pods, "policyTypes": ["Ingress"], "ingress": [rule]}
        return network_policy(name, platform.infraNamespace, _labels(), spec)

    authorino = {
        "namespaceSelector": {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": AUTHORINO_NAMESPACES}
            ]
        },
        "podSelector": {"matchLabels": {"authorino-resource": "authorino"}},
    }
    policies = [
        ingress("maas-api-allow-gateway", maas_api, [gateway_pods(platform.gateway.namespace)], [naming.MAAS_API_PORT]),
        ingress(
            "maas-api-allow-deployment-ns",
            maas_api,
            [namespace_peer(platform.controllerNamespace)],
            [naming.MAAS_API_PORT],
        ),
        ingress("maas-authorino-allow", {}, [authorino], []),
        ingress("maas-api-allow-cleanup", maas_api, [{"podSelector": {"matchLabels": CLEANUP_POD}}], [8080, 8443]),
        _cleanup_restrict(platform, maas_api),
    ]
    if _monitored(platform):
        policies.append(
            ingress(
                "maas-api-allow-monitoring", maas_api, [namespace_peer(platform.monitoringNamespace)], [METRICS_PORT]
            )
        )
    return policies


def _cleanup_restrict(platform: PlatformConfig, maas_api: dict[str, Any]) -> dict[str, Any]:
    """Key-cleanup pods may only reach maas-api (and DNS), so they cannot serve as a pivot."""
    spec = {
        "podSelector": {"matchLabels": CLEANUP_POD},
        "policyTypes": ["Egress", "Ingress"],
        "ingress": [],
        "egress": [{"to": [{"podSelector": maas_api}], "ports": tcp(naming.MAAS_API_PORT)}, dns_egress()],
    }
    return network_policy("maas-api-cleanup-restrict", platform.infraNamespace, _labels(), spec)


def _service_ca(platform: PlatformConfig) -> dict[str, Any]:
    """The CA bundle maas-api trusts on OpenShift, injected by the service-CA operator (xKS mounts a Secret)."""
    annotations = {"service.beta.openshift.io/inject-cabundle": "true"}
    return k8s_object(
        "v1",
        "ConfigMap",
        naming.SERVICE_CA_CONFIGMAP,
        platform.infraNamespace,
        labels=_labels(),
        annotations=annotations,
    )


def _pod_monitor(platform: PlatformConfig) -> dict[str, Any]:
    spec = {
        "selector": {"matchLabels": {naming.APP_NAME: naming.MAAS_API}},
        "podMetricsEndpoints": [{"port": "metrics", "path": "/metrics", "interval": "30s"}],
    }
    labels = {**_labels(), "monitoring.opendatahub.io/scrape": "true"}
    return k8s_object(POD_MONITOR_API_VERSION, "PodMonitor", "maas-api-metrics", platform.infraNamespace, spec, labels)
