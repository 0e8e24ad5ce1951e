"""Kubernetes conditions as the statuses we write and read carry them (`type`, `status`, `reason`, `message`)."""

from __future__ import annotations

from collections.abc import Iterable

from ...observe.views import Condition


def condition(type_: str, status: str, reason: str, message: str) -> dict[str, str]:
    """No `lastTransitionTime`: the status writer stamps it, so renders stay stable."""
    return {"type": type_, "status": status, "reason": reason, "message": message}


def first_condition(conditions: Iterable[Condition], type_: str) -> Condition | None:
    """The first condition of `type_` among live `conditions` (an object's status, or a route parent's)."""
    return next((c for c in conditions if c.type == type_), None)


def has_condition(conditions: Iterable[Condition], type_: str, value: str) -> bool:
    """Whether the first condition of `type_` has status `value`."""
    found = first_condition(conditions, type_)
    return found is not None and found.status == value
