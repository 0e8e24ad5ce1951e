"""`platform.scope`: one Pulumi stack for what the tenants share, and one per tenant, run in parallel.

Every owner of the plan belongs to exactly one scope, so the scoped stacks together register exactly what `all`
registers, object for object:

- `platform`: the `Platform` owner (the objects every tenant shares, the usage dashboard).
- `tenant:<name>`: the tenant's `Tenant` owner (its namespace, maas-api, payload processing, telemetry, its
  MaasTenantConfig and status, and the AuthPolicy and default-deny policy on its Gateway: on the platform's default
  Gateway too, which only the default tenant serves on, two tenants never sharing a Gateway), every `Model` it serves
  (token limits, per-model AuthPolicy, MaaSModelRef, ExternalModel children, statuses), and the `Subscription`s and
  `AuthPolicy`s of its namespace. So a tenant's stack holds every policy attached to its Gateway.

The plan is built whole and narrowed last, so every rule that looks across tenants (sticky identities, the quota
report, the gateway budget) judges the whole configuration in every stack, and an identity collision between two
scopes, which neither stack would see alone, stops every stack. A scoped stack cannot wait for an object another stack
registers: such dependencies are dropped, named in the stack output `scope`, and met by the order of the stacks
(`platform` first, then the tenants, in parallel); one on another tenant's object gets a warning.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .. import naming
from ..config import MaasConfig
from .checks.identities import identity_issues
from .desired import Desired, Owner, Plan, object_identity
from .grouping import UNDER_TENANT

ALL = "all"
PLATFORM = "platform"
TENANT_PREFIX = "tenant:"
# Where a kept orphan (unmanaged.py) of a model that is no longer configured names the entries it last served.
SOURCE_ANNOTATIONS = (naming.SUBSCRIPTIONS_ANNOTATION, naming.AUTH_POLICIES_ANNOTATION)
Needs = dict[str, dict[str, set[str]]]  # another scope -> its object -> the objects of this scope that need it


def tenant_scope(tenant: str) -> str:
    return f"{TENANT_PREFIX}{tenant}"


def scopes(config: MaasConfig) -> list[str]:
    """Every scope the configuration splits into, in the order to apply their stacks: platform first."""
    return [PLATFORM, *(tenant_scope(name) for name in sorted(t.name for t in config.tenants))]


class Scopes:
    """Which scope each owner, model, namespace and stack output of one configuration belongs to."""

    def __init__(self, config: MaasConfig) -> None:
        platform = config.platform
        self.models = {key: tenant_scope(model.tenant) for key, model in config.models_by_key.items()}
        self.namespaces = {tenant.namespace: tenant_scope(tenant.name) for tenant in config.tenants}
        self.gateways = {
            naming.qualified(platform.gateway.namespace, tenant.gateway_name(platform)): tenant_scope(tenant.name)
            for tenant in config.tenants
        }

    def of_owner(self, owner: Owner) -> str:
        """Platform, Tenant, Model, Subscription and AuthPolicy owners; any other kind is a bug, not a choice."""
        if owner.kind == "Platform":
            return PLATFORM
        if owner.kind == "Tenant":
            return tenant_scope(owner.name)
        if owner.kind == "Model":
            return self.of_model(owner.name, owner.objects)
        if owner.kind in UNDER_TENANT:
            return self.of_entry(owner.name)
        raise ValueError(f"owner kind {owner.kind!r} has no scope; add it to maas/plan/scope.py")

    def of_model(self, key: str, objects: Iterable[Desired] = ()) -> str:
        """The serving tenant's; for a kept orphan of a model no longer configured, the tenant of the entries its
        annotations name (its stack holds the orphan in its state), else the platform's."""
        if key in self.models:
            return self.models[key]
        for obj in objects:
            annotations = obj.body["metadata"].get("annotations", {})
            for source in (s for a in SOURCE_ANNOTATIONS for s in annotations.get(a, "").split(",")):
                namespace, slash, _ = source.partition("/")
                if slash and namespace in self.namespaces:
                    return self.namespaces[namespace]
        return PLATFORM

    def of_entry(self, key: str) -> str:
        """A subscription or auth policy `namespace/name` belongs to the tenant of its namespace."""
        return self.namespaces.get(key.partition("/")[0], PLATFORM)

    def of_gateway(self, key: str) -> str:
        """A Gateway `namespace/name` belongs to the tenant serving on it (two tenants never share one)."""
        return self.gateways.get(key, PLATFORM)

    def outputs(self, outputs: dict[str, Any], scope: str) -> dict[str, Any]:
        """Each stack output narrowed to the scope's entries; any other output is the platform's."""
        keyed = {
            "models": self.of_model,
            "subscriptions": self.of_entry,
            "tenants": tenant_scope,
            "gateways": self.of_gateway,
        }
        narrowed: dict[str, Any] = {}
        for name, value in outputs.items():
            if name in keyed:
                narrowed[name] = {key: item for key, item in value.items() if keyed[name](key) == scope}
            elif name == "quotaResets":
                narrowed[name] = [reset for reset in value if self.of_entry(reset["subscription"]) == scope]
            elif name == "unmeteredTraffic":
                narrowed[name] = {key: item for key, item in value.items() if self.of_model(item["model"]) == scope}
            elif scope == PLATFORM:
                narrowed[name] = value
        return narrowed


def select_scope(config: MaasConfig, plan: Plan) -> Plan:
    """The part of the whole `plan` that this stack's `platform.scope` registers; the whole plan for `all`.

    Two objects of the whole plan that share an identity, in whichever scopes they are, stay in `issues`: the
    narrowed plan no longer holds both."""
    scope = config.platform.scope
    if scope == ALL:
        return plan
    scopes_of = Scopes(config)
    owner_scope = {key: scopes_of.of_owner(owner) for key, owner in plan.owners_by_key.items()}
    registered = {obj.identity: owner_scope[key] for key, owner in plan.owners_by_key.items() for obj in owner.objects}
    needs: Needs = defaultdict(lambda: defaultdict(set))
    kept = {
        key: _narrowed(owner, scope, registered, needs)
        for key, owner in plan.owners_by_key.items()
        if owner_scope[key] == scope
    }
    outputs = scopes_of.outputs(plan.outputs, scope)
    outputs["scope"] = {"name": scope, "dependsOn": {other: sorted(needs[other]) for other in sorted(needs)}}
    warnings = [*plan.warnings, *_order_warnings(scope, needs)]
    here = sum(len(owner.objects) for owner in kept.values())
    notes = [*plan.notes, _scope_note(scope, here, len(registered), needs)]
    issues = [*plan.issues, *identity_issues(plan)]
    return replace(plan, owners_by_key=kept, outputs=outputs, warnings=warnings, notes=notes, issues=issues)


def _narrowed(owner: Owner, scope: str, registered: dict[str, str], needs: Needs) -> Owner:
    """The owner with every dependency on another scope's object dropped (the order of the stacks provides it) and
    recorded in `needs`, together with the Namespace an object lives in when another scope registers it."""
    objects = []
    for obj in owner.objects:
        namespace = (object_identity("Namespace", None, obj.namespace),) if obj.namespace else ()
        foreign = [i for i in (*obj.depends_on, *namespace) if registered.get(i, scope) != scope]
        for identity in foreign:
            needs[registered[identity]][identity].add(obj.identity)
        if foreign and obj.depends_on:
            obj = replace(obj, depends_on=tuple(d for d in obj.depends_on if registered.get(d, scope) == scope))
        objects.append(obj)
    return replace(owner, objects=objects)


def _scope_note(scope: str, here: int, total: int, needs: Needs) -> str:
    """What this stack's preview covers, and where it stands in the order of the stacks."""
    after = [f"apply it after the stack of {other} ({', '.join(sorted(needs[other]))})" for other in sorted(needs)]
    order = after or ["apply it before the tenant stacks" if scope == PLATFORM else "it needs no other stack"]
    return (
        f"maas:platform.scope {scope}: this stack registers {here} of the whole configuration's {total} objects and "
        f"status writes; {'; '.join(order)}"
    )


def _order_warnings(scope: str, needs: Needs) -> list[str]:
    """The documented order (platform first, then every tenant at once) serves only needs on the platform."""
    return [
        f"maas:platform.scope {scope}: {', '.join(sorted(set().union(*needs[other].values())))} need "
        f"{', '.join(sorted(needs[other]))} of scope {other}, so the stack of {other} must be up before this one and "
        f"the tenant stacks cannot all run at once; apply {other} first, or move these objects out of that "
        "tenant's namespace"
        for other in sorted(needs)
        if other != PLATFORM
    ]
