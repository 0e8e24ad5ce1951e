"""Defaulting, as the API server does before validating (CEL rules read defaulted fields)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .schema_nodes import children

_SCALARS = frozenset({str, int, float, bool, type(None)})  # exact types: returned as they are, without a call


def copy_json(value: Any) -> Any:
    """Deep copy of JSON-like data; tuples become lists (they serialize as arrays)."""
    if isinstance(value, dict):
        return {key: sub if type(sub) in _SCALARS else copy_json(sub) for key, sub in value.items()}
    if isinstance(value, (list, tuple)):
        return [sub if type(sub) in _SCALARS else copy_json(sub) for sub in value]
    return value


def apply_defaults(value: Any, schema: dict, has_defaults: Callable[[dict], bool] = lambda _schema: True) -> None:
    """Fill in schema ``default`` values in place, recursively; ``has_defaults(node)`` says whether a schema node
    or one below it declares a default (the walk skips the others)."""
    if not has_defaults(schema):
        return
    if isinstance(value, dict):
        _default_properties(value, schema)
    for _, sub, sub_schema in children(value, schema):
        apply_defaults(sub, sub_schema, has_defaults)


def _default_properties(value: dict, schema: dict) -> None:
    for key, sub_schema in schema.get("properties", {}).items():
        if "default" not in sub_schema:
            continue
        if key not in value or (value[key] is None and not sub_schema.get("nullable")):
            value[key] = copy_json(sub_schema["default"])
