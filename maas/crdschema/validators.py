"""JSON-schema validators for CRDs and core kinds, and their errors as problems."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import jsonschema

from .caching import digest, memoised
from .errors import JsonPath, Problem
from .formats import compiled_re2, re2_pattern

_DRAFT4_ITEMS = jsonschema.Draft4Validator.VALIDATORS["items"]
# (id of an items schema, digest of an item) -> (that schema, kept alive so that its id stays unique; the errors)
_ITEM_ERRORS: dict[tuple[int, bytes], tuple[dict, list[jsonschema.ValidationError]]] = {}


def _memoised_items(validator: Any, items: Any, instance: Any, schema: dict) -> Iterator[jsonschema.ValidationError]:
    """Draft 4 ``items`` with each item's errors memoised by (schema node, item value): rendered objects repeat the
    same entries (model references, rates, status conditions) thousands of times, in objects that all differ."""
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


CrdJsonValidator = jsonschema.validators.extend(
    jsonschema.Draft4Validator, {"pattern": re2_pattern, "items": _memoised_items}
)
# Draft 2020-12 counts 8080.0 as an integer; typed Go clients cannot decode it into an int, so it must be an error.
_STRICT_INTEGERS = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
)
CoreJsonValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"pattern": re2_pattern}, type_checker=_STRICT_INTEGERS
)


def json_problems(validator: Any, instance: Any, prefix: JsonPath = ()) -> list[Problem]:
    """All schema errors of ``instance``, located under ``prefix``."""
    problems: list[Problem] = []
    for error in validator.iter_errors(instance):
        path = prefix + tuple(error.absolute_path)
        if error.validator == "additionalProperties" and error.validator_value is False:
            problems.extend(_unknown_fields(error, path))
        else:
            problems.append((path, error.message))
    return problems


def _unknown_fields(error: jsonschema.ValidationError, path: JsonPath) -> list[Problem]:
    """One error per unknown field, at the field's own path, instead of jsonschema's summary."""
    declared = error.schema.get("properties", {})
    patterns = error.schema.get("patternProperties", {})
    matching = [compiled_re2(pattern) for pattern in patterns]
    unknown = [key for key in error.instance if key not in declared and not any(m.search(key) for m in matching)]
    return [((*path, key), "unknown field (the API server would silently prune it)") for key in unknown]
