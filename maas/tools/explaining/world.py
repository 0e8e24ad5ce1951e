"""What `explain` reads: the rendered objects and status writes of one stack, its stack outputs and snapshot.

Everything `explain` says comes from here, never from a second computation of the plan: the objects are what
`render` prints for the same stack file and snapshot.

The status maas-api reads of a MaaS CR is the one the program writes (`controllerMode: absent`), else the live one
(`coexist`: the maas-controller keeps it), else, when neither is known (nothing observed, a CR the cluster does not
have yet, one the controller has not reconciled, or `renderYamlToDirectory`), the status the program's own status
rules give this configuration on this observation: the one it would write if it owned the status (the plan's own
function on the plan's inputs; the plan keeps only the phase as a stack output when it does not write them). Such
a status is **assumed**, and says so (`Published.assumed`): every answer that depends on it is marked, never given
as what the cluster does.
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
from ...observe.fields import mapping_at, text_at
from ...plan.desired import Plan
from ...plan.outputs import with_subscription_entries
from ..render import render

if TYPE_CHECKING:
    from ..simulator import Network

ObjectKey = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name


class UnknownNameError(Exception):
    """A name on the command line that the stack does not have; the message names the closest ones."""


WRITTEN, OBSERVED, ASSUMED, NONE = "written", "observed", "assumed", "none"
CONTROLLER_OWNS = "the maas-controller owns it in coexist"
NOBODY_WRITES = "the program writes no status with renderYamlToDirectory"
SEEN = {"unknown": "not observed", "absent": "not on the cluster yet", "present": "the live object has no phase yet"}


@dataclass(frozen=True)
class Published:
    """The status maas-api reads of one rendered object, and where it comes from: `written` by the program,
    `observed` on the cluster, `assumed` (the program's status rules, since neither is known: `why` says why), or
    `none` (a kind the program has no status rules for, unobserved)."""

    status: Mapping[str, Any]
    source: str
    why: str = ""

    @property
    def phase(self) -> str:
        return text_at(self.status, "phase") or ""

    @property
    def assumed(self) -> str:
        """Why the status is assumed (`the maas-controller owns it in coexist; not observed`), "" when it is known."""
        return self.why if self.source == ASSUMED else ""

    @property
    def shown_phase(self) -> str:
        """`Active`, `Active (assumed: ...)`, `(none)`."""
        phase = self.phase or "(none)"
        return f"{phase} (assumed: {self.why})" if self.source == ASSUMED else phase


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
        """The status maas-api reads (see `published`)."""
        return self.published(body).status

    def published(self, body: Mapping[str, Any]) -> Published:
        """The status maas-api reads: the one the program writes, else the live one when it has a phase (a
        controller keeps it in `coexist`), else the one the program's status rules give (assumed, and why)."""
        written = self.status(body)
        if written is not None:
            return Published(mapping_at(written, "status"), WRITTEN)
        metadata = body["metadata"]
        key = (body["kind"], metadata.get("namespace", ""), metadata["name"])
        live = self.observed.lookup(*key)
        status = mapping_at(live.object, "status")
        if text_at(status, "phase"):
            return Published(status, OBSERVED)
        intended = self.intended_statuses.get(key)
        if intended is None:
            return Published(status, OBSERVED if live.object is not None else NONE)
        owner = CONTROLLER_OWNS if self.config.platform.controllerMode == "coexist" else NOBODY_WRITES
        return Published(intended, ASSUMED, f"{owner}; {SEEN[live.state]}")

    @cached_property
    def intended_statuses(self) -> Mapping[ObjectKey, Mapping[str, Any]]:
        """The status of each MaaS CR that the program would write if it owned the status (`controllerMode:
        absent`, no `renderYamlToDirectory`), judged by its status rules on this observation: the same function
        (`plan/models/resources.publish`) and inputs as the plan's, which writes them only in `absent` mode."""
        from ...plan.models.resources import publish  # only a stack whose status the program does not write
        from ...plan.policies.identity import effective_identities

        platform = self.config.platform
        kubernetes = platform.kubernetes.model_copy(update={"renderYamlToDirectory": None})
        owning = platform.model_copy(update={"controllerMode": "absent", "kubernetes": kubernetes})
        config = self.config.model_copy(update={"platform": owning})
        publication = publish(config, self.observed, effective_identities(self.config, self.observed).of)
        intended = {}
        for writes in publication.statuses.values():
            for write in writes:
                metadata = write.body["metadata"]
                intended[(write.body["kind"], metadata.get("namespace", ""), metadata["name"])] = write.body["status"]
        return intended

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
    config = load_config(raw)
    return World(
        config=config,
        observed=observed,
        objects=_index(rendering.objects(), str),
        statuses=_index(rendering.statuses(), lambda kind: kind.removesuffix("Status")),
        outputs=with_subscription_entries(config, observed, rendering.plan.outputs),
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
