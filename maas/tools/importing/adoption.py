"""What `pulumi import` adopts along with each live object and no diff will ever show: said before the first `up`.

- **ownerReferences.** The controller made the route own each TokenRateLimitPolicy, a tenant Gateway its
  AuthPolicy and the cluster `Config` the tenant platform's objects (upstream `maassubscription_controller.go`,
  `maasauthpolicy_controller.go`, `tenantreconcile/apply.go`). Pulumi neither sends nor removes them, so Kubernetes'
  garbage collector deletes a Pulumi-managed object when its owner goes (KServe recreating a route, the Config
  deleted with the controller) while the state still holds it. They are removed by hand once the controller is
  stopped.
- **Other field managers.** After the import, pulumi-kubernetes applies only the fields the program sets and
  compares only those (`provider.go` Diff prunes the live object to the inputs); a field another manager also owns
  stays when the program stops setting it. The provider takes over `kubectl` and `before-first-apply` on its own
  (`await.go` `fixCSAFieldManagers`), Pulumi's own managers are `pulumi-kubernetes*` and the status writer's
  `maas-pulumi-status`, and a status-subresource entry owns no field the program writes: every other manager is
  named.
- **The controller's finalizers** on the custom resources the stack adopts: once the controller is stopped nothing
  removes them, and pulumi-kubernetes awaits a custom resource's deletion (skipAwait does not count on delete for
  custom resources, `metadata/overrides.go`), so removing such an entry from the configuration hangs the `up` for
  10 minutes and fails it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...observe import KINDS, ObjectRef, Observed
from ...observe.snapshot import ref_of
from ...plan.readiness import controller_finalizers, finalizer_patch_command, kubectl_patch

OWN_MANAGERS = ("maas-pulumi-status",)
OWN_MANAGER_PREFIX = "pulumi-kubernetes"
TAKEN_OVER = frozenset({("kubectl", "Apply"), ("kubectl", "Update"), ("before-first-apply", "Update")})
# The maas-controller's field managers: its server-side applies, and its Create/Update calls, which the API server
# names after the binary (`manager`, upstream maas-controller/Dockerfile `-o manager`).
CONTROLLER_MANAGERS = frozenset({"maas-controller", "manager"})
STEP_4 = "once the controller is stopped (docs/migrating.md, step 4)"
NO_MANAGERS = (
    "the snapshot keeps no managedFields, so the field managers that also own the adopted objects' fields are not "
    "listed: read the cluster with --context (or give `kubectl get -o yaml` output) to have them named"
)


@dataclass(frozen=True, order=True)
class FieldManager:
    """One `managedFields` entry's writer: its name and operation (`Apply` or `Update`)."""

    name: str
    operation: str


Managers = Mapping[ObjectRef, tuple[FieldManager, ...]]


def field_managers(objects: Iterable[Mapping[str, Any]]) -> dict[ObjectRef, tuple[FieldManager, ...]] | None:
    """The foreign field managers of each object of a kind the snapshot knows, as read (before the snapshot
    trims `managedFields`); None when no object carries `managedFields` at all (they were trimmed)."""
    found: dict[ObjectRef, tuple[FieldManager, ...]] = {}
    seen = False
    for obj in objects:
        metadata = obj.get("metadata")
        if not isinstance(metadata, Mapping) or obj.get("kind") not in KINDS:
            continue
        entries = metadata.get("managedFields")
        seen = seen or isinstance(entries, list)
        try:
            ref = ref_of(obj)
        except ValueError:
            continue
        foreign = {_manager(entry) for entry in entries or () if _is_foreign(entry)}
        if foreign:
            found[ref] = tuple(sorted(foreign))
    return found if seen else None


def _manager(entry: Mapping[str, Any]) -> FieldManager:
    return FieldManager(str(entry.get("manager", "")), str(entry.get("operation", "")))


def _is_foreign(entry: Any) -> bool:
    """A writer other than Pulumi's, of the object itself, that the provider does not take over."""
    if not isinstance(entry, Mapping) or entry.get("subresource"):
        return False
    name = str(entry.get("manager", ""))
    if name in OWN_MANAGERS or name.startswith(OWN_MANAGER_PREFIX):
        return False
    return (name, entry.get("operation")) not in TAKEN_OVER


def adopted_refs(import_file: Mapping[str, Any]) -> list[ObjectRef]:
    """The live objects an import file adopts (components are no objects)."""
    refs = []
    for resource in import_file["resources"]:
        if resource.get("component") or "id" not in resource:
            continue
        kind = resource["type"].rpartition(":")[2]
        namespace, _, name = resource["id"].rpartition("/")
        refs.append(ObjectRef(kind, namespace or None, name))
    return refs


def adoption_notes(refs: Iterable[ObjectRef], observed: Observed, managers: Managers | None) -> list[str]:
    """One line per object owned by another, per controller finalizer, and per foreign field manager."""
    adopted = [(ref, live) for ref in refs if (live := observed.lookup(ref.kind, ref.namespace, ref.name).object)]
    lines = [line for ref, live in adopted if (line := owner_note(ref, live))]
    lines += [line for ref, _ in adopted if (line := finalizer_note(ref, observed))]
    if managers is None:
        return [*lines, NO_MANAGERS] if adopted else lines
    return lines + manager_notes([ref for ref, _ in adopted], managers)


def owner_note(ref: ObjectRef, live: Mapping[str, Any]) -> str | None:
    owners = [o for o in (live.get("metadata") or {}).get("ownerReferences") or () if isinstance(o, Mapping)]
    if not owners:
        return None
    named = ", ".join(
        f"{o.get('kind')} {o.get('name')}" + (" (controller)" if o.get("controller") else "") for o in owners
    )
    patch = json.dumps([{"op": "remove", "path": "/metadata/ownerReferences"}], separators=(",", ":"))
    return (
        f"{_describe(ref)} is owned by {named}: Kubernetes deletes it when that owner goes, while Pulumi's state "
        f"still holds it; Pulumi neither sends nor removes ownerReferences, so {STEP_4} remove them: "
        f"{kubectl_patch(ref.kind, ref.namespace, ref.name, 'json', patch)}"
    )


def finalizer_note(ref: ObjectRef, observed: Observed) -> str | None:
    if KINDS[ref.kind].builtin:
        return None
    controller = controller_finalizers(observed.meta(ref.kind, ref.namespace, ref.name))
    if not controller:
        return None
    return (
        f"{_describe(ref)} carries the maas-controller's finalizer {', '.join(controller)}, which nothing removes "
        "once the controller is stopped: deleting the object then holds the up for 10 minutes and fails it "
        f"(pulumi-kubernetes awaits a custom resource's deletion); {STEP_4}: "
        f"{finalizer_patch_command(ref.kind, ref.namespace, ref.name)}"
    )


def manager_notes(refs: Iterable[ObjectRef], managers: Managers) -> list[str]:
    """One line per foreign manager, naming the adopted objects whose fields it also owns."""
    by_manager: dict[FieldManager, list[ObjectRef]] = {}
    for ref in refs:
        for manager in managers.get(ref, ()):
            by_manager.setdefault(manager, []).append(ref)
    return [_manager_note(manager, objects) for manager, objects in sorted(by_manager.items())]


def _manager_note(manager: FieldManager, refs: list[ObjectRef]) -> str:
    objects = ", ".join(_describe(ref) for ref in refs)
    return (
        f"field manager {manager.name} ({manager.operation}) also owns fields of {len(refs)} adopted object(s) "
        f"({objects}): a field only it set stays when the program stops setting it, and no diff shows it (the "
        f"provider compares only the fields the program sets); {_remedy(manager)}"
    )


def _remedy(manager: FieldManager) -> str:
    """What to do depends on who it is: the controller being replaced, a person's kubectl, or another writer."""
    if manager.name in CONTROLLER_MANAGERS and manager.operation == "Apply":
        return (
            f"{STEP_4} and after the first up, have it give them up: kubectl apply --server-side "
            f"--field-manager={manager.name} with a manifest of only each object's apiVersion, kind and name"
        )
    if manager.name in CONTROLLER_MANAGERS or manager.name.startswith("kubectl"):
        return (
            f"{STEP_4}, delete its entry from each object's metadata.managedFields (kubectl edit --show-managed-fields)"
        )
    return "it is another writer (a cluster component, an operator): the fields are its own, leave them"


def _describe(ref: ObjectRef) -> str:
    return f"{ref.kind} {ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind} {ref.name}"
