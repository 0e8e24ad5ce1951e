"""Kubernetes conditions as the statuses we write and read carry them (`type`, `status`, `reason`, `message`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...observe.fields import items_at


def condition(type_: str, status: str, reason: str, message: str) -> dict[str, str]:
    """No `lastTransitionTime`: the status writer stamps it, so renders stay stable."""
    return {"type": type_, "status": status, "reason": reason, "message": message}


def first_condition(status: Any, type_: str) -> Mapping[str, Any] | None:
    """The first condition of `type_` in `status.conditions` (a live status of any shape)."""
    return next((c for c in items_at(status, "conditions") if c.get("type") == type_), None)


def has_condition(status: Any, type_: str, value: str) -> bool:
    """Whether `status.conditions` has `type_` with status `value` (an object's `status`, or a route parent)."""
    found = first_condition(status, type_)
    return found is not None and found.get("status") == value
