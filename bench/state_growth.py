"""Benchmark (not a test): the Pulumi state of the program at scale, and what a first `pulumi up` makes each state
backend write: the bytes and writes per backend, at `--parallel 1` and at `--parallel 32`, and what-if levers.

What the engine writes (pulumi/pulumi at 1b594989, cited in docs/scale.md): `SnapshotManager`
(`pkg/backend/snapshot.go`) serializes every mutation on one goroutine and persists the whole snapshot after each:
the pending operation and then the result of every create (a component's too), and each component's registered
outputs (`RegisterResourceOutputs`: elided only when an old state has equal outputs, never on a first `up`); a
`same` step with no meaningful change is elided. `--parallel` changes neither the number of writes nor their
order of arrival (one at a time), only how many pending operations each snapshot carries (up to P); with
`PULUMI_SKIP_CHECKPOINTS=true` (`unsafeServiceLoop`) nothing is written until the snapshot manager closes, once.

- **diy** (`file://`, `s3://`, ..., `pkg/backend/diy/state.go`): each save copies the stack file to `.bak` (a
  server-side copy on an object store, a full rewrite on a disk) and rewrites the file; since v3.238.0 the file is
  compact JSON (#22245; `diy-indented`: older CLIs, 4-space indentation). After the update the checkpoint is copied
  into `.pulumi/history` and written again into `.pulumi/backups` (unless `PULUMI_DIY_BACKEND_DISABLE_CHECKPOINT_
  BACKUPS`). `diy-gzip` (`PULUMI_DIY_BACKEND_GZIP=true`) gzips every write (its size here: the compressed size of
  the state prefix of the same raw size); `diy-skip` is `PULUMI_SKIP_CHECKPOINTS=true`.
- **cloud-delta** (`pkg/backend/httpstate/snapshot.go`, `diffs.go`; journaling off or not offered): every save is
  sent gzipped; below the service's cutoff (`checkpointCutoffSizeBytes`, assumed 4 MiB as in the client's tests)
  the whole compact snapshot, above it a line diff over spans (one per resource): the header (its manifest changes
  at every write), the resource appended and the one before it (it gains a comma), a component whose outputs
  changed; pending operations are in the spans only when there are more than 9 of them.
- **cloud-journal** (`pkg/engine/journal_snapshot.go`, `pkg/backend/httpstate/journal/snapshot.go`; the default
  where the service answers `journalVersion: 1`): one entry per begin, end and outputs, each holding one resource,
  sent in gzipped batches of at most 100, which a step waits for, so a batch holds at most P entries.
  `PULUMI_SKIP_CHECKPOINTS` does not apply to it.

Offline, the state is built from what the render registers: one version-3 resource (`urn` in the engine's form,
`custom`, `id`, `type`, `inputs`, `outputs`, `parent`, `dependencies`, `provider`, `propertyDependencies`,
`created`, `modified`, `sourcePosition`) per registration, secrets as ciphertext of their size. Outputs are what
the providers record: a Kubernetes object's live object (its inputs plus the server's uid, resourceVersion,
generation and creation time) and the copy of its inputs pulumi-kubernetes keeps in `__inputs`
(pulumi/pulumi-kubernetes#566); a status writer's inputs plus what it records per status (`written_statuses`); an
object batch's inputs (`platform.subscriptionBatches`: its outputs are its inputs); a component's registered
outputs; the root stack's outputs. It runs on the tree it sits in, so a copy of it in a checkout of an older commit
measures that commit's layout. Server-side defaults and managed fields are left out,
so the figures are a lower bound. Creates complete in registration order (with P in flight, first in, first out),
component outputs and stack outputs last.

Levers (`LEVERS`) are what-if transforms of the modelled resource list, not program changes: the same objects
registered in another order, or stored differently. `ascending` (every resource in size order) ignores
dependencies and parents: a floor for ordering alone, not a layout the engine would accept.

One case per process (the render's memory is its own). Usage:
    python bench/state_growth.py                              # 1,000 and 10,000 subscriptions, every table
    python bench/state_growth.py 1000 short                   # one case, one JSON line (every lever)
    python bench/state_growth.py 1000 short --lever status-last+status-digest   # one case, that lever only
    python bench/state_growth.py 1000 short --lever none      # one case, as rendered only (the `base` lever)
    python bench/state_growth.py 1000 short --lever none --batches   # the same with platform.subscriptionBatches
"""

from __future__ import annotations

import base64
import bisect
import gzip
import hashlib
import json
import math
import subprocess
import sys
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

SECRET_SIG = "4dabf18193072939515e22adb298388d"
SECRET_VALUE = "1b47061264138c4ac30d75fd1eb44270"
STACK_TYPE = "pulumi:pulumi:Stack"
TIME = "2027-01-04T10:00:00.000000000Z"
DEPTH = 4  # resources sit at checkpoint.latest.resources[i]: four levels of 4-space indentation
SERVER_METADATA = {
    "uid": "0f2c2a94-3d5f-4c1e-9a7e-1b2c3d4e5f60",
    "resourceVersion": "123456789",
    "generation": 1,
    "creationTimestamp": "2027-01-04T10:00:00Z",
}


def engine_urn(urn: str) -> str:
    """The mock monitor qualifies children of the root stack with `pulumi:pulumi:Stack$`; the engine does not."""
    return urn.replace(f"::{STACK_TYPE}$", "::")


def encrypted(value: Any) -> Any:
    """Secrets as the passphrase provider stores them: AES-GCM ciphertext (12-byte nonce, 16-byte tag), base64."""
    if isinstance(value, dict) and value.get(SECRET_SIG) == SECRET_VALUE:
        plain = json.dumps(value.get("value"), separators=(",", ":")).encode()
        nonce, sealed = bytes(12), bytes(len(plain) + 16)
        text = f"v1:{base64.b64encode(nonce).decode()}:{base64.b64encode(sealed).decode()}"
        return {SECRET_SIG: SECRET_VALUE, "ciphertext": text}
    if isinstance(value, dict):
        return {key: encrypted(item) for key, item in value.items()}
    if isinstance(value, list):
        return [encrypted(item) for item in value]
    return value


def written_statuses(inputs: dict[str, Any]) -> dict[str, Any]:
    """A status writer's outputs. One resource per batch (`targets`): the record the provider keeps of each write
    (`status_writer.write_record`: the digest, the fields, each condition's status and transition time; a stored
    digest only when the API server pruned something, never here). One resource per status, as before the
    batching: the status also as stamped (`appliedStatus`) and as stored (`storedStatus`)."""
    if "targets" in inputs:
        from maas.deploy.status_writer import batch_targets, encode_json, write_record

        targets = {
            key: write_record(t, t["status"], _stamped(json.loads(t["status"])), t["status"])
            for key, t in batch_targets(inputs).items()
        }
        return {**inputs, "targets": encode_json(targets)}
    return {**inputs, "appliedStatus": _stamped(inputs["status"]), "storedStatus": inputs["status"]}


def _stamped(status: dict[str, Any]) -> dict[str, Any]:
    time = SERVER_METADATA["creationTimestamp"]
    return {**status, "conditions": [{**c, "lastTransitionTime": time} for c in status.get("conditions", [])]}


def outputs_of(registration, component_outputs: dict[str, Any]) -> dict[str, Any]:
    inputs = registration.inputs
    if registration.is_kubernetes_object:
        metadata = {**inputs.get("metadata", {}), **SERVER_METADATA}
        return {**inputs, "metadata": metadata, "__inputs": inputs}
    if registration.is_object_batch:
        return inputs  # `object_batch.py`: what refresh compares the live objects with
    if registration.type.startswith("pulumi-python:dynamic:"):
        return written_statuses(inputs)
    if registration.custom:
        return inputs
    return component_outputs.get(registration.urn, {})


def state_resource(registration, component_outputs: dict[str, Any], property_deps: dict[str, Any]) -> dict:
    resource: dict[str, Any] = {"urn": engine_urn(registration.urn), "custom": registration.custom}
    if registration.custom:
        resource["id"] = f"{registration.name}-id"
    resource["type"] = registration.type
    resource["inputs"] = encrypted(registration.inputs if registration.custom else {})
    resource["outputs"] = encrypted(outputs_of(registration, component_outputs))
    if registration.parent:
        resource["parent"] = engine_urn(registration.parent)
    if registration.dependencies:
        resource["dependencies"] = [engine_urn(urn) for urn in registration.dependencies]
    if registration.provider:
        resource["provider"] = engine_urn(registration.provider)
    resource["propertyDependencies"] = property_deps.get(registration.urn, {})
    if registration.retain_on_delete:
        resource["retainOnDelete"] = True
    if registration.ignore_changes:
        resource["ignoreChanges"] = list(registration.ignore_changes)
    resource |= {"created": TIME, "modified": TIME, "sourcePosition": "project:///__main__.py#6,1"}
    return resource


PARALLEL = (1, 32)  # `--parallel 1`, and the default on an 8-CPU runner (4 x GOMAXPROCS)
CLOUD_DELTA_CUTOFF = 4 * 1024**2  # checkpointCutoffSizeBytes: the service says; 4 MiB in the client's tests
JOURNAL_BATCH = 100  # PULUMI_JOURNALING_BATCH_SIZE's default
PENDING_IN_SPANS = 9  # the delta's spans carry pending operations only when there are more than this many
GZIP_SAMPLES = 64
STATUS_PREFIX = "pulumi-python:dynamic:"
SUBSCRIPTION_TYPE = "kubernetes:maas.opendatahub.io/v1alpha1:MaaSSubscription"
DYNAMIC_TYPE = "pulumi-python:dynamic:Resource"
CLOUD_HEADER = (
    '{"version":3,"deployment":{"manifest":{"time":"2027-01-04T10:00:00.123456789Z","magic":"' + "0" * 64 + '",'
    '"version":"v3.259.0"},"secrets_providers":{"type":"service","state":{"url":"https://api.pulumi.com",'
    '"owner":"organization","project":"maas","stack":"dev"}},"metadata":{},"resources":['
).encode()
EDIT = len(b'{"Span":{"uri":"","start":{"line":1,"column":0,"offset":12345678},"end":{"line":1,"column":0,')
EDIT += len(b'"offset":12345678}},"NewText":""},')
DELTA_ENVELOPE = len(b'{"version":3,"checkpointHash":"' + b"0" * 64 + b'","sequenceNumber":12345,"deploymentDelta":[]}')
JOURNAL_PREFIX = b'{"version":1,"kind":1,"sequenceID":12345,"operationID":12345,"removeOld":null,"removeNew":null,'
GZIP_FRAME = 18 - 6  # a gzip member's header and trailer, less zlib's


def compact(value: Any) -> bytes:
    """Go's encoding/json with SetEscapeHTML(false), as the DIY backend writes (map key order aside)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


def html_escaped(text: bytes) -> bytes:
    """Go's json.Marshal (and segmentio's encoder) also escape <, > and & inside strings: what the service gets."""
    return text.replace(b"&", b"\\u0026").replace(b"<", b"\\u003c").replace(b">", b"\\u003e")


def as_string(text: bytes) -> bytes:
    """A span as an edit's NewText carries it: a JSON string."""
    return json.dumps(text.decode(), ensure_ascii=False)[1:-1].encode()


def gzipped(data: bytes) -> int:
    return len(zlib.compress(data, 6)) + GZIP_FRAME


class Measured:
    """One resource's bytes in the indented (`ind`) and compact (`cmp`) checkpoint: as its create ends (a
    component still without outputs), finished, and as a pending operation; with `texts`, its compact spans as the
    service gets them (HTML-escaped)."""

    __slots__ = ("bare", "full", "pend", "registers", "texts")

    def __init__(self, resource: dict[str, Any], registers: bool, texts: bool) -> None:
        bare = {**resource, "outputs": {}} if registers else resource
        pending = {"resource": _without_outputs(resource), "type": "creating"}
        plain = {"bare": compact(bare), "pend": compact(pending)}
        plain["full"] = compact(resource) if registers else plain["bare"]
        self.registers = registers
        self.bare = {"ind": contribution(bare), "cmp": len(plain["bare"]) + 1}
        self.full = {"ind": contribution(resource) if registers else self.bare["ind"], "cmp": len(plain["full"]) + 1}
        self.pend = {"ind": contribution(pending), "cmp": len(plain["pend"]) + 1}
        self.texts = {key: html_escaped(text) for key, text in plain.items()} if texts else None


def contribution(resource: dict[str, Any]) -> int:
    """The bytes one resource adds to the indented checkpoint (its lines at DEPTH, then `,` and a newline)."""
    text = json.dumps(resource, indent=4, sort_keys=False, ensure_ascii=False)
    return len(text.encode()) + 4 * DEPTH * (text.count("\n") + 1) + 2


def checkpoint(resources: list[dict[str, Any]]) -> dict[str, Any]:
    manifest = {"time": TIME, "magic": "0" * 64, "version": "v3.200.0"}
    secrets = {"type": "passphrase", "state": {"salt": "v1:" + "A" * 16 + ":v1:" + "A" * 16 + ":" + "A" * 44}}
    latest = {"manifest": manifest, "secrets_providers": secrets, "resources": resources}
    return {"version": 3, "checkpoint": {"stack": "organization/maas/dev", "latest": latest}}


def _without_outputs(resource: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in resource.items() if key != "outputs"}


def events(measured: list[Measured], parallel: int) -> Iterator[tuple[str, int]]:
    """The snapshot mutations of a first `up`, in the order they are persisted: creates begin in registration
    order with at most `parallel` in flight and end first in, first out; then each component's outputs, the
    stack's (resource 0) last."""
    in_flight: deque[int] = deque()
    for i in range(len(measured)):
        if len(in_flight) == parallel:
            yield "end", in_flight.popleft()
        in_flight.append(i)
        yield "begin", i
    while in_flight:
        yield "end", in_flight.popleft()
    for i in [*range(1, len(measured)), 0]:
        if measured[i].registers:
            yield "outputs", i


def snapshot_sizes(measured: list[Measured], encoding: str, base: int, parallel: int) -> list[int]:
    """The size of every snapshot the engine saves: the resources done so far and the pending operations."""
    sizes, done, pending = [], base, 0
    for kind, i in events(measured, parallel):
        m = measured[i]
        if kind == "begin":
            pending += m.pend[encoding]
        elif kind == "end":
            pending -= m.pend[encoding]
            done += m.bare[encoding]
        else:
            done += m.full[encoding] - m.bare[encoding]
        sizes.append(done + pending)
    return sizes


def diy_written(sizes: list[int], initial: int) -> int:
    """Every save copies the stack file to `.bak` and rewrites it; after the update, a copy into history and a
    write into backups."""
    return sum(sizes) + initial + sum(sizes[:-1]) + 2 * sizes[-1]


def gzip_curve(measured: list[Measured], base: bytes) -> Callable[[int], int]:
    """The gzipped size of a compact snapshot of a given raw size: the state's prefixes, compressed (level 6, as
    Go's default), interpolated between GZIP_SAMPLES of them."""
    compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
    out, raw = len(compressor.compress(base)), len(base)
    points, step = [(0, 20), (raw, out + len(compressor.copy().flush()))], max(1, len(measured) // GZIP_SAMPLES)
    for k, m in enumerate(measured):
        out += len(compressor.compress(m.texts["full"] + b","))
        raw += m.full["cmp"]
        if k % step == 0 or k == len(measured) - 1:
            points.append((raw, out + len(compressor.copy().flush())))
    xs = [x for x, _ in points]

    def size(raw_size: int) -> int:
        k = min(max(bisect.bisect_left(xs, raw_size), 1), len(points) - 1)
        (x0, y0), (x1, y1) = points[k - 1], points[k]
        return round(y0 + (y1 - y0) * (raw_size - x0) / max(1, x1 - x0))

    return size


def cloud_delta(measured: list[Measured], sizes: list[int], gz: Callable[[int], int], parallel: int) -> int:
    """Bytes on the wire to the service without journaling: below the cutoff the whole snapshot, gzipped; above
    it, per write, the changed spans as edits, gzipped."""
    header = as_string(CLOUD_HEADER)
    total, last, in_flight = 0, None, deque()
    for (kind, i), size in zip(events(measured, parallel), sizes, strict=True):
        pieces, edits = [header], 1
        if kind == "begin":
            if len(in_flight) + 1 > PENDING_IN_SPANS:
                pieces += [as_string(measured[in_flight[-1]].texts["pend"] + b",")] if in_flight else []
                pieces.append(as_string(measured[i].texts["pend"]))
                edits += 1
            in_flight.append(i)
        elif kind == "end":
            if len(in_flight) > PENDING_IN_SPANS:
                edits += 1  # the operation's span deleted
            in_flight.remove(i)
            if last is not None:
                pieces.append(as_string(measured[last].texts["bare"] + b","))
            pieces.append(as_string(measured[i].texts["bare"]))
            last, edits = i, edits + 1
        else:
            pieces.append(as_string(measured[i].texts["full"] + (b"," if i != last else b"")))
            edits += 1
        if size < CLOUD_DELTA_CUTOFF:
            total += gz(size) + DELTA_ENVELOPE
        else:
            total += gzipped(b"".join(pieces)) + DELTA_ENVELOPE + edits * EDIT // 8  # the edits' JSON, compressed
    return total


def cloud_journal(measured: list[Measured], parallel: int) -> tuple[int, int]:
    """(requests, bytes on the wire) with journaling: an entry per begin, end and outputs, in gzipped batches of
    at most JOURNAL_BATCH entries, at most one waiting entry per step in flight."""
    batch_size, batch, requests, total = min(parallel, JOURNAL_BATCH), [], 0, 0
    for kind, i in events(measured, parallel):
        texts = measured[i].texts
        if kind == "begin":
            batch.append(JOURNAL_PREFIX + b'"operation":' + texts["pend"] + b"}")
        else:
            batch.append(JOURNAL_PREFIX + b'"state":' + texts["bare" if kind == "end" else "full"] + b"}")
        if len(batch) == batch_size:
            total, requests, batch = total + gzipped(b'{"entries":[' + b",".join(batch) + b"]}"), requests + 1, []
    if batch:
        total, requests = total + gzipped(b'{"entries":[' + b",".join(batch) + b"]}"), requests + 1
    return requests, total


# What-if levers: transforms of the modelled resource list.


def is_status(resource: dict[str, Any]) -> bool:
    return resource["type"].startswith(STATUS_PREFIX) and "targets" in resource["inputs"]


def status_last(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every status writer registered after every other resource (each still after the objects it describes)."""
    return [r for r in resources if not is_status(r)] + [r for r in resources if is_status(r)]


def ascending(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every resource in size order (the stack first): the floor of what ordering alone can give."""
    return resources[:1] + sorted(resources[1:], key=lambda r: len(compact(r)))


def _digest(value: Any) -> str:
    return hashlib.sha256(compact(value)).hexdigest()


def status_digest(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each status writer stores, per target, a digest of it (and, in its outputs, the conditions' transition
    times) instead of the target."""
    from maas.deploy.status_writer import batch_targets

    out = []
    for r in resources:
        if is_status(r):
            digests = {key: _digest(target) for key, target in batch_targets(r["inputs"]).items()}
            recorded = batch_targets(r["outputs"])
            times = {
                key: {"digest": d, "transitions": recorded.get(key, {}).get("transitions", {})}
                for key, d in digests.items()
            }
            r = {**r, "inputs": {**r["inputs"], "targets": digests}, "outputs": {**r["outputs"], "targets": times}}
        out.append(r)
    return out


def is_subscription(resource: dict[str, Any]) -> bool:
    return resource["type"] == SUBSCRIPTION_TYPE


def is_object(resource: dict[str, Any]) -> bool:
    return resource["type"].startswith("kubernetes:")


def grouped(
    member: Callable[[dict[str, Any]], bool], digest: bool, name: str
) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    """A component's `member` objects as one resource (a batch applier, registered where the last of them was):
    inputs, each object (or, with `digest`, its digest) by kind/namespace/name; outputs, those and each object's
    uid and resourceVersion (no `__inputs` copy)."""

    def transform(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in resources:
            if member(r):
                groups.setdefault(r.get("parent", ""), []).append(r)
        lasts = {id(members[-1]): members for members in groups.values()}
        out = []
        for r in resources:
            if not member(r):
                out.append(r)
            elif id(r) in lasts:
                out.append(_batch(lasts[id(r)], digest, name))
        return out

    return transform


def _batch(members: list[dict[str, Any]], digest: bool, name: str) -> dict[str, Any]:
    first = members[0]
    objects = {}
    for m in members:
        meta = m["inputs"].get("metadata", {})
        key = f"{m['inputs'].get('kind')}/{meta.get('namespace')}/{meta.get('name')}"
        objects[key] = _digest(m["inputs"]) if digest else m["inputs"]
    server = {"uid": SERVER_METADATA["uid"], "resourceVersion": SERVER_METADATA["resourceVersion"]}
    parent = first.get("parent", "")
    urn = f"{parent.rpartition('::')[0] or first['urn'].rpartition('::')[0]}${DYNAMIC_TYPE}::{name}/"
    urn += parent.rpartition("::")[2]
    resource: dict[str, Any] = {"urn": urn, "custom": True, "id": name, "type": DYNAMIC_TYPE}
    resource |= {
        "inputs": {"objects": objects},
        "outputs": {"objects": objects, "live": dict.fromkeys(objects, server)},
    }
    if parent:
        resource["parent"] = parent
    dependencies = sorted({d for m in members for d in m.get("dependencies", [])})
    if dependencies:
        resource["dependencies"] = dependencies
    resource |= {"propertyDependencies": {}, "created": TIME, "modified": TIME}
    return resource | {"sourcePosition": first["sourcePosition"]}


LEVERS: dict[str, Callable[[list[dict[str, Any]]], list[dict[str, Any]]]] = {
    "status-last": status_last,
    "ascending": ascending,
    "status-digest": status_digest,
    "subscriptions-grouped": grouped(is_subscription, digest=False, name="subscriptions"),
    "subscriptions-digest": grouped(is_subscription, digest=True, name="subscriptions"),
    "objects-digest": grouped(is_object, digest=True, name="objects"),
}
NO_LEVER = "none"
BATCHES = "--batches"  # render with `platform.subscriptionBatches: true`
LEVER_CASES = (
    "status-last",
    "ascending",
    "status-digest",
    "subscriptions-grouped",
    "subscriptions-digest",
    "subscriptions-digest+status-digest",
    "subscriptions-digest+status-digest+ascending",
    "objects-digest+status-digest",
)


def apply_lever(name: str, resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Levers joined by `+`, applied left to right."""
    for part in name.split("+"):
        resources = LEVERS[part](resources)
    return resources


def one_case(
    subscriptions: int, identity: str, levers: tuple[str, ...] = LEVER_CASES, batches: bool = False
) -> dict[str, Any]:
    from render_scale import configuration

    from maas.tools.render import RecordingMonitor, render

    class PropertyDependencies(RecordingMonitor):
        """Also keeps what each input property depends on, which the engine stores per resource."""

        def __init__(self) -> None:
            super().__init__()
            self.property_deps: dict[str, Any] = {}

        def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
            response = super().RegisterResource(request)
            deps = {
                key: sorted(engine_urn(u) for u in value.urns) for key, value in request.propertyDependencies.items()
            }
            self.property_deps[response.urn] = deps
            return response

    monitor = PropertyDependencies()
    rendering = render(configuration(subscriptions, identity, batches=batches), monitor=monitor)
    stack_urn = next(urn for urn in rendering.component_outputs if f"::{STACK_TYPE}::" in urn)
    # the root stack's outputs are what `pulumi.export` received (the mock engine records no RegisterResourceOutputs
    # for it; the real engine stores them on the stack resource)
    stack = {"urn": stack_urn, "custom": False, "type": STACK_TYPE, "outputs": rendering.stack_outputs}
    resources = [stack] + [
        state_resource(r, rendering.component_outputs, monitor.property_deps) for r in rendering.registrations
    ]
    registering = {engine_urn(urn) for urn in rendering.component_outputs}
    del rendering, monitor
    measured = [Measured(r, r["urn"] in registering, texts=True) for r in resources]
    sizes = [m.full["ind"] for m in measured]
    full = (json.dumps(checkpoint(resources), indent=4, ensure_ascii=False) + "\n").encode()
    full_compact = compact(checkpoint(resources))
    base = len((json.dumps(checkpoint([]), indent=4) + "\n").encode())
    base_compact = len(compact(checkpoint([]))) - 1  # the first resource has no comma before it
    largest = max(range(len(resources)), key=sizes.__getitem__)
    row: dict[str, Any] = {
        "subscriptions": subscriptions,
        "identity": identity,
        "batches": batches,
        "resources": len(resources),
        "state_bytes": len(full),
        "state_bytes_modelled": base + sum(sizes),
        "state_compact_bytes": len(full_compact),
        "state_compact_bytes_modelled": base_compact + sum(m.full["cmp"] for m in measured),
        "state_gzip_bytes": len(gzip.compress(full_compact, 6)),
        "bytes_per_resource": round(len(full) / len(resources)),
        "largest_resource": resources[largest]["urn"].rpartition("::")[2],
        "largest_resource_bytes": sizes[largest],
    }
    del full, full_compact
    backends = _backends(measured, base, base_compact)
    row["first_up_writes"] = backends["diy"]["writes_p1"]
    row["first_up_bytes_written"] = backends["diy-indented"]["checkpoint_bytes_p1"]
    row["backends"] = backends
    row["levers"] = _levers(resources, measured, registering, base_compact, base, levers)
    return row


def _backends(measured: list[Measured], base: int, base_compact: int) -> dict[str, dict[str, int]]:
    gz = gzip_curve(measured, compact(checkpoint([]))[:-3])
    out: dict[str, dict[str, int]] = {}
    for parallel in PARALLEL:
        p = f"_p{parallel}"
        ind = snapshot_sizes(measured, "ind", base, parallel)
        cmp = snapshot_sizes(measured, "cmp", base_compact, parallel)
        gzs = [gz(s) for s in cmp]
        initial = base_compact  # `pulumi stack init` writes an empty checkpoint
        writes = len(cmp)
        figures = {
            "diy": (writes, diy_written(cmp, initial)),
            "diy-indented": (writes, diy_written(ind, base)),
            "diy-gzip": (writes, diy_written(gzs, gz(initial))),
            "diy-skip": (1, diy_written(cmp[-1:], initial)),
            "cloud-full": (writes, sum(gzs) + writes * DELTA_ENVELOPE),
            "cloud-delta": (writes, cloud_delta(measured, cmp, gz, parallel)),
            "cloud-journal": cloud_journal(measured, parallel),
        }
        for name, (count, written) in figures.items():
            out.setdefault(name, {})[f"writes{p}"] = count
            out[name][f"bytes{p}"] = written
        out["diy"][f"checkpoint_bytes{p}"] = sum(cmp)
        out["diy-indented"][f"checkpoint_bytes{p}"] = sum(ind)
    return out


def _levers(
    resources: list[dict[str, Any]],
    measured: list[Measured],
    registering: set[str],
    base_compact: int,
    base: int,
    names: tuple[str, ...],
) -> dict[str, dict[str, int]]:
    cache = {id(r): (r, m) for r, m in zip(resources, measured, strict=True)}
    for m in measured:
        m.texts = None
    out = {}
    for name in ("base", *names):
        changed = resources if name == "base" else apply_lever(name, resources)
        ms = []
        for r in changed:
            if id(r) not in cache:
                cache[id(r)] = (r, Measured(r, r["urn"] in registering, texts=False))
            ms.append(cache[id(r)][1])
        cmp = snapshot_sizes(ms, "cmp", base_compact, 1)
        ind = snapshot_sizes(ms, "ind", base, 1)
        out[name] = {
            "resources": len(ms),
            "state_compact_bytes": base_compact + sum(m.full["cmp"] for m in ms),
            "writes": len(cmp),
            "diy_bytes": diy_written(cmp, base_compact),
            "diy_indented_bytes": diy_written(ind, base),
            "largest_resource_bytes": max(m.full["cmp"] for m in ms),
        }
    return out


COLUMNS = (
    ("subscriptions", "subscriptions", 13, "d"),
    ("resources", "resources", 9, "d"),
    ("state_MiB", "state_bytes", 9, "mib"),
    ("gzip_MiB", "state_gzip_bytes", 8, "mib"),
    ("bytes/resource", "bytes_per_resource", 14, "d"),
    ("largest_KiB", "largest_resource_bytes", 11, "kib"),
    ("writes", "first_up_writes", 7, "d"),
    ("first_up_GiB", "first_up_bytes_written", 12, "gib"),
)
UNITS = {"kib": 1024, "mib": 1024**2, "gib": 1024**3, "gb": 1e9}
BACKENDS = ("diy", "diy-indented", "diy-gzip", "diy-skip", "cloud-full", "cloud-delta", "cloud-journal")
COUNTS = (1000, 10000)
EXTRAPOLATE_TO = 100_000
BUDGET = 100e9  # bytes a first `up` may write: the 100 GB


def cell(value: Any, width: int, fmt: str) -> str:
    return f"{value / UNITS[fmt]:>{width}.2f}" if fmt in UNITS else f"{value:>{width}{fmt}}"


def quadratic(points: list[tuple[int, float]]) -> Callable[[float], float]:
    """a·N² + b·N through two (N, bytes) points: the first `up` is quadratic in the resources, which grow
    linearly with the subscriptions. A backend that writes each resource a bounded number of times (a < 0 here:
    fixed costs amortized) is extrapolated linearly from the larger point instead."""
    (n1, f1), (n2, f2) = points
    a = (f2 / n2 - f1 / n1) / (n2 - n1)
    b = f1 / n1 - a * n1
    if a <= 0:
        return lambda n: f2 * n / n2
    return lambda n: a * n * n + b * n


def budget_subscriptions(fit: Callable[[float], float]) -> int | None:
    """The subscriptions at which the fit reaches BUDGET (bisection), None beyond 10 million."""
    low, high = 1.0, 1e7
    if fit(high) < BUDGET:
        return None
    while high - low > 1:
        mid = (low + high) / 2
        low, high = (mid, high) if fit(mid) < BUDGET else (low, mid)
    return int(low)


def _within(fit: Callable[[float], float]) -> str:
    at = budget_subscriptions(fit)
    return f"{at:,}" if at is not None else "> 10,000,000"


def print_tables(rows: list[dict[str, Any]]) -> None:
    print(" ".join(f"{heading:>{width}s}" for heading, _, width, _ in COLUMNS))
    for row in rows:
        print(" ".join(cell(row[key], width, fmt) for _, key, width, fmt in COLUMNS))
    print("\nfirst up, per backend (GB = 10^9 bytes; writes: checkpoint saves, journal: requests)")
    head = f"{'subscriptions':>13s} {'backend':>13s}"
    print(head + "".join(f" {f'writes_p{p}':>10s} {f'GB_p{p}':>10s}" for p in PARALLEL))
    for row in rows:
        for name in BACKENDS:
            figures = row["backends"][name]
            cells = "".join(f" {figures[f'writes_p{p}']:>10d} {figures[f'bytes_p{p}'] / 1e9:>10.2f}" for p in PARALLEL)
            print(f"{row['subscriptions']:>13d} {name:>13s}" + cells)
    counts = [row["subscriptions"] for row in rows]
    if len(rows) == 2:
        print(
            f"\nextrapolated to {EXTRAPOLATE_TO:,} subscriptions (a·N² + b·N through {counts[0]:,} and {counts[1]:,})"
        )
        print(f"{'backend':>13s} {f'GB_p{PARALLEL[-1]}':>12s} {'GB within budget at':>22s}")
        for name in BACKENDS:
            key = f"bytes_p{PARALLEL[-1]}"
            fit = quadratic([(row["subscriptions"], row["backends"][name][key]) for row in rows])
            print(f"{name:>13s} {fit(EXTRAPOLATE_TO) / 1e9:>12.1f} {_within(fit):>22s}")
        fit = quadratic([(row["subscriptions"], row["backends"]["diy"][f"bytes_p{PARALLEL[-1]}"]) for row in rows])
        threshold = budget_subscriptions(fit)
        stacks = math.ceil(EXTRAPOLATE_TO / threshold)
        per_stack = fit(EXTRAPOLATE_TO / stacks)
        print(
            f"diy: {BUDGET / 1e9:.0f} GB is reached at {threshold:,} subscriptions in one stack; {EXTRAPOLATE_TO:,} "
            f"split into {stacks} stacks of {EXTRAPOLATE_TO // stacks:,}: {per_stack / 1e9:.1f} GB each, "
            f"{stacks * per_stack / 1e9:.1f} GB in all"
        )
    print("\nlevers (what-if, --parallel 1; GB = 10^9 bytes; diy: compact, indented: before v3.238.0)")
    print(
        f"{'subscriptions':>13s} {'lever':>45s} {'resources':>9s} {'state_MiB':>9s} {'largest_MiB':>11s} "
        f"{'writes':>7s} {'diy_GB':>9s} {'indented_GB':>11s}"
    )
    for row in rows:
        for name, lever in row["levers"].items():
            print(
                f"{row['subscriptions']:>13d} {name:>45s} {lever['resources']:>9d} "
                f"{lever['state_compact_bytes'] / 1024**2:>9.2f} {lever['largest_resource_bytes'] / 1024**2:>11.2f} "
                f"{lever['writes']:>7d} {lever['diy_bytes'] / 1e9:>9.2f} {lever['diy_indented_bytes'] / 1e9:>11.2f}"
            )
    if len(rows) == 2:
        print(f"\nlevers extrapolated to {EXTRAPOLATE_TO:,} (diy, compact), and where {BUDGET / 1e9:.0f} GB is reached")
        print(f"{'lever':>45s} {'GB':>10s} {'GB within budget at':>22s}")
        for name in rows[0]["levers"]:
            fit = quadratic([(row["subscriptions"], row["levers"][name]["diy_bytes"]) for row in rows])
            print(f"{name:>45s} {fit(EXTRAPOLATE_TO) / 1e9:>10.1f} {_within(fit):>22s}")


def main() -> None:
    from maas.gc_tuning import tune_gc

    tune_gc()
    args = sys.argv[1:]
    batches = BATCHES in args
    args = [arg for arg in args if arg != BATCHES]
    if len(args) >= 2:
        levers = LEVER_CASES
        if len(args) == 4 and args[2] == "--lever":
            levers = () if args[3] == NO_LEVER else (args[3],)
            for lever in levers:
                apply_lever(lever, [])  # an unknown lever fails here, before the render
        print(json.dumps(one_case(int(args[0]), args[1], levers, batches)))
        return
    rows = []
    for count in COUNTS:
        out = subprocess.run(
            [sys.executable, __file__, str(count), "short"], capture_output=True, text=True, check=True
        )
        rows.append(json.loads(out.stdout))
    print_tables(rows)


if __name__ == "__main__":
    main()
