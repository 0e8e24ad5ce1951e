"""What a change does, section by section: objects, access, limits and quota resets, each in a stable order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...config.errors import escaped
from ...plan.checks.quota import Reset, reset_lines
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

    @property
    def changed(self) -> bool:
        return any((self.objects, self.access, self.access_notes, self.limits, self.resets))

    def counts(self) -> dict[str, int]:
        return {mark: sum(1 for c in self.objects if c.mark == mark) for mark in "+-~"}


def review(base: Side, head: Side) -> Review:
    access, notes = access_changes(base, head)
    resets = tuple(head.outputs.get("quotaResets", ()))
    return Review(
        tuple(object_changes(base, head)),
        tuple(access),
        tuple(notes),
        tuple(limit_changes(base, head)),
        resets,
        tuple(quota_lines(resets)),
    )


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
    """The quota report's line for each reset (its first line is the summary, which the section heading replaces)."""
    records = [
        Reset(r["subscription"], r["model"], r["oldLimit"], r["newLimit"], r["reason"], r["collateral"]) for r in resets
    ]
    return reset_lines(records, {r["subscription"] for r in resets if r["accepted"]})[1:]
