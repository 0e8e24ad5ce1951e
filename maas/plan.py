"""From a validated configuration to the full desired state, grouped by the component that owns each object.

Concern modules compute objects; this module only assembles them and applies the two cross-cutting rules:
`maas:unmanaged` (Pulumi neither overwrites nor deletes) and `controllerMode: coexist` (the controller keeps out).
"""

from __future__ import annotations

from dataclasses import replace

from . import naming
from .config import MaasConfig
from .desired import Desired, Owner, Plan, annotate_unmanaged_by_controller
from .ratelimit import plan_rate_limits


def build_plan(config: MaasConfig) -> Plan:
    rate_limits = plan_rate_limits(config)
    owners = [_tenant_owner(config, tenant) for tenant in sorted(config.tenants, key=lambda t: t.name)]
    model_outputs = {}
    for model in sorted(config.models, key=lambda m: m.key):
        owner = Owner("Model", model.key)
        policy = rate_limits.policies.get(model.key)
        if policy is not None:
            owner.objects.append(Desired(policy))
        owner.outputs = {
            "route": naming.qualified(model.route_namespace, model.route_name),
            "tokenRateLimitPolicy": _identity(policy),
        }
        model_outputs[model.key] = owner.outputs
        owners.append(owner)
    plan = Plan(owners, list(rate_limits.warnings))
    plan.outputs = {"models": model_outputs, "subscriptions": rate_limits.subscriptions}
    _apply_unmanaged(config, plan)
    if config.platform.controllerMode == "coexist":
        _hand_over_from_controller(plan)
    return plan


def _tenant_owner(config: MaasConfig, tenant) -> Owner:
    outputs = {
        "namespace": tenant.namespace,
        "gateway": naming.qualified(config.platform.gateway.namespace, tenant.gateway_name(config.platform)),
        "managementState": tenant.managementState,
    }
    return Owner("Tenant", tenant.name, outputs=outputs)


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
