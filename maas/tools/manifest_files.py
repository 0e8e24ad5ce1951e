"""Kubernetes objects from YAML or JSON files, as `kubectl apply -f` reads them, each placed at `file:LINE`: the
line its object starts on (1-based, as editors and CI annotations count), with `:COLUMN` when another object of the
file starts on the same line (a JSON array on one line)."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..config.errors import ConfigError, escaped
from ..config.stackfile import yaml_documents

STDIN = "-"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _ManifestResolver(yaml.resolver.Resolver):
    """YAML 1.1 plain scalars as kubectl reads a manifest (`yes` is true, `0777` octal), except that an unquoted
    timestamp stays the text written (sigs.k8s.io/yaml)."""


_ManifestResolver.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.items()
}
_RESOLVER = _ManifestResolver()
_CONSTRUCTOR = yaml.constructor.SafeConstructor()
_CONSTRUCTORS = {
    "tag:yaml.org,2002:bool": _CONSTRUCTOR.construct_yaml_bool,
    "tag:yaml.org,2002:int": _CONSTRUCTOR.construct_yaml_int,
    "tag:yaml.org,2002:float": _CONSTRUCTOR.construct_yaml_float,
    "tag:yaml.org,2002:null": _CONSTRUCTOR.construct_yaml_null,
}


class UnusableInputError(Exception):
    """Input that cannot be validated at all (a missing file, broken YAML, a document that is no object)."""


def manifest_scalar(text: str) -> Any:
    """The value of an untagged plain scalar in a manifest (YAML 1.1, timestamps kept as text). An integer Python
    will not convert (more than 4300 digits) stays text, as Go's YAML keeps a number it cannot parse."""
    construct = _CONSTRUCTORS.get(_RESOLVER.resolve(yaml.ScalarNode, text, (True, False)))
    if construct is None:
        return text
    try:
        return construct(yaml.ScalarNode(None, text))
    except ValueError:
        return text


@dataclass(frozen=True)
class Place:
    """Where an object starts in its file: `file:LINE`, `file:LINE:COLUMN` when the line starts several objects.
    Without a known line (never for text the parser read), the document's number counted from 1."""

    file: str  # escaped, or <stdin>
    line: int | None
    column: int | None = None
    document: int = 1

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.file} (document {self.document})"
        return f"{self.file}:{self.line}" + (f":{self.column}" if self.column is not None else "")


def documents(name: str) -> list[tuple[Place, dict[str, Any]]]:
    """The objects of one file with the place each starts at; a document may be an object, a `List` (items) or a
    JSON array. Read with the program's bounded YAML reader (`config/stackfile.py`: nesting, alias expansion and
    merge chains bounded, duplicate keys refused), with kubectl's scalars."""
    where = "<stdin>" if name == STDIN else escaped(name)
    text = _read(name, where)
    try:
        docs = yaml_documents(text, where, manifest_scalar)
    except ConfigError as error:
        raise UnusableInputError("; ".join(str(issue) for issue in error.issues)) from None
    starts = _starts(text)
    if len(starts) != len(docs):  # not expected: the same text was parsed; places then count documents
        starts = [_Starts() for _ in docs]
    found = [
        (place, body)
        for number, (doc, start) in enumerate(zip(docs, starts, strict=True), start=1)
        for place, body in _objects_of(where, number, doc, start)
    ]
    found = _with_columns(found)
    for place, body in found:
        if not isinstance(body, dict):
            raise UnusableInputError(f"{place}: not a Kubernetes object (a mapping with apiVersion and kind)")
    return found


@dataclass
class _Starts:
    """Where one document's root node starts, and its items: of a root sequence, or of a root mapping's `items`
    (a List). (line, column), both 1-based."""

    root: tuple[int, int] | None = None
    items: list[tuple[int, int]] | None = None
    list_items: list[tuple[int, int]] | None = None


def _starts(text: str) -> list[_Starts]:
    """Each document's start positions, from the parser's events (the text was read whole before, so it is valid
    and bounded). Only the top levels are looked at; below them an event only moves the depth (the common case,
    kept cheap: this pass adds about a quarter to reading a large file)."""
    found: list[_Starts] = []
    depth = 0
    children = 0  # nodes seen at depth 1 of a root mapping: keys at even counts, values at odd ones
    items_key = in_items = False
    for event in yaml.parse(text, Loader=_LOADER):
        kind = type(event)
        if depth > 2 or (depth == 2 and not in_items):
            if kind in _OPENS:
                depth += 1
            elif kind in _CLOSES:
                depth -= 1
                in_items = in_items and depth != 1
            continue
        if kind is yaml.DocumentStartEvent:
            found.append(_Starts())
            children, items_key, in_items = 0, False, False
        elif kind in _CLOSES:
            depth -= 1
            in_items = in_items and depth != 1
        elif kind in _NODES:
            current = found[-1]
            mark = (event.start_mark.line + 1, event.start_mark.column + 1)
            if depth == 0:
                current.root = mark
                if kind is yaml.SequenceStartEvent:
                    current.items = []
            elif depth == 1 and current.items is not None:
                current.items.append(mark)
            elif depth == 1:
                if children % 2 == 0:
                    items_key = kind is yaml.ScalarEvent and event.value == "items"
                elif items_key and kind is yaml.SequenceStartEvent:
                    current.list_items, in_items = [], True
                children += 1
            elif current.list_items is not None:  # depth 2, in a List's items
                current.list_items.append(mark)
            if kind in _OPENS:
                depth += 1
    return found


_OPENS = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
_CLOSES = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
_NODES = (yaml.ScalarEvent, yaml.AliasEvent, *_OPENS)


def _objects_of(where: str, number: int, doc: Any, start: _Starts) -> Iterator[tuple[Place, Any]]:
    if doc is None:
        return  # an empty document, e.g. after a trailing `---`
    if isinstance(doc, list):
        items, marks = doc, start.items
    else:
        items, marks = _list_items(doc), start.list_items
    if items is None:
        yield _place(where, number, start.root), doc
        return
    if marks is None or len(marks) != len(items):  # e.g. `items` taken in by a merge key: the List's own line
        marks = [start.root] * len(items)
    for mark, item in zip(marks, items, strict=True):
        yield _place(where, number, mark), item


def _place(where: str, number: int, mark: tuple[int, int] | None) -> Place:
    return Place(where, mark[0] if mark else None, mark[1] if mark else None, number)


def _with_columns(found: list[tuple[Place, Any]]) -> list[tuple[Place, Any]]:
    """Columns kept only where they tell two objects apart: on a line that starts more than one."""
    starts = Counter(place.line for place, _ in found if place.line is not None)
    shared = {line for line, count in starts.items() if count > 1}
    return [
        (place if place.line in shared else Place(place.file, place.line, None, place.document), body)
        for place, body in found
    ]


def _list_items(doc: Any) -> list[Any] | None:
    """The items of a `kind: List` (`kubectl get -o yaml`) or a typed `{Kind}List`, else None."""
    if not isinstance(doc, dict) or not str(doc.get("kind", "")).endswith("List") or "items" not in doc:
        return None
    items = doc["items"]
    return items if isinstance(items, list) else None


def _read(name: str, where: str) -> str:
    """The file, or standard input, as UTF-8 text: read as bytes, so the terminal's encoding does not matter."""
    try:
        data = _stdin_bytes() if name == STDIN else Path(name).read_bytes()
        return data.decode("utf-8")
    except UnicodeError as error:
        position = f" (byte {error.start})" if isinstance(error, UnicodeDecodeError) else ""
        raise UnusableInputError(f"{where}: not UTF-8 text{position}; give YAML or JSON files") from None
    except OSError as error:
        raise UnusableInputError(f"{where}: cannot read it ({error.strerror}); check the path") from None


def _stdin_bytes() -> bytes:
    """Standard input's bytes. A replacement without a byte buffer (a test's StringIO) gives text, whose
    undecodable bytes Python keeps as lone surrogates (`surrogateescape`): they are turned back into those bytes."""
    buffer = getattr(sys.stdin, "buffer", None)
    return buffer.read() if buffer is not None else sys.stdin.read().encode("utf-8", "surrogateescape")


def yaml_message(where: str, error: yaml.MarkedYAMLError) -> str:
    """`where:line:column: not valid YAML: ...`, PyYAML's message on one line."""
    mark = error.problem_mark or error.context_mark
    position = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
    problem = "; ".join(part for part in (error.context, error.problem) if part)
    return f"{where}{position}: not valid YAML: {problem}"


def shown(path: Path | str) -> str:
    """A path in a message: quoted, control characters escaped."""
    return f"'{escaped(str(path))}'"
