"""Kubernetes objects from YAML or JSON files, as `kubectl apply -f` reads them, each labelled `file:doc-index`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from ..config.errors import ConfigError, escaped
from ..config.stackfile import yaml_documents

STDIN = "-"
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


def documents(name: str) -> list[tuple[str, dict[str, Any]]]:
    """The objects of one file as (`file:doc-index`, object); items of a `List` or a JSON array as `file:doc[i]`.
    Read with the program's bounded YAML reader (`config/stackfile.py`: nesting, alias expansion and merge chains
    bounded, duplicate keys refused), with kubectl's scalars."""
    where = "<stdin>" if name == STDIN else escaped(name)
    text = _read(name, where)
    try:
        docs = yaml_documents(text, where, manifest_scalar)
    except ConfigError as error:
        raise UnusableInputError("; ".join(str(issue) for issue in error.issues)) from None
    found = []
    for index, doc in enumerate(docs):
        for label, body in _objects_of(f"{where}:{index}", doc):
            if not isinstance(body, dict):
                raise UnusableInputError(f"{label}: not a Kubernetes object (a mapping with apiVersion and kind)")
            found.append((label, body))
    return found


def _objects_of(label: str, doc: Any) -> list[tuple[str, Any]]:
    if doc is None:
        return []  # an empty document, e.g. after a trailing `---`
    items = doc if isinstance(doc, list) else _list_items(doc)
    if items is None:
        return [(label, doc)]
    return [(f"{label}[{index}]", item) for index, item in enumerate(items)]


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
