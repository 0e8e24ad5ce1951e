"""Readiness: what `pulumi up` waits for. Deployments (maas-api) use pulumi-kubernetes' await logic; policies and
other custom resources are not awaited unless `platform.awaitCustomResources` is set.
"""

from __future__ import annotations

from .. import naming
from .desired import Plan

# API groups served by Kubernetes itself; pulumi-kubernetes has await logic for their kinds (Deployment, ...).
BUILT_IN_GROUPS = frozenset(
    {
        "",
        "apps",
        "batch",
        "autoscaling",
        "policy",
        "rbac.authorization.k8s.io",
        "networking.k8s.io",
        "storage.k8s.io",
        "scheduling.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "node.k8s.io",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "certificates.k8s.io",
    }
)


def is_custom_resource(api_version: str) -> bool:
    group = api_version.rpartition("/")[0]
    return group not in BUILT_IN_GROUPS


def skip_await_on_custom_resources(plan: Plan) -> None:
    """Policies and other custom resources count as ready once accepted: their status depends on controllers that
    may never re-reconcile after an update (pulumi-kubernetes#4521), which would hold `pulumi up` until timeout."""
    for owner in plan.owners:
        owner.objects = [
            obj.annotated(naming.SKIP_AWAIT_ANNOTATION, "true") if is_custom_resource(obj.api_version) else obj
            for obj in owner.objects
        ]
