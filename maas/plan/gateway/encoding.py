"""The bytes the API server stores for a Kuadrant wasm object, written out or measured without writing it out.

Kuadrant serialises the wasm configuration with protojson (a `structpb.Struct`: keys sorted, compact, no HTML
escaping) and the API server stores every custom resource with Go's encoding/json, which also escapes `&`, `<`, `>`
and U+2028/U+2029 (`&&` becomes `\\u0026\\u0026`). On Kuadrant 1.5+ the configuration is a JSON *string* inside
the EnvoyFilter (`Embedded`), so each of its quotes and backslashes is escaped once more.

Both escapings work character by character, so an object's stored length is the sum of its parts' lengths. A
`Measure` keeps, per fragment of compact JSON, its UTF-8 bytes and the counts of the characters that the outer
encodings grow. `measure` walks a structure and memoises by object identity: a part that many others share (the
actions of one route rule, copied into every ActionSet of that rule) is serialised once, however often it occurs.
Subtrees that share nothing are plain dicts and lists, serialised in one `json.dumps` call; containers whose
children may be shared are `Composite`/`CompositeList`, measured part by part, and a `Spliced` list is runs of
items that other lists hold too (a route's token actions in each of its rules' action lists), each run measured
once (`Measurer.run`, which the budget also calls on runs it never builds into an array).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Go's encoding/json writes `&<>` as \u00XX (5 bytes more) and U+2028/U+2029 as \u2028 (6 bytes instead of 3).
_GO_ESCAPES = str.maketrans({"&": "\\u0026", "<": "\\u003c", ">": "\\u003e", "\u2028": "\\u2028", "\u2029": "\\u2029"})


class Composite(dict):
    """A JSON object whose values may be shared with other objects: measured per value."""


class CompositeList(list):
    """A JSON array whose items may be shared with other arrays: measured per item."""


class Spliced(CompositeList):
    """A JSON array of runs of items, each run a sequence that other arrays hold too (a route's token actions, in
    the action list of each of its rules): measured run by run, each run once."""

    def __init__(self, *runs: Sequence[Any]) -> None:
        super().__init__(item for run in runs for item in run)
        self.runs = runs


@dataclass(frozen=True)
class Embedded:
    """A structure written as one JSON string (protojson of it), as the EnvoyFilter carries the wasm config."""

    value: Any


@dataclass(slots=True)
class Measure:
    """One fragment of compact JSON: UTF-8 bytes, quotes and backslashes, `&<>`, and U+2028/U+2029. Never changed
    once built; not frozen, because sizing a plan adds up hundreds of thousands of them and a frozen dataclass's
    `__init__` costs three times a plain one's."""

    size: int
    quotes: int
    html: int
    separators: int

    def __add__(self, other: Measure) -> Measure:
        return Measure(
            self.size + other.size,
            self.quotes + other.quotes,
            self.html + other.html,
            self.separators + other.separators,
        )

    def __sub__(self, other: Measure) -> Measure:
        return Measure(
            self.size - other.size,
            self.quotes - other.quotes,
            self.html - other.html,
            self.separators - other.separators,
        )

    def __mul__(self, count: int) -> Measure:
        """The fragment written `count` times (one part copied into many)."""
        return Measure(self.size * count, self.quotes * count, self.html * count, self.separators * count)

    @property
    def stored(self) -> int:
        """Bytes once Go's encoding/json writes this fragment (as the API server stores the object)."""
        return self.size + 5 * self.html + 3 * self.separators

    @property
    def as_string(self) -> Measure:
        """This fragment written as the content of a JSON string (each quote and backslash escaped)."""
        return Measure(self.size + self.quotes, 2 * self.quotes, self.html, self.separators)


QUOTES = Measure(2, 2, 0, 0)  # the two quotes around a JSON string
NOTHING = Measure(0, 0, 0, 0)


def array_punctuation(count: int) -> Measure:
    """The brackets of a JSON array of `count` items and the commas between them."""
    return Measure(max(count + 1, 2), 0, 0, 0)


def of_text(text: str) -> Measure:
    """The measure of a fragment of JSON text."""
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    html = text.count("&") + text.count("<") + text.count(">")
    separators = 0 if text.isascii() else text.count("\u2028") + text.count("\u2029")
    return Measure(size, text.count('"') + text.count("\\"), html, separators)


def compact(value: Any) -> str:
    """protojson-style compact JSON with sorted keys; an `Embedded` value becomes its JSON string."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=_embedded_text)


def stored_json(value: Any) -> str:
    """The object exactly as Go's encoding/json writes it: compact, keys sorted, HTML characters escaped."""
    return compact(value).translate(_GO_ESCAPES)


def _embedded_text(value: Any) -> str:
    if isinstance(value, Embedded):
        return compact(value.value)
    raise TypeError(f"{type(value).__name__} is not JSON")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_encode_string = json.encoder.encode_basestring  # the C encoder of one string, ensure_ascii=False


_PARTS = (Composite, CompositeList, Embedded)
# What an object's values are measured one by one as: its parts, and strings, from memory by value (an ActionSet's
# name, the same string in every lever's rebuild of it, would otherwise go through the encoder each time).
_ONE_BY_ONE = (*_PARTS, str)


class Measurer:
    """Measures structures, remembering every container it has measured (by identity) and every string (by
    value) for the next call."""

    def __init__(self) -> None:
        self._known: dict[int, Measure] = {}
        self._keep: list[Any] = []  # measured containers stay alive, so no identity is reused while remembered
        self._strings: dict[str, Measure] = {}
        self._runs: dict[int, Measure] = {}  # runs of items (of `Spliced` arrays), without punctuation

    def measure(self, value: Any) -> Measure:
        if isinstance(value, str):
            found = self._strings.get(value)
            if found is None:
                found = self._strings[value] = of_text(_encode_string(value))
            return found
        known = self._known.get(id(value))
        if known is not None:
            return known
        if isinstance(value, Composite):
            found = self._object(value)
        elif isinstance(value, CompositeList):
            found = self._array(value)
        elif isinstance(value, Embedded):
            found = self.measure(value.value).as_string + QUOTES
        else:
            found = of_text(_ENCODER.encode(value))
        self._known[id(value)] = found
        self._keep.append(value)
        return found

    def _object(self, value: Composite) -> Measure:
        """The values that share nothing in one encoder call, the others (and strings) one by one: braces, a colon
        per key and commas between, plus every key and value."""
        plain = {key: item for key, item in value.items() if not isinstance(item, _ONE_BY_ONE)}
        shared = [part for key, item in value.items() if isinstance(item, _ONE_BY_ONE) for part in (key, item)]
        if not shared:
            return of_text(_ENCODER.encode(plain))
        own = len(shared) // 2  # colons, and as many commas (one fewer when every entry is shared)
        base = of_text(_ENCODER.encode(plain)) if plain else Measure(1, 0, 0, 0)  # alone, the braces less a comma
        return base + self._sum(shared, 2 * own)

    def _array(self, value: CompositeList) -> Measure:
        """Brackets and commas between, plus every item (of a `Spliced` array, every run's items)."""
        if not isinstance(value, Spliced):
            return self._sum(value, array_punctuation(len(value)).size)
        return sum(map(self.run, value.runs), array_punctuation(len(value)))

    def run(self, items: Sequence[Any]) -> Measure:
        """Items that several arrays hold, without punctuation: measured once (and kept alive), in one encoder
        call when none of them is measured on its own."""
        found = self._runs.get(id(items))
        if found is None:
            plain = items and not any(isinstance(item, _ONE_BY_ONE) for item in items)
            found = of_text(_ENCODER.encode(items)) - array_punctuation(len(items)) if plain else self._sum(items, 0)
            self._runs[id(items)] = found
            self._keep.append(items)
        return found

    def _sum(self, parts: list[Any], punctuation: int) -> Measure:
        size, quotes, html, separators = punctuation, 0, 0, 0
        known, strings = self._known, self._strings
        for part in parts:  # what is known read here: a shared action list holds thousands of known parts
            found = strings.get(part) if isinstance(part, str) else known.get(id(part))
            if found is None:
                found = self.measure(part)
            size += found.size
            quotes += found.quotes
            html += found.html
            separators += found.separators
        return Measure(size, quotes, html, separators)
