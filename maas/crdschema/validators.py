"""JSON-schema validators for CRDs and core kinds, and their errors as problems."""

from __future__ import annotations

from typing import Any

import jsonschema

from .errors import JsonPath, Problem
from .formats import compiled_re2, re2_pattern
from .item_memo import memoised_items
from .quick_check import quick_check

CrdJsonValidator = jsonschema.validators.extend(
    jsonschema.Draft4Validator, {"pattern": re2_pattern, "items": memoised_items}
)
# Draft 2020-12 counts 8080.0 as an integer; typed Go clients cannot decode it into an int, so it must be an error.
_STRICT_INTEGERS = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool)
)
CoreJsonValidator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"pattern": re2_pattern}, type_checker=_STRICT_INTEGERS
)


def json_problems(validator: Any, instance: Any, prefix: JsonPath = ()) -> list[Problem]:
    """All schema errors of ``instance``, located under ``prefix``; jsonschema runs only when the quick check fails."""
    if quick_check(validator)(instance):
        return []
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
