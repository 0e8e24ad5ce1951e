"""``x-kubernetes-list-type: set|map`` uniqueness, which the API server enforces."""

from __future__ import annotations

import json
from typing import Any

from .errors import JsonPath, Problem


def list_type_problems(value: list, schema: dict, path: JsonPath) -> list[Problem]:
    """One problem per repeated entry (set) or repeated map key (map)."""
    list_type = schema.get("x-kubernetes-list-type")
    if list_type == "set":
        keys = [_freeze(item) for item in value]
    elif list_type == "map":
        names = schema.get("x-kubernetes-list-map-keys", [])
        keys = [_freeze([item.get(n) for n in names]) if isinstance(item, dict) else None for item in value]
    else:
        return []
    seen: set[str | None] = set()
    problems = []
    for index, key in enumerate(keys):
        if key is not None and key in seen:
            problems.append(((*path, index), f"duplicate entry in list-type={list_type} list: {key}"))
        seen.add(key)
    return problems


def _freeze(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
