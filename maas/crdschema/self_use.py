"""Which parts of ``self`` a CEL rule reads, so that it can be cached on, and evaluated with, just those parts.

A rule like ``has(self.limits) && size(self.limits) > 0`` on a TokenRateLimitPolicy's spec reads nothing of the
(large) ``limits`` map but its size: converting the whole map to CEL, or keying its cached result on the whole map,
would cost milliseconds per object for an answer that depends on one number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .cel_values import cel_entries

_SINGLE_CHILD_WRAPPERS = {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication"}
_SINGLE_CHILD_WRAPPERS |= {"unary", "member", "primary"}
_WHOLE, _SIZE, _PRESENCE = "whole", "size", "presence"
_FUNCTION_USES = {"has": _PRESENCE, "size": _SIZE}


@dataclass(frozen=True)
class SelfUse:
    """What a rule reads of a value: all of it (``whole``), its size, and fields (by CEL name), each with its own use.

    A field whose use reads nothing is only tested for presence (``has(self.x)``). Found by a conservative scan of
    the parse tree: ``self`` used other than through field selections means the whole value (None).
    """

    whole: bool = False
    size: bool = False
    fields: tuple[tuple[str, SelfUse], ...] = ()


def self_use(tree: Any) -> SelfUse | None:
    """What a compiled rule reads of ``self``; None when it may read all of it."""
    parents = {id(child): node for node in tree.iter_subtrees() for child in node.children if hasattr(child, "data")}
    reads: list[tuple[tuple[str, ...], str]] = []
    for node in tree.iter_subtrees():
        if node.data == "ident" and str(node.children[0]) == "self":
            path, end = _selection(parents.get(id(parents.get(id(node)))), parents)  # ident <- primary <- member
            if not path:
                return None
            reads.append((path, _use_of(end, parents)))
    return _merged(reads)


def _selection(member: Any, parents: dict[int, Any]) -> tuple[tuple[str, ...], Any]:
    """The field names of the chain ``self.a.b...`` that starts at ``member``, and the chain's outermost node."""
    path: list[str] = []
    while (access := parents.get(id(member))) is not None and access.data == "member_dot":
        if access.children[0] is not member:
            break
        path.append(str(access.children[1]))
        member = parents.get(id(access))
    return tuple(path), member


def _use_of(node: Any, parents: dict[int, Any]) -> str:
    """``presence``/``size`` when ``node`` is, through single-child wrappers, the only argument of has()/size()."""
    while (parent := parents.get(id(node))) is not None:
        if parent.data == "exprlist":
            call = parents.get(id(parent))
            if len(parent.children) != 1 or call is None or call.data != "ident_arg":
                return _WHOLE
            return _FUNCTION_USES.get(str(call.children[0]), _WHOLE)
        if parent.data not in _SINGLE_CHILD_WRAPPERS or len(parent.children) != 1:
            return _WHOLE
        node = parent
    return _WHOLE


def _merged(reads: list[tuple[tuple[str, ...], str]]) -> SelfUse:
    """One use from the (path, use) reads below a value: reading the whole of it covers everything below."""
    here = {use for path, use in reads if not path}
    if _WHOLE in here:
        return SelfUse(whole=True)
    below: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for path, use in reads:
        if path:
            below.setdefault(path[0], []).append((path[1:], use))
    fields = tuple(sorted((name, _merged(sub)) for name, sub in below.items()))
    return SelfUse(size=_SIZE in here, fields=fields)


def projection(raw: Any, schema: dict, use: SelfUse | None) -> Any:
    """JSON data that is equal for two values exactly when their CEL views (``CelValues.view``) are."""
    if use is None or use.whole:
        return ["whole", raw]
    if isinstance(raw, dict):
        wanted = dict(use.fields)
        entries = list(cel_entries(raw, schema))
        fields = {key: projection(sub, sub_schema, wanted[key]) for key, sub, sub_schema in entries if key in wanted}
        return ["map", len(entries) if use.size else None, fields]
    if use.fields or (use.size and not isinstance(raw, list)):
        return ["whole", raw]
    return ["size", len(raw)] if use.size else ["present"]
