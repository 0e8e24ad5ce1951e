"""Where an ExternalModel may send its callers' requests: outside the cluster and the network it runs in.

The gateway forwards every request for an ExternalModel, with the provider credential, to `external.endpoint`.
An endpoint inside the cluster or its network (the cloud metadata service, the Kubernetes API server, maas-api,
another tenant's Service) would make the gateway a proxy into that network for anyone with a subscription. Such
endpoints are refused (`references.py`) unless `external.allowInternalEndpoint: true` says the model really is
served there; then, and for `tls: false`, the warnings below are given at every preview.

The rules judge the name as written, not what DNS answers for it: a public name whose record points at a private
address is not caught here.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Collection
from typing import TYPE_CHECKING

from .. import naming
from .errors import entry_path, quoted

if TYPE_CHECKING:
    from .schema import MaasConfig, ModelConfig

METADATA_NAMES = frozenset({"metadata", "metadata.google.internal", "instance-data", "instance-data.ec2.internal"})
# Names under these suffixes (or equal to them without the dot) only resolve inside a machine, a cluster or a
# private network; the first that matches says why.
INTERNAL_SUFFIXES = (
    (".localhost", "is a loopback name (it always means this machine: the gateway pod itself)"),
    (".svc", "is a Kubernetes Service name (it resolves inside the cluster)"),
    (".pod", "is a Kubernetes pod name (it resolves inside the cluster, to any address written in it)"),
    (".cluster.local", "is in the cluster's DNS domain cluster.local (it resolves inside the cluster)"),
    (".local", "is a multicast DNS name (.local, RFC 6762: it resolves on the local network)"),
    (".internal", "is in .internal, the top-level domain reserved for private networks (cloud providers' own DNS)"),
)
IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def internal_reason(host: str, namespaces: Collection[str] = ()) -> str | None:
    """Why `host` names a place inside the machine, the cluster or a private network (None: a public name or
    address), read as a resolver reads it; `namespaces` are the cluster's namespaces the configuration knows, for
    `{service}.{namespace}` names."""
    name = as_resolved(host)
    address = ip_address(name)
    return _name_reason(name, namespaces) if address is None else _address_reason(address)


def as_resolved(host: str) -> str:
    """`host` as a resolver reads it: in lowercase, without one trailing dot or IPv6 brackets."""
    return host.lower().removesuffix(".").removeprefix("[").removesuffix("]")


def ip_address(name: str) -> IpAddress | None:
    """The address `name` spells, also in the shorthand, octal and hex forms C resolvers read as IPv4 (`127.1`,
    `0x7f.0.0.1` and `2130706433` all mean 127.0.0.1); an IPv4-mapped IPv6 address is its IPv4 address."""
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        try:
            return ipaddress.IPv4Address(socket.inet_aton(name))
        except (OSError, ValueError):
            return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def _address_reason(address: IpAddress) -> str | None:
    if address.is_unspecified:
        return "is the unspecified address (it means this machine: the gateway pod itself)"
    if address.is_loopback:
        return "is a loopback address (this machine: the gateway pod itself)"
    if address.is_link_local:
        return "is a link-local address (the cloud metadata service lives there)"
    if address.is_multicast:
        return "is a multicast address, not a provider's"
    if address.is_private or address.is_reserved or not address.is_global:
        return "is a private or special-purpose address (your network's or the cluster's, not the internet's)"
    return None


def _name_reason(name: str, namespaces: Collection[str]) -> str | None:
    if name in METADATA_NAMES:
        return "is a cloud metadata service name (it hands out the node's credentials)"
    if name in ("kubernetes", "kubernetes.default") or name.startswith("kubernetes.default."):
        return "is the Kubernetes API server"
    reason = next((why for suffix, why in INTERNAL_SUFFIXES if f".{name}".endswith(suffix)), None)
    if reason is not None:
        return reason
    if "." not in name:
        return "is a single-label name (it resolves against the cluster's DNS search domains, to a Service)"
    service, _, namespace = name.partition(".")
    if "." not in namespace and _cluster_namespace(namespace, namespaces):
        return (
            f"is Service {quoted(service)} in namespace {quoted(namespace)} (the cluster's DNS search domains "
            "resolve it)"
        )
    return None


def _cluster_namespace(namespace: str, namespaces: Collection[str]) -> bool:
    system = namespace in naming.SYSTEM_NAMESPACES or namespace.startswith(naming.SYSTEM_PREFIXES)
    return system or namespace in namespaces


def cluster_namespaces(config: MaasConfig) -> frozenset[str]:
    """Every namespace the configuration puts something in: `{service}.{namespace}` there is a Service."""
    platform = config.platform
    return frozenset(
        {
            platform.infraNamespace,
            platform.controllerNamespace,
            platform.gateway.namespace,
            *([platform.monitoringNamespace] if platform.monitoringNamespace else []),
            *(tenant.namespace for tenant in config.tenants),
            *(model.namespace for model in config.models),
            *(model.route_namespace for model in config.models),
        }
    )


# ------------------------------------------------------------------------------- warnings at every preview


def internal_endpoint_warnings(config: MaasConfig) -> list[str]:
    """One warning per ExternalModel with `allowInternalEndpoint: true`: what it lets through, or, for an endpoint
    that is not internal, that the setting only keeps a later internal endpoint from being refused."""
    namespaces = cluster_namespaces(config)
    warnings = []
    for path, model in _external_models(config):
        external = model.external
        if not external.allowInternalEndpoint:
            continue
        reason = internal_reason(external.endpoint, namespaces)
        if reason is None:
            warnings.append(
                f"{path}.external.allowInternalEndpoint: is true, but {quoted(external.endpoint)} is not an "
                "internal endpoint; remove the setting, so that a later change to an internal endpoint is refused"
            )
        else:
            warnings.append(
                f"{path}.external.endpoint: {quoted(external.endpoint)} {reason}; external.allowInternalEndpoint: "
                "true lets the gateway forward callers' requests and the provider credential there, so be sure this "
                "model really is served at that address"
            )
    return warnings


def plaintext_endpoint_warnings(config: MaasConfig) -> list[str]:
    """One warning per ExternalModel with `tls: false`: the gateway then speaks plain HTTP to the provider."""
    return [
        f"{path}.external.tls: external.tls is false: credentials and prompts to {model.external.endpoint} travel "
        "unencrypted; set tls: true unless the provider only serves plain HTTP"
        for path, model in _external_models(config)
        if not model.external.tls
    ]


def _external_models(config: MaasConfig) -> list[tuple[str, ModelConfig]]:
    """ExternalModels with their configuration paths (a loaded configuration has every entry at its own index)."""
    return [
        (entry_path("models", index, {"name": model.name, "namespace": model.namespace}), model)
        for index, model in enumerate(config.models)
        if model.external is not None
    ]
