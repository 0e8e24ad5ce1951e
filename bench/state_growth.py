"""Benchmark (not a test): the Pulumi state of the program at scale, and what a first `pulumi up` makes a
`file://` backend write.

The engine persists the whole snapshot at every step: twice per create (the pending operation, then the result)
and once per component's registered outputs (`SnapshotManager` in pulumi/pulumi `pkg/backend/snapshot.go`). A DIY
backend (`file://`, `s3://`, ...) writes it each time as one JSON file (`encoding.JSON`: 4-space indentation), so a
first `up` of N resources rewrites a file that grows to N resources about 2N times: O(N²) bytes.

Offline, the state is built from what the render registers: one version-3 resource (`urn` in the engine's form,
`custom`, `id`, `type`, `inputs`, `outputs`, `parent`, `dependencies`, `provider`, `propertyDependencies`,
`created`, `modified`, `sourcePosition`) per registration, secrets as ciphertext of their size. Outputs are what
the providers record: a Kubernetes object's live object (its inputs plus the server's uid, resourceVersion,
generation and creation time) and the copy of its inputs pulumi-kubernetes keeps in `__inputs`
(pulumi/pulumi-kubernetes#566); a status writer's inputs plus what it records per status (`written_statuses`); a
component's registered outputs; the root stack's outputs. It runs on the tree it sits in, so a copy of it in a
checkout of an older commit measures that commit's layout. Server-side defaults and managed fields are left out,
so the figures are a lower bound. Writes happen in registration order, component outputs and stack outputs last.

One case per process (the render's memory is its own). Usage:
    python bench/state_growth.py                  # 1,000 and 10,000 subscriptions
    python bench/state_growth.py 1000 short       # one case, one JSON line
"""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
import sys
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
    """A status writer's outputs. One resource per component (`targets`): each status with its conditions'
    transition times (`storedStatus` only when the API server pruned something, never here). One resource per
    status, as before the batching: the status also as stamped (`appliedStatus`) and as stored (`storedStatus`)."""
    if "targets" in inputs:
        targets = {key: {**t, "transitions": _times(json.loads(t["status"]))} for key, t in inputs["targets"].items()}
        return {**inputs, "targets": targets}
    return {**inputs, "appliedStatus": _stamped(inputs["status"]), "storedStatus": inputs["status"]}


def _times(status: dict[str, Any]) -> dict[str, str]:
    return {c["type"]: SERVER_METADATA["creationTimestamp"] for c in status.get("conditions", [])}


def _stamped(status: dict[str, Any]) -> dict[str, Any]:
    time = SERVER_METADATA["creationTimestamp"]
    return {**status, "conditions": [{**c, "lastTransitionTime": time} for c in status.get("conditions", [])]}


def outputs_of(registration, component_outputs: dict[str, Any]) -> dict[str, Any]:
    inputs = registration.inputs
    if registration.is_kubernetes_object:
        metadata = {**inputs.get("metadata", {}), **SERVER_METADATA}
        return {**inputs, "metadata": metadata, "__inputs": inputs}
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


def contribution(resource: dict[str, Any]) -> int:
    """The bytes one resource adds to the indented checkpoint (its lines at DEPTH, then `,` and a newline)."""
    text = json.dumps(resource, indent=4, sort_keys=False, ensure_ascii=False)
    return len(text.encode()) + 4 * DEPTH * (text.count("\n") + 1) + 2


def checkpoint(resources: list[dict[str, Any]]) -> dict[str, Any]:
    manifest = {"time": TIME, "magic": "0" * 64, "version": "v3.200.0"}
    secrets = {"type": "passphrase", "state": {"salt": "v1:" + "A" * 16 + ":v1:" + "A" * 16 + ":" + "A" * 44}}
    latest = {"manifest": manifest, "secrets_providers": secrets, "resources": resources}
    return {"version": 3, "checkpoint": {"stack": "organization/maas/dev", "latest": latest}}


def first_up(resources: list[dict[str, Any]], base: int) -> tuple[int, int]:
    """(writes, bytes written). Per resource, in registration order: the snapshot with its pending operation, then
    with the resource (a component or the stack still without outputs); then, one write each, the snapshot with each
    component's and the stack's outputs, which the program registers last."""
    total, snapshot, writes, registered = 0, base, 0, []
    for resource in resources:
        bare = resource if resource["custom"] else {**resource, "outputs": {}}
        total += snapshot + contribution({"resource": _without_outputs(resource), "type": "creating"})
        snapshot += contribution(bare)
        total += snapshot
        writes += 2
        if not resource["custom"]:
            registered.append(contribution(resource) - contribution(bare))
    for grown in registered:
        snapshot += grown
        total += snapshot
    return writes + len(registered), total


def _without_outputs(resource: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in resource.items() if key != "outputs"}


def one_case(subscriptions: int, identity: str) -> dict[str, Any]:
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
    rendering = render(configuration(subscriptions, identity), monitor=monitor)
    stack_urn = next(urn for urn in rendering.component_outputs if f"::{STACK_TYPE}::" in urn)
    stack = {"urn": stack_urn, "custom": False, "type": STACK_TYPE, "outputs": rendering.component_outputs[stack_urn]}
    resources = [stack] + [
        state_resource(r, rendering.component_outputs, monitor.property_deps) for r in rendering.registrations
    ]
    sizes = [contribution(r) for r in resources]
    full = (json.dumps(checkpoint(resources), indent=4, ensure_ascii=False) + "\n").encode()
    base = len((json.dumps(checkpoint([]), indent=4) + "\n").encode())
    writes, written = first_up(resources, base)
    largest = max(range(len(resources)), key=sizes.__getitem__)
    return {
        "subscriptions": subscriptions,
        "identity": identity,
        "resources": len(resources),
        "state_bytes": len(full),
        "state_bytes_modelled": base + sum(sizes),
        "state_gzip_bytes": len(gzip.compress(full, 6)),
        "bytes_per_resource": round(len(full) / len(resources)),
        "largest_resource": resources[largest]["urn"].rpartition("::")[2],
        "largest_resource_bytes": sizes[largest],
        "first_up_writes": writes,
        "first_up_bytes_written": written,
    }


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
UNITS = {"kib": 1024, "mib": 1024**2, "gib": 1024**3}


def cell(value: Any, width: int, fmt: str) -> str:
    return f"{value / UNITS[fmt]:>{width}.2f}" if fmt in UNITS else f"{value:>{width}{fmt}}"


def main() -> None:
    from maas.gc_tuning import tune_gc

    tune_gc()
    if len(sys.argv) == 3:
        print(json.dumps(one_case(int(sys.argv[1]), sys.argv[2])))
        return
    print(" ".join(f"{heading:>{width}s}" for heading, _, width, _ in COLUMNS))
    for count in (1000, 10000):
        out = subprocess.run(
            [sys.executable, __file__, str(count), "short"], capture_output=True, text=True, check=True
        )
        row = json.loads(out.stdout)
        print(" ".join(cell(row[key], width, fmt) for _, key, width, fmt in COLUMNS))


if __name__ == "__main__":
    main()
