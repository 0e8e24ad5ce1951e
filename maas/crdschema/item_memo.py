"""Draft 4 ``items`` with each item's errors memoised by (schema node, item value).

Rendered objects repeat the same entries (model references, rates, status conditions) thousands of times, in objects
that all differ.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from .caching import digest, memoised

_DRAFT4_ITEMS = jsonschema.Draft4Validator.VALIDATORS["items"]
# (id of an items schema, digest of an item) -> (that schema, kept alive so that its id stays unique; the errors)
_ITEM_ERRORS: dict[tuple[int, bytes], tuple[dict, list[jsonschema.ValidationError]]] = {}


def memoised_items(validator: Any, items: Any, instance: Any, schema: dict) -> Iterator[jsonschema.ValidationError]:
    """The ``items`` keyword of Draft 4, with the errors of each item memoised."""
    if not isinstance(items, dict) or not validator.is_type(instance, "array"):
        yield from _DRAFT4_ITEMS(validator, items, instance, schema)
        return
    for index, item in enumerate(instance):
        for error in _item_errors(validator, items, item):
            located = jsonschema.ValidationError.create_from(error)  # its own path: the memoised error is shared
            located.path.appendleft(index)
            yield located


def _item_errors(validator: Any, items: dict, item: Any) -> list[jsonschema.ValidationError]:
    try:
        key = (id(items), digest(json.dumps(item, sort_keys=True)))
    except (TypeError, ValueError):  # not plain JSON data: validated without caching
        return list(validator.descend(item, items))
    return memoised(_ITEM_ERRORS, key, lambda: (items, list(validator.descend(item, items))))[1]
