"""Objects registered as a few bounded batches: a Pulumi dynamic provider that creates, applies and deletes many
namespaced custom resources (a tenant's MaaSSubscriptions) as one resource.

Why: on a DIY backend the engine rewrites the whole state after every step, so a first `pulumi up` writes bytes that
grow with the square of the resources; at 10,000 MaaSSubscriptions, one pulumi-kubernetes resource each, that is
about 1.6 TB. With `platform.subscriptionBatches` the program registers a tenant's subscriptions as a few
`ObjectBatch` resources instead (the registration bounds each batch and keeps its members stable). Inputs: the
`connection` (kubeconfig and context of the Kubernetes provider, a Pulumi secret), the batch's `marker` and the
`objects`, one canonical JSON string `{key: {"resource": plural, "body": object}}` keyed `{Kind}/{namespace}/{name}`
(`batch_inputs`; one string because the SDK serializes a nested value leaf by leaf, see
`status_writer.batch_targets`). Outputs: the inputs. Requests go through `cluster_api.py` (as the status writer's),
every write with field manager `maas-pulumi`.

The marker, `{project}/{stack}:{batch}`: the provider stamps the annotation `maas.opendatahub.io/batch: <marker>` on
every object it applies (the planned body never has it). It is how a batch knows an object is its own:
- create applies each object (server-side apply creates it); an object that already exists and carries a marker of
  this stack was written by one of its batches (this one, whose create failed half-way, or the one it moves from)
  and is taken over; one without it, or with another stack's, was created by something else (by hand, the
  controller, another stack, a stack that registers subscriptions one by one) and is not touched: that object
  fails, the others are still created. The program refuses such objects before registering anything
  (`plan/checks/batches.py`); this is the same rule for what its snapshot could not see.
- an object a batch no longer has (update) or a deleted batch's (delete) is deleted only when its live marker is
  still this batch's: an object that moved to another batch carries that batch's marker by then. The registration
  moves an object between batches only when its old batch resource is deleted, and the engine runs the deletes of
  resources the program no longer registers after every create and update, so the new batch has stamped its marker
  before the old batch's delete looks (pulumi/pulumi 1b594989: `deployment_executor.go` 326-332 generates the
  deletes once the program's last event is in, and the SDK ends the program only once every registration was
  answered, `runtime/stack.py` 147 `wait_for_rpcs`, which the engine does when the resource's step finished). The
  delete names the uid it saw (`preconditions`), so an object re-created meanwhile is never deleted; it does not
  wait for finalizers.

Lifecycle:
- create: every object applied, in key order (the marker rule above).
- update: a new key is created (the same rule); a changed one (or every one, when the connection or the marker
  changed) is applied; a removed one is deleted (the marker rule); nothing is sent for the others.
- read (`pulumi refresh`): each live object projected onto its recorded body (the live value at every path the body
  sets); an object whose projection differs is recorded as that projection, so the next `up` applies the body again,
  and one that no longer exists is dropped; a batch with none left ends.
- A server-side apply forces fields other managers own only when the body says so (`pulumi.com/patchForce: "true"`,
  pulumi-kubernetes' annotation); otherwise a conflict fails that object, naming the fields the API server names.
- Failures are `ObjectBatchError`s naming the object, the HTTP status, the API server's message and what to do; every
  object is attempted and the resource fails listing them all, unless the cluster cannot be used at all.
"""

from __future__ import annotations

import copy
import json
import shlex
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Any

import pulumi
import pulumi.dynamic

from .. import naming
from . import cluster_api
from .cluster_api import (
    TIMEOUT_SECONDS,
    ClusterApiError,
    HttpError,
    Request,
    Session,
    call,
    each,
    resource_path,
)
from .status_writer import encode_json

MARKER_ANNOTATION = naming.BATCH_ANNOTATION
FIELD_MANAGER = "maas-pulumi"
PATCH_FORCE = "pulumi.com/patchForce"  # pulumi-kubernetes: "true" forces a server-side apply's conflicts
APPLY_PATCH = "application/apply-patch+yaml"  # the body is JSON, which is YAML
BATCH_ID = "objects"
NOUN = "objects"  # "2 of 5 objects failed"
HINTS = {
    **cluster_api.HINTS,
    404: "the CRD of {resource} is not installed: install the MaaS CRDs of the release this program writes for",
    409: (
        "another field manager owns those fields: resolve the conflict, or set the annotation "
        f'`{PATCH_FORCE}: "true"` on the object to take them over'
    ),
    422: "the installed CRD refuses this object: install the MaaS CRDs of the release this program writes for",
}
Entry = dict[str, Any]  # {"resource": plural, "body": object}


class ObjectBatchError(ClusterApiError):
    """An object of a batch that could not be created, applied, deleted or read: `pulumi up` fails for this resource
    (listing every failing object) and keeps its previous state."""


# ------------------------------------------------------------------------------------------------ inputs


def object_key(body: Mapping[str, Any]) -> str:
    """`{Kind}/{namespace}/{name}`."""
    return f"{body['kind']}/{body['metadata']['namespace']}/{body['metadata']['name']}"


def batch_inputs(
    objects: list[tuple[str, dict[str, Any]]], connection: Mapping[str, str], marker: str
) -> dict[str, Any]:
    """The inputs of one `ObjectBatch`: the connection (secret), the marker, and the objects, each `(plural, body)`
    (`encode_objects`)."""
    return {"connection": pulumi.Output.secret(dict(connection)), "marker": marker, "objects": encode_objects(objects)}


def encode_objects(objects: Sequence[Sequence[Any]]) -> str:
    """Objects, each `(plural, body)`, as one canonical JSON string by key."""
    return encode_json({object_key(body): {"resource": resource, "body": body} for resource, body in objects})


def batch_objects(props: Mapping[str, Any]) -> dict[str, Entry]:
    """A batch's objects by key, from its inputs or outputs."""
    return json.loads(props.get("objects") or "{}")


# ----------------------------------------------------------------------------------------------- the API


def _path(entry: Entry) -> str:
    metadata = entry["body"]["metadata"]
    return resource_path(entry["body"]["apiVersion"], metadata["namespace"], entry["resource"], metadata["name"])


def _what(entry: Entry) -> str:
    metadata = entry["body"]["metadata"]
    return f"{entry['body']['kind']} {metadata['namespace']}/{metadata['name']}"


def _request(method: str, entry: Entry, verb: str, doing: str, **options: Any) -> Request:
    failed = f"could not {doing} {_what(entry)}"
    return Request(method, _path(entry), verb, entry["resource"], failed, HINTS, **options)


def _marked(body: Mapping[str, Any], marker: str) -> dict[str, Any]:
    """The body with this batch's marker among its annotations."""
    marked = copy.deepcopy(dict(body))
    metadata = marked.setdefault("metadata", {})
    metadata["annotations"] = {**(metadata.get("annotations") or {}), MARKER_ANNOTATION: marker}
    return marked


def _marker_of(live: Mapping[str, Any]) -> str | None:
    return (live.get("metadata", {}).get("annotations") or {}).get(MARKER_ANNOTATION)


def _get(api: Session, entry: Entry) -> dict[str, Any] | None:
    """The live object; None when it does not exist."""
    return call(api, _request("GET", entry, "get", "read"))


def _create(api: Session, entry: Entry, marker: str) -> None:
    """Apply the object unless it exists and no batch of this stack wrote it (module docstring). A server-side
    apply, not a POST: a POST's fields belong to an `Update` entry of the field manager, which every later apply
    of a changed value would conflict with (the API server tells managers apart by name and operation; hence
    pulumi-kubernetes' `fixCSAFieldManagers`)."""
    live = _get(api, entry)
    if live is not None and not same_stack(_marker_of(live), marker):
        raise ObjectBatchError(_foreign(entry, _marker_of(live), marker))
    _apply(api, entry, marker)


def same_stack(found: str | None, marker: str) -> bool:
    """Whether a live marker is one of this stack's batches': `{project}/{stack}:{batch}`, the batch aside."""
    return found is not None and found.rpartition(":")[0] == marker.rpartition(":")[0]


def _foreign(entry: Entry, found: str | None, marker: str) -> str:
    body = entry["body"]
    group = body["apiVersion"].rpartition("/")[0]
    metadata = body["metadata"]
    target = [f"{entry['resource']}.{group}", metadata["name"], f"{MARKER_ANNOTATION}={marker}", "--overwrite"]
    annotate = shlex.join(["kubectl", "annotate", "-n", metadata["namespace"], *target])
    who = f"the batch {found!r} of another stack" if found else f"no batch (no {MARKER_ANNOTATION} annotation)"
    return (
        f"{_what(entry)} already exists and was created by {who}: by hand, the controller, `pulumi import`, another "
        "stack or a stack that registers subscriptions one by one. It is left as it is (docs/scale.md#subscription-"
        "batches). Adopt it only if no Pulumi stack registers it as a resource of its own (that stack would delete "
        f"it): `{annotate}`, then run `pulumi up` again"
    )


def _apply(api: Session, entry: Entry, marker: str) -> None:
    """Server-side apply of the body with this batch's marker; forced only when the body asks (PATCH_FORCE)."""
    annotations = entry["body"].get("metadata", {}).get("annotations") or {}
    force = (("force", "true"),) if annotations.get(PATCH_FORCE) == "true" else ()
    query = (("fieldManager", FIELD_MANAGER), *force)
    request = _request("PATCH", entry, "patch", "apply", query=query, content_type=APPLY_PATCH)
    call(api, request, _marked(entry["body"], marker))


def _remove(api: Session, entry: Entry, marker: str) -> None:
    """Delete the object if it still carries `marker` (else it now belongs elsewhere), on condition that it is still
    the object seen (its uid): one re-created meanwhile (409) is left alone, as is one already gone (404)."""
    live = _get(api, entry)
    if live is None or _marker_of(live) != marker:
        return
    options = {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": live["metadata"]["uid"]}}
    try:
        call(api, _request("DELETE", entry, "delete", "delete"), options)
    except HttpError as error:
        if error.code != 409:
            raise


def _refreshed(api: Session, entry: Entry) -> Entry | None:
    """The entry as recorded when the live object matches its body, with the live projection as its body when it
    drifted, None when the object is gone."""
    live = _get(api, entry)
    if live is None:
        return None
    seen = projection(live, entry["body"])
    return entry if seen == entry["body"] else {**entry, "body": seen}


def projection(live: Any, planned: Any) -> Any:
    """`live` at every path `planned` sets: dicts recursively (a key `live` lacks is absent), anything else (lists
    included) whole. So fields the API server or others add do not count, and the marker is not part of it."""
    if isinstance(planned, dict) and isinstance(live, dict):
        return {key: projection(live[key], value) for key, value in planned.items() if key in live}
    return live


# ----------------------------------------------------------------------------------------------- provider


def _session(props: Mapping[str, Any]) -> Session:
    return Session(props.get("connection") or {}, TIMEOUT_SECONDS)


def _run(props: Mapping[str, Any], steps: Mapping[str, Callable[[Session], Any]]) -> dict[str, Any]:
    """Every step (by key) through one connection; one ObjectBatchError listing every failure."""
    with _session(props) as api:
        return each(steps, lambda step: step(api), ObjectBatchError, NOUN)


def _changes(olds: Mapping[str, Any], news: Mapping[str, Any]) -> dict[str, Callable[[Session], Any]]:
    """What an update sends, by key: a create for a new key, an apply for a changed one (every one when the
    connection or the marker changed), a delete (by the old marker) for a removed one."""
    old, new = batch_objects(olds), batch_objects(news)
    marker, moved = news["marker"], _moved(olds, news)
    steps = {key: partial(_create, entry=entry, marker=marker) for key, entry in new.items() if key not in old}
    changed = {key: entry for key, entry in new.items() if key in old and (moved or old[key] != entry)}
    steps |= {key: partial(_apply, entry=entry, marker=marker) for key, entry in changed.items()}
    removed = {key: entry for key, entry in old.items() if key not in new}
    return steps | {key: partial(_remove, entry=entry, marker=olds["marker"]) for key, entry in removed.items()}


def _moved(olds: Mapping[str, Any], news: Mapping[str, Any]) -> bool:
    return any(olds.get(name) != news.get(name) for name in ("connection", "marker"))


class ObjectBatchProvider(pulumi.dynamic.ResourceProvider):
    """create applies every object, update sends what changed, delete deletes this batch's objects, read projects the
    live objects onto their bodies (see the module docstring)."""

    def create(self, props: dict[str, Any]) -> pulumi.dynamic.CreateResult:
        marker = props["marker"]
        _run(props, {key: partial(_create, entry=entry, marker=marker) for key, entry in batch_objects(props).items()})
        return pulumi.dynamic.CreateResult(BATCH_ID, {**props})

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.DiffResult:
        """A change when the connection, the marker or any object differs; never a replacement: objects that leave
        a batch are deleted by its update, and a replacement would delete them all to create them again."""
        changed = _moved(olds, news) or batch_objects(olds) != batch_objects(news)
        return pulumi.dynamic.DiffResult(changes=changed, replaces=[], delete_before_replace=False)

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> pulumi.dynamic.UpdateResult:
        _run(news, _changes(olds, news))
        return pulumi.dynamic.UpdateResult({**news})

    def read(self, id_: str, props: dict[str, Any]) -> pulumi.dynamic.ReadResult:
        objects = batch_objects(props)
        found = _run(props, {key: partial(_refreshed, entry=entry) for key, entry in objects.items()})
        live = {key: entry for key, entry in found.items() if entry is not None}
        if not live:
            return pulumi.dynamic.ReadResult("", {})
        return pulumi.dynamic.ReadResult(id_, {**props, "objects": encode_json(live)})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        """Delete every object still carrying this batch's marker; finalizers are not waited for (the API server
        deletes the object once its controller releases it)."""
        marker = props["marker"]
        _run(props, {key: partial(_remove, entry=entry, marker=marker) for key, entry in batch_objects(props).items()})


class ObjectBatch(pulumi.dynamic.Resource):
    """One batch of objects (`batch_inputs`), written by `ObjectBatchProvider`; pickled by reference to that
    importable class, as the status writes are."""

    def __init__(self, name: str, props: dict[str, Any], opts: pulumi.ResourceOptions) -> None:
        super().__init__(ObjectBatchProvider(), name, props, opts)
