"""Python -> CEL values, typed and named the way Kubernetes exposes them to rules."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import celpy
from celpy import celtypes

if TYPE_CHECKING:
    from .self_use import SelfUse

# fmt: off
_CEL_RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if", "import",
    "let", "loop", "package", "namespace", "return", "var", "void", "while",
})
# fmt: on
_CEL_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_CEL_ESCAPE_MATCH = re.compile(r"__|[-./]")
_CEL_NAME = re.compile(r"[A-Za-z_./-][A-Za-z0-9_./-]*")


def cel_field_name(name: str) -> str | None:
    """Kubernetes' escaping of property names for CEL (``namespace`` -> ``__namespace__``), or None."""
    if name in _CEL_RESERVED:
        return f"__{name}__"
    if not _CEL_NAME.fullmatch(name):
        return None
    return _CEL_ESCAPE_MATCH.sub(lambda m: _CEL_ESCAPES[m.group(0)], name)


def cel_entries(value: dict, schema: dict) -> Iterator[tuple[Any, Any, dict]]:
    """``(CEL key, value, schema)`` of the entries a dict has in CEL: declared properties by their escaped names
    (the others are not visible), or every key of a map."""
    properties = schema.get("properties")
    if properties is not None:
        for key, sub in value.items():
            name = cel_field_name(key) if key in properties else None
            if name is not None:
                yield celtypes.StringType(name), sub, properties[key]
        return
    additional = schema.get("additionalProperties")
    sub_schema = additional if isinstance(additional, dict) else {}
    for key, sub in value.items():
        yield celtypes.StringType(key), sub, sub_schema


class CelValues:
    """Schema-aware conversion for one object, memoised per container."""

    def __init__(self) -> None:
        self._memo: dict[int, Any] = {}

    def convert(self, value: Any, schema: dict) -> Any:
        if isinstance(value, (dict, list)):
            key = id(value)
            if key not in self._memo:
                self._memo[key] = self._container(value, schema)
            return self._memo[key]
        if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
            return celtypes.DoubleType(value)
        return celpy.json_to_cel(value)

    def view(self, value: Any, schema: dict, use: SelfUse) -> Any:
        """What a rule that reads ``use`` of ``value`` sees, converted only as far as it reads: an unread entry, or
        one only tested for presence, is null; the entries of a container only measured are nulls."""
        if use.whole:
            return self.convert(value, schema)
        if isinstance(value, dict):
            wanted = dict(use.fields)
            return celtypes.MapType(
                {
                    key: self.view(sub, sub_schema, wanted[key]) if key in wanted else None
                    for key, sub, sub_schema in cel_entries(value, schema)
                    if use.size or key in wanted
                }
            )
        if use.fields or (use.size and not isinstance(value, list)):
            return self.convert(value, schema)
        return celtypes.ListType([None] * len(value)) if use.size else None

    def _container(self, value: dict | list, schema: dict) -> Any:
        if isinstance(value, list):
            items = schema.get("items") or {}
            return celtypes.ListType([self.convert(item, items) for item in value])
        return celtypes.MapType(
            {key: self.convert(sub, sub_schema) for key, sub, sub_schema in cel_entries(value, schema)}
        )
