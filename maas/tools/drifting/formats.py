"""A drift as plain text or as Markdown for a pull-request comment, in the shapes of `diff`'s objects section:
one title per object (`~ Kind namespace/name`), its field changes indented under it (`diffing.fields`)."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

from ...listing import listed
from ..diffing.formats import _cell, _table
from ..diffing.sides import Key
from .report import NOT_LISTED, Drift

NO_DRIFT = "no drift: the {count} observed are as the program would apply them"
NOTHING_COMPARED = "nothing compared: the snapshot shows none of the objects the program registers"
NOT_OBSERVED = (
    "{count} the program registers, not compared: the snapshot did not look at them (a scope it did not list, an "
    "object it did not fetch, a kind snapshots do not read), so neither a creation nor a change is said of them"
)
ON_THE_CLUSTER = "python -m maas render --observed SNAPSHOT | kubectl diff --server-side --force-conflicts -f -"
NOT_OBSERVED_HINT = (
    "a snapshot holds what the plan reads; the objects the program only writes compare on the cluster: {command}"
)
NAMES_SHOWN = 5  # names per kind in the not-observed section


def text(drift: Drift) -> str:
    lines = [f"live: {drift.cluster}"] if drift.cluster else []
    if drift.changed:
        lines.append(f"objects: {_counts(drift)}")
        for change in drift.objects:
            lines += [change.title, *(f"    {line}" for line in change.fields)]
    else:
        lines.append(_unchanged(drift))
    if drift.not_observed:
        lines += ["", f"not observed: {_not_observed(drift)}"]
        lines += [f"  {kind}: {_names(names)}" for kind, names in _by_kind(drift.not_observed)]
        lines.append(f"  {NOT_OBSERVED_HINT.format(command=ON_THE_CLUSTER)}")
    lines += ["", *(f"note: {note}" for note in drift.notes)] if drift.notes else []
    return "\n".join(lines) + "\n"


def markdown(drift: Drift) -> str:
    parts = ["## MaaS drift"]
    if drift.cluster:
        parts.append(f"Live: {_cell(drift.cluster)}.")
    parts.append("### Objects")
    if drift.changed:
        body = "\n".join(c.title + "".join(f"\n    {line}" for line in c.fields) for c in drift.objects)
        fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
        parts += [f"{_sentence(_counts(drift))}", f"{fence}diff\n{body}\n{fence}"]
    else:
        parts.append(_sentence(_unchanged(drift)))
    if drift.not_observed:
        parts += ["### Not observed", _sentence(_not_observed(drift))]
        rows = [(kind, _names(names)) for kind, names in _by_kind(drift.not_observed)]
        hint = _sentence(NOT_OBSERVED_HINT.format(command=f"`{ON_THE_CLUSTER}`"))
        parts += [_table(("Kind", "Objects"), rows), hint]
    parts += [f"> {_cell(note)}" for note in drift.notes]
    return "\n\n".join(parts) + "\n"


def _counts(drift: Drift) -> str:
    counts = drift.counts()
    said = f"{counts['+']} to create, {counts['-']} to delete, {counts['~']} to change, {drift.unchanged} unchanged"
    return said + (f", {len(drift.not_observed)} not observed" if drift.not_observed else "")


def _unchanged(drift: Drift) -> str:
    if not drift.unchanged:
        return NOTHING_COMPARED
    return NO_DRIFT.format(count=_number(drift.unchanged, "object"))


def _not_observed(drift: Drift) -> str:
    return NOT_OBSERVED.format(count=_number(len(drift.not_observed), "object"))


def _by_kind(entries: Sequence[tuple[Key, str]]) -> list[tuple[str, list[str]]]:
    """`Kind (count)` (with why, for a kind no snapshot reads) and its objects' names, by kind."""
    names: defaultdict[tuple[str, str], list[str]] = defaultdict(list)
    for (kind, namespace, name), reason in entries:
        names[(kind, reason)].append(f"{namespace}/{name}" if namespace else name)
    return [
        (f"{kind} ({len(found)}{'' if reason == NOT_LISTED else f', {reason}'})", found)
        for (kind, reason), found in sorted(names.items())
    ]


def _names(names: list[str]) -> str:
    return listed(names, NAMES_SHOWN)


def _number(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def _sentence(text: str) -> str:
    return f"{text[0].upper()}{text[1:]}."
