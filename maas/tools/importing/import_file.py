"""The Pulumi import file (`pulumi import --file`) for every object the program would own that already exists.

Each resource keeps the program's own type, logical name (`logicalName`), parent and provider, so the URNs that
`pulumi import` writes into the state are those the next `pulumi up` registers, and the objects are adopted
instead of created (AlreadyExists) or replaced. Parents are the program's components (`maas:index:Model`, ...),
declared as `component: true` entries that the import creates empty; providers are named through `nameTable`,
by URN, and must already be in the state (docs/migrating.md). The `name` of an entry is
only the file's own handle for it (unique: `{type}::{logical name}`); status writes are never imported.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ...observe import KINDS, ObjectRef, Observed
from ..render import Registration, Rendering


def object_ref(body: dict[str, Any]) -> ObjectRef | None:
    """The live object a body stands for (None for a kind the snapshot does not know)."""
    if body.get("kind") not in KINDS:
        return None
    metadata = body.get("metadata") or {}
    return ObjectRef(body["kind"], metadata.get("namespace"), metadata["name"])


def owned_objects(rendering: Rendering) -> list[ObjectRef]:
    """Every Kubernetes object a rendering registers, in a stable order (what the second read fetches by name)."""
    refs = {ref for body, _ in rendering.registered_objects() if (ref := object_ref(body)) is not None}
    return sorted(refs, key=lambda ref: ref.sort_key)


def pulumi_import_file(rendering: Rendering, observed: Observed) -> tuple[dict[str, Any], list[str]]:
    """The file, and a note when some owned objects were not observed (they are left out of it)."""
    by_urn = {r.urn: r for r in rendering.registrations}
    objects, parents, providers = [], {}, {}
    unknown, unknowable = Counter(), Counter()
    for registration in rendering.registrations:
        if not registration.is_kubernetes_object:
            continue
        ref = object_ref(registration.inputs)
        if ref is None:
            unknowable[registration.inputs.get("kind")] += 1
            continue
        state = observed.lookup(ref.kind, ref.namespace, ref.name).state
        if state == "unknown":
            unknown[ref.kind] += 1
        if state != "present":
            continue
        entry = _entry(registration)
        parent = by_urn.get(registration.parent)
        if parent is not None:
            parents[parent.urn] = parent
            entry["parent"] = _handle(parent)
        provider = engine_urn(registration.provider.rpartition("::")[0])  # a reference: `{urn}::{id}`
        entry["provider"] = provider.rpartition("::")[2]
        providers[entry["provider"]] = provider
        entry["id"] = f"{ref.namespace}/{ref.name}" if ref.namespace else ref.name
        objects.append(entry)
    components = [{**_entry(parent), "component": True} for parent in parents.values()]
    resources = sorted(components, key=_order) + sorted(objects, key=_order)
    return {"nameTable": dict(sorted(providers.items())), "resources": resources}, _notes(unknown, unknowable)


ROOT_STACK_PARENT = "pulumi:pulumi:Stack$"


def engine_urn(urn: str) -> str:
    """The URN the engine gives a resource: the mock monitor qualifies the type of a child of the root stack with
    `pulumi:pulumi:Stack$`, the engine leaves the root stack out (`Deployment.generateURN`)."""
    prefix, project, qualified_type, name = urn.split("::", 3)
    return "::".join((prefix, project, qualified_type.removeprefix(ROOT_STACK_PARENT), name))


def _entry(registration: Registration) -> dict[str, Any]:
    return {"type": registration.type, "name": _handle(registration), "logicalName": registration.name}


def _handle(registration: Registration) -> str:
    return f"{registration.type}::{registration.name}"


def _order(entry: dict[str, Any]) -> tuple[str, str]:
    return (entry["type"], entry["logicalName"])


def _notes(unknown: Counter, unknowable: Counter) -> list[str]:
    """What the import file leaves out for want of an observation: objects not looked at, and objects of kinds a
    snapshot cannot hold."""
    notes = []
    if unknown:
        notes.append(
            f"{sum(unknown.values())} object(s) the configuration would own were not observed ({_counts(unknown)}), "
            "so they are not in the import file; any of them that exists makes the first up fail with AlreadyExists: "
            "read the cluster with --context, or give a snapshot that lists or fetched them"
        )
    if unknowable:
        notes.append(
            f"{sum(unknowable.values())} object(s) the configuration would own are of kinds a snapshot does not hold "
            f"({_counts(unknowable)}), so they are not in the import file; if they exist, import them by hand "
            "(pulumi import, with the parent and provider of the other objects)"
        )
    return notes


def _counts(kinds: Counter) -> str:
    return ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
