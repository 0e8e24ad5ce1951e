"""What `explain` reads: the rendered objects and status writes of one stack, its stack outputs and snapshot.

Everything `explain` says comes from here, never from a second computation of the plan: the objects are what
`render` prints for the same stack file and snapshot.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...config import MaasConfig, ModelConfig, SubscriptionConfig, TenantConfig, load_config, raw_from_stack_file
from ...config.errors import quoted
from ...observe import Observed, load_snapshot
from ...observe.fields import mapping_at
from ...plan.desired import Plan
from ..render import render

if TYPE_CHECKING:
    from ..simulator import Network

ObjectKey = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


class UnknownNameError(Exception):
    """A name on the command line that the stack does not have; the message names the closest ones."""


@dataclass(frozen=True)
class World:
    config: MaasConfig
    observed: Observed
    objects: Mapping[ObjectKey, dict[str, Any]]
    statuses: Mapping[ObjectKey, dict[str, Any]]  # by the kind of the object they are written to
    outputs: Mapping[str, Any]  # the stack outputs (`subscriptions`, `models`, ...)
    tenant_outputs: Mapping[str, Mapping[str, Any]]
    warnings: list[str]
    plan: Plan  # what `render` registered them from: the request simulator reads routes and policies off it

    def object(self, kind: str, qualified: str | None) -> dict[str, Any] | None:
        """The rendered object `namespace/name` of `kind` (None for a None name or one not rendered)."""
        if qualified is None:
            return None
        namespace, _, name = qualified.rpartition("/")
        return self.objects.get((kind, namespace, name))

    def items(self, kind: str, namespace: str) -> list[dict[str, Any]]:
        """Rendered objects of `kind` in `namespace`, by name."""
        return [body for (k, ns, _), body in sorted(self.objects.items()) if k == kind and ns == namespace]

    def status(self, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The status the program writes to a rendered object, if any."""
        metadata = body["metadata"]
        return self.statuses.get((body["kind"], metadata.get("namespace", ""), metadata["name"]))

    @cached_property
    def network(self) -> Network:
        """The request simulator's view of these objects, built once."""
        from ..simulator import Network  # the simulator reads worlds: imported when first asked for

        return Network(self)

    def published_status(self, body: Mapping[str, Any]) -> Mapping[str, Any]:
        """The status maas-api reads: the one the program writes, else the live one (a controller keeps it in
        `coexist`), else none."""
        written = self.status(body)
        if written is not None:
            return mapping_at(written, "status")
        metadata = body["metadata"]
        live = self.observed.lookup(body["kind"], metadata.get("namespace", ""), metadata["name"])
        return mapping_at(live.object, "status")

    def model(self, key: str) -> ModelConfig:
        return self._registered(key, self.config.models_by_key, "model", "models")

    def subscription(self, key: str) -> SubscriptionConfig:
        return self._registered(key, {s.key: s for s in self.config.subscriptions}, "subscription", "subscriptions")

    def _registered(self, key: str, configured: Mapping[str, Any], what: str, output: str) -> Any:
        """A configured entry this stack registers: `platform.scope` may leave it to another stack."""
        registered = self.outputs.get(output, {})
        if key in configured and key not in registered:
            scope = self.config.platform.scope
            raise UnknownNameError(
                f"{what} {quoted(key)} is configured but outside this stack's maas:platform.scope {quoted(scope)}; "
                "explain it with the stack that registers it"
            )
        return _find(key, {name: configured[name] for name in registered if name in configured}, what)

    def tenant_of(self, model: ModelConfig) -> TenantConfig:
        return next(tenant for tenant in self.config.tenants if tenant.name == model.tenant)


def load_world(path: Path, stack: str, snapshot: Path | None) -> World:
    """Render the stack file against the snapshot (or nothing observed). ConfigError and ObservationError
    propagate: they are the errors `render` reports, with the same exit status."""
    raw, warnings = raw_from_stack_file(path)
    return world_of(raw, stack, load_snapshot(snapshot) if snapshot else Observed.nothing(), warnings)


def world_of(raw: Mapping[str, Any], stack: str, observed: Observed, warnings: list[str] | None = None) -> World:
    """Render a stack's configuration (the `maas:` keys without their prefix) against what was observed."""
    rendering = render(raw, stack=stack, observed=observed)
    assert rendering.plan is not None  # render() always runs the program
    tenants = {owner.name: owner.outputs for owner in rendering.plan.owners if owner.kind == "Tenant"}
    return World(
        config=load_config(raw),
        observed=observed,
        objects=_index(rendering.objects(), str),
        statuses=_index(rendering.statuses(), lambda kind: kind.removesuffix("Status")),
        outputs=rendering.plan.outputs,
        tenant_outputs=tenants,
        warnings=[*(warnings or []), *rendering.warnings],
        plan=rendering.plan,
    )


def _index(bodies: Iterable[dict[str, Any]], kind_of: Callable[[str], str]) -> dict[ObjectKey, dict[str, Any]]:
    return {
        (kind_of(body["kind"]), body["metadata"].get("namespace", ""), body["metadata"]["name"]): body
        for body in bodies
    }


def _find(key: str, known: Mapping[str, Any], what: str) -> Any:
    if key in known:
        return known[key]
    raise UnknownNameError(unknown_message(what, key, known))


def unknown_message(what: str, name: str, known: Iterable[str]) -> str:
    """`unknown model 'llm/x' (closest: llm/granite-7b); known: ...`, every known name listed in order."""
    names = sorted(known)
    closest = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f" (closest: {', '.join(closest)})" if closest else ""
    return f"unknown {what} {quoted(name)}{hint}; known: {', '.join(names) or 'none'}"
