"""`Node`: one place in a live object, read leniently and remembering every field that had the wrong shape.

A view reads each field once through a node: a value of the wrong type reads as absent (as `fields.py` would read
it), and its path is kept so that the object is reported once as unreadable instead of each concern guessing.
A missing field is not a problem; only a present value of another type is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


class Node:
    """Slotted, not a dataclass: the plan's views build hundreds of thousands of nodes, and a frozen dataclass's
    `__init__` costs several times a plain one's. Never changed once built."""

    __slots__ = ("index", "problems", "value", "where")

    def __init__(
        self, value: Any, where: str = "", problems: list[str] | None = None, index: int | None = None
    ) -> None:
        self.value, self.where, self.index = value, where, index  # index: its position in the list it is an entry of
        self.problems: list[str] = [] if problems is None else problems

    def at(self, *path: str) -> Node:
        """The node at `path` through nested mappings; a step through a non-mapping reads as absent."""
        value, where = self.value, self.where
        for key in path:
            if value is not None:
                if type(value) is dict or isinstance(value, Mapping):  # `_is_mapping`, inlined: the hottest read
                    value = value.get(key)
                else:
                    self._wrong(where, "a mapping")
                    value = None
            where = f"{where}.{key}" if where else key
        return Node(value, where, self.problems)

    def text(self, *path: str) -> str | None:
        found = self.at(*path)
        return found.value if found.is_a(_is_text, "a string") else None

    def flag(self, *path: str) -> bool | None:
        found = self.at(*path)
        return found.value if found.is_a(_is_flag, "a boolean") else None

    def count(self, *path: str, default: int) -> int:
        found = self.at(*path)
        return found.value if found.is_a(_is_count, "an integer") else default

    def mapping(self, *path: str) -> Mapping[str, Any]:
        found = self.at(*path)
        return found.value if found.is_a(_is_mapping, "a mapping") else {}

    def fields(self, *path: str) -> tuple[tuple[Any, Node], ...]:
        """Each entry of the mapping at `path` as (key, node), for a mapping keyed by names (a policy's limits)."""
        found = self.at(*path)
        if not found.is_a(_is_mapping, "a mapping"):
            return ()
        return tuple((key, Node(value, f"{found.where}.{key}", self.problems)) for key, value in found.value.items())

    def entries(self, *path: str) -> tuple[Node, ...]:
        """The list at `path`, one node per entry (mapping or not: the caller's reads say what is wrong)."""
        found = self.at(*path)
        if not found.is_a(_is_list, "a list"):
            return ()
        return tuple(Node(item, f"{found.where}[{i}]", self.problems, i) for i, item in enumerate(found.value))

    def items(self, *path: str) -> tuple[Node, ...]:
        """The mapping entries of the list at `path`; any other entry is skipped and said."""
        return tuple(entry for entry in self.entries(*path) if entry.is_a(_is_mapping, "a mapping"))

    def strings(self, *path: str) -> tuple[tuple[int, str], ...]:
        """The string entries of the list at `path`, each with its position; any other entry is skipped and said."""
        return tuple(
            (e.index, e.value) for e in self.entries(*path) if e.index is not None and e.is_a(_is_text, "a string")
        )

    def is_a(self, test: Callable[[Any], bool], said: str) -> bool:
        """Whether the value passes `test`; a present value that does not is remembered."""
        if self.value is None:
            return False
        if test(self.value):
            return True
        self._wrong(self.where, said)
        return False

    def _wrong(self, where: str, said: str) -> None:
        problem = f"{where or 'the object'} is not {said}"
        if problem not in self.problems:
            self.problems.append(problem)


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_flag(value: Any) -> bool:
    return isinstance(value, bool)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_mapping(value: Any) -> bool:
    return type(value) is dict or isinstance(value, Mapping)  # the exact type first: the ABC check is slow


def _is_list(value: Any) -> bool:
    """A list as YAML or a frozen snapshot holds it (list or tuple), never a string."""
    return type(value) in (list, tuple) or (isinstance(value, Sequence) and not isinstance(value, str))
