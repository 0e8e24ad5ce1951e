"""Error strings: ``"<Kind> <ns>/<name>: <json.path>: <message>"``, one per problem."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

JsonPath = tuple[str | int, ...]
Problem = tuple[JsonPath, str]

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_-]+")
_MAX_MESSAGE = 300


def format_path(parts: Iterable[str | int]) -> str:
    """Render a JSON path like ``spec.limits.x-y.rates[0].window``; odd keys as ``labels["a.b/c"]``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.fullmatch(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out or "<root>"


def object_label(obj: dict) -> str:
    """``Kind ns/name`` (``Kind name`` without namespace), for naming an object in error messages."""
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    name = _visible(meta.get("name") or meta.get("generateName") or "<unnamed>")
    namespace = meta.get("namespace")
    kind = _visible(obj.get("kind") or "<no kind>")
    return f"{kind} {_visible(namespace)}/{name}" if namespace else f"{kind} {name}"


def _visible(value: object) -> str:
    """As is when printable, else JSON-quoted: a newline in a name must not break the one-line error."""
    text = str(value)
    return text if text.isprintable() else json.dumps(text)


def render_problems(obj: dict, problems: Iterable[Problem]) -> list[str]:
    """Sorted by path so that the output does not depend on the order checks run in."""
    ordered = sorted(problems, key=lambda p: (format_path(p[0]), p[1]))
    if not ordered:
        return []  # the usual case: no label to build
    label = object_label(obj)
    return [f"{label}: {format_path(path)}: {_shorten(message)}" for path, message in ordered]


def _shorten(message: str) -> str:
    return message if len(message) <= _MAX_MESSAGE else message[: _MAX_MESSAGE - 1] + "…"
