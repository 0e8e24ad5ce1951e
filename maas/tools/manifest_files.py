"""Kubernetes objects from YAML or JSON files, as `kubectl apply -f` reads them, each labelled `file:doc-index`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

from ..config.errors import escaped

STDIN = "-"
_BASE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _ManifestLoader(_BASE_LOADER):  # type: ignore[misc, valid-type]
    """Safe YAML as kubectl reads a manifest: an unquoted timestamp stays the text written (sigs.k8s.io/yaml)."""


_ManifestLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag != _TIMESTAMP]
    for first, resolvers in _BASE_LOADER.yaml_implicit_resolvers.items()
}


class UnusableInputError(Exception):
    """Input that cannot be validated at all (a missing file, broken YAML, a document that is no object)."""


def documents(name: str) -> list[tuple[str, dict[str, Any]]]:
    """The objects of one file as (`file:doc-index`, object); items of a `List` or a JSON array as `file:doc[i]`."""
    where = "<stdin>" if name == STDIN else escaped(name)
    text = _read(name, where)
    try:
        docs = list(yaml.load_all(text, Loader=_ManifestLoader))
    except yaml.MarkedYAMLError as error:
        raise UnusableInputError(yaml_message(where, error)) from None
    except yaml.YAMLError as error:
        raise UnusableInputError(f"{where}: not YAML ({error})") from None
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
    try:
        return sys.stdin.read() if name == STDIN else Path(name).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UnusableInputError(f"{where}: not UTF-8 text; give YAML or JSON files") from None
    except OSError as error:
        raise UnusableInputError(f"{where}: cannot read it ({error.strerror}); check the path") from None


def yaml_message(where: str, error: yaml.MarkedYAMLError) -> str:
    """`where:line:column: not valid YAML: ...`, PyYAML's message on one line."""
    mark = error.problem_mark or error.context_mark
    position = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
    problem = "; ".join(part for part in (error.context, error.problem) if part)
    return f"{where}{position}: not valid YAML: {problem}"


def shown(path: Path | str) -> str:
    """A path in a message: quoted, control characters escaped."""
    return f"'{escaped(str(path))}'"
