"""Evaluate the CEL we generate against request contexts, with a real CEL engine (cel-python).

Predicates decide who is limited and who is let in; checking them as strings proves nothing, so tests and the
offline tools evaluate them the way Authorino and the Kuadrant wasm-shim would.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import unquote_plus

import celpy

_ENVIRONMENT = celpy.Environment()


def _split(text: celpy.celtypes.StringType, separator: celpy.celtypes.StringType) -> celpy.celtypes.ListType:
    return celpy.celtypes.ListType([celpy.celtypes.StringType(part) for part in text.split(separator)])


def _join(items: celpy.celtypes.ListType, separator: celpy.celtypes.StringType = "") -> celpy.celtypes.StringType:
    return celpy.celtypes.StringType(separator.join(items))


def _replace(text: celpy.celtypes.StringType, old: str, new: str, count: int = -1) -> celpy.celtypes.StringType:
    return celpy.celtypes.StringType(text.replace(old, new, int(count)))


def _lower_ascii(text: celpy.celtypes.StringType) -> celpy.celtypes.StringType:
    return celpy.celtypes.StringType("".join(c.lower() if c.isascii() else c for c in text))


def _query_map(query: celpy.celtypes.StringType) -> celpy.celtypes.MapType:
    """The wasm-shim's `queryMap`: each query parameter's first value (a route match compares one value)."""
    values: dict[str, str] = {}
    for pair in filter(None, query.split("&")):
        name, _, value = pair.partition("=")
        values.setdefault(unquote_plus(name), unquote_plus(value))
    return celpy.json_to_cel(values)


# The cel-go strings extension functions our policies use (Authorino and the wasm-shim enable that extension),
# and the wasm-shim's own `queryMap`, which Kuadrant's route-match predicates use.
STRING_EXTENSIONS = {
    "split": _split,
    "join": _join,
    "replace": _replace,
    "lowerAscii": _lower_ascii,
    "queryMap": _query_map,
}


class CelError(Exception):
    """The expression does not compile, or its evaluation failed (for example a missing attribute)."""


@lru_cache(maxsize=4096)
def _program(expression: str) -> celpy.Runner:
    try:
        return _ENVIRONMENT.program(_ENVIRONMENT.compile(expression), functions=STRING_EXTENSIONS)
    except celpy.CELParseError as error:
        raise CelError(f"cannot compile {expression!r}: {error}") from error


class Prepared(dict):
    """A context already converted to CEL values: many predicates evaluated on one request convert it once."""


def prepared(context: Mapping[str, Any]) -> Prepared:
    return Prepared({name: celpy.json_to_cel(value) for name, value in context.items()})


def evaluate(expression: str, context: Mapping[str, Any]) -> Any:
    """The value of `expression` with each top-level key of `context` (e.g. `auth`, `request`) bound."""
    activation = context if isinstance(context, Prepared) else prepared(context)
    try:
        return _program(expression).evaluate(activation)
    except celpy.CELEvalError as error:
        raise CelError(f"cannot evaluate {expression!r}: {error.args[0] if error.args else error}") from error


def matches(predicate: str, context: Mapping[str, Any]) -> bool:
    """Whether a `when` predicate or authorization rule holds; anything but a boolean is an error."""
    result = evaluate(predicate, context)
    if not isinstance(result, celpy.celtypes.BoolType):
        raise CelError(f"{predicate!r} gave {type(result).__name__} {result!r}, not a boolean")
    return bool(result)


def plain(value: Any) -> Any:
    """A CEL result as plain JSON-like Python (bool, int, float, str, None, list, dict), e.g. to put an evaluated
    value into the next context or print it."""
    if value is None:
        return None
    if isinstance(value, bool | celpy.celtypes.BoolType):
        return bool(value)
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    for python_type in (str, int, float):
        if isinstance(value, python_type):
            return python_type(value)
    return str(value)


def request(
    path: str = "/llm/granite-7b/v1/chat/completions",
    identity: Mapping[str, Any] | None = None,
    metadata: Mapping[str, Any] | None = None,
    headers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A request context as Authorino and the wasm-shim expose it: `request.*` and `auth.identity/metadata`.

    As in Envoy, `request.path` is the whole `:path` (query string included) and `request.url_path` the path
    without the query string."""
    auth: dict[str, Any] = {"identity": dict(identity or {})}
    if metadata is not None:
        auth["metadata"] = dict(metadata)
    url_path, _, query = path.partition("?")
    fields = {"path": path, "url_path": url_path, "query": query, "headers": dict(headers or {})}
    return {"request": fields, "auth": auth}


def subscription_identity(
    key: str = "", rate_limit_id: str = "", userid: str = "user", subscription: str = ""
) -> dict[str, str]:
    """What the gateway AuthPolicy sets after subscription selection (both generations' fields are always set)."""
    return {
        "userid": userid,
        "selected_subscription": subscription,
        "selected_subscription_key": key,
        "selected_subscription_id": rate_limit_id,
    }
