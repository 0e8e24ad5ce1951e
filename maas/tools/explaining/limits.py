"""Which limits of a rendered TokenRateLimitPolicy hold for a request context, evaluated with the CEL engine."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import cel
from .report import Report, compact


@dataclass(frozen=True)
class LimitVerdict:
    name: str
    limit: Mapping[str, Any]
    matched: bool

    @property
    def predicates(self) -> list[str]:
        return [condition["predicate"] for condition in self.limit.get("when", [])]

    @property
    def rates(self) -> str:
        rates = self.limit.get("rates", [])
        return ", ".join(f"{r['limit']} per {r['window']}" for r in rates) if rates else "unlimited, no rates"

    @property
    def counters(self) -> list[str]:
        return [counter["expression"] for counter in self.limit.get("counters", [])]


def policy_limits(policy: Mapping[str, Any]) -> Mapping[str, Any]:
    """`spec.limits` of a route policy, `spec.defaults.limits` of a gateway default (the default-deny net)."""
    spec = policy["spec"]
    return spec["limits"] if "limits" in spec else spec.get("defaults", {}).get("limits", {})


def evaluate_limits(policy: Mapping[str, Any], context: Mapping[str, Any]) -> list[LimitVerdict]:
    """Every limit, by name; a limit matches when all of its `when` predicates hold (as the wasm-shim decides)."""
    return [
        LimitVerdict(name, limit, all(cel.matches(c["predicate"], context) for c in limit.get("when", [])))
        for name, limit in sorted(policy_limits(policy).items())
    ]


def counter_values(verdict: LimitVerdict, context: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Each counter expression with its value for this context: the Limitador counter the request is charged to."""
    return [(expression, cel.plain(cel.evaluate(expression, context))) for expression in verdict.counters]


def describe_matched(
    report: Report, matched: list[LimitVerdict], context: Mapping[str, Any] | None, depth: int
) -> None:
    """The limit a request is charged to: rates, predicate and counters (with their values for `context`; None
    lists the expressions). Loud unless exactly one limit matched."""
    if len(matched) != 1:
        names = ", ".join(verdict.name for verdict in matched) or "none"
        report.problem(f"{len(matched)} limits match ({names}); an admitted request must land in exactly one", depth)
    for verdict in matched:
        report.add(f"limit: {verdict.name} ({verdict.rates})", depth)
        for predicate in verdict.predicates:
            report.add(f"when: {predicate}", depth + 1)
        if context is None:
            report.add(f"counted per: {', '.join(verdict.counters) or '(no counters)'}", depth + 1)
            continue
        for expression, value in counter_values(verdict, context):
            report.add(f"counter: {expression} = {compact(value)}", depth + 1)
