"""Per subscription and model, the token limit before and after: the limit the `subscriptions` stack output says
the subscription lands in, with the rates the rendered TokenRateLimitPolicy gives that limit."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...observe.fields import int_at, items_at, mapping_at, text_at
from .sides import Side

NONE = "none"  # the subscription has no limit on that model on this side
MISSING = "missing"
UNLIMITED = "unlimited"


@dataclass(frozen=True)
class LimitChange:
    subscription: str  # ns/name
    model: str  # ns/name
    old: str  # e.g. `1000/1m`, `1000/1m, 50000/24h`, `unlimited` or `none`
    new: str


def limit_changes(base: Side, head: Side) -> list[LimitChange]:
    """Every (subscription, model) whose rates differ between the sides, by subscription and model."""
    before, after = limits(base), limits(head)
    changes = []
    for subscription, model in sorted({*before, *after}):
        old, new = before.get((subscription, model), NONE), after.get((subscription, model), NONE)
        if old != new:
            changes.append(LimitChange(subscription, model, old, new))
    return changes


def limits(side: Side) -> dict[tuple[str, str], str]:
    """(subscription, model) -> its rates as text, for every model a subscription contributes a limit to."""
    found = {}
    models = mapping_at(side.outputs, "models")
    for subscription, output in mapping_at(side.outputs, "subscriptions").items():
        for model, entry in mapping_at(output, "models").items():
            limit = text_at(entry, "limit")
            policy = text_at(models, model, "tokenRateLimitPolicy")
            if limit is not None and policy is not None:
                found[(subscription, model)] = _rates(_policy_limit(side, policy, limit))
    return found


def _policy_limit(side: Side, policy: str, limit: str) -> Mapping[str, Any]:
    namespace, _, name = policy.partition("/")
    return mapping_at(side.objects.get(("TokenRateLimitPolicy", namespace, name)), "spec", "limits", limit)


def _rates(limit: Mapping[str, Any]) -> str:
    """`1000/1m, ...`; `unlimited` for a rendered limit without rates; `missing` when the policy lacks the limit
    the subscription's output names (an opted-out or hand-edited policy): never shown as unlimited."""
    if not limit:
        return MISSING
    rates = [f"{int_at(rate, 'limit', default=0)}/{text_at(rate, 'window')}" for rate in items_at(limit, "rates")]
    return ", ".join(rates) or UNLIMITED
