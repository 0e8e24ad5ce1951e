"""What would shrink a Gateway near its budget, each lever evaluated on this configuration with the size model.

A lever is a change the owner of the configuration can make; evaluating it means transforming what the plan
produces the way the change would, through the plan's own code, and measuring the Gateway again (`Sizing`):

- `maas:platform.predicateFormat: compact`: each limit of the plan's TokenRateLimitPolicies written in the compact
  format from the members `plan_rate_limits` grouped; since only predicate texts change, the size is derived from
  the plan's own measurement and what each text weighs in either format (`Sizing.rewritten_size`, which a test
  holds to the plan of the compact configuration);
- retiring legacy identities: the same with every legacy subscription short;
- writing rate sets that differ only in spelling alike (`100/60s` and `100/1m`, one limit each today): the same
  with, per model, each such rate set written in its largest whole unit;
- moving the largest models to another tenant's gateway: their routes attached to that gateway instead (its own
  gateway policies then apply), as few of the heaviest as bring this one under 80 %, else the split that leaves
  the larger of the two smallest; with no other tenant, a new tenant's gateway like this one;
- one listener per hostname: each route that is copied into several listeners of one hostname attached to the
  first of them only.

A lever that does not apply (nothing to change here) is not evaluated, one that does not leave the largest Gateway
it touches smaller than this one is left out, and the rest come best first. Policies Pulumi leaves alone
(`maas:unmanaged`, the live opt-out) count as they are live whatever the lever. The transformed TokenRateLimitPolicies
are computed once per plan, for every Gateway near its budget.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from operator import attrgetter
from typing import Any

from ... import naming
from ...config import MaasConfig
from ...config.schema import TokenRateLimit
from ...config.types import WINDOW, WINDOW_SECONDS
from ...listing import listed
from ...observe.views import ParentRef
from ..policies.identity import Identity
from ..policies.ratelimit import (
    UNLIMITED,
    ModelLimits,
    Rate,
    RateLimitPlan,
    compact_predicate,
    plan_rate_limits,
    predicate,
    rate_set,
    rates_of,
)
from .budget import WARN_PERCENT, GatewayBudget, Sizing, percent_of
from .encoding import NOTHING, Measure
from .policies import TRLP, Policy, PolicyIndex
from .routes import Gateway, Listener, Route, attached

NAMES = (
    "maas:platform.predicateFormat: compact, moving models to another tenant's gateway, writing rate sets that "
    "differ only in spelling alike, retiring legacy identities, one listener per hostname"
)
SHOWN_NAMES = 3  # models, subscriptions or spellings named in a lever's text


@dataclass(frozen=True)
class Lever:
    """One change and the Gateway's size with it; a move also says where the models go and what that one weighs."""

    text: str
    bytes: int
    destination: str | None = None
    destination_bytes: int | None = None

    @property
    def percent(self) -> float:
        return percent_of(self.bytes)

    @property
    def worst(self) -> int:
        """The larger of the Gateways it leaves: how it ranks."""
        return max(self.bytes, self.destination_bytes or 0)

    def output(self) -> dict[str, Any]:
        found: dict[str, Any] = {"lever": self.text, "bytes": self.bytes, "percent": self.percent}
        if self.destination_bytes is not None:
            found["destination"] = self.destination  # None: a new tenant's
            found["destinationBytes"] = self.destination_bytes
            found["destinationPercent"] = percent_of(self.destination_bytes)
        return found


def lever_line(output: Mapping[str, Any]) -> str:
    """`{lever} leaves N bytes (P%)`, for a move here and there (read from the stack output)."""
    line = f"{output['lever']} leaves {output['bytes']} bytes ({output['percent']}%)"
    if "destinationBytes" in output:
        line += f" here and {output['destinationBytes']} bytes ({output['destinationPercent']}%) there"
    return line


def shrink_text(output: Mapping[str, Any]) -> str:
    """The part of the warning and of the error that says what would shrink the Gateway."""
    levers = output.get("levers") or []
    if not levers:
        return (
            f"none of the levers ({NAMES}) applies to this configuration or shrinks it; fewer models, hostnames, "
            "route matches or distinct rate sets on this gateway would"
        )
    shown = "; ".join(f"({i}) {lever_line(lever)}" for i, lever in enumerate(levers, 1))
    return f"to shrink it, each lever alone as measured on this configuration, best first: {shown}"


def _named(items: Sequence[str]) -> str:
    return listed(items, SHOWN_NAMES)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _fits(size: int) -> bool:
    return percent_of(size) < WARN_PERCENT


class Levers:
    """The levers of every Gateway of one plan; what several Gateways share is computed once. `rate_limits`: the
    plan's own, whose identities and grouped members the levers start from instead of planning them again."""

    def __init__(self, sizing: Sizing, rate_limits: RateLimitPlan) -> None:
        self.sizing = sizing
        self.config: MaasConfig = sizing.config
        self.rate_limits = rate_limits
        self._indexes: dict[str, PolicyIndex] = {}
        self._compact_changes: dict[tuple[tuple[Identity, int], ...], Measure] = {}  # identity counts -> change

    def of(self, budget: GatewayBudget) -> tuple[Lever, ...]:
        """The levers that shrink the Gateway, best first (the one leaving the smallest largest Gateway)."""
        gateway = self.sizing.gateway(budget.namespace, budget.name)
        evaluations: tuple[Callable[[Gateway, GatewayBudget], Lever | None], ...] = (
            self._compact,
            self._move,
            self._respell,
            self._retire_legacy,
            self._one_listener,
        )
        found = [lever for evaluate in evaluations if (lever := evaluate(gateway, budget)) is not None]
        return tuple(sorted((lever for lever in found if lever.worst < budget.bytes), key=_rank))

    # -------------------------------------------------------------------------------- what the levers read

    def models_on(self, gateway: Gateway) -> list[str]:
        """The keys of the models whose routes the Gateway carries, sorted."""
        return sorted({route.model for _, route in attached(self.sizing.routes, gateway) if route.model})

    @cached_property
    def _written(self) -> set[tuple[str, str]]:
        """(namespace, name) of the plan's TokenRateLimitPolicies that Kuadrant will see as planned (a lever can
        change those only)."""
        return {(p.namespace, p.name) for p in self.sizing.policies if p.kind == TRLP and p.planned}

    def _changeable(self, models: Iterable[str]) -> list[str]:
        """Those of `models` whose TokenRateLimitPolicy the plan writes."""
        by_key = self.config.models_by_key
        return [
            key
            for key in models
            if key in by_key and (by_key[key].route_namespace, naming.trlp_name(by_key[key].name)) in self._written
        ]

    @property
    def _identities(self) -> Mapping[str, Identity]:
        return self.rate_limits.identities

    def _index(self, name: str, planned: Callable[[], Mapping[str, dict]]) -> PolicyIndex:
        """The plan's policies with every TokenRateLimitPolicy the plan writes as `planned()` returns it (model
        key -> body; called once per lever and plan)."""
        if name not in self._indexes:
            bodies = planned().values()
            specs = {(b["metadata"]["namespace"], b["metadata"]["name"]): b["spec"] for b in bodies}
            policies = [
                replace(p, spec=specs[place])
                if p.kind == TRLP and (place := (p.namespace, p.name)) in specs and place in self._written
                else p
                for p in self.sizing.policies
            ]
            self._indexes[name] = PolicyIndex(policies)
        return self._indexes[name]

    def _measured(
        self, gateway: Gateway, carried: Sequence[Route] | None = None, index: PolicyIndex | None = None
    ) -> int:
        return self.sizing.size(gateway, carried, index)

    # ------------------------------------------------------------------------------------------- the levers

    def _compact(self, gateway: Gateway, budget: GatewayBudget) -> Lever | None:
        """Only the limits' predicate texts change, so the size is derived from the plan's measurement and what
        each text weighs more compact (`Sizing.rewritten_size`) rather than measured again from rewritten policies
        (a tenth of a second at 10,000 subscriptions); `tests/test_budget_levers.py` holds it to the plan of the
        compact configuration."""
        if self.config.platform.predicateFormat == "compact" or not self._changeable(self.models_on(gateway)):
            return None
        return Lever("maas:platform.predicateFormat: compact", self.sizing.rewritten_size(gateway, self._compacted))

    def _compacted(self, policy: Policy, name: str) -> Measure:
        """What a limit's predicate weighs more in the compact format, where the plan writes its policy. Each
        member's value is written once in either format, alike, so that depends only on how many members of each
        identity the limit has: written by the plan's own `predicate` and `compact_predicate` and measured for the
        first limit with those counts only."""
        model = self._grouped_by_policy.get((policy.namespace, policy.name)) if policy.kind == TRLP else None
        if model is None:
            return NOTHING
        members = model.groups[name]
        if name == UNLIMITED:  # the one limit both generations share
            counts = tuple(sorted(Counter(map(_identity, members)).items()))
        else:  # every other limit holds members of one identity (`limit_groups`)
            counts = ((members[0].identity, len(members)),)
        if counts not in self._compact_changes:
            exempt = self.rate_limits.exempt
            default = predicate((member.clause for member in members), exempt)
            self._compact_changes[counts] = self.sizing.text_change(default, compact_predicate(members, exempt))
        return self._compact_changes[counts]

    @cached_property
    def _grouped_by_policy(self) -> dict[tuple[str, str], ModelLimits]:
        """Each model's grouped members by the (namespace, name) of its TokenRateLimitPolicy, where the plan writes
        it."""
        grouped = self.rate_limits.grouped.values()
        found = {(m.model.route_namespace, naming.trlp_name(m.model.name)): m for m in grouped}
        return {place: model for place, model in found.items() if place in self._written}

    def _retire_legacy(self, gateway: Gateway, budget: GatewayBudget) -> Lever | None:
        identities = self._identities
        if "legacy" not in identities.values():
            return None  # nothing to retire: the subscriptions are not read one by one
        models = set(self._changeable(self.models_on(gateway)))
        legacy = sorted(
            s.key
            for s in self.config.subscriptions
            if identities.get(s.key) == "legacy" and any(ref.key in models for ref in s.modelRefs)
        )
        if not legacy:
            return None
        short: dict[str, Identity] = dict.fromkeys(identities, "short")
        index = self._index("short", lambda: plan_rate_limits(self.config, short).policies)
        text = (
            f"retire legacy identities, rateLimitIdentity: short on the {_plural(len(legacy), 'legacy subscription')} "
            f"with models here ({_named(legacy)}, their counters restart)"
        )
        return Lever(text, self._measured(gateway, index=index))

    def _respell(self, gateway: Gateway, budget: GatewayBudget) -> Lever | None:
        respelled = self._spellings(set(self._changeable(self.models_on(gateway))))
        if not respelled:
            return None
        index = self._index(
            f"respell {gateway.key}", lambda: plan_rate_limits(self._respelled(respelled), self._identities).policies
        )
        models = sorted({model for model, _ in respelled})
        examples = sorted({f"{_spelled(old)} as {_spelled(new)}" for (_, old), new in respelled.items()})
        text = (
            f"write rate sets that differ only in spelling alike, {_named(examples)} on "
            f"{_plural(len(models), 'model')} ({_named(models)}), one limit where there are several (the rewritten "
            "references' counters restart)"
        )
        return Lever(text, self._measured(gateway, index=index))

    def _spellings(self, models: set[str]) -> dict[tuple[str, tuple[Rate, ...]], tuple[Rate, ...]]:
        """(model, rate set) -> the same rates in their largest whole units, for each rate set of a model that
        another one of it differs from only in spelling (each model's rate sets read from its limits as
        `plan_rate_limits` grouped them: the members of one limit share its rate set, its first member's)."""
        grouped = {key: limits.groups.values() for key, limits in self.rate_limits.grouped.items() if key in models}
        sets = {key: {g[0].rates for g in groups if g[0].rates is not None} for key, groups in grouped.items()}
        windows = {window for found in sets.values() for rates in found for _, window in rates}
        if len({_largest_unit(window) for window in windows}) == len(windows):
            return {}  # no two spellings of one window: no rate set differs from another only so
        respelled = {}
        for model, found in sets.items():
            alike: dict[tuple[Rate, ...], list[tuple[Rate, ...]]] = defaultdict(list)
            for rates in found:
                alike[rate_set((limit, _largest_unit(window)) for limit, window in rates)].append(rates)
            for normal, spellings in alike.items():
                if len(spellings) > 1:
                    respelled.update({(model, rates): normal for rates in spellings if rates != normal})
        return respelled

    def _respelled(self, respelled: Mapping[tuple[str, tuple[Rate, ...]], tuple[Rate, ...]]) -> MaasConfig:
        """The configuration with those references' rate sets written alike (nothing else copied)."""
        subscriptions = []
        for subscription in self.config.subscriptions:
            refs = tuple(
                ref.model_copy(update={"tokenRateLimits": tuple(TokenRateLimit(limit=n, window=w) for n, w in new)})
                if not ref.unlimited and (new := respelled.get((ref.key, rates_of(ref)))) is not None
                else ref
                for ref in subscription.modelRefs
            )
            changed = any(a is not b for a, b in zip(refs, subscription.modelRefs, strict=True))
            subscriptions.append(subscription.model_copy(update={"modelRefs": refs}) if changed else subscription)
        return self.config.model_copy(update={"subscriptions": tuple(subscriptions)})

    def _move(self, gateway: Gateway, budget: GatewayBudget) -> Lever | None:
        heaviest = [c.model for c in budget.models if c.model is not None]
        if len(heaviest) < 2:
            return None
        destination, tenant = self._destination(gateway)
        moved_routes = {id(r): r for r in self.sizing.routes if r.model in heaviest}
        reparented = {key: _attached_to(route, gateway, destination) for key, route in moved_routes.items()}
        here_sizes: dict[int, int] = {}
        there_sizes: dict[int, int] = {}

        def here(k: int) -> int:
            if k not in here_sizes:
                gone = set(heaviest[:k])
                here_sizes[k] = self._measured(gateway, [r for r in self.sizing.routes if r.model not in gone])
            return here_sizes[k]

        def there(k: int) -> int:
            if k not in there_sizes:
                going = set(heaviest[:k])
                if destination is None:  # a gateway like this one, with its other routes (a tenant's maas-api)
                    carried = [r for r in self.sizing.routes if r.model is None or r.model in going]
                    there_sizes[k] = self._measured(gateway, carried)
                else:
                    carried = [reparented[id(r)] if r.model in going else r for r in self.sizing.routes]
                    there_sizes[k] = self._measured(destination, carried)
            return there_sizes[k]

        count = _move_count(len(heaviest), here, there)
        where = "a new tenant's gateway" if destination is None else f"tenant {tenant}'s gateway {destination.key}"
        which = "the largest model" if count == 1 else f"the {count} largest models"
        text = f"move {which} ({_named(heaviest[:count])}) to {where} (maas:models[].tenant)"
        return Lever(text, here(count), None if destination is None else destination.key, there(count))

    def _destination(self, gateway: Gateway) -> tuple[Gateway | None, str | None]:
        """Another Managed tenant's measured Gateway with the most room, and its tenant; none: a new tenant's."""
        platform = self.config.platform
        measured = set(self.sizing.index.gateway_targets())
        candidates = []
        for tenant in self.config.tenants:
            place = (platform.gateway.namespace, tenant.gateway_name(platform))
            if tenant.managementState == "Managed" and place in measured and place != (gateway.namespace, gateway.name):
                other = self.sizing.gateway(*place)
                candidates.append((self._measured(other), other.key, other, tenant.name))
        if not candidates:
            return None, None
        _, _, other, tenant = min(candidates)
        return other, tenant

    def _one_listener(self, gateway: Gateway, budget: GatewayBudget) -> Lever | None:
        by_host: dict[str | None, list[Listener]] = defaultdict(list)
        for listener in gateway.listeners:
            by_host[listener.hostname].append(listener)
        if all(len(listeners) < 2 for listeners in by_host.values()):
            return None
        on: dict[int, list[Listener]] = defaultdict(list)
        for listener, route in attached(self.sizing.routes, gateway):
            on[id(route)].append(listener)
        pinned, copied = {}, set()
        for route in self.sizing.routes:
            listeners = on.get(id(route), [])
            first: dict[str | None, Listener] = {}
            for listener in listeners:
                first.setdefault(listener.hostname, listener)
            if len(first) < len(listeners):
                pinned[id(route)] = _pinned(route, gateway, list(first.values()))
                copied.update(listener.name for listener in listeners if listener not in first.values())
        if not pinned:
            return None
        carried = [pinned.get(id(route), route) for route in self.sizing.routes]
        text = (
            f"one listener per hostname, parentRefs[].sectionName naming one listener of each hostname on the "
            f"{_plural(len(pinned), 'route')} now also copied into {_named(sorted(copied))}"
        )
        return Lever(text, self._measured(gateway, carried))


_identity = attrgetter("identity")  # of a `Member`, read in C: a limit has thousands


def _rank(lever: Lever) -> tuple[int, int, str]:
    return (lever.worst, lever.bytes, lever.text)


def _move_count(models: int, here: Callable[[int], int], there: Callable[[int], int]) -> int:
    """How many of the heaviest models to move (1 to all but one): the fewest that bring this Gateway under 80 %
    when the destination stays under it too; else the split that leaves the larger of the two smallest. `here`
    falls and `there` grows with the count, so both are found by bisection."""
    last = models - 1
    fewest = _first(1, last, lambda k: _fits(here(k)))
    if fewest is not None and _fits(there(fewest)):
        return fewest
    crossing = _first(1, last, lambda k: here(k) <= there(k)) or last
    return min((k for k in (crossing - 1, crossing) if k >= 1), key=lambda k: (max(here(k), there(k)), k))


def _first(low: int, high: int, holds: Callable[[int], bool]) -> int | None:
    """The smallest k in [low, high] for which the monotone `holds` is true, or None."""
    if low > high or not holds(high):
        return None
    while low < high:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle + 1
    return low


def _largest_unit(window: str) -> str:
    """A window in its largest whole unit (`60s` -> `1m`, `120m` -> `2h`); config validation has checked it."""
    match = WINDOW.fullmatch(window)
    if match is None:
        return window
    seconds = int(match.group(1)) * WINDOW_SECONDS[match.group(2)]
    for unit, size in sorted(WINDOW_SECONDS.items(), key=lambda item: -item[1]):
        if seconds % size == 0 and seconds // size < 10_000:
            return f"{seconds // size}{unit}"
    return window


def _spelled(rates: tuple[Rate, ...]) -> str:
    return "+".join(f"{limit}/{window}" for limit, window in rates)


def _points_at(ref: ParentRef, route: Route, gateway: Gateway) -> bool:
    """As `Route.listeners` reads a parentRef: group and kind defaulted, the namespace the route's own."""
    group, kind = ref.group or naming.GATEWAY_API_GROUP, ref.kind or "Gateway"
    wanted = (naming.GATEWAY_API_GROUP, "Gateway", gateway.namespace, gateway.name)
    return (group, kind, ref.namespace or route.namespace, ref.name) == wanted


def _written_out(ref: ParentRef) -> dict[str, str]:
    fields = zip(_REF_FIELDS, (ref.group, ref.kind, ref.namespace, ref.name, ref.section), strict=True)
    return {key: value for key, value in fields if value}


_REF_FIELDS = ("group", "kind", "namespace", "name", "sectionName")


def _with_parents(route: Route, gateway: Gateway, parents: list[dict[str, str]]) -> Route:
    """The route with its parentRefs to `gateway` replaced by `parents` (the others kept as Kuadrant reads them)."""
    kept = [_written_out(ref) for ref in route.view.parent_refs if not _points_at(ref, route, gateway)]
    spec = route.body.get("spec")
    spec = {**(spec if isinstance(spec, Mapping) else {}), "parentRefs": [*kept, *parents]}
    return Route(route.namespace, route.name, {**route.body, "spec": spec}, route.model, route.planned)


def _parent(gateway: Gateway, section: str | None = None) -> dict[str, str]:
    ref = {"group": naming.GATEWAY_API_GROUP, "kind": "Gateway", "namespace": gateway.namespace, "name": gateway.name}
    return {**ref, "sectionName": section} if section else ref


def _attached_to(route: Route, gateway: Gateway, destination: Gateway | None) -> Route:
    """The route moved from `gateway` to `destination` (unchanged for a new tenant's gateway, measured as this)."""
    return route if destination is None else _with_parents(route, gateway, [_parent(destination)])


def _pinned(route: Route, gateway: Gateway, listeners: list[Listener]) -> Route:
    """The route attached to `gateway` through exactly these listeners."""
    return _with_parents(route, gateway, [_parent(gateway, listener.name) for listener in listeners])
