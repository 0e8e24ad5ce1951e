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
from ...observe import Observed
from ..desired import Desired, k8s_object
from .maasapi import maas_api, unverified_tls_notes
from .migration import API_TRANSLATION_ANNOTATION, MIGRATED_ANNOTATION, Decision, migration_decision
from .payload import payload_processing, unverified_tls_note
from .rbac import tenant_admin_role
from .telemetry import gateway_telemetry, telemetry_labels

MAAS_API_VERSION = "maas.opendatahub.io/v1alpha1"
MAAS_API_REPLICAS_ANNOTATION = "maas.opendatahub.io/maas-api-replicas"


@dataclass
class TenantPlatform:
    """A tenant's objects, the warnings to show, those that make the tenant Degraded, and the migration's."""

    objects: list[Desired] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    degraded: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # facts no setting changes (unverifiable TLS): said, not warned
    migration: Decision | None = None  # None for an IPP tenant


def tenant_platform(config: MaasConfig, tenant: TenantConfig, observed: Observed) -> TenantPlatform:
    """`observed` decides a Praxis tenant's migration (its live plugins ConfigMap)."""
    built = TenantPlatform(migration=_migration(config, tenant, observed))
    in_namespace = [_tenant_config(tenant, built.migration), tenant_admin_role(tenant)]
    namespace = _namespace(tenant)
    built.objects += [namespace, *(replace(obj, depends_on=(namespace.identity,)) for obj in in_namespace)]
    built.objects += maas_api(config, tenant)
    payload, replica_warnings, payload_tls = _payload(config, tenant, built.migration)
    built.objects += payload
    telemetry, privacy_warnings = gateway_telemetry(config.platform, tenant)
    built.objects += telemetry
    built.degraded = replica_warnings + _migration_warnings(tenant, built.migration)
    built.notes = unverified_tls_notes(config, tenant) + payload_tls
    migration_notes = list(built.migration.notes if built.migration else ())
    built.warnings = built.degraded + privacy_warnings + migration_notes
    return built


def _payload(config: MaasConfig, tenant: TenantConfig, migration: Decision | None) -> tuple[list, list, list]:
    """IPP's objects, the warnings that degrade the tenant, and its TLS warning; nothing once a Praxis migration
    cleans IPP up (unregistered, so Pulumi deletes them; their settings no longer apply)."""
    if _cleans_up(tenant, migration):
        return [], [], []
    objects, replica_warnings = payload_processing(config, tenant)
    return objects, replica_warnings, [unverified_tls_note(config, tenant)]


def tenant_outputs(config: MaasConfig, tenant: TenantConfig, built: TenantPlatform) -> dict[str, Any]:
    """What `pulumi stack output` shows per tenant beyond namespace, gateway and management state."""
    return {
        "maasApiUrl": naming.maas_api_url(tenant.name, config.platform.infraNamespace),
        "telemetryLabels": telemetry_labels(tenant),
        "phase": "Degraded" if built.degraded else "Active",
        "warnings": built.degraded,
        **_migration_outputs(built.migration),
    }


def _namespace(tenant: TenantConfig) -> Desired:
    """Retained on delete, as upstream never deletes a tenant namespace: it may hold objects of others."""
    labels = {**naming.aitenant_labels(tenant.name), naming.GENERATED_NAMESPACE_LABEL: "true"}
    namespace = k8s_object("v1", "Namespace", tenant.namespace, None, labels=labels)
    return Desired(namespace, retain_on_delete=True, adopt=True)


def _tenant_config(tenant: TenantConfig, migration: Decision | None) -> Desired:
    """`MaasTenantConfig/default-tenant`, so that kubectl users and the admission webhooks see the tenant."""
    settings = tenant.payloadProcessing
    payload = settings.model_dump(include={"replicas", "autoscaling"}, exclude_none=True)
    spec = {"apiKeys": tenant.apiKeys.model_dump(), "telemetry": tenant.telemetry.model_dump()}
    if payload:
        spec["payloadProcessing"] = payload
    annotations = {MAAS_API_REPLICAS_ANNOTATION: str(tenant.maasApiReplicas)}
    if migration is not None:
        annotations.update(_migration_annotations(tenant, migration))
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


def _migration_annotations(tenant: TenantConfig, migration: Decision) -> dict[str, str]:
    """The Praxis switch, and what the migration must find again on the live object next time. The force
    annotation is written only for `forceMigration`: one an operator set in the cluster stays theirs (Pulumi's
    server-side apply leaves another manager's field alone), so removing it there stops the forcing."""
    annotations = {naming.PAYLOAD_PROCESSING_TYPE_ANNOTATION: "praxis"}
    if tenant.payloadProcessing.forceMigration:
        annotations[naming.FORCE_MIGRATION_ANNOTATION] = "true"
    if migration.outcome == "blocked":
        annotations[naming.PAYLOAD_MIGRATION_ANNOTATION] = "blocked"
    if migration.translation is not None:  # the CRD has no spec.apiTranslation (see migration.py)
        annotations[API_TRANSLATION_ANNOTATION] = str(migration.translation).lower()
    if _cleans_up(tenant, migration):  # written before Pulumi's deletes, which run last in an update
        annotations[MIGRATED_ANNOTATION] = "true"
    return annotations


def _migration(config: MaasConfig, tenant: TenantConfig, observed: Observed) -> Decision | None:
    """Judged on the live plugins ConfigMap and the live MaasTenantConfig (force, permission, a past cleanup)."""
    if tenant.payloadProcessing.type != "praxis":
        return None
    namespace = config.platform.gateway.namespace
    plugins = observed.lookup("ConfigMap", namespace, naming.payload_plugins_name(tenant.name))
    live_config = observed.lookup("MaasTenantConfig", tenant.namespace, naming.TENANT_CONFIG_NAME)
    externals = [m for m in config.models if m.tenant == tenant.name and m.modelRef.kind == "ExternalModel"]
    return migration_decision(tenant, plugins, live_config, externals, namespace)


def _cleans_up(tenant: TenantConfig, migration: Decision | None) -> bool:
    """Never for an Unmanaged tenant: Pulumi neither updates nor deletes its objects."""
    return tenant.managementState == "Managed" and migration is not None and migration.outcome == "cleanup"


def _migration_warnings(tenant: TenantConfig, migration: Decision | None) -> list[str]:
    """A blocked migration's causes, one line each, and the accepted risks; settings that do nothing with IPP."""
    settings = tenant.payloadProcessing
    if migration is not None:
        subject = f"maas:tenants ({tenant.name}).payloadProcessing"
        return [f"{subject}: IPP-to-Praxis migration blocked: {cause}" for cause in migration.causes] + list(
            migration.warnings
        )
    if settings.apiTranslation is None and not settings.forceMigration:
        return []
    return [
        f"maas:tenants ({tenant.name}).payloadProcessing: apiTranslation and forceMigration only apply to the "
        "IPP-to-Praxis migration (type: praxis); with type ipp they have no effect"
    ]


def _migration_outputs(migration: Decision | None) -> dict[str, Any]:
    """A Praxis tenant's `payloadProcessingMigration` output (what the status writer's facts are built from)."""
    if migration is None:
        return {}
    return {"payloadProcessingMigration": {"outcome": migration.outcome, "causes": list(migration.causes)}}
