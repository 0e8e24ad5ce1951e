"""Live against desired: each object the program registers, applied to its live object in the snapshot.

Per object, by the snapshot's three states (`maas.observe.snapshot`): present, it is compared (`apply`); absent,
it would be created; unknown (nobody looked: a scope the snapshot did not list, a kind it does not read), it is
"not observed", never "would be created". What Pulumi sends is the registered body less its `ignore_changes`
paths (an existing object keeps its value there) and without the status writes (a subresource, left out as
`kubectl diff` leaves status out). A live object the program would delete is known only where the snapshot shows
it: one of a kind the program writes, labelled as this program labels what it applies, that it no longer
registers; whether the stack's state holds it, the snapshot cannot say.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ... import naming
from ...crdschema.defaults import copy_json
from ...observe import KINDS, Observed
from ...observe.snapshot import CRD_KIND, thawed
from ..diffing.fields import field_changes
from ..diffing.review import ObjectChange
from ..diffing.sides import Key, object_key
from ..render import Rendering, render
from .apply import applied
from .schemas import kind_schema

# Fields the API server writes and no apply changes: never compared, whatever a body says.
SERVER_METADATA = (
    "creationTimestamp",
    "deletionGracePeriodSeconds",
    "deletionTimestamp",
    "generation",
    "managedFields",
    "resourceVersion",
    "selfLink",
    "uid",
)
NOT_LISTED = "not observed"  # the snapshot did not look (scope not listed, object not fetched)
NOT_READ = "a kind snapshots do not read"  # a kind `observe` never reads
OTHER_VERSION = "snapshots read it at another apiVersion"  # its fields may be spelled otherwise: not compared
STATUS_NOTE = (
    "the program also writes the status of {count} objects (the status subresource); status is left out here as "
    "kubectl diff leaves it out: python -m maas render --status --observed SNAPSHOT shows those writes"
)
DELETION_NOTE = (
    "objects to delete are known only where the snapshot shows live objects ({scopes}): a live object of a kind "
    "the program writes, labelled {label}, that the program no longer registers; Pulumi deletes it only if the "
    "stack's state holds it, which a snapshot does not show"
)
REMOVED_FIELDS_NOTE = (
    "a field an earlier up set and the configuration no longer sets is removed by the next up, but the snapshot "
    "keeps no managedFields to tell which: python -m maas diff BASE HEAD shows such a change of configuration"
)
LEFT_ALONE_NOTE = (
    "{count} observed objects are registered with every field under ignore_changes (unmanaged): Pulumi applies "
    "nothing to them"
)
CONTENT_NOTE = "{kind}: the snapshot keeps only its metadata, so only metadata is compared"
NOT_INSTALLED_NOTE = "{kind}: its CRD is not installed, so creating these objects fails until it is"


@dataclass(frozen=True)
class Drift:
    """What `pulumi up` of the configuration would change in the snapshot's live objects."""

    objects: tuple[ObjectChange, ...]  # + would be created, - would be deleted, ~ would change; by key
    unchanged: int  # observed objects the apply would leave as they are
    not_observed: tuple[tuple[Key, str], ...]  # (key, NOT_LISTED, NOT_READ or OTHER_VERSION), by key
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # the plan's, against the snapshot
    cluster: str | None = None  # where the snapshot was read, when it says

    @property
    def changed(self) -> bool:
        return bool(self.objects)

    def counts(self) -> dict[str, int]:
        return {mark: sum(1 for c in self.objects if c.mark == mark) for mark in "+-~"}


def drift(raw_config: Mapping[str, Any], observed: Observed, stack: str = "dev") -> Drift:
    """The drift of the stack's objects against `observed`; ConfigError when the configuration is invalid."""
    rendering = render(dict(raw_config), stack=stack, observed=observed)
    return drift_of(rendering, observed)


def drift_of(rendering: Rendering, observed: Observed) -> Drift:
    """The drift of a rendering (the program run against `observed`) against `observed`."""
    changes: list[ObjectChange] = []
    unknown: list[tuple[Key, str]] = []
    unchanged = left_alone = 0
    notes: dict[str, None] = {}
    registered: set[Key] = set()
    for body, registration in rendering.registered_objects():
        key = object_key(body)
        registered.add(key)
        state, live = _lookup(observed, body)
        if state == "unknown":
            unknown.append((key, _why_unknown(body)))
        elif state == "absent":
            changes.append(ObjectChange("+", key))
            if body["kind"] in KINDS and observed.installed(body["kind"]) is False:
                notes[NOT_INSTALLED_NOTE.format(kind=body["kind"])] = None
        else:
            assert live is not None
            sent = _without(body, registration.ignore_changes)
            if set(sent) <= {"apiVersion", "kind"}:
                left_alone += 1
                continue
            if KINDS[body["kind"]].metadata_only or body["kind"] == CRD_KIND:
                sent = {k: v for k, v in sent.items() if k in ("apiVersion", "kind", "metadata")}
                notes[CONTENT_NOTE.format(kind=body["kind"])] = None
            lines = object_drift(thawed(live), sent)
            if lines:
                changes.append(ObjectChange("~", key, tuple(lines)))
            else:
                unchanged += 1
    written = {key[0] for key in registered}
    changes += [ObjectChange("-", key) for key in _dropped(observed, registered, written)]
    statuses = len(rendering.statuses())
    return Drift(
        objects=tuple(sorted(changes, key=lambda change: change.key)),
        unchanged=unchanged,
        not_observed=tuple(sorted(unknown)),
        notes=tuple(_notes(observed, notes, statuses, left_alone)),
        warnings=tuple(dict.fromkeys(rendering.warnings)),
        cluster=_where(observed),
    )


def object_drift(live: dict[str, Any], body: Mapping[str, Any]) -> list[str]:
    """The field changes a server-side apply of `body` makes to `live` (plain JSON), server fields left out."""
    schema = kind_schema(str(body.get("apiVersion", "")), str(body.get("kind", "")))
    merged = dict(live)
    for key, value in body.items():
        if value is None:
            merged.pop(key, None)
        elif key in live:
            merged[key] = applied(live[key], value, schema.child(key))
        else:
            merged[key] = value
    before = _served(schema.defaulted(copy_json(live)))
    after = _served(schema.defaulted(copy_json(merged)))
    return field_changes(before, after)


def _served(body: dict[str, Any]) -> dict[str, Any]:
    """Without what only the API server writes: status and the server's metadata."""
    body.pop("status", None)
    metadata = body.get("metadata")
    if isinstance(metadata, dict):
        for field in SERVER_METADATA:
            metadata.pop(field, None)
    return body


def _lookup(observed: Observed, body: Mapping[str, Any]) -> tuple[str, Mapping[str, Any] | None]:
    """The snapshot's state of the object: present (with it), absent, or unknown (also for a kind the snapshot
    does not read, and for a kind it reads at another apiVersion than the program writes)."""
    kind = KINDS.get(body["kind"])
    if kind is None or kind.api_version != body["apiVersion"]:
        return "unknown", None
    metadata = body["metadata"]
    try:
        answer = observed.lookup(kind.kind, metadata.get("namespace") if kind.namespaced else None, metadata["name"])
    except ValueError:  # a namespaced object without a namespace: the API server would refuse it
        return "unknown", None
    return answer.state, answer.object


def _why_unknown(body: Mapping[str, Any]) -> str:
    kind = KINDS.get(body["kind"])
    if kind is None:
        return NOT_READ
    return OTHER_VERSION if kind.api_version != body["apiVersion"] else NOT_LISTED


def _without(body: Mapping[str, Any], paths: Iterable[str]) -> dict[str, Any]:
    """The body less each `ignore_changes` path (dotted, as the plan spells them): the live value stays there."""
    sent = copy_json(dict(body))
    for path in paths:
        *parents, leaf = path.split(".")
        node: Any = sent
        for parent in parents:
            node = node.get(parent) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node.pop(leaf, None)
    return sent


def _dropped(observed: Observed, registered: set[Key], written: set[str]) -> list[Key]:
    """Live objects of kinds the program writes, labelled as the program labels them, that it does not register."""
    found = []
    for ref, live in observed.objects.items():
        key = (ref.kind, ref.namespace or "", ref.name)
        if key in registered or ref.kind not in written:
            continue
        labels = live.get("metadata", {}).get("labels") or {}
        if labels.get(naming.MANAGED_BY) == naming.MANAGER:
            found.append(key)
    return found


def _notes(observed: Observed, notes: dict[str, None], statuses: int, left_alone: int) -> list[str]:
    said = list(notes)
    if left_alone:
        said.append(LEFT_ALONE_NOTE.format(count=left_alone))
    if statuses:
        said.append(STATUS_NOTE.format(count=statuses))
    said.append(DELETION_NOTE.format(scopes=_scopes(observed), label=f"{naming.MANAGED_BY}: {naming.MANAGER}"))
    said.append(REMOVED_FIELDS_NOTE)
    return said


def _scopes(observed: Observed) -> str:
    """`listed: AuthPolicy (all namespaces), Config, MaaSSubscription in 2 namespaces; 8 objects fetched by name`."""
    everywhere = sorted(scope.kind for scope in observed.listed if scope.namespace is None)
    spaced: dict[str, int] = {}
    for scope in observed.listed:
        if scope.namespace is not None and scope.kind not in everywhere:
            spaced[scope.kind] = spaced.get(scope.kind, 0) + 1
    listed = [f"{kind} (all namespaces)" if KINDS[kind].namespaced else kind for kind in everywhere]
    listed += [f"{kind} in {count} namespace{'s' if count > 1 else ''}" for kind, count in sorted(spaced.items())]
    fetched = f"{len(observed.got)} object{'s' if len(observed.got) != 1 else ''} fetched by name"
    return f"listed: {', '.join(listed)}; {fetched}" if listed else f"nothing listed; {fetched}"


def _where(observed: Observed) -> str | None:
    cluster = observed.cluster
    if cluster is None:
        return None
    return f"{cluster.server} (context {cluster.context})" if cluster.context else cluster.server
