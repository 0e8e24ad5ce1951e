"""Which parts of ``self`` a CEL rule reads, so that its results can be cached on just those parts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cel_values import cel_field_name

_SINGLE_CHILD_WRAPPERS = {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication"}
_SINGLE_CHILD_WRAPPERS |= {"unary", "member", "primary"}


@dataclass(frozen=True)
class SelfUse:
    """The ``self.x`` values and the ``has(self.y)`` presence checks of a rule.

    Found by a conservative parse-tree scan: any other use of ``self`` means the whole value (None).
    """

    fields: frozenset[str]
    presence_only: frozenset[str]


def self_use(tree: Any) -> SelfUse | None:
    """What a compiled rule reads of ``self``; None when it may read all of it."""
    parents = {id(child): node for node in tree.iter_subtrees() for child in node.children if hasattr(child, "data")}
    fields: set[str] = set()
    presence: set[str] = set()
    for node in tree.iter_subtrees():
        if node.data != "ident" or str(node.children[0]) != "self":
            continue
        member = parents.get(id(parents.get(id(node))))  # ident <- primary <- member
        access = parents.get(id(member))
        if access is None or access.data != "member_dot" or access.children[0] is not member:
            return None
        name = str(access.children[1])
        (presence if _is_has_argument(access, parents) else fields).add(name)
    return SelfUse(frozenset(fields), frozenset(presence - fields))


def _is_has_argument(node: Any, parents: dict[int, Any]) -> bool:
    """Whether a ``self.x`` node is, through single-child wrappers, the whole argument of ``has()``."""
    while (parent := parents.get(id(node))) is not None:
        if parent.data == "exprlist":
            call = parents.get(id(parent))
            return call is not None and call.data == "ident_arg" and str(call.children[0]) == "has"
        if parent.data not in _SINGLE_CHILD_WRAPPERS or len(parent.children) != 1:
            return False
        node = parent
    return False


def projection(raw: Any, use: SelfUse | None) -> Any:
    """The part of a value a rule reads: the present keys it asks about, and the values it uses."""
    if use is None or not isinstance(raw, dict):
        return raw
    wanted = use.fields | use.presence_only
    present = {key: value for key, value in raw.items() if key in wanted or cel_field_name(key) in wanted}
    values = {key: value for key, value in present.items() if key in use.fields or cel_field_name(key) in use.fields}
    return [sorted(present), values]
