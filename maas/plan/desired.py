"""Desired state: plain Kubernetes objects with the few resource options each needs.

This is the boundary between the pure core (which builds these) and the Pulumi layer (which registers them).
Nothing here imports Pulumi.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..config.errors import ConfigIssue


@dataclass(slots=True)
class Desired:
    """One object to register. `ignore_changes` and `retain_on_delete` map to the Pulumi resource options.

    Slotted, not frozen: a plan builds tens of thousands, and a frozen dataclass's `__init__` costs four times a
    plain one's. Never changed once built: `replace` (`unmanaged`, `annotated`) makes a changed copy.

    `adopt` marks an object that may already exist before the first `pulumi up` (a namespace, an OpenShift
    managed ConfigMap): it is applied over the live object instead of failing with AlreadyExists.

    `depends_on` lists identities (`object_identity`) of objects that must be applied first; identities the plan
    does not register are dropped by `Plan.resolve_dependencies`. `subresource: "status"` makes the body (identity
    plus `status`) a status write to an object registered elsewhere instead of an object of its own;
    `status_facts` are what its writer needs to judge that status again on the live cluster when it writes.

    `import_id` is Pulumi's `import` resource option (the pulumi-kubernetes id, `kubernetes_id`): set by the plan
    on an object Pulumi must not change that the snapshot shows live (`plan/unmanaged.py`), so that a stack whose
    state does not hold it adopts it as it is instead of creating over it; once the state holds it under that id,
    the engine does nothing with the option.
    """

    body: dict[str, Any]
    retain_on_delete: bool = False
    ignore_changes: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    subresource: str | None = None
    adopt: bool = False
    status_facts: dict[str, Any] | None = None
    import_id: str | None = None

    @property
    def api_version(self) -> str:
        return self.body["apiVersion"]

    @property
    def kind(self) -> str:
        return self.body["kind"]

    @property
    def name(self) -> str:
        return self.body["metadata"]["name"]

    @property
    def namespace(self) -> str | None:
        return self.body["metadata"].get("namespace")

    @property
    def logical_name(self) -> str:
        """Stable Pulumi name: from the object's identity, never from a list position."""
        base = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind}/{self.subresource}/{base}" if self.subresource else base

    @property
    def kubernetes_id(self) -> str:
        """The id pulumi-kubernetes gives the object (`namespace/name`, or `name` when cluster-scoped): what
        `pulumi import` and the `import` resource option take, and what the state records after a create."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    @property
    def is_unmanaged(self) -> bool:
        """Registered so that Pulumi neither changes nor deletes it (`unmanaged`): every key ignored, retained."""
        return self.subresource is None and self.retain_on_delete and set(self.body) <= set(self.ignore_changes)

    @property
    def identity(self) -> str:
        metadata = self.body["metadata"]  # read directly: every plan asks tens of thousands of objects for this
        own = object_identity(self.body["kind"], metadata.get("namespace"), metadata["name"])
        return f"{own}/{self.subresource}" if self.subresource else own

    def unmanaged(self) -> Desired:
        """Pulumi neither overwrites nor deletes the object (the upstream `opendatahub.io/managed: "false"`)."""
        return replace(self, retain_on_delete=True, ignore_changes=tuple(sorted(self.body)))

    def annotated(self, key: str, value: str) -> Desired:
        """The same object with one more annotation (the body is copied, never changed in place). Built field by
        field: `dataclasses.replace` costs eight times as much, and readiness annotates every custom resource."""
        metadata = dict(self.body["metadata"])
        metadata["annotations"] = {**metadata.get("annotations", {}), key: value}
        return Desired(  # by position, in field order: keywords cost a third more here
            {**self.body, "metadata": metadata},
            self.retain_on_delete,
            self.ignore_changes,
            self.depends_on,
            self.subresource,
            self.adopt,
            self.status_facts,
            self.import_id,
        )


def object_identity(kind: str, namespace: str | None, name: str) -> str:
    """`Kind:namespace/name` (or `Kind:name`): what `Desired.depends_on` refers to."""
    return f"{kind}:{namespace}/{name}" if namespace else f"{kind}:{name}"


def k8s_object(
    api_version: str,
    kind: str,
    name: str,
    namespace: str | None,
    spec: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """A Kubernetes object in API casing, with empty metadata maps left out (they would show as diffs)."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    body: dict[str, Any] = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    if spec is not None:
        body["spec"] = spec
    body.update(fields)
    return body


@dataclass
class Owner:
    """A group of objects that one Pulumi component owns, with the stack outputs it summarises."""

    kind: str
    name: str
    objects: list[Desired] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)


@dataclass
class Plan:
    """Everything the program registers, grouped by owner, plus the warnings, informational notes (e.g. each
    gateway's wasm budget line) and stack outputs to show. `issues`: problems of the whole configuration that a
    narrowed plan (`platform.scope`) no longer shows, reported with the checks (`checks.issues.plan_issues`)."""

    owners_by_key: dict[tuple[str, str], Owner] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    issues: list[ConfigIssue] = field(default_factory=list)

    def owner(self, kind: str, name: str) -> Owner:
        """The owner `kind/name`, created on first use (kinds: Platform, Tenant, Model, ...)."""
        found = self.owners_by_key.get((kind, name))
        if found is None:  # not `setdefault`, which would build an Owner at each of tens of thousands of calls
            found = self.owners_by_key[(kind, name)] = Owner(kind, name)
        return found

    def add(self, kind: str, name: str, *objects: Desired) -> None:
        self.owner(kind, name).objects.extend(objects)

    @property
    def owners(self) -> list[Owner]:
        """Owners in a stable order, so that registration order never depends on configuration order."""
        return [self.owners_by_key[key] for key in sorted(self.owners_by_key)]

    def objects(self) -> list[Desired]:
        return [obj for owner in self.owners for obj in owner.objects]

    def objects_of(self, kind: str) -> list[Desired]:
        """The objects of `kind` in `objects()` order, status writes left out. Rules look for a few policies among
        tens of thousands of objects: a status write is skipped before its body is read."""
        return [obj for owner in self.owners for obj in owner.objects if not obj.subresource and obj.kind == kind]

    def replace_objects(self, change: Callable[[Desired], Desired]) -> None:
        """Each object replaced by `change(obj)` (the object itself where nothing changes), owner by owner in no
        particular order: for a rule that judges each object alone, which needs no sorted walk."""
        for owner in self.owners_by_key.values():
            owner.objects = list(map(change, owner.objects))

    def resolve_dependencies(self) -> None:
        """Keep only dependencies on objects this plan registers, sorted (another concern may not produce one).
        An owner whose objects need no change keeps its list: most objects depend on nothing, and a status
        write's dependencies are usually sorted, distinct and known already."""
        owners = self.owners_by_key.values()
        # A dependency is an `object_identity`, which never names a status write (`{identity}/status`).
        known = {obj.identity for owner in owners for obj in owner.objects if obj.subresource is None}
        for owner in owners:
            if not all(_settled(obj.depends_on, known) for obj in owner.objects if obj.depends_on):
                owner.objects = [_resolved(obj, known) for obj in owner.objects]


def _settled(deps: tuple[str, ...], known: set[str]) -> bool:
    """Sorted, distinct and known."""
    return known.issuperset(deps) and list(deps) == sorted(set(deps))


def _resolved(obj: Desired, known: set[str]) -> Desired:
    if not obj.depends_on or _settled(obj.depends_on, known):
        return obj
    return replace(obj, depends_on=tuple(sorted(set(obj.depends_on) & known)))


def status_write(
    body: dict[str, Any], status: dict[str, Any], depends_on: Iterable[str], facts: dict[str, Any] | None = None
) -> Desired:
    """A status write to `body`'s object, after that object and what the status describes; `facts` let the
    writer judge the status again on the live cluster just before it writes."""
    metadata = body["metadata"]
    target = object_identity(body["kind"], metadata.get("namespace"), metadata["name"])
    name = {"name": metadata["name"]}
    if "namespace" in metadata:
        name["namespace"] = metadata["namespace"]
    written = {"apiVersion": body["apiVersion"], "kind": body["kind"], "metadata": name, "status": status}
    dependencies = tuple(sorted({target, *depends_on}))
    return Desired(written, depends_on=dependencies, subresource="status", status_facts=facts)
