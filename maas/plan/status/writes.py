"""What a status write sends, as pure functions: shared by the status writer and the self-check that validates it.

Statuses are computed without `lastTransitionTime` (renders stay stable); the writer stamps it as Kubernetes'
`meta.SetStatusCondition` does, and sends a JSON merge patch, which leaves absent keys alone, so every field the
previous write set and this one drops is sent as null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TRANSITION = "lastTransitionTime"


def stamp_conditions(status: Mapping[str, Any], previous: Mapping[str, Any] | None, now: str) -> dict[str, Any]:
    """`status` with `lastTransitionTime` on each condition: kept from `previous` while the condition's type and
    status are unchanged, else `now`. Entries that are not conditions (a live status anyone may have edited) stay
    as they are."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return dict(status)
    before = {c.get("type"): c for c in _conditions(previous) if c.get(TRANSITION)}
    stamped = []
    for cond in conditions:
        if not isinstance(cond, Mapping):
            stamped.append(cond)
            continue
        old = before.get(cond.get("type"))
        same = old is not None and old.get("status") == cond.get("status")
        stamped.append({**cond, TRANSITION: old[TRANSITION] if same else now})
    return {**status, "conditions": stamped}


def unstamped(status: Mapping[str, Any]) -> dict[str, Any]:
    """`status` without the `lastTransitionTime` stamps: the form the program computes, and so compares against."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return dict(status)
    bare = [{k: v for k, v in c.items() if k != TRANSITION} if isinstance(c, Mapping) else c for c in conditions]
    return {**status, "conditions": bare}


def transition_times(stamped: Mapping[str, Any]) -> dict[str, str]:
    """Each condition's `lastTransitionTime` by condition type: what `restamped` puts back."""
    return {
        c["type"]: c[TRANSITION]
        for c in _conditions(stamped)
        if isinstance(c.get("type"), str) and isinstance(c.get(TRANSITION), str)
    }


def restamped(status: Mapping[str, Any], times: Mapping[str, str]) -> dict[str, Any]:
    """`status` with each condition's recorded transition time put back: the status as it was stamped."""
    conditions = status.get("conditions")
    if not isinstance(conditions, list):
        return dict(status)
    return {**status, "conditions": [_restamped(condition, times) for condition in conditions]}


def _restamped(condition: Any, times: Mapping[str, str]) -> Any:
    typed = isinstance(condition, Mapping) and isinstance(condition.get("type"), str)
    return {**condition, TRANSITION: times[condition["type"]]} if typed and condition["type"] in times else condition


def merge_patch(status: Mapping[str, Any], previous: Mapping[str, Any] | None) -> dict[str, Any]:
    """`status` plus null for every field `previous` set and `status` drops, so the merge patch removes it."""
    dropped = {key: None for key in (previous or {}) if key not in status}
    return {**dropped, **status}


def _conditions(status: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    conditions = (status or {}).get("conditions")
    return [c for c in conditions if isinstance(c, Mapping)] if isinstance(conditions, list) else []
