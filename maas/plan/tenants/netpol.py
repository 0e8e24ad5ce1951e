"""NetworkPolicy building blocks shared by the platform's policies (maas-api and payload processing)."""

from __future__ import annotations

from typing import Any

from ..desired import k8s_object

NETWORK_POLICY_API_VERSION = "networking.k8s.io/v1"
GATEWAY_POD = {"gateway.istio.io/managed": "istio.io-gateway-controller"}


def namespace_peer(namespace: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}


def gateway_pods(namespace: str) -> dict[str, Any]:
    """Every Istio-managed Gateway pod in the gateway namespace (all tenants' Gateways)."""
    return {**namespace_peer(namespace), "podSelector": {"matchLabels": GATEWAY_POD}}


def tcp(*ports: int) -> list[dict[str, Any]]:
    return [{"protocol": "TCP", "port": port} for port in ports]


def dns_egress() -> dict[str, Any]:
    """DNS, including 5353 where OpenShift's CoreDNS pods listen (policies see the pod port)."""
    return {"ports": [{"protocol": protocol, "port": port} for port in (53, 5353) for protocol in ("UDP", "TCP")]}


def network_policy(name: str, namespace: str, labels: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    return k8s_object(NETWORK_POLICY_API_VERSION, "NetworkPolicy", name, namespace, spec=spec, labels=labels)
