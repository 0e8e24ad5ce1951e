"""Navigating a value alongside its structural schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def children(value: Any, schema: dict) -> Iterator[tuple[str | int, Any, dict]]:
    """``(key or index, child value, child schema)`` for the children the schema describes."""
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        additional = schema.get("additionalProperties")
        for key, sub in value.items():
            sub_schema = _property_schema(key, properties, additional)
            if sub_schema is not None:
                yield key, sub, sub_schema
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, item in enumerate(value):
            yield index, item, schema["items"]


def sub_schemas(schema: dict) -> Iterator[dict]:
    """The schemas of a node's possible children."""
    yield from schema.get("properties", {}).values()
    for key in ("additionalProperties", "items"):
        if isinstance(schema.get(key), dict):
            yield schema[key]


def _property_schema(key: str, properties: dict, additional: Any) -> dict | None:
    if key in properties:
        return properties[key]
    return additional if isinstance(additional, dict) else None
