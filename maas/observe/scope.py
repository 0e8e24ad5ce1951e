"""What to observe: exactly the scopes to LIST and the objects to GET that the plan reads, from the configuration."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .. import naming
from ..config import MaasConfig
from .snapshot import CRD_KIND, IMPORT_ONLY_KINDS, KINDS, ObjectRef, Scope


@dataclass(frozen=True)
class ObservationRequest:
    """LISTs and GETs in a stable order (by apiVersion, kind, namespace, name), without duplicates."""

    lists: tuple[Scope, ...]
    gets: tuple[ObjectRef, ...]


def what_to_observe(config: MaasConfig) -> ObservationRequest:
    """The live state the plan needs (DESIGN.md, Architecture item 0), and nothing else."""
    lists = [*_model_scopes(config), *_policy_scopes(config), *_tenant_scopes(config)]
    gets = [*_platform_objects(config), *_usage_dashboard(config), *_crds()]
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
    """maas-api's database Secret and each tenant's maas-api Deployment and payload-processing plugins; for a
    Praxis tenant its MaasTenantConfig too, whose annotations the migration reads (force, a past cleanup)."""
    infra, gateway_ns = config.platform.infraNamespace, config.platform.gateway.namespace
    deployments = [ObjectRef("Deployment", infra, naming.maas_api_name(t.name)) for t in config.tenants]
    plugins = [ObjectRef("ConfigMap", gateway_ns, naming.payload_plugins_name(t.name)) for t in config.tenants]
    praxis = [t for t in config.tenants if t.payloadProcessing.type == "praxis"]
    tenant_configs = [ObjectRef("MaasTenantConfig", t.namespace, naming.TENANT_CONFIG_NAME) for t in praxis]
    return [ObjectRef("Secret", infra, naming.MAAS_DB_SECRET), *deployments, *plugins, *tenant_configs]


def _usage_dashboard(config: MaasConfig) -> list[ObjectRef]:
    """The usage dashboard, also when it is not wanted: a copy the controller left behind is reported."""
    namespace = config.platform.monitoringNamespace
    return [ObjectRef("PersesDashboard", namespace, naming.USAGE_DASHBOARD)] if namespace else []


def _crds(kinds: Iterable[str] | None = None) -> list[ObjectRef]:
    """The CRD of every custom kind the program writes or reads (or of `kinds`): whether it is installed is an
    observation."""
    chosen = (
        [KINDS[k] for k in kinds]
        if kinds is not None
        else [k for k in KINDS.values() if k.kind not in IMPORT_ONLY_KINDS]
    )
    return [ObjectRef(CRD_KIND, None, kind.crd_name) for kind in chosen if kind.crd_name is not None]


# What `python -m maas import` reads first: everything a maas-controller reconciles from, in every namespace, and
# the policies it generated (the live opt-outs and the quota-continuity report compare against them).
IMPORTED_KINDS = (
    "AITenant",
    "MaasTenantConfig",
    "Tenant",
    "Config",
    "MaaSModelRef",
    "ExternalModel",
    "MaaSAuthPolicy",
    "MaaSSubscription",
    "TokenRateLimitPolicy",
    "AuthPolicy",
)


def what_to_import() -> ObservationRequest:
    """The controller's resources everywhere. The second read comes once the imported configuration is known:
    what its plan observes, and by name every object it would own."""
    return ObservationRequest(
        lists=tuple(sorted((Scope(kind) for kind in IMPORTED_KINDS), key=lambda scope: scope.sort_key)),
        gets=tuple(sorted(_crds(IMPORTED_KINDS), key=lambda ref: ref.sort_key)),
    )
