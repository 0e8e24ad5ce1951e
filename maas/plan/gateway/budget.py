"""Each Gateway's wasm object against the 1.5 MiB etcd stores (`reference/gateway-budget.md`), before `pulumi up`.

For every Gateway the plan's policies target, the wasm configuration Kuadrant would build from them is measured
as the API server would store its object, from its parts and without building it (`wasm.Builder.size`, which
`tests/test_gateway_size.py` holds to the configuration built and written out): its size, ActionSets, limits, and
what each model (or other route) adds. `Sizing` holds what every measurement of one plan shares (the policies as
Kuadrant sees them, the routes, a builder per Gateway and index, one measurer, the object around each Gateway's
ActionSets), so that the levers (`levers.py`) measure a Gateway again, transformed, from what each route weighs:
a route object already measured under an index is not measured again. The report (`report.py`) turns the figures
into notes, warnings and the `gateways` stack output.

An object Pulumi does not change (`maas:unmanaged`, the live opt-out, an Unmanaged tenant's) is counted as it is
live when the snapshot has it, else as planned. Policies outside the plan, and routes outside the plan, the
snapshot and the models' KServe routes, are not seen.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import naming
from ...config import MaasConfig
from ...observe import Observed
from ..desired import Desired, Plan
from .encoding import NOTHING, CompositeList, Measure, Measurer, array_punctuation
from .envelope import carried_as, object_kind, object_name, wasm_object
from .policies import AUTH, TRLP, Policy, PolicyIndex
from .routes import Gateway, Route, attached, gateway_of, routes, seen_and_planned
from .wasm import Builder, RouteSize, config_body

BUDGET = 1_572_864  # etcd's default --max-request-bytes, 1.5 MiB
WARN_PERCENT = 80
SHOWN = 5  # largest contributors per Gateway


def percent_of(size: int) -> float:
    """A size as a share of the budget, as every line prints it."""
    return round(100 * size / BUDGET, 1)


def near_the_limit(size: int) -> bool:
    """From 80 % (as printed): the report warns and evaluates the levers."""
    return percent_of(size) >= WARN_PERCENT


@dataclass(frozen=True)
class Contributor:
    """What one model (or another route) adds to a Gateway's object."""

    name: str
    bytes: int
    action_sets: int
    limits: int
    model: str | None = None  # the model's key; None: another route

    def output(self) -> dict[str, Any]:
        return {"name": self.name, "bytes": self.bytes, "actionSets": self.action_sets, "limits": self.limits}


@dataclass(frozen=True)
class GatewayBudget:
    namespace: str
    name: str
    carrier: str  # `EnvoyFilter ns/kuadrant-{name}` (or WasmPlugin)
    bytes: int
    action_sets: int
    limits: int
    largest: tuple[Contributor, ...]
    models: tuple[Contributor, ...] = field(default=(), repr=False)  # every model on it, heaviest first
    levers: tuple[Any, ...] | None = None  # `levers.Lever`s that shrink it, best first; None: not evaluated

    @property
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)

    @property
    def percent(self) -> float:
        return percent_of(self.bytes)

    def line(self) -> str:
        return (
            f"gateway {self.key}: wasm config {self.bytes} bytes ({self.percent}% of 1.5 MiB), "
            f"{self.action_sets} action sets, {self.limits} limits"
        )

    def largest_line(self) -> str:
        shown = ", ".join(f"{c.name} {c.bytes} bytes ({c.action_sets} action sets)" for c in self.largest)
        return f"gateway {self.key}: largest {shown}"

    def output(self) -> dict[str, Any]:
        found = {
            "object": self.carrier,
            "bytes": self.bytes,
            "percent": self.percent,
            "actionSets": self.action_sets,
            "limits": self.limits,
            "largest": [c.output() for c in self.largest],
        }
        if self.levers is not None:
            found["levers"] = [lever.output() for lever in self.levers]
        return found


def plan_policies(plan: Plan, observed: Observed) -> list[Policy]:
    """The plan's AuthPolicies and TokenRateLimitPolicies as Kuadrant will see them."""
    return [_policy(obj, observed) for obj in plan.objects() if obj.subresource is None and obj.kind in (AUTH, TRLP)]


def _policy(obj: Desired, observed: Observed) -> Policy:
    """A planned policy as Kuadrant will see it, ordered by its live creation time when it exists."""
    live = observed.meta(obj.kind, obj.namespace, obj.name)
    created = live and live.created
    seen, planned = seen_and_planned(obj, observed)
    return Policy(obj.kind, obj.namespace or "", obj.name, seen.get("spec") or {}, created or "", planned)


class Sizing:
    """What every measurement of one plan shares: its policies (as Kuadrant will see them) and their index, the
    routes the gateways carry, each Gateway, a builder per Gateway and index, and one measurer. A Gateway measured
    again from other routes or another index (a lever) measures only the routes it has not measured."""

    def __init__(self, config: MaasConfig, plan: Plan, observed: Observed) -> None:
        self.config, self.plan, self.observed = config, plan, observed
        self.policies = plan_policies(plan, observed)
        self.index = PolicyIndex(self.policies)
        self.routes = routes(config, plan, observed)
        self.version = config.platform.kuadrantVersion
        self._gateways: dict[tuple[str, str], Gateway] = {}
        self._builders: dict[tuple[str, int], tuple[PolicyIndex, Builder]] = {}
        self._measurer = Measurer()
        self._arounds: dict[str, Measure] = {}

    def gateway(self, namespace: str, name: str) -> Gateway:
        if (namespace, name) not in self._gateways:
            self._gateways[(namespace, name)] = gateway_of(self.config, self.observed, namespace, name)
        return self._gateways[(namespace, name)]

    def gateways(self) -> list[Gateway]:
        """Every Gateway a policy of the plan targets, sorted by namespace and name."""
        return [self.gateway(ns, name) for ns, name in self.index.gateway_targets()]

    def route_sizes(
        self, gateway: Gateway, carried: Sequence[Route] | None = None, index: PolicyIndex | None = None
    ) -> list[RouteSize]:
        """What each route adds to the Gateway's wasm configuration, from `carried` (default: the plan's routes)
        and `index` (the plan's)."""
        builder = self._builder(gateway, self.index if index is None else index)
        pairs = attached(self.routes if carried is None else carried, gateway)
        return [builder.size(listener, route, self._measurer) for listener, route in pairs]

    def _builder(self, gateway: Gateway, index: PolicyIndex) -> Builder:
        key = (gateway.key, id(index))
        if key not in self._builders:
            first = self._builders.get((gateway.key, id(self.index)))  # what does not depend on the index
            builder = Builder(gateway, index, first[1] if first else None)
            self._builders[key] = (index, builder)  # the index kept alive: its id stays its own
        return self._builders[key][1]

    def _around(self, gateway: Gateway) -> Measure:
        """`around` the Gateway's ActionSets, measured once."""
        if gateway.key not in self._arounds:
            self._arounds[gateway.key] = around(gateway, self.version, self._measurer)
        return self._arounds[gateway.key]

    def measure(
        self, gateway: Gateway, carried: Sequence[Route] | None = None, index: PolicyIndex | None = None
    ) -> GatewayBudget:
        return measured(gateway, self._around(gateway), self.route_sizes(gateway, carried, index), self.version)

    def size(self, gateway: Gateway, carried: Sequence[Route] | None = None, index: PolicyIndex | None = None) -> int:
        """The stored bytes alone (what `measure` reports as `bytes`)."""
        return stored_size(self._around(gateway), self.route_sizes(gateway, carried, index), self.version)

    def rewritten_size(self, gateway: Gateway, change: Callable[[Policy, str], Measure]) -> int:
        """The stored bytes with some limits' `when` rewritten, derived from the plan's measurement instead of
        measured again: `change(policy, limit name)` is what the limit's predicates weigh more rewritten (`NOTHING`:
        unchanged). A limit's predicates are copied into its check and its report action in every ActionSet that
        carries them, and nothing else changes, so the object changes by that times the copies (the size model is
        additive). Each limit is asked once per call."""
        sizes = self.route_sizes(gateway)
        changes: dict[tuple[str, str], Measure] = {}
        total = NOTHING
        for size in sizes:
            for tokens, copies in size.copies:
                for source, name in tokens.checked:
                    key = (source.locator, name)
                    if key not in changes:
                        changes[key] = change(source, name)
                    total += changes[key] * (2 * copies)
        return stored_size(self._around(gateway), sizes, self.version, total)

    def text_change(self, old: str, new: str) -> Measure:
        """What the text `new` weighs more than `old`, each a JSON string."""
        return self._measurer.measure(new) - self._measurer.measure(old)

    def budgets(self) -> list[GatewayBudget]:
        return [self.measure(gateway) for gateway in self.gateways()]


def gateway_budgets(config: MaasConfig, plan: Plan, observed: Observed) -> list[GatewayBudget]:
    """One budget per Gateway that a policy of the plan targets, sorted by namespace and name."""
    return Sizing(config, plan, observed).budgets()


def around(gateway: Gateway, kuadrant_version: str, measurer: Measurer) -> Measure:
    """The Gateway's object less its ActionSet array: with an empty one, less the array's brackets."""
    return measurer.measure(wasm_object(gateway, config_body(CompositeList()), kuadrant_version)) - array_punctuation(0)


def stored_size(around: Measure, sizes: Sequence[RouteSize], kuadrant_version: str, change: Measure = NOTHING) -> int:
    """The stored size of the Gateway's object: what is `around` its ActionSet array, and the array of what the
    routes add (and `change`), as the object carries it."""
    count = sum(size.action_sets for size in sizes)
    array = sum((size.bodies for size in sizes), array_punctuation(count) + change)
    return (around + carried_as(array, kuadrant_version)).stored


def measured(gateway: Gateway, around: Measure, sizes: Sequence[RouteSize], kuadrant_version: str) -> GatewayBudget:
    """The stored size of the Gateway's object, with each ActionSet's share attributed to its model or route."""
    shares: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    limits: dict[str, set[str]] = defaultdict(set)
    models: dict[str, str | None] = {}
    for size in sizes:
        if not size.action_sets:
            continue
        route = size.route
        name = f"model {route.model}" if route.model else f"HTTPRoute {route.key}"
        shares[name][0] += carried_as(size.bodies, kuadrant_version).stored + size.action_sets  # and commas
        shares[name][1] += size.action_sets
        limits[name].update(size.limits)
        models[name] = route.model
    contributors = sorted(
        (Contributor(name, size, count, len(limits[name]), models[name]) for name, (size, count) in shares.items()),
        key=lambda c: (-c.bytes, c.name),
    )
    return GatewayBudget(
        gateway.namespace,
        gateway.name,
        f"{object_kind(kuadrant_version)} {gateway.namespace}/{object_name(gateway)}",
        stored_size(around, sizes, kuadrant_version),
        sum(size.action_sets for size in sizes),
        len(set().union(*(size.limits for size in sizes))),
        tuple(contributors[:SHOWN]),
        tuple(c for c in contributors if c.model is not None),
    )
