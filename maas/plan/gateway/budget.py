"""Each Gateway's wasm object against the 1.5 MiB etcd stores (`reference/gateway-budget.md`), before `pulumi up`.

For every Gateway the plan's policies target, the wasm configuration Kuadrant would build from them is built for
real and measured as the API server would store its object. The report adds one note per Gateway (size, share
of the budget, ActionSets, limits, the largest contributors), a warning from 80 %, and the `gateways` stack
output, which `checks/gateway_budget.py` turns into an error above 100 % unless `platform.gatewayBudget: warn`.

An object Pulumi does not change (`maas:unmanaged`, the live opt-out, an Unmanaged tenant's) is counted as it is
live when the snapshot has it, else as planned. Policies outside the plan, and routes outside the plan, the
snapshot and the models' KServe routes, are not seen.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config import MaasConfig
from ...observe import Observed
from ..desired import Desired, Plan
from .encoding import Measurer
from .envelope import object_kind, object_name, uses_wasm_plugin, wasm_object
from .policies import AUTH, TRLP, Policy, PolicyIndex
from .routes import as_seen, gateway_of, routes
from .wasm import WasmConfig, wasm_config

BUDGET = 1_572_864  # etcd's default --max-request-bytes, 1.5 MiB
WARN_PERCENT = 80
SHOWN = 5  # largest contributors per Gateway
LEVERS = (
    "spread models over tenant gateways (maas:tenants[].gateway.name), one listener per hostname (a route whose "
    "parentRef names no sectionName is copied into every listener), fewer distinct rate sets per model (each is one "
    "limit, copied into every match of the model's route), retire legacy identities (rateLimitIdentity: short: no "
    "-id twin limits, shorter clauses), maas:platform.predicateFormat: compact"
)


@dataclass(frozen=True)
class Contributor:
    """What one model (or another route) adds to a Gateway's object."""

    name: str
    bytes: int
    action_sets: int
    limits: int

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

    @property
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)

    @property
    def percent(self) -> float:
        return round(100 * self.bytes / BUDGET, 1)

    def line(self) -> str:
        return (
            f"gateway {self.key}: wasm config {self.bytes} bytes ({self.percent}% of 1.5 MiB), "
            f"{self.action_sets} action sets, {self.limits} limits"
        )

    def largest_line(self) -> str:
        shown = ", ".join(f"{c.name} {c.bytes} bytes ({c.action_sets} action sets)" for c in self.largest)
        return f"gateway {self.key}: largest {shown}"

    def output(self) -> dict[str, Any]:
        return {
            "object": self.carrier,
            "bytes": self.bytes,
            "percent": self.percent,
            "actionSets": self.action_sets,
            "limits": self.limits,
            "largest": [c.output() for c in self.largest],
        }


def plan_policies(plan: Plan, observed: Observed) -> list[Policy]:
    """The plan's AuthPolicies and TokenRateLimitPolicies as Kuadrant will see them."""
    return [_policy(obj, observed) for obj in plan.objects() if obj.kind in (AUTH, TRLP) and obj.subresource is None]


def _policy(obj: Desired, observed: Observed) -> Policy:
    """A planned policy as Kuadrant will see it, ordered by its live creation time when it exists."""
    live = observed.meta(obj.kind, obj.namespace, obj.name)
    created = live and live.created
    return Policy(obj.kind, obj.namespace or "", obj.name, as_seen(obj, observed).get("spec") or {}, created or "")


def gateway_budgets(config: MaasConfig, plan: Plan, observed: Observed) -> list[GatewayBudget]:
    """One budget per Gateway that a policy of the plan targets, sorted by namespace and name."""
    index = PolicyIndex(plan_policies(plan, observed))
    carried = routes(config, plan, observed)
    version = config.platform.kuadrantVersion
    return [
        measured(wasm_config(gateway_of(config, observed, ns, name), carried, index), version)
        for ns, name in index.gateway_targets()
    ]


def measured(config: WasmConfig, kuadrant_version: str) -> GatewayBudget:
    """The stored size of the Gateway's object, with each ActionSet's share attributed to its model or route."""
    measurer = Measurer()
    total = measurer.measure(wasm_object(config.gateway, config.body(), kuadrant_version)).stored
    embedded = not uses_wasm_plugin(kuadrant_version)
    shares: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    limits: dict[str, set[str]] = defaultdict(set)
    for action_set in config.action_sets:
        found = measurer.measure(action_set.body)
        route = action_set.route
        name = f"model {route.model}" if route.model else f"HTTPRoute {route.key}"
        shares[name][0] += (found.as_string if embedded else found).stored + 1  # and its comma
        shares[name][1] += 1
        limits[name].update(action_set.limits)
    contributors = sorted(
        (Contributor(name, size, count, len(limits[name])) for name, (size, count) in shares.items()),
        key=lambda c: (-c.bytes, c.name),
    )
    gateway = config.gateway
    return GatewayBudget(
        gateway.namespace,
        gateway.name,
        f"{object_kind(kuadrant_version)} {gateway.namespace}/{object_name(gateway)}",
        total,
        len(config.action_sets),
        len(config.limits),
        tuple(contributors[:SHOWN]),
    )


def add_gateway_budget(config: MaasConfig, observed: Observed, plan: Plan) -> None:
    """Notes, warnings and the `gateways` stack output of every Gateway; call on the whole plan."""
    budgets = gateway_budgets(config, plan, observed)
    for budget in budgets:
        plan.notes.append(budget.line())
        if budget.largest:
            plan.notes.append(budget.largest_line())
    plan.warnings.extend(budget_warnings(config, budgets))
    plan.outputs["gateways"] = {budget.key: budget.output() for budget in budgets}


def budget_warnings(config: MaasConfig, budgets: Iterable[GatewayBudget]) -> list[str]:
    """From 80 %; above 100 % only with `gatewayBudget: warn` (else the check refuses the update)."""
    warnings = []
    for budget in budgets:
        over = budget.bytes > BUDGET
        if budget.percent < WARN_PERCENT or (over and config.platform.gatewayBudget == "error"):
            continue
        state = (
            "it is over the limit and maas:platform.gatewayBudget is warn, so the update goes ahead, but the API "
            "server will refuse the object and the gateway's policies stop updating"
            if over
            else "past the limit the gateway's policies stop updating"
        )
        warnings.append(f"{describe(budget.key, budget.output())}; {state}; to shrink it: {LEVERS}")
    return warnings


def describe(key: str, output: dict[str, Any]) -> str:
    """The start of the warning and of the error: which object, how big, against what, and what weighs most."""
    largest = ", ".join(f"{c['name']} {c['bytes']} bytes" for c in output["largest"]) or "nothing"
    return (
        f"gateway {key}: the wasm configuration Kuadrant builds for it ({output['object']}) weighs {output['bytes']} "
        f"bytes, {output['percent']}% of the {BUDGET} bytes (1.5 MiB) etcd stores per object; largest: {largest}"
    )
