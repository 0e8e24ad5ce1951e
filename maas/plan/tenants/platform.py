"""The per-tenant platform (upstream-platform.md §3.2, §4): what the AITenant and MaasTenantConfig reconcilers
apply for one tenant, as plain objects, plus the tenant's stack outputs.

The tenant namespace holds the tenant's MaaS resources; every tenant's maas-api runs in the shared infra
namespace; payload processing and telemetry sit next to the tenant's Gateway.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from ... import naming
from ...config import MaasConfig, TenantConfig
from ..desired import Desired, k8s_object
from .maasapi import maas_api
from .payload import payload_processing
from .rbac import tenant_admin_role
from .telemetry import gateway_telemetry, telemetry_labels

MAAS_API_VERSION = "maas.opendatahub.io/v1alpha1"
MAAS_API_REPLICAS_ANNOTATION = "maas.opendatahub.io/maas-api-replicas"


@dataclass
class TenantPlatform:
    """A tenant's objects, the warnings to show, and those warnings that make the tenant Degraded."""

    objects: list[Desired] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)


def tenant_platform(config: MaasConfig, tenant: TenantConfig) -> TenantPlatform:
    built = TenantPlatform()
    in_namespace = [_tenant_config(tenant), tenant_admin_role(tenant)]
    namespace = _namespace(tenant)
    built.objects += [namespace, *(replace(obj, depends_on=(namespace.identity,)) for obj in in_namespace)]
    built.objects += maas_api(config, tenant)
    payload, replica_warnings = payload_processing(config, tenant)
    built.objects += payload
    telemetry, privacy_warnings = gateway_telemetry(config.platform, tenant)
    built.objects += telemetry
    built.degraded = replica_warnings + _praxis_warnings(tenant)
    built.warnings = built.degraded + privacy_warnings
    return built


def tenant_outputs(config: MaasConfig, tenant: TenantConfig, built: TenantPlatform) -> dict[str, Any]:
    """What `pulumi stack output` shows per tenant beyond namespace, gateway and management state."""
    return {
        "maasApiUrl": naming.maas_api_url(tenant.name, config.platform.infraNamespace),
        "telemetryLabels": telemetry_labels(tenant),
        "phase": "Degraded" if built.degraded else "Active",
        "warnings": built.degraded,
    }


def _namespace(tenant: TenantConfig) -> Desired:
    """Retained on delete, as upstream never deletes a tenant namespace: it may hold objects of others."""
    labels = {**naming.aitenant_labels(tenant.name), naming.GENERATED_NAMESPACE_LABEL: "true"}
    namespace = k8s_object("v1", "Namespace", tenant.namespace, None, labels=labels)
    return Desired(namespace, retain_on_delete=True, adopt=True)


def _tenant_config(tenant: TenantConfig) -> Desired:
    """`MaasTenantConfig/default-tenant`, so that kubectl users and the admission webhooks see the tenant."""
    settings = tenant.payloadProcessing
    payload = settings.model_dump(include={"replicas", "autoscaling"}, exclude_none=True)
    spec = {"apiKeys": tenant.apiKeys.model_dump(), "telemetry": tenant.telemetry.model_dump()}
    if payload:
        spec["payloadProcessing"] = payload
    annotations = {MAAS_API_REPLICAS_ANNOTATION: str(tenant.maasApiReplicas)}
    if settings.type == "praxis":
        annotations[naming.PAYLOAD_PROCESSING_TYPE_ANNOTATION] = "praxis"
    if settings.forceMigration:
        annotations[naming.FORCE_MIGRATION_ANNOTATION] = "true"
    body = k8s_object(
        MAAS_API_VERSION,
        "MaasTenantConfig",
        naming.TENANT_CONFIG_NAME,
        tenant.namespace,
        spec,
        naming.aitenant_labels(tenant.name),
        annotations,
    )
    return Desired(body)


def _praxis_warnings(tenant: TenantConfig) -> list[str]:
    """Praxis objects are not described by the references; the choice is only recorded, IPP keeps running."""
    settings = tenant.payloadProcessing
    if settings.type != "praxis":
        if settings.apiTranslation is None and not settings.forceMigration:
            return []
        return [
            f"maas:tenants ({tenant.name}).payloadProcessing: apiTranslation and forceMigration only apply to the "
            "IPP-to-Praxis migration (type: praxis); with type ipp they have no effect"
        ]
    unwritten = "; apiTranslation is not written (the MaasTenantConfig CRD has no such field)"
    return [
        f"maas:tenants ({tenant.name}).payloadProcessing.type is praxis, which this program does not deploy yet "
        f"(the Praxis objects and the IPP-to-Praxis migration are not specified): the choice is recorded on "
        f"MaasTenantConfig/default-tenant and the IPP payload processing stays in place"
        + (unwritten if settings.apiTranslation else "")
    ]
