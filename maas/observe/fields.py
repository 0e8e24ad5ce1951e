"""Reading fields of observed objects whose shape nobody guarantees.

A live object (or a snapshot file someone edited) may carry anything a CRD admits, or worse: `parentRefs: "x"`,
`replicas: "1"`, `annotations: [a]`. Whatever the program reads from the cluster goes through these accessors, so
a value of the wrong type reads as absent instead of crashing `pulumi preview` with a traceback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def dig(value: Any, *path: str) -> Any:
    """The value at `path` through nested mappings, or None when a step is missing or not a mapping."""
    for key in path:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def mapping_at(value: Any, *path: str) -> Mapping[str, Any]:
    found = dig(value, *path)
    return found if isinstance(found, Mapping) else {}


def items_at(value: Any, *path: str) -> tuple[Mapping[str, Any], ...]:
    """The mapping entries of the list at `path` (entries of another type are skipped)."""
    found = dig(value, *path)
    if not isinstance(found, Sequence) or isinstance(found, str):
        return ()
    return tuple(item for item in found if isinstance(item, Mapping))


def positions_at(value: Any, *path: str) -> tuple[tuple[int, Any], ...]:
    """Every entry of the list at `path` with its position, for a message that names the field it read."""
    found = dig(value, *path)
    if not isinstance(found, Sequence) or isinstance(found, str):
        return ()
    return tuple(enumerate(found))


def strings_at(value: Any, *path: str) -> tuple[str, ...]:
    found = dig(value, *path)
    if not isinstance(found, Sequence) or isinstance(found, str):
        return ()
    return tuple(item for item in found if isinstance(item, str))


def text_at(value: Any, *path: str) -> str | None:
    found = dig(value, *path)
    return found if isinstance(found, str) else None


def int_at(value: Any, *path: str, default: int) -> int:
    found = dig(value, *path)
    return found if isinstance(found, int) and not isinstance(found, bool) else default
