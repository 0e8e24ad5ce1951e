"""Tenants: each tenant's platform and the shared platform under their owners, and the management states.

`Managed`: registered as computed. `Removed`: the tenant's objects are not registered, so Pulumi deletes them
(except what is retained on delete, such as the tenant namespace). `Unmanaged`: registered with changes ignored
and retained on delete, so Pulumi neither updates nor deletes them (the controller's "Unmanaged").
"""

from __future__ import annotations

from ... import naming
from ...config import MaasConfig, TenantConfig
from ...observe import KINDS, Observed
from ..desired import Plan, object_identity, status_write
from ..status import writes_status
from ..status.tenant import TenantFacts, tenant_status
from .migration import blocked_message
from .platform import tenant_outputs, tenant_platform
from .shared import shared_platform

PLATFORM = ("Platform", "platform")


def add_tenants(config: MaasConfig, observed: Observed, plan: Plan) -> None:
    """Every tenant's platform under its `Tenant`; the shared objects once, while any tenant still needs them."""
    for tenant in sorted(config.tenants, key=lambda t: t.name):
        owner = plan.owner("Tenant", tenant.name)
        if tenant.managementState == "Removed":
            owner.outputs["phase"] = "Removed"
            plan.warnings.extend(_left_behind(config, tenant))
            continue
        built = tenant_platform(config, tenant, observed)
        owner.objects.extend(built.objects)
        owner.outputs.update(tenant_outputs(config, tenant, built))
        if tenant.managementState == "Unmanaged":
            owner.outputs["phase"] = "Unmanaged"
        plan.warnings.extend(built.warnings)
        plan.notes.extend(built.notes)
    if any(tenant.managementState != "Removed" for tenant in config.tenants):
        plan.add(*PLATFORM, *shared_platform(config.platform))
    names = sorted(tenant.name for tenant in config.tenants)
    plan.outputs["tenants"] = {name: plan.owner("Tenant", name).outputs for name in names}


def apply_management_states(config: MaasConfig, plan: Plan) -> None:
    """Over every object a `Tenant` owns, including those other concerns added (gateway policies)."""
    for tenant in config.tenants:
        owner = plan.owner("Tenant", tenant.name)
        if tenant.managementState == "Removed":
            owner.objects = []
        elif tenant.managementState == "Unmanaged":
            owner.objects = [obj.unmanaged() for obj in owner.objects]


def _left_behind(config: MaasConfig, tenant: TenantConfig) -> list[str]:
    """Models, subscriptions and auth policies of a Removed tenant stay published, but nothing serves them."""
    entries = [f"model {m.key}" for m in config.models if m.tenant == tenant.name]
    for key, items in (("subscription", config.subscriptions), ("auth policy", config.authPolicies)):
        entries += [f"{key} {item.key}" for item in items if item.namespace == tenant.namespace]
    if not entries:
        return []
    return [
        f"maas:tenants ({tenant.name}) is Removed, so its gateway policies and maas-api are gone, but "
        f"{', '.join(sorted(entries))} still reference it; remove them too, or set the tenant back to Managed"
    ]


def add_tenant_statuses(config: MaasConfig, observed: Observed, plan: Plan) -> None:
    """Each Managed tenant's MaasTenantConfig status, written after its maas-api Deployment (which Pulumi awaits),
    so `Active` means maas-api is available; last, like every status write, after the rules above."""
    if not writes_status(config.platform):
        return
    for tenant in config.tenants:
        if tenant.managementState != "Managed":
            continue
        owner = plan.owner("Tenant", tenant.name)
        body = next(obj.body for obj in owner.objects if obj.kind == "MaasTenantConfig")
        facts = _tenant_facts(config, tenant, owner)
        status = tenant_status(facts, observed)
        deployment = object_identity("Deployment", facts.infra_namespace, facts.deployment)
        owner.objects.append(status_write(body, status, [deployment], facts.to_inputs()))
        owner.outputs["phase"] = status["phase"]


def _tenant_facts(config: MaasConfig, tenant: TenantConfig, owner) -> TenantFacts:
    kinds = {obj.kind for obj in owner.objects if obj.kind in KINDS and not KINDS[obj.kind].builtin}
    return TenantFacts(
        tenant=tenant.name,
        infra_namespace=config.platform.infraNamespace,
        deployment=naming.maas_api_name(tenant.name),
        crd_kinds=tuple(sorted(kinds)),
        warnings=tuple(owner.outputs.get("warnings", ())),
        migration_blocked=_migration_blocked(owner.outputs.get("payloadProcessingMigration")),
    )


def _migration_blocked(migration: dict | None) -> str:
    if migration is None or migration["outcome"] != "blocked":
        return ""
    return blocked_message(migration["causes"])
