"""A review as plain text (a terminal, a log) or as Markdown that fits a pull-request comment.

Light: `diff --help` imports it for the names of its formats (`diff.FORMATS`), so it imports nothing of the plan.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .review import Review

NO_CHANGES = "no changes: BASE and HEAD register the same objects and status writes"
NO_ACCESS = "no subject gains or loses a model"
NO_WARNINGS = "none new or resolved"
NEW, RESOLVED = "new", "resolved"
NO_LIMITS = "no token limit changes"
NO_RESETS = "no token-rate counter resets"
_CELL_SPECIAL = re.compile(r"([\\`|*_<>\[\]~])")


def text(review: Review) -> str:
    if not review.changed:
        return NO_CHANGES + "\n"
    lines = [f"objects: {_counts(review)}"]
    for change in review.objects:
        lines += [change.title, *(f"    {line}" for line in change.fields)]
    lines += ["", f"warnings: {_warning_counts(review)}"]
    for label, warnings in zip((NEW, RESOLVED), review.warning_changes, strict=True):
        for warning in warnings:
            first, *more = warning.splitlines() or [""]
            lines += [f"  {label}: {first}", *(f"    {line}" for line in more)]
    lines += ["", f"access: {_number(len(review.access), 'subject') if review.access else NO_ACCESS}"]
    lines += [f"  {c.who}: {_gains_and_losses(c.gains, c.loses)}" for c in review.access]
    lines += [f"  note: {note}" for note in review.access_notes]
    lines += ["", f"limits: {_number(len(review.limits), 'change') if review.limits else NO_LIMITS}"]
    lines += [f"  {c.subscription} on {c.model}: {c.old} -> {c.new}" for c in review.limits]
    lines += ["", f"quota resets: {_number(len(review.resets), 'reset') if review.resets else NO_RESETS}"]
    lines += [f"  {line}" for line in review.reset_lines]
    if review.unmetered_added or review.unmetered_removed:  # the section appears when a change adds or removes one
        lines += ["", f"unmetered traffic: {_unmetered_counts(review)}"]
    for mark, records in (("+", review.unmetered_added), ("-", review.unmetered_removed)):
        lines += [f"  {mark} {r['key']}: {r['why']}; fix: {r['fix']}" for r in records]
    return "\n".join(lines) + "\n"


def _unmetered_counts(review: Review) -> str:
    return f"{len(review.unmetered_added)} added, {len(review.unmetered_removed)} removed"


def markdown(review: Review) -> str:
    if not review.changed:
        return f"## MaaS diff\n\n{_sentence(NO_CHANGES)}\n"
    body = "\n".join(change.title + "".join(f"\n    {line}" for line in change.fields) for change in review.objects)
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
    parts = ["## MaaS diff", "### Objects", f"{_counts(review)}.", f"{fence}diff\n{body}\n{fence}", "### Warnings"]
    parts.append(_sentence(_warning_counts(review)))
    for heading, warnings in zip(("New in HEAD:", "Resolved in HEAD:"), review.warning_changes, strict=True):
        if warnings:
            parts += [heading, "\n".join(_item(warning) for warning in warnings)]
    parts.append("### Access")
    access = [(c.who, ", ".join(c.gains), ", ".join(c.loses)) for c in review.access]
    parts.append(_table(("Subject", "Gains", "Loses"), access) if access else _sentence(NO_ACCESS))
    parts += [f"> {_cell(note)}" for note in review.access_notes]
    limits = [(c.subscription, c.model, c.old, c.new) for c in review.limits]
    header = ("Subscription", "Model", "Before", "After")
    parts += ["### Limits", _table(header, limits) if limits else _sentence(NO_LIMITS)]
    resets = [
        (r["subscription"], r["model"], r["oldLimit"], r["newLimit"], r["reason"], "yes" if r["accepted"] else "no")
        for r in review.resets
    ]
    header = ("Subscription", "Model", "Old limit", "New limit", "Reason", "Accepted")
    parts += ["### Quota resets", _table(header, resets) if resets else _sentence(NO_RESETS)]
    unmetered = [
        (mark, r["model"], r["family"], r["reason"], r["why"], r["fix"], "yes" if r["accepted"] else "no")
        for mark, records in (("added", review.unmetered_added), ("removed", review.unmetered_removed))
        for r in records
    ]
    header = ("Change", "Model", "Path family", "Reason", "Why", "Fix", "Accepted")
    if unmetered:
        parts += ["### Unmetered traffic", _table(header, unmetered)]
    return "\n\n".join(parts) + "\n"


def _warning_counts(review: Review) -> str:
    """`2 new, 1 resolved (3 unchanged)`; `none new or resolved` when the plans warn alike."""
    said = [f"{len(w)} {label}" for label, w in zip((NEW, RESOLVED), review.warning_changes, strict=True) if w]
    kept = f" ({review.kept_warnings} unchanged)" if review.kept_warnings else ""
    return f"{', '.join(said) or NO_WARNINGS}{kept}"


def _item(text: str) -> str:
    """A Markdown list item of a warning, its further lines indented under it."""
    return "- " + "\n  ".join(_cell(line) for line in text.splitlines() or [""])


def _counts(review: Review) -> str:
    counts = review.counts()
    return f"{counts['+']} added, {counts['-']} removed, {counts['~']} changed"


def _number(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _gains_and_losses(gains: Sequence[str], loses: Sequence[str]) -> str:
    said = [f"gains {', '.join(gains)}"] if gains else []
    return "; ".join(said + ([f"loses {', '.join(loses)}"] if loses else []))


def _sentence(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}."


def _table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    lines = [_row(header), _row(["---"] * len(header))]
    return "\n".join(lines + [_row([_cell(value) for value in row]) for row in rows])


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cell(value: str) -> str:
    """Markdown punctuation that would end a cell, open code or emphasis, or start HTML, escaped."""
    return _CELL_SPECIAL.sub(r"\\\1", value)
