"""Objects Pulumi must neither overwrite nor delete: `maas:unmanaged`, and the upstream opt-out seen live.

A generated TokenRateLimitPolicy or AuthPolicy that carries `opendatahub.io/managed: "false"` in the cluster is
treated as if it were listed in `maas:unmanaged` (seed 000), with a warning naming it. One that this program
created and whose last source is gone stays registered, unchanged and retained, so that Pulumi does not delete
it: upstream leaves an opted-out policy in place, and an operator deletes an orphan by hand.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import naming
from ..config import MaasConfig
from ..observe import ObjectRef, Observed
from ..observe.meta import Meta
from ..observe.snapshot import thawed
from .desired import Desired, Plan

OPT_OUT_KINDS = ("TokenRateLimitPolicy", "AuthPolicy")
Identity = tuple[str, str | None, str]


def apply_unmanaged(config: MaasConfig, observed: Observed, plan: Plan) -> None:
    wanted: set[Identity] = {(u.kind, u.namespace, u.name) for u in config.unmanaged}
    live = live_opt_outs(observed)
    found = set()
    for owner in plan.owners:
        for index, obj in enumerate(owner.objects):
            identity = (obj.kind, obj.namespace, obj.name)
            if obj.subresource is None and identity in live and identity not in wanted:
                plan.warnings.append(_live_opt_out_warning(identity))
                wanted.add(identity)
            if identity in wanted and obj.subresource is None:
                owner.objects[index] = obj.unmanaged()
                found.add(identity)
    for identity, ref in sorted(live.items()):
        if identity in found:
            continue
        meta = observed.meta(*identity)
        if meta is not None and _ours(meta):
            _keep_orphan(plan, meta, observed.objects[ref])
        plan.warnings.append(_orphan_warning(*identity, 'opendatahub.io/managed: "false"'))
        found.add(identity)
    for kind, namespace, name in sorted(wanted - found):
        plan.warnings.append(_orphan_warning(kind, namespace, name, "maas:unmanaged"))


def live_opt_outs(observed: Observed) -> dict[Identity, ObjectRef]:
    """Generated policies opted out in the cluster, not because this program handed them to a controller."""
    found = {}
    for ref in observed.objects:
        meta = observed.meta(ref.kind, ref.namespace, ref.name)
        opted_out = meta is not None and meta.annotations.get(naming.CONTROLLER_MANAGED_ANNOTATION) == "false"
        handed_over = meta is not None and meta.annotations.get(naming.HANDED_OVER_ANNOTATION) == "true"
        if ref.kind in OPT_OUT_KINDS and opted_out and not handed_over:
            found[(ref.kind, ref.namespace, ref.name)] = ref
    return found


def _ours(meta: Meta) -> bool:
    """Created by this program (so its state holds it) and attributable to a model."""
    attributed = meta.label(naming.MODEL_LABEL) and meta.label(naming.MODEL_NAMESPACE_LABEL)
    return meta.label(naming.MANAGED_BY) == naming.MANAGER and bool(attributed)


def _keep_orphan(plan: Plan, meta: Meta, body: Mapping[str, Any]) -> None:
    """Registered as it is live, unchanged and retained (its `spec` verbatim), under its model's component (whose
    URN it had)."""
    metadata = {"name": meta.name, "namespace": meta.namespace}
    for key, found in (("labels", meta.labels), ("annotations", meta.annotations)):
        values = {k: v for k, v in found.items() if isinstance(v, str)}
        if values:
            metadata[key] = dict(sorted(values.items()))
    kept = {
        "apiVersion": body["apiVersion"],
        "kind": body["kind"],
        "metadata": metadata,
        "spec": thawed(body.get("spec")),
    }
    model = naming.qualified(meta.label(naming.MODEL_NAMESPACE_LABEL), meta.label(naming.MODEL_LABEL))
    plan.add("Model", model, Desired(kept).unmanaged())


def _live_opt_out_warning(identity: Identity) -> str:
    kind, namespace, name = identity
    return (
        f'{kind} {namespace}/{name} carries opendatahub.io/managed: "false" in the cluster, so Pulumi neither '
        "changes nor deletes it (as if it were listed in maas:unmanaged); list it in maas:unmanaged to make that "
        "visible in review, or remove the annotation to manage it again"
    )


def _orphan_warning(kind: str, namespace: str | None, name: str, why: str) -> str:
    return (
        f"{kind} {namespace}/{name} ({why}) has no source left (no subscription or auth policy for its model): it is "
        f"orphaned and Pulumi leaves it in the cluster; delete it by hand (kubectl delete {kind.lower()} -n "
        f"{namespace} {name}) and remove the maas:unmanaged entry or the annotation"
    )
