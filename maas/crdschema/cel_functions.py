"""The Kubernetes CEL library functions the CRDs use that cel-python lacks or spells differently."""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from celpy import celtypes
from celpy.evaluation import base_functions

from .formats import GO_DURATION

_CEL_MACROS = {"has", "all", "exists", "exists_one", "map", "filter", "dyn"}
_GO_DURATION_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")
_GO_UNIT_NANOS = {"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9, "m": 60e9, "h": 3600e9}


def _k8s_split(
    text: celtypes.StringType, separator: celtypes.StringType, limit: celtypes.IntType | None = None
) -> celtypes.ListType:
    """Kubernetes strings extension ``split(sep[, n])`` (Go ``strings.SplitN``)."""
    if limit is None or limit < 0:
        parts = text.split(separator) if separator else list(text)
    elif limit == 0:
        parts = []
    elif separator:
        parts = text.split(separator, int(limit) - 1)
    else:
        parts = [*list(text[: int(limit) - 1]), text[int(limit) - 1 :]] if len(text) >= limit else list(text)
    return celtypes.ListType([celtypes.StringType(part) for part in parts])


def _k8s_substring(
    text: celtypes.StringType, start: celtypes.IntType, end: celtypes.IntType | None = None
) -> celtypes.StringType:
    """Kubernetes strings extension ``substring(start[, end])``; out of range is an error, like Go."""
    stop = len(text) if end is None else int(end)
    if not 0 <= int(start) <= stop <= len(text):
        raise ValueError(f"substring({start}, {stop}) out of range for a string of length {len(text)}")
    return celtypes.StringType(text[int(start) : stop])


def _go_duration(text: celtypes.StringType) -> celtypes.DurationType:
    """``duration()`` with Go ``time.ParseDuration`` syntax (no ``d`` unit, unlike cel-python's)."""
    if isinstance(text, celtypes.DurationType):
        return text
    if not GO_DURATION.fullmatch(text):
        raise ValueError(f"invalid duration {str(text)!r}")
    sign = -1 if text.startswith("-") else 1
    nanos = sum(Decimal(number) * int(_GO_UNIT_NANOS[unit]) for number, unit in _GO_DURATION_PART.findall(text))
    seconds, rest = divmod(int(nanos) * sign, 10**9)
    return celtypes.DurationType(seconds, rest)


K8S_CEL_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "split": _k8s_split,
    "substring": _k8s_substring,
    "duration": _go_duration,
}
KNOWN_FUNCTIONS = set(base_functions) | _CEL_MACROS | set(K8S_CEL_FUNCTIONS)


def called_functions(tree: Any) -> set[str]:
    """Names of all functions and methods a compiled CEL expression calls."""
    names = set()
    for node in tree.iter_subtrees():
        if node.data == "member_dot_arg":
            names.add(str(node.children[1]))
        elif node.data == "ident_arg":
            names.add(str(node.children[0]))
    return names
