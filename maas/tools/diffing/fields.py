"""The field-level change of one object, compact enough to review: one line per changed leaf.

A list of mappings is matched by its natural key (`namespace`+`name`, `name` or `type`) when every item has a
unique one, else by position through a sequence match, so one inserted item is one line. A mapping key that is
removed while a similar one is added (most of their fields equal: a token limit renamed by a rate change) is shown
as a rename followed by what changed inside. Long strings (CEL predicates, comma-joined annotations) are compared
clause by clause.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from ...config.errors import escaped

SHOWN = 200  # characters of a value or text change shown; longer ones are cut, with their length
LONG = 80  # strings longer than this are compared clause by clause
MAX_RENAME_PAIRS = 400  # removed x added keys beyond which renames are not looked for (it is quadratic)
NATURAL_KEYS = (("namespace", "name"), ("name",), ("type",))
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# A clause of a long text: the separators before it (`,`, `||`, `&&`, brackets, whitespace), then its body (string
# literals and anything else up to the next separator). The clauses of a text join back to it exactly.
_SEPARATORS = r"(?:\s|,|\|\||&&|[()\[\]])*"
_CHUNK = r'(?:"(?:[^"\\]|\\.)*"?|[^\s,|&()\[\]"]|\|(?!\|)|&(?!&))+'
_CLAUSE = re.compile(rf"(?P<separators>{_SEPARATORS})(?P<body>(?:{_CHUNK}(?:\s+{_CHUNK})*)?)")


def field_changes(old: Any, new: Any, path: str = "") -> list[str]:
    """The changes from `old` to `new` as lines: `path: OLD -> NEW`, `+ path: VALUE`, `- path: VALUE`,
    `path: A renamed to B`, or a text change followed by indented `- …`/`+ …` lines."""
    if old == new:
        return []
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return _mapping(old, new, path)
    if _is_list(old) and _is_list(new):
        return _sequence(old, new, path)
    if isinstance(old, str) and isinstance(new, str) and max(len(old), len(new)) > LONG:
        return _text(old, new, path)
    return [f"{path}: {shown(old)} -> {shown(new)}"]


def shown(value: Any) -> str:
    """A value on one line: JSON, control characters escaped, cut at SHOWN characters."""
    return _cut(escaped(json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))))


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN else f"{text[: SHOWN - 30]}... ({len(text)} characters)"


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str)


def _join(path: str, key: Any) -> str:
    text = str(key)
    segment = text if _BARE_KEY.fullmatch(text) else f"[{shown(text)}]"
    return f"{path}{segment}" if segment.startswith("[") or not path else f"{path}.{segment}"


def _mapping(old: Mapping[str, Any], new: Mapping[str, Any], path: str) -> list[str]:
    removed = [key for key in old if key not in new]
    added = [key for key in new if key not in old]
    renamed = _renames(old, new, removed, added)
    targets = set(renamed.values())
    lines: list[str] = []
    for key in sorted({*old, *new}, key=str):
        if key in old and key in new:
            lines += field_changes(old[key], new[key], _join(path, key))
        elif key in renamed:
            target = renamed[key]
            lines.append(f"{path or '.'}: {escaped(str(key))} renamed to {escaped(str(target))}")
            lines += field_changes(old[key], new[target], _join(path, target))
        elif key in old:
            lines.append(f"- {_join(path, key)}: {shown(old[key])}")
        elif key not in targets:
            lines.append(f"+ {_join(path, key)}: {shown(new[key])}")
    return lines


def _renames(old: Mapping[str, Any], new: Mapping[str, Any], removed: list[str], added: list[str]) -> dict[str, str]:
    """Removed key -> added key, for pairs of mappings with more than half of their fields equal, best first."""
    if len(removed) * len(added) > MAX_RENAME_PAIRS:
        return {}
    scored = sorted(
        (-score, str(r), str(a), r, a) for r in removed for a in added if (score := _similarity(old[r], new[a])) > 0.5
    )
    pairs: dict[str, str] = {}
    for *_, r, a in scored:
        if r not in pairs and a not in pairs.values():
            pairs[r] = a
    return pairs


def _similarity(old: Any, new: Any) -> float:
    if not (isinstance(old, Mapping) and isinstance(new, Mapping)) or not (old or new):
        return 0.0
    keys = {*old, *new}
    return sum(1 for key in keys if key in old and key in new and old[key] == new[key]) / len(keys)


def _sequence(old: Sequence[Any], new: Sequence[Any], path: str) -> list[str]:
    key = _natural_key(old, new)
    return _by_position(old, new, path) if key is None else _by_key(old, new, path, key)


def _natural_key(old: Sequence[Any], new: Sequence[Any]) -> tuple[str, ...] | None:
    """The first candidate key every item of both lists has, scalar and unique within each list."""
    for fields in NATURAL_KEYS:
        if all(_keys_of(items, fields) is not None for items in (old, new)):
            return fields
    return None


def _keys_of(items: Sequence[Any], fields: tuple[str, ...]) -> list[tuple[Hashable, ...]] | None:
    keys = []
    for item in items:
        if not isinstance(item, Mapping) or not all(isinstance(item.get(f), (str, int)) for f in fields):
            return None
        keys.append(tuple(item[f] for f in fields))
    return keys if len(set(keys)) == len(keys) else None


def _label(fields: tuple[str, ...], key: tuple[Hashable, ...]) -> str:
    return "[" + ",".join(f"{f}={escaped(str(v))}" for f, v in zip(fields, key, strict=True)) + "]"


def _by_key(old: Sequence[Any], new: Sequence[Any], path: str, fields: tuple[str, ...]) -> list[str]:
    before = {tuple(item[f] for f in fields): item for item in old}
    after = {tuple(item[f] for f in fields): item for item in new}
    lines: list[str] = []
    for key, item in before.items():
        where = f"{path}{_label(fields, key)}"
        lines += field_changes(item, after[key], where) if key in after else [f"- {where}: {shown(item)}"]
    lines += [f"+ {path}{_label(fields, key)}: {shown(item)}" for key, item in after.items() if key not in before]
    if [k for k in before if k in after] != [k for k in after if k in before]:
        lines.append(f"{path}: order changed")
    return lines


def _by_position(old: Sequence[Any], new: Sequence[Any], path: str) -> list[str]:
    """Items matched by a sequence match of their values: equal runs are skipped, replaced runs compared pairwise."""
    matcher = difflib.SequenceMatcher(None, [shown(v) for v in old], [shown(v) for v in new], autojunk=False)
    lines: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        paired = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        for offset in range(paired):
            lines += field_changes(old[i1 + offset], new[j1 + offset], f"{path}[{j1 + offset}]")
        lines += [f"- {path}[{i}]: {shown(old[i])}" for i in range(i1 + paired, i2)]
        lines += [f"+ {path}[{j}]: {shown(new[j])}" for j in range(j1 + paired, j2)]
    return lines


def clauses(text: str) -> list[tuple[str, str]]:
    """`(separators, body)` pairs that join back to `text`: `a || b` is `("", "a"), (" || ", "b")`."""
    return [(m["separators"], m["body"]) for m in _CLAUSE.finditer(text) if m.group()]


def _text(old: str, new: str, path: str) -> list[str]:
    """A long text change as the clauses that went and came, instead of both texts whole."""
    hunks = text_hunks(old, new)
    lines = [f"{path}: text changed in {len(hunks)} place{'s' if len(hunks) > 1 else ''}"]
    for went, came in hunks:
        lines += [f"  - {went}"] if went is not None else []
        lines += [f"  + {came}"] if came is not None else []
    return lines


def text_hunks(old: str, new: str) -> list[tuple[str | None, str | None]]:
    """(what went, what came) per changed place. Clauses are aligned on their bodies alone, so a shared `,` or `||`
    never pairs two different ones. An aligned clause whose separators changed (`||` to `&&`) is shown with them,
    unless it borders a change, which explains it (the clause after a removed first item loses its `,`)."""
    a, b = clauses(old), clauses(new)
    opcodes = difflib.SequenceMatcher(None, [x for _, x in a], [x for _, x in b], autojunk=False).get_opcodes()
    hunks: list[tuple[str | None, str | None]] = []
    for index, (tag, i1, i2, j1, j2) in enumerate(opcodes):
        if tag != "equal":
            hunks.append((_run(a[i1:i2]) if i2 > i1 else None, _run(b[j1:j2]) if j2 > j1 else None))
            continue
        first = i1 + (index > 0)
        last = i2 - (index < len(opcodes) - 1)
        for i in range(first, last):
            j = j1 + i - i1
            if a[i][0] != b[j][0]:
                hunks.append((_run(a[i : i + 1], whole=True), _run(b[j : j + 1], whole=True)))
    return hunks


def _run(run: list[tuple[str, str]], whole: bool = False) -> str:
    """Clauses as written, from the first body on (`whole`: with its separators); separators alone are quoted."""
    text = "".join(separators + body for separators, body in run)
    text = text if whole else text[len(run[0][0]) :]
    return _cut(escaped(text.strip())) if text.strip() else shown(text)
