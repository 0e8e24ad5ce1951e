"""What a change does, section by section: objects, warnings, access, limits and quota resets, each in a stable
order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...config.errors import escaped
from ...plan.checks.quota import Reset, reset_lines
from ...plan.checks.unmetered import is_report_line as is_unmetered
from .access import AccessChange, access_changes
from .fields import field_changes
from .limits import LimitChange, limit_changes
from .sides import Key, Side


@dataclass(frozen=True)
class ObjectChange:
    mark: str  # + added, - removed, ~ changed
    key: Key
    fields: tuple[str, ...] = ()  # the field-level changes of a changed object

    @property
    def title(self) -> str:
        kind, namespace, name = self.key
        return escaped(f"{self.mark} {kind} {namespace}/{name}" if namespace else f"{self.mark} {kind} {name}")


@dataclass(frozen=True)
class Review:
    objects: tuple[ObjectChange, ...]
    access: tuple[AccessChange, ...]
    access_notes: tuple[str, ...]  # policies whose subjects could not be read
    limits: tuple[LimitChange, ...]
    resets: tuple[Mapping[str, Any], ...]  # HEAD's `quotaResets` stack output
    reset_lines: tuple[str, ...]  # one line per reset, as the quota report words it
    new_warnings: tuple[str, ...] = ()  # HEAD's plan warns, BASE's does not (in HEAD's order)
    resolved_warnings: tuple[str, ...] = ()  # BASE's plan warns, HEAD's does not (in BASE's order)
    kept_warnings: int = 0  # both warn
    unmetered_added: tuple[Mapping[str, Any], ...] = ()  # HEAD's `unmeteredTraffic` records BASE lacks, by key
    unmetered_removed: tuple[Mapping[str, Any], ...] = ()  # BASE's records HEAD lacks

    @property
    def changed(self) -> bool:
        unmetered = (self.unmetered_added, self.unmetered_removed)
        return any(
            (self.objects, self.access, self.access_notes, self.limits, self.resets, *self.warning_changes, *unmetered)
        )

    @property
    def warning_changes(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return self.new_warnings, self.resolved_warnings

    def counts(self) -> dict[str, int]:
        return {mark: sum(1 for c in self.objects if c.mark == mark) for mark in "+-~"}


def review(base: Side, head: Side) -> Review:
    access, notes = access_changes(base, head)
    resets = tuple(head.outputs.get("quotaResets", ()))
    quota = quota_lines(resets)
    before = {w for w in base.warnings if not is_unmetered(w)}  # the unmetered cases: their own section
    after = {w for w in head.warnings if not is_unmetered(w)}
    added, removed = unmetered_changes(base, head)
    return Review(
        tuple(object_changes(base, head)),
        tuple(access),
        tuple(notes),
        tuple(limit_changes(base, head)),
        resets,
        tuple(quota[1:]),
        new_warnings=tuple(
            w for w in head.warnings if w not in before and w not in quota and not is_unmetered(w)
        ),  # resets and unmetered cases: their sections
        resolved_warnings=tuple(w for w in base.warnings if w not in after and not is_unmetered(w)),
        kept_warnings=len(before & after),
        unmetered_added=added,
        unmetered_removed=removed,
    )


def unmetered_changes(base: Side, head: Side) -> tuple[tuple[Mapping[str, Any], ...], tuple[Mapping[str, Any], ...]]:
    """The unmetered cases a change adds and removes, by their acceptance key (issue 22)."""
    old, new = base.outputs.get("unmeteredTraffic", {}), head.outputs.get("unmeteredTraffic", {})
    added = tuple(new[key] for key in sorted(new.keys() - old.keys()))
    return added, tuple(old[key] for key in sorted(old.keys() - new.keys()))


def object_changes(base: Side, head: Side) -> list[ObjectChange]:
    """Added, removed and changed objects and status writes, by kind, namespace and name; linear in their number."""
    changes = []
    for key in sorted({*base.objects, *head.objects}):
        old, new = base.objects.get(key), head.objects.get(key)
        if old is None:
            changes.append(ObjectChange("+", key))
        elif new is None:
            changes.append(ObjectChange("-", key))
        elif old != new:
            changes.append(ObjectChange("~", key, tuple(field_changes(old, new))))
    return changes


def quota_lines(resets: tuple[Mapping[str, Any], ...]) -> list[str]:
    """The quota report's warnings: its summary (which the section heading replaces), then one line per reset."""
    records = [
        Reset(r["subscription"], r["model"], r["oldLimit"], r["newLimit"], r["reason"], r["collateral"]) for r in resets
    ]
    return reset_lines(records, {r["subscription"] for r in resets if r["accepted"]})
