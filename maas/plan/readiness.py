"""Readiness: what `pulumi up` waits for, on create and update, and what would hold it on delete.

Deployments (maas-api) use pulumi-kubernetes' built-in await logic. A custom resource is awaited only through the
`pulumi.com/waitFor` annotation: without it the provider returns at once unless `PULUMI_K8S_AWAIT_ALL=true`
(pulumi-kubernetes `provider/pkg/metadata/overrides.go`, `ReadyCondition`). So by default every custom resource
carries `pulumi.com/skipAwait: "true"`; with `platform.awaitCustomResources: true` each kind whose controller
reports a condition worth waiting for carries `pulumi.com/waitFor` (`WAIT_FOR`), and every other kind keeps
`skipAwait` (`NOT_AWAITED` says why), so that `PULUMI_K8S_AWAIT_ALL` cannot make the provider wait on a status
nobody writes.

On delete the provider ignores `skipAwait` for custom resources and waits up to 10 minutes for the object to go
(`DeletedCondition`: only Namespace, Pod, ReplicationController, DaemonSet, Deployment, StatefulSet and Job may
skip it). A CR that still carries a maas-controller finalizer once the controller is gone never goes: the
preview names each one with the command that clears it (`controller_finalizer_warnings`).
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import naming
from ..config import MaasConfig
from ..observe import KINDS, Observed
from ..observe.meta import Meta
from .desired import Desired, Plan, object_identity

WAIT_FOR_ANNOTATION = "pulumi.com/waitFor"

# `pulumi.com/waitFor` per custom kind the program writes, with the condition its CRD (crds/) says the controller
# reports. `condition=X` waits for `.status.conditions[type=X].status == "True"` at the object's current generation
# (pulumi-kubernetes `await/condition/kubectl.go` compares observedGeneration); `jsonpath=` compares the first match.
WAIT_FOR: Mapping[str, str] = {
    # Kuadrant policies: printer columns Accepted and Enforced. Accepted (valid, targets found) is what this
    # program is responsible for; Enforced also depends on the data plane and on other policies (an override).
    "AuthPolicy": "condition=Accepted",
    "TokenRateLimitPolicy": "condition=Accepted",
    # extensions.kuadrant.io: 'Known .status.conditions.type are: "Accepted", "Enforced"'.
    "TelemetryPolicy": "condition=Accepted",
    # Gateway API routes have no top-level conditions: each parent (Gateway) reports Accepted in status.parents.
    "HTTPRoute": 'jsonpath={.status.parents[*].conditions[?(@.type=="Accepted")].status}=True',
    # cert-manager's Ready: the Secret maas-api mounts on xKS has been issued (its CRD is not vendored in crds/).
    "Certificate": "condition=Ready",
}

# Custom kinds the program writes that are never awaited, and why.
NOT_AWAITED: Mapping[str, str] = {
    "MaaSModelRef": "its status is this program's own status write, registered after the object",
    "MaaSSubscription": "its status is this program's own status write, registered after the object",
    "MaaSAuthPolicy": "its status is this program's own status write, registered after the object",
    "MaasTenantConfig": "its status is this program's own status write, after maas-api's Deployment",
    "ExternalModel": "the payload processor reads it; its status was the upstream controller's, which is gone",
    "DestinationRule": "istiod writes status conditions only with PILOT_ENABLE_STATUS, off by default",
    "ServiceEntry": "istiod writes status conditions only with PILOT_ENABLE_STATUS, off by default",
    "EnvoyFilter": "istiod writes status conditions only with PILOT_ENABLE_STATUS, off by default",
    "Telemetry": "istiod writes status conditions only with PILOT_ENABLE_STATUS, off by default",
    "PodMonitor": "status.bindings only with the Prometheus operator's status feature; no top-level condition",
    "PersesDashboard": "the Perses operator documents no condition type",
    "PersesDatasource": "the Perses operator documents no condition type",
    "InferenceObjective": "llm-d's EPP only reads it: no llm-d-router v0.10.0 code writes its status, whose CRD "
    "default is Ready=Unknown ('Waiting for controller')",
}

# The upstream maas-controller's finalizers all live under its API group (maas.opendatahub.io/subscription-cleanup,
# authpolicy-cleanup, model-cleanup, tenant-cleanup, ...).
FINALIZER_PREFIX = "maas.opendatahub.io/"

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


def set_readiness(plan: Plan, await_custom_resources: bool) -> None:
    """Every custom resource gets `waitFor` (awaited, `WAIT_FOR`) or `skipAwait`; built-in kinds are left to the
    provider's own await logic. Decided once per kind: ten thousand subscriptions are one kind."""
    decided: dict[tuple[str, str], tuple[str, str] | None] = {}

    def ready(obj: Desired) -> Desired:
        if obj.subresource is not None:
            return obj
        kind = (obj.api_version, obj.kind)
        if kind not in decided:
            decided[kind] = _readiness_annotation(*kind, await_custom_resources)
        annotation = decided[kind]
        return obj if annotation is None else obj.annotated(*annotation)

    plan.replace_objects(ready)


def wait_for(kind: str, await_custom_resources: bool) -> str | None:
    """The `pulumi.com/waitFor` value of a custom kind, None when it is not awaited."""
    return WAIT_FOR.get(kind) if await_custom_resources else None


def _readiness_annotation(api_version: str, kind: str, await_custom_resources: bool) -> tuple[str, str] | None:
    """The annotation an object of this kind carries, None for a built-in kind."""
    if not is_custom_resource(api_version):
        return None
    condition = wait_for(kind, await_custom_resources)
    return (naming.SKIP_AWAIT_ANNOTATION, "true") if condition is None else (WAIT_FOR_ANNOTATION, condition)


def controller_finalizer_warnings(config: MaasConfig, observed: Observed, plan: Plan) -> list[str]:
    """With `controllerMode: absent`, one warning per live object of this stack (registered by the plan, or
    labelled as this program's: about to be deleted) that still carries a maas-controller finalizer. Nothing
    removes it any more, so Pulumi's delete of it would wait out the provider's 10 minutes and fail."""
    if config.platform.controllerMode != "absent":
        return []
    carrying = []  # (ref, meta, finalizers) of each live object with a controller finalizer: usually none
    for ref in sorted(observed.objects, key=lambda r: r.sort_key):
        meta = observed.meta(ref.kind, ref.namespace, ref.name)
        finalizers = controller_finalizers(meta)
        if finalizers:
            carrying.append((ref, meta, finalizers))
    if not carrying:
        return []  # the plan's identities are not worth reading
    planned = {obj.identity for obj in plan.objects()}
    return [
        _finalizer_warning(ref.kind, ref.namespace, ref.name, finalizers)
        for ref, meta, finalizers in carrying
        if meta.label(naming.MANAGED_BY) == naming.MANAGER
        or object_identity(ref.kind, ref.namespace, ref.name) in planned
    ]


def controller_finalizers(meta: Meta | None) -> list[str]:
    """The maas-controller's finalizers on a live object: nothing removes them once the controller is gone."""
    return [f for f in meta.finalizers if f.startswith(FINALIZER_PREFIX)] if meta else []


def finalizer_patch_command(kind: str, namespace: str | None, name: str) -> str:
    """The command that clears an object's finalizers (the controller that would have run them is gone)."""
    return kubectl_patch(kind, namespace, name, "merge", '{"metadata":{"finalizers":null}}')


def kubectl_patch(kind: str, namespace: str | None, name: str, patch_type: str, patch: str) -> str:
    """A `kubectl patch` command line for one object, its resource named without ambiguity."""
    where = f" -n {namespace}" if namespace else ""
    return f"kubectl patch {KINDS[kind].resource} {name}{where} --type={patch_type} -p '{patch}'"


def _finalizer_warning(kind: str, namespace: str | None, name: str, finalizers: list[str]) -> str:
    where = f"{namespace}/{name}" if namespace else name
    return (
        f"{kind} {where} still carries the maas-controller's finalizer {', '.join(finalizers)}, and with "
        "controllerMode: absent nothing removes it: once its entry leaves the configuration, Pulumi's delete would "
        "wait out pulumi-kubernetes' 10-minute delete timeout and fail. Remove it now (the controller is gone): "
        f"{finalizer_patch_command(kind, namespace, name)}"
    )
