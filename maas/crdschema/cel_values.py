"""Python -> CEL values, typed and named the way Kubernetes exposes them to rules."""

from __future__ import annotations

import re
from typing import Any

import celpy
from celpy import celtypes

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

    def _container(self, value: dict | list, schema: dict) -> Any:
        if isinstance(value, list):
            items = schema.get("items") or {}
            return celtypes.ListType([self.convert(item, items) for item in value])
        properties = schema.get("properties")
        if properties is not None:
            return celtypes.MapType(self._fields(value, properties))
        additional = schema.get("additionalProperties")
        sub = additional if isinstance(additional, dict) else {}
        return celtypes.MapType({celtypes.StringType(k): self.convert(v, sub) for k, v in value.items()})

    def _fields(self, value: dict, properties: dict) -> dict:
        fields = {}
        for key, sub in value.items():
            name = cel_field_name(key) if key in properties else None
            if name is not None:
                fields[celtypes.StringType(name)] = self.convert(sub, properties[key])
        return fields
