"""Tenants: each tenant's platform and the shared platform under their owners, and the management states.

`Managed`: registered as computed. `Removed`: the tenant's objects are not registered, so Pulumi deletes them
(except what is retained on delete, such as the tenant namespace). `Unmanaged`: registered with changes ignored
and retained on delete, so Pulumi neither updates nor deletes them (the controller's "Unmanaged").
"""

from __future__ import annotations

from dataclasses import replace

from ... import naming
from ...config import MaasConfig, TenantConfig
from ...observe import KINDS, Observed
from ..desired import Desired, Plan, object_identity, status_write
from ..models.routing import external_model_objects
from ..status import writes_status
from ..status.failed import gateway_facts
from ..status.tenant import TenantFacts, tenant_status
from .migration import Decision, blocked_message
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
        _keep_serving_objects(config, tenant, built.migration, plan)
    if any(tenant.managementState != "Removed" for tenant in config.tenants):
        plan.add(*PLATFORM, *shared_platform(config.platform))
    names = sorted(tenant.name for tenant in config.tenants)
    plan.outputs["tenants"] = {name: plan.owner("Tenant", name).outputs for name in names}


def _keep_serving_objects(config: MaasConfig, tenant: TenantConfig, migration: Decision | None, plan: Plan) -> None:
    """Seed 002: with an unqualified binding the resolver "fails that reconcile before publishing or cleaning
    serving resources, preserving the last-known route and overlay". So while the migration is blocked, each
    ExternalModel that blocks it keeps its routing objects as Pulumi last applied them (changes ignored; one not
    yet applied is created as configured). Its MaaSModelRef and policies still follow the configuration, so
    access can always be revoked; a model removed from the configuration no longer blocks, and goes."""
    if tenant.managementState != "Managed" or migration is None or migration.outcome != "blocked":
        return
    models = {model.key: model for model in config.models}
    for key in migration.held:
        serving = {_identity(body) for body in external_model_objects(config, models[key])}
        owner = plan.owner("Model", key)
        owner.objects = [_as_last_applied(obj) if obj.identity in serving else obj for obj in owner.objects]


def _identity(body: dict) -> str:
    return object_identity(body["kind"], body["metadata"].get("namespace"), body["metadata"]["name"])


def _as_last_applied(obj: Desired) -> Desired:
    """Every field ignored, not retained: Pulumi keeps the applied object and may still delete it."""
    return replace(obj, ignore_changes=tuple(sorted(obj.body)))


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
    """Each Managed tenant's MaasTenantConfig status, written after its maas-api Deployment is applied; last, like
    every status write, after the rules above. With observation the status writer, not pulumi-kubernetes, awaits
    the Deployment (`pulumi.com/skipAwait`), so the tenant says `Pending` during the rollout and `Failed` when it
    fails (seed 000), which an engine that stops at a failed await could never write."""
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
        if config.platform.observe:
            owner.objects = [
                obj.annotated(naming.SKIP_AWAIT_ANNOTATION, "true") if obj.identity == deployment else obj
                for obj in owner.objects
            ]
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
        **gateway_facts(config, tenant),  # judged first: a tenant on an invalid Gateway is Failed (seed 000)
    )


def _migration_blocked(migration: dict | None) -> str:
    if migration is None or migration["outcome"] != "blocked":
        return ""
    return blocked_message(migration["causes"])
