"""The gateway budget in the plan: one note per Gateway (size, share of the budget, ActionSets, limits, the largest
contributors), a warning from 80 % with the levers that would shrink it (`levers.py`: each evaluated on this
configuration, with its resulting size, best first), and the `gateways` stack output, which
`checks/gateway_budget.py` turns into an error above 100 % unless `platform.gatewayBudget: warn`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from ...config import MaasConfig
from ...observe import Observed
from ..desired import Plan
from ..policies.ratelimit import RateLimitPlan
from .budget import BUDGET, GatewayBudget, Sizing, near_the_limit
from .levers import Levers, shrink_text
from .routes import Route


def add_gateway_budget(config: MaasConfig, observed: Observed, plan: Plan, rate_limits: RateLimitPlan) -> list[Route]:
    """Notes, warnings and the `gateways` stack output of every Gateway; call on the whole plan (`rate_limits`: the
    plan's, which the levers start from). Returns the routes the gateways carry, read once: the routing header
    check reads them too."""
    sizing = Sizing(config, plan, observed)
    budgets = sizing.budgets()
    if any(near_the_limit(budget.bytes) for budget in budgets):
        levers = Levers(sizing, rate_limits)
        budgets = [replace(b, levers=levers.of(b)) if near_the_limit(b.bytes) else b for b in budgets]
    for budget in budgets:
        plan.notes.append(budget.line())
        if budget.largest:
            plan.notes.append(budget.largest_line())
    plan.warnings.extend(budget_warnings(config, budgets))
    plan.outputs["gateways"] = {budget.key: budget.output() for budget in budgets}
    return sizing.routes


def budget_warnings(config: MaasConfig, budgets: Iterable[GatewayBudget]) -> list[str]:
    """From 80 %; above 100 % only with `gatewayBudget: warn` (else the check refuses the update)."""
    warnings = []
    for budget in budgets:
        over = budget.bytes > BUDGET
        if not near_the_limit(budget.bytes) or (over and config.platform.gatewayBudget == "error"):
            continue
        state = (
            "it is over the limit and maas:platform.gatewayBudget is warn, so the update goes ahead, but the API "
            "server will refuse the object and the gateway's policies stop updating"
            if over
            else "past the limit the gateway's policies stop updating"
        )
        output = budget.output()
        warnings.append(f"{describe(budget.key, output)}; {state}; {shrink_text(output)}")
    return warnings


def describe(key: str, output: dict[str, Any]) -> str:
    """The start of the warning and of the error: which object, how big, against what, and what weighs most."""
    largest = ", ".join(f"{c['name']} {c['bytes']} bytes" for c in output["largest"]) or "nothing"
    return (
        f"gateway {key}: the wasm configuration Kuadrant builds for it ({output['object']}) weighs {output['bytes']} "
        f"bytes, {output['percent']}% of the {BUDGET} bytes (1.5 MiB) etcd stores per object; largest: {largest}"
    )
