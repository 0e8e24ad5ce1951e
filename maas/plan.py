"""From a validated configuration to the full desired state, grouped by the component that owns each object.

Concern modules compute objects; this module only assembles them under their owners (`Platform`, one `Tenant`
per tenant, one `Model` per model) and applies the two cross-cutting rules: `maas:unmanaged` (Pulumi neither
overwrites nor deletes) and `controllerMode: coexist` (a running maas-controller keeps out).
"""

from __future__ import annotations

from dataclasses import replace

from . import naming
from .config import MaasConfig, TenantConfig
from .desired import Desired, Plan, annotate_unmanaged_by_controller
from .ratelimit import plan_rate_limits


def build_plan(config: MaasConfig) -> Plan:
    plan = Plan()
    for tenant in config.tenants:
        plan.owner("Tenant", tenant.name).outputs = _tenant_outputs(config, tenant)
    _add_rate_limits(config, plan)
    _apply_unmanaged(config, plan)
    if config.platform.controllerMode == "coexist":
        _hand_over_from_controller(plan)
    return plan


def _tenant_outputs(config: MaasConfig, tenant: TenantConfig) -> dict:
    return {
        "namespace": tenant.namespace,
        "gateway": naming.qualified(config.platform.gateway.namespace, tenant.gateway_name(config.platform)),
        "managementState": tenant.managementState,
    }


def _add_rate_limits(config: MaasConfig, plan: Plan) -> None:
    rate_limits = plan_rate_limits(config)
    models = {}
    for model in sorted(config.models, key=lambda m: m.key):
        owner = plan.owner("Model", model.key)
        policy = rate_limits.policies.get(model.key)
        if policy is not None:
            owner.objects.append(Desired(policy))
        owner.outputs["route"] = naming.qualified(model.route_namespace, model.route_name)
        owner.outputs["tokenRateLimitPolicy"] = _identity(policy)
        models[model.key] = owner.outputs
    plan.warnings.extend(rate_limits.warnings)
    plan.outputs["models"] = models
    plan.outputs["subscriptions"] = rate_limits.subscriptions


def _identity(body: dict | None) -> str | None:
    return None if body is None else naming.qualified(body["metadata"]["namespace"], body["metadata"]["name"])


def _apply_unmanaged(config: MaasConfig, plan: Plan) -> None:
    wanted = {(u.kind, u.namespace, u.name) for u in config.unmanaged}
    found = set()
    for owner in plan.owners:
        for index, obj in enumerate(owner.objects):
            identity = (obj.kind, obj.namespace, obj.name)
            if identity in wanted:
                owner.objects[index] = obj.unmanaged()
                found.add(identity)
    for kind, namespace, name in sorted(wanted - found):
        plan.warnings.append(
            f"maas:unmanaged {kind} {namespace}/{name} has no source left (no subscription or auth policy for its "
            f"model): it is orphaned, Pulumi no longer tracks it and leaves it in the cluster; delete it by hand "
            f"(kubectl delete {kind.lower()} -n {namespace} {name}) and remove the maas:unmanaged entry"
        )


def _hand_over_from_controller(plan: Plan) -> None:
    for owner in plan.owners:
        owner.objects = [replace(obj, body=annotate_unmanaged_by_controller(obj.body)) for obj in owner.objects]
