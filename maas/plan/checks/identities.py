"""No configuration entry may produce an object with another object's identity.

Each concern names its objects on its own; two of them could still arrive at one (group, kind, namespace, name),
for example an ExternalModel called `api` in the infra namespace and the default tenant's `maas-api` Service. Pulumi
would then register two resources for one live object, the second silently taking over the first. So the whole
plan is checked at once, whatever concern produced each object, and a model's policies may only attach to a route
that is the model's own, never to one the platform registers for itself.
"""

from __future__ import annotations

from ...config.errors import ConfigIssue
from ...observe.policy_views import target_of
from ..desired import Desired, Owner, Plan
from .selfcheck import owner_path

Identity = tuple[str, str, str, str, str]  # group, kind, namespace, name, subresource


def identity_issues(plan: Plan) -> list[ConfigIssue]:
    """Every object identity the plan produces twice, and every model policy aimed at a route another entry owns."""
    return _duplicates(plan) + _foreign_routes(plan)


def identity(obj: Desired) -> Identity:
    group = obj.api_version.rpartition("/")[0]
    return group, obj.kind, obj.namespace or "", obj.name, obj.subresource or ""


def _describe(obj: Desired) -> str:
    where = f"{obj.namespace}/{obj.name}" if obj.namespace else obj.name
    return f"{obj.kind} {where}" + (f" ({obj.subresource})" if obj.subresource else "")


def _duplicates(plan: Plan) -> list[ConfigIssue]:
    first: dict[Identity, Owner] = {}
    issues = []
    for owner in plan.owners:
        for obj in owner.objects:
            key = identity(obj)
            if key not in first:
                first[key] = owner
                continue
            also = " twice" if first[key] is owner else f", which {owner_path(first[key])} renders too"
            issues.append(
                ConfigIssue(
                    owner_path(owner),
                    f"renders {_describe(obj)}{also}; one object cannot belong to two entries, so rename or move "
                    "this entry",
                )
            )
    return sorted(set(issues))


def _foreign_routes(plan: Plan) -> list[ConfigIssue]:
    """A model's TokenRateLimitPolicy and AuthPolicy target an HTTPRoute: that of KServe or of its own
    ExternalModel, never one that the platform or another model registers (maas-api's route, for one)."""
    routes = {
        (obj.namespace, obj.name): owner
        for owner in plan.owners
        for obj in owner.objects
        if obj.kind == "HTTPRoute" and obj.subresource is None
    }
    issues = []
    for owner in plan.owners:
        if owner.kind != "Model":
            continue
        for obj in owner.objects:
            target = target_of(obj.body.get("spec"))  # a kept orphan is as live: any shape
            name = target.name
            route_owner = routes.get((obj.namespace, name)) if target.kind == "HTTPRoute" else None
            if route_owner is not None and route_owner is not owner:
                issues.append(
                    ConfigIssue(
                        owner_path(owner),
                        f"route {obj.namespace}/{name} belongs to {owner_path(route_owner)}; a model's "
                        "policies may only attach to the model's own route, so set route.name to the model's route",
                    )
                )
    return sorted(set(issues))
