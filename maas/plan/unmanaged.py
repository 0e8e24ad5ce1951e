"""Objects Pulumi must neither overwrite nor delete: `maas:unmanaged`, and the upstream opt-out seen live.

A generated TokenRateLimitPolicy or AuthPolicy that carries `opendatahub.io/managed: "false"` in the cluster is
treated as if it were listed in `maas:unmanaged` (seed 000), with a warning naming it. One that this program
created and whose last source is gone stays registered, unchanged and retained, so that Pulumi does not delete
it: upstream leaves an opted-out policy in place, and an operator deletes an orphan by hand.

`ignore_changes` protects only a resource already in Pulumi's state (the engine applies it when it has an old
state to copy from, `step_generator.go`); a stack that never imported such an object would create it, which an
upserting provider does over the live one. So every object Pulumi must not change that the snapshot shows live
carries the `import` resource option (`import_objects_left_alone`): the engine reads it into the state as it is
(the ignored keys then take the values read, so nothing is written), and does nothing more once the state holds
it under that id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .. import naming
from ..config import MaasConfig
from ..observe import KINDS, ObjectRef, Observed
from ..observe.meta import Meta
from ..observe.snapshot import thawed
from .desired import Desired, Plan

OPT_OUT_KINDS = ("TokenRateLimitPolicy", "AuthPolicy")
Identity = tuple[str, str | None, str]


def apply_unmanaged(config: MaasConfig, observed: Observed, plan: Plan) -> None:
    wanted: set[Identity] = {(u.kind, u.namespace, u.name) for u in config.unmanaged}
    live = live_opt_outs(observed)
    found = _leave_alone(plan, wanted, live) if wanted or live else set()  # usually nothing to look for
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
    import_objects_left_alone(config, observed, plan)


def _leave_alone(plan: Plan, wanted: set[Identity], live: dict[Identity, ObjectRef]) -> set[Identity]:
    """Each planned object `wanted` or opted out live made unmanaged (a live opt-out is also warned about and
    added to `wanted`); the identities found."""
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
    return found


def import_objects_left_alone(config: MaasConfig, observed: Observed, plan: Plan) -> None:
    """Every object registered unmanaged (an opt-out, `maas:unmanaged`, an Unmanaged tenant's) that the snapshot
    shows present gets `import_id`, so no registration ever creates over it. Absent: nothing to adopt, it is
    created. Unknown (the observation did not look): left as it is, and said while `upsertExistingObjects` makes
    every create an apply over whatever is live (a supervised migration, not the steady state)."""
    unknown = []
    for owner in plan.owners:
        for index, obj in enumerate(owner.objects):
            if not obj.is_unmanaged or obj.import_id is not None:
                continue
            state = _observed_state(observed, obj)
            if state == "present":
                owner.objects[index] = replace(obj, import_id=obj.kubernetes_id)
            elif state == "unknown" and config.platform.kubernetes.upsertExistingObjects:
                unknown.append(obj)
    if unknown:
        plan.warnings.append(_unobserved_warning(unknown))


def _observed_state(observed: Observed, obj: Desired) -> str:
    """present, absent or unknown; a kind the snapshot cannot hold is unknown."""
    if obj.kind not in KINDS:
        return "unknown"
    try:
        return observed.lookup(obj.kind, obj.namespace, obj.name).state
    except ValueError:  # a namespace where the kind has none, or the reverse: not an object the snapshot keeps
        return "unknown"


def _unobserved_warning(objects: list[Desired]) -> str:
    names = ", ".join(sorted(f"{o.kind} {o.kubernetes_id}" for o in objects))
    return (
        f"{len(objects)} object(s) Pulumi must not change were not observed, so they are registered without the "
        f"import option: {names}. If the stack's state does not hold them yet, the upserting provider would write "
        "the program's rendering over the live ones; import them first (python -m maas import, pulumi import)"
    )


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
