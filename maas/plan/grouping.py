"""Which component registers which owners: the plan groups objects by the entry they come from (`Owner`:
Platform, Tenant, Model, Subscription, AuthPolicy), which stack outputs and checks use; a component holds a
tenant with its subscriptions and auth policies, a model, or the platform, because every registered resource
costs the engine about as much as a Kubernetes object and a component per subscription nearly doubled their number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..config import MaasConfig
from .desired import Desired, Owner, Plan

UNDER_TENANT = {"Subscription": "subscriptions", "AuthPolicy": "authPolicies"}  # owner kind -> output key


@dataclass
class Group:
    """The owners one component registers: a tenant with its subscriptions and auth policies, a model, the
    platform."""

    kind: str
    name: str
    owners: list[Owner] = field(default_factory=list)

    def outputs(self) -> dict[str, Any]:
        """The component's own owner's outputs, plus how many of its `subscriptions` and `authPolicies` are in each
        phase. Not each entry's outputs: the component is one resource in the state, 2.2 MB at 10,000 subscriptions
        with them, and each entry's phase is in its status, its limits in the stack output `subscriptions`."""
        merged: dict[str, Any] = {}
        for owner in self.owners:
            if owner.kind == self.kind:
                merged.update(owner.outputs)
            elif owner.outputs:
                phases = merged.setdefault(UNDER_TENANT[owner.kind], {})
                phase = str(owner.outputs.get("phase"))
                phases[phase] = phases.get(phase, 0) + 1
        return merged


def component_groups(plan: Plan, config: MaasConfig) -> list[Group]:
    """The plan's owners by component, in a stable order: subscriptions and auth policies under the tenant whose
    namespace they live in (the configuration guarantees one), everything else under its own owner."""
    tenants = {tenant.namespace: tenant.name for tenant in config.tenants}
    groups: dict[tuple[str, str], Group] = {}
    for owner in plan.owners:
        key = ("Tenant", tenants[_namespace(owner)]) if owner.kind in UNDER_TENANT else (owner.kind, owner.name)
        groups.setdefault(key, Group(*key)).owners.append(owner)
    return [groups[key] for key in sorted(groups)]


def _namespace(owner: Owner) -> str:
    """A subscription's or an auth policy's namespace: owners are named by entry key, `namespace/name`."""
    return owner.name.partition("/")[0]


def status_writes_by_tenant(groups: Iterable[Group], config: MaasConfig) -> dict[str, list[Desired]]:
    """Every status write under the tenant whose batches write it: a model's under the tenant that serves it (a
    kept orphan of a model no longer configured writes none)."""
    writes: dict[str, list[Desired]] = {}
    for group in groups:
        for desired in (d for owner in group.owners for d in owner.objects if d.subresource == "status"):
            tenant = _writing_tenant(group, config)
            if tenant is None:
                raise ValueError(f"status write {desired.identity} of {group.kind} {group.name} belongs to no tenant")
            writes.setdefault(tenant, []).append(desired)
    return writes


def _writing_tenant(group: Group, config: MaasConfig) -> str | None:
    if group.kind == "Tenant":
        return group.name
    model = config.models_by_key.get(group.name) if group.kind == "Model" else None
    return None if model is None else model.tenant
