"""Which limits of a path's effective TokenRateLimitPolicy count a request, evaluated with the CEL engine as the
wasm-shim would: a limit counts it when the policy's top-level `when` and all of the limit's own hold."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...plan.gateway.policies import TOP_LEVEL_PREDICATES, Rules, predicates
from .. import cel
from .report import Report, compact


@dataclass(frozen=True)
class LimitVerdict:
    """One limit of the effective policy, the policy it comes from (`ns/name`) and whether it counts the request."""

    policy: str
    name: str
    limit: Mapping[str, Any]
    matched: bool

    @property
    def predicates(self) -> list[str]:
        return [condition["predicate"] for condition in self.limit.get("when", [])]

    @property
    def rate_pairs(self) -> tuple[tuple[Any, Any], ...]:
        return tuple((rate.get("limit"), rate.get("window")) for rate in self.limit.get("rates", []))

    @property
    def rates(self) -> str:
        pairs = self.rate_pairs
        return ", ".join(f"{limit} per {window}" for limit, window in pairs) if pairs else "unlimited, no rates"

    @property
    def blocks(self) -> bool:
        """A zero rate (the gateway's default deny) refuses the request: 429."""
        return any(limit == 0 for limit, _ in self.rate_pairs)

    @property
    def counters(self) -> list[str]:
        return [counter["expression"] for counter in self.limit.get("counters", [])]


def evaluate_limits(rules: Rules | None, context: Mapping[str, Any]) -> list[LimitVerdict]:
    """Every limit of the effective policy, by name (none without a policy)."""
    if rules is None:
        return []
    top = predicates(rules[TOP_LEVEL_PREDICATES].spec) if TOP_LEVEL_PREDICATES in rules else []
    found = []
    for name in sorted(key for key in rules if key != TOP_LEVEL_PREDICATES):
        rule = rules[name]
        limit = rule.spec if isinstance(rule.spec, Mapping) else {}
        matched = all(cel.matches(predicate, context) for predicate in [*top, *predicates(limit.get("when"))])
        found.append(LimitVerdict(f"{rule.source.namespace}/{rule.source.name}", name, limit, matched))
    return found


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
