"""Configuration problems as `path: message` lines, and pydantic errors translated into that form."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from .. import naming

MAX_SHOWN = 80  # characters of a value echoed in a message; a 300 kB annotation is not repeated whole


def escaped(text: str) -> str:
    """`text` with every character that could end or forge a line (controls, separators, lone surrogates)
    written as a Python escape, so one issue is always one line of the terminal."""
    return "".join(
        ch if ch.isprintable() or ch == " " else ch.encode("unicode_escape", "backslashreplace").decode() for ch in text
    )


def quoted(value: object) -> str:
    """A value as messages echo it: single-quoted, escaped, long values shortened with their length."""
    text = escaped(str(value))
    if len(text) > MAX_SHOWN:
        text = f"{text[: MAX_SHOWN - 20]}... ({len(str(value))} characters)"
    return f"'{text}'"


@dataclass(frozen=True, order=True)
class ConfigIssue:
    path: str
    message: str

    def __str__(self) -> str:
        return escaped(f"{self.path}: {self.message}")


class ConfigError(Exception):
    """Every problem of a configuration at once; raised before any resource is registered."""

    def __init__(self, issues: list[ConfigIssue]) -> None:
        self.issues = issues
        lines = "\n".join(f"  - {issue}" for issue in issues)
        super().__init__(f"invalid MaaS configuration ({len(issues)} problem(s)); nothing was registered:\n{lines}")


def entry_label(key: str, raw: Any) -> str:
    """A readable identity for a list entry, so that `[3]` can be found in a long stack file."""
    if not isinstance(raw, dict):
        return ""
    name = raw.get("name")
    if not isinstance(name, str):
        return ""
    if key == "tenants":
        return f" ({name})"
    if key == "unmanaged":
        return f" ({raw.get('kind')} {raw.get('namespace')}/{name})"
    namespace = raw.get("namespace", naming.DEFAULT_TENANT if key in ("authPolicies", "subscriptions") else None)
    return f" ({namespace}/{name})" if isinstance(namespace, str) else f" ({name})"


def entry_path(key: str, index: int | None = None, raw: Any = None) -> str:
    if index is None:
        return f"maas:{key}"
    return f"maas:{key}[{index}]{entry_label(key, raw)}"


def join_path(base: str, loc: tuple[Any, ...]) -> str:
    path = base
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def translate(base: str, root: type, error: dict[str, Any]) -> ConfigIssue:
    """One pydantic error as a ConfigIssue whose message says what to do."""
    loc = tuple(error["loc"])
    return ConfigIssue(join_path(base, loc), _message(root, loc, error))


def _message(root: type, loc: tuple[Any, ...], error: dict[str, Any]) -> str:
    kind = error["type"]
    value = error.get("input")
    context = error.get("ctx", {})
    if kind in ("value_error", "assertion_error"):
        return str(context.get("error", error["msg"]))
    if kind == "extra_forbidden":
        allowed = ", ".join(_allowed_keys(root, loc[:-1]))
        return f"unknown key {quoted(loc[-1])}; check the spelling (allowed here: {allowed})"
    if kind == "missing":
        return "is required; add it"
    if kind == "literal_error":
        return f"{quoted(value)} is not allowed; use {context.get('expected')}"
    if kind == "too_short":
        return "must not be empty; give at least one entry"
    if kind in ("model_type", "model_attributes_type", "dict_type"):
        return f"must be a mapping of keys to values (got {_describe(value)})"
    if kind in ("tuple_type", "list_type"):
        return f"must be a list (got {_describe(value)})"
    if kind in ("int_type", "int_parsing", "int_from_float"):
        return f"must be a whole number (got {_describe(value)})"
    if kind in ("string_type",):
        return f"must be a string (got {_describe(value)}); quote it in YAML"
    if kind in ("bool_type", "bool_parsing"):
        return f"must be true or false (got {_describe(value)})"
    return error["msg"]


def _describe(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return type(value).__name__
    return f"{type(value).__name__} {quoted(value) if isinstance(value, str) else repr(value)}"


def _allowed_keys(root: type, loc: tuple[Any, ...]) -> list[str]:
    """Walk the model types along `loc` to list the keys that the entry at that place accepts."""
    current: Any = root
    for part in loc:
        current = _element_type(current, part)
        if current is None:
            return []
    current = _unwrap(current)
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(current.model_fields)
    return []


def _element_type(annotation: Any, part: Any) -> Any:
    annotation = _unwrap(annotation)
    if isinstance(part, int):
        args = typing.get_args(annotation)
        return args[0] if args else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(part)
        return field.annotation if field else None
    return None


def _unwrap(annotation: Any) -> Any:
    """Strip Optional/Annotated so that the model class underneath is visible."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            annotation = members[0]
        else:
            return annotation
