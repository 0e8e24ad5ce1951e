"""What to observe: exactly the scopes to LIST and the objects to GET that the plan reads, from the configuration."""

from __future__ import annotations

from dataclasses import dataclass

from .. import naming
from ..config import MaasConfig
from .snapshot import CRD_KIND, KINDS, ObjectRef, Scope

MAAS_DB_SECRET = "maas-db-config"


@dataclass(frozen=True)
class ObservationRequest:
    """LISTs and GETs in a stable order (by apiVersion, kind, namespace, name), without duplicates."""

    lists: tuple[Scope, ...]
    gets: tuple[ObjectRef, ...]


def what_to_observe(config: MaasConfig) -> ObservationRequest:
    """The live state the plan needs (DESIGN.md, Architecture item 0), and nothing else."""
    lists = [*_model_scopes(config), *_policy_scopes(config), *_tenant_scopes(config)]
    gets = [*_platform_objects(config), *_crds()]
    return ObservationRequest(
        lists=tuple(sorted(set(lists), key=lambda scope: scope.sort_key)),
        gets=tuple(sorted(set(gets), key=lambda ref: ref.sort_key)),
    )


def _model_scopes(config: MaasConfig) -> list[Scope]:
    """Each model's backend and HTTPRoute; Gateways all live in the gateway namespace."""
    llmisvc = [m for m in config.models if m.modelRef.kind == "LLMInferenceService"]
    backends = [Scope("LLMInferenceService", m.namespace) for m in llmisvc]
    routes = [Scope("HTTPRoute", m.route_namespace) for m in config.models]
    return [*backends, *routes, Scope("Gateway", config.platform.gateway.namespace)]


def _policy_scopes(config: MaasConfig) -> list[Scope]:
    """The generated policies live beside the routes (per model) and in the gateway namespace (per gateway)."""
    namespaces = {m.route_namespace for m in config.models} | {config.platform.gateway.namespace}
    return [Scope(kind, ns) for ns in namespaces for kind in ("TokenRateLimitPolicy", "AuthPolicy")]


def _tenant_scopes(config: MaasConfig) -> list[Scope]:
    return [Scope("MaaSSubscription", tenant.namespace) for tenant in config.tenants]


def _platform_objects(config: MaasConfig) -> list[ObjectRef]:
    """maas-api's database Secret and each tenant's maas-api Deployment and payload-processing plugins."""
    infra, gateway_ns = config.platform.infraNamespace, config.platform.gateway.namespace
    deployments = [ObjectRef("Deployment", infra, naming.maas_api_name(t.name)) for t in config.tenants]
    plugins = [ObjectRef("ConfigMap", gateway_ns, naming.payload_plugins_name(t.name)) for t in config.tenants]
    return [ObjectRef("Secret", infra, MAAS_DB_SECRET), *deployments, *plugins]


def _crds() -> list[ObjectRef]:
    """The CRD of every custom kind the program writes or reads: whether it is installed is an observation."""
    return [ObjectRef(CRD_KIND, None, kind.crd_name) for kind in KINDS.values() if kind.crd_name is not None]
