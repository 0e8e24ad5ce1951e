"""Run the Pulumi program offline under the SDK's mock engine and record everything it registers.

This is what `python -m maas render` prints and what the program tests assert on: the real program, with a
monitor that keeps each registration's inputs and options instead of sending them to an engine.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi.runtime import rpc
from pulumi.runtime.mocks import MockMonitor
from pulumi.runtime.sync_await import _sync_await

from ..deploy.object_batch import batch_objects
from ..deploy.status_writer import batch_targets, rendered_status
from ..gc_tuning import thaw
from ..observe import Observed
from ..plan.desired import Plan

DYNAMIC_TYPE = "pulumi-python:dynamic:Resource"  # status batches and object batches alike

PROJECT = "maas"


@dataclass(frozen=True)
class Registration:
    """One RegisterResource call: what the engine would receive for that resource."""

    type: str
    name: str
    urn: str
    parent: str
    custom: bool
    inputs: dict[str, Any]
    retain_on_delete: bool
    ignore_changes: tuple[str, ...]
    provider: str
    dependencies: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # the URNs the resource had before (Pulumi moves it instead of replacing it)
    replace_with: tuple[str, ...] = ()  # replaced whenever one of these is

    @property
    def is_kubernetes_object(self) -> bool:
        """A resource of pulumi-kubernetes: one object."""
        return self.custom and self.type.startswith("kubernetes:")

    @property
    def is_object_batch(self) -> bool:
        """A batch of objects (`deploy/object_batch.py`); status batches hold `targets`."""
        return self.type == DYNAMIC_TYPE and "objects" in self.inputs

    @property
    def is_status_batch(self) -> bool:
        return self.type == DYNAMIC_TYPE and "targets" in self.inputs


@dataclass
class Rendering:
    registrations: list[Registration] = field(default_factory=list)
    component_outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    stack_outputs: dict[str, Any] = field(default_factory=dict)  # what `pulumi.export` received
    warnings: list[str] = field(default_factory=list)
    infos: list[str] = field(default_factory=list)  # `pulumi.log.info` lines: what a preview prints
    plan: Plan | None = None

    def objects(self) -> list[dict[str, Any]]:
        """The Kubernetes objects registered, in a stable order (kind, namespace, name), keys canonical: the same
        list whether an object is a resource of its own or a member of a batch."""
        return sorted((body for body, _ in self.registered_objects()), key=object_sort_key)

    def registered_objects(self) -> list[tuple[dict[str, Any], Registration]]:
        """Each Kubernetes object registered (keys canonical), with the registration that holds it."""
        found = []
        for registration in self.registrations:
            if registration.is_kubernetes_object:
                found.append((canonical(registration.inputs), registration))
            elif registration.is_object_batch:
                inputs = registration.inputs
                objects = inputs["objects"]
                if rpc.is_rpc_secret(objects):  # a `secure:` value in one of them (`components._register_batch`)
                    inputs = {**inputs, "objects": rpc.unwrap_rpc_secret(objects)}
                found += [(canonical(e["body"]), registration) for e in batch_objects(inputs).values()]
        return found

    def statuses(self) -> list[dict[str, Any]]:
        """Every status write (kind `{Kind}Status`, see `status_writer.rendered_status`), one per object although
        one resource writes those of a whole component, in a stable order."""
        writes = [batch_targets(r.inputs).values() for r in self.registrations if r.is_status_batch]
        return sorted((canonical(rendered_status(t)) for targets in writes for t in targets), key=object_sort_key)


TOP_LEVEL_ORDER = ("apiVersion", "kind", "metadata")


def canonical(body: dict[str, Any]) -> dict[str, Any]:
    """The RPC layer does not keep key order: put `apiVersion, kind, metadata` first and sort every other key."""
    first = {key: _sorted(body[key]) for key in TOP_LEVEL_ORDER if key in body}
    rest = {key: _sorted(body[key]) for key in sorted(body) if key not in TOP_LEVEL_ORDER}
    return {**first, **rest}


def _sorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def object_sort_key(body: dict[str, Any]) -> tuple[str, str, str, str]:
    metadata = body.get("metadata", {})
    return (body["kind"], metadata.get("namespace", ""), metadata["name"], body["apiVersion"])


class _EchoMocks(pulumi.runtime.Mocks):
    """Resources come back with their inputs as state, as a cluster would after a successful apply. The inputs the
    mock monitor deserialized for this call are kept for the recording monitor (same thread: the SDK runs each
    registration in an executor thread), so that it need not deserialize them a second time."""

    def __init__(self) -> None:
        self.current = threading.local()

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        self.current.inputs = args.inputs
        return f"{args.name}-id", args.inputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        return {}


class RecordingMonitor(MockMonitor):
    """Keeps every registration, and the outputs each component registers, keyed by URN."""

    def __init__(self) -> None:
        super().__init__(_EchoMocks())
        self.registrations: list[Registration] = []
        self.outputs: dict[str, dict[str, Any]] = {}

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        response = super().RegisterResource(request)
        if request.type != "pulumi:pulumi:Stack":
            self.registrations.append(_registration(request, response.urn, self.mocks.current.inputs))
        return response

    def RegisterResourceOutputs(self, request):  # noqa: N802 (gRPC method name)
        self.outputs[request.urn] = _sync_await(_deserialize(request.outputs))
        return super().RegisterResourceOutputs(request)


def _registration(request, urn: str, inputs: dict[str, Any]) -> Registration:
    return Registration(
        type=request.type,
        name=request.name,
        urn=urn,
        parent=request.parent,
        custom=request.custom,
        inputs=_integral(inputs),
        retain_on_delete=request.retainOnDelete,
        ignore_changes=tuple(request.ignoreChanges),
        provider=request.provider,
        dependencies=tuple(sorted(request.dependencies)),
        aliases=tuple(alias.urn for alias in request.aliases if alias.urn),
        replace_with=tuple(sorted(request.replace_with)),
    )


async def _deserialize(struct) -> dict[str, Any]:
    return rpc.deserialize_properties(struct)


def _integral(value: Any) -> Any:
    """The RPC layer carries numbers as doubles; every number in a Kubernetes object we write is an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral(v) for v in value]
    return value


class _LogCollector(logging.Handler):
    """What the program logs (`pulumi.log`): warnings, and the informational lines a preview shows."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.warnings: list[str] = []
        self.infos: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.WARNING:
            self.warnings.append(record.getMessage())
        elif record.levelno == logging.INFO:
            self.infos.append(record.getMessage())


def render(
    raw_config: dict[str, Any],
    stack: str = "dev",
    monitor: RecordingMonitor | None = None,
    observed: Observed | None = None,
) -> Rendering:
    """Run the program with `raw_config` (the `maas:` keys) under mocks against a snapshot (default: nothing
    observed, so statuses are the intended ones); ConfigError propagates unchanged."""
    from ..deploy.program import run

    monitor = monitor or RecordingMonitor()
    collector = _LogCollector()
    logger = logging.getLogger(f"maas.render.{id(monitor)}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(collector)
    pulumi.runtime.set_all_config({f"{PROJECT}:{key}": json.dumps(value) for key, value in raw_config.items()})
    # The SDK keeps the first root stack of a process; each render gets its own (its name, URN and exports).
    pulumi.runtime.settings.set_root_resource(None)
    pulumi.runtime.set_mocks(_EchoMocks(), project=PROJECT, stack=stack, preview=False, monitor=monitor, logger=logger)
    rendering = Rendering()
    stack_outputs = pulumi.runtime.settings.get_root_resource().outputs

    def program() -> None:
        rendering.plan = run(observed or Observed.nothing())

    try:
        pulumi.runtime.test(program)()
    finally:
        thaw()  # the next render in this process (`diff` renders twice) starts with this one collectable
    rendering.stack_outputs = dict(stack_outputs)
    rendering.registrations = monitor.registrations
    rendering.component_outputs = monitor.outputs
    rendering.warnings = collector.warnings
    rendering.infos = collector.infos
    return rendering
