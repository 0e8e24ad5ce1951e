"""The snapshot file: a `kind: List` of the observed objects, plus what was observed under `observed:`.

    apiVersion: v1
    items: [...]                 # by apiVersion, kind, namespace, name
    kind: List
    observed:
      context: maas-dev          # server and context: where it was read (absent when unknown)
      crds: {AuthPolicy: true, LLMInferenceService: false}    # installed (served at the version read), per kind
      got: [{apiVersion, kind, name, namespace}]              # objects fetched by name: present, or absent
      listed: [{apiVersion, kind, namespace}]                 # scopes listed; no namespace: all namespaces
      server: https://api.example.com:6443

Keys are sorted, so the same snapshot always gives the same bytes. A plain `kind: List` without `observed:` (what
`kubectl get ... -o yaml` prints) is a snapshot too: every kind with at least one object counts as listed in every
namespace and as installed; nothing else was looked at. Items of other kinds are ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..config.errors import ConfigError, escaped
from ..config.stackfile import yaml_document
from .errors import ObservationError
from .snapshot import KINDS, Cluster, ObjectRef, Observed, Scope, kind_at, ref_of, thawed, trimmed
from .yaml_text import yaml_text

OBSERVED_KEYS = ("context", "crds", "got", "listed", "server")


def dump_snapshot(observed: Observed) -> str:
    """The file text of a snapshot (byte-stable)."""
    refs = sorted(observed.objects, key=lambda ref: ref.sort_key)
    document = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [thawed(observed.objects[ref]) for ref in refs],
        "observed": _observed_section(observed),
    }
    return yaml_text(document, sort_keys=True)


def _observed_section(observed: Observed) -> dict[str, Any]:
    section: dict[str, Any] = {
        "crds": dict(observed.crds),
        "got": [_entry(ref.kind, ref.namespace, ref.name) for ref in sorted(observed.got, key=lambda r: r.sort_key)],
        "listed": [_entry(s.kind, s.namespace) for s in sorted(observed.listed, key=lambda s: s.sort_key)],
    }
    if observed.cluster is not None:
        section["server"] = observed.cluster.server
        if observed.cluster.context is not None:
            section["context"] = observed.cluster.context
    return section


def _entry(kind: str, namespace: str | None, name: str | None = None) -> dict[str, str]:
    entry = {"apiVersion": KINDS[kind].api_version, "kind": kind}
    entry.update({"namespace": namespace} if namespace is not None else {})
    entry.update({"name": name} if name is not None else {})
    return entry


def load_snapshot(path: Path) -> Observed:
    """A snapshot file (ours, or a plain `kind: List`); ObservationError naming the file and the problem."""
    shown = escaped(str(path))
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ObservationError(f"cannot read the snapshot {shown}: {error.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ObservationError(f"{shown}: byte {error.start} is not UTF-8 text; save the snapshot as UTF-8") from None
    return parse_snapshot(text, str(path))


def parse_snapshot(text: str, source: str = "<snapshot>") -> Observed:
    """Read with the stack-file reader: bounded nesting and alias expansion (kubectl writes no aliases), so a
    hostile file is refused in milliseconds instead of expanding into gigabytes."""
    try:
        document = yaml_document(text, escaped(source))
    except ConfigError as error:
        raise ObservationError("; ".join(str(issue) for issue in error.issues)) from None
    try:
        return _snapshot(document)
    except ValueError as error:
        raise ObservationError(escaped(f"{source}: {error}")) from None


def _snapshot(document: Any) -> Observed:
    if not isinstance(document, dict) or document.get("kind") != "List" or document.get("apiVersion") != "v1":
        raise ValueError("not a snapshot: expected a YAML mapping with apiVersion: v1 and kind: List")
    objects = _items(document.get("items"))
    if "observed" not in document:
        return _plain_list(objects)
    section = _mapping(document["observed"], "observed")
    unknown = sorted(set(section) - set(OBSERVED_KEYS))
    if unknown:
        raise ValueError(f"observed: unknown key {unknown[0]!r}; use {', '.join(OBSERVED_KEYS)}")
    return Observed.of(
        objects,
        listed=_entries(section, "listed", named=False),
        got=_entries(section, "got", named=True),
        crds=_crds(section.get("crds")),
        cluster=_cluster(section),
    )


def _plain_list(objects: list[dict[str, Any]]) -> Observed:
    """`kubectl get -o yaml`: the kinds it holds were listed everywhere, and are installed."""
    kinds = sorted({obj["kind"] for obj in objects})
    return Observed.of(
        objects,
        listed=[Scope(kind) for kind in kinds],
        crds={kind: True for kind in kinds if not KINDS[kind].builtin},
    )


def _items(items: Any) -> list[dict[str, Any]]:
    """The items of the kinds the snapshot knows (at the version the program reads); others are left out."""
    if not isinstance(items, list):
        raise ValueError("items: must be a list of Kubernetes objects")
    kept: dict[ObjectRef, dict[str, Any]] = {}
    for index, item in enumerate(items):
        where = f"items[{index}]"
        item = _mapping(item, where)
        if not _known(item, where):
            continue
        try:
            ref = ref_of(item)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
        if ref in kept:
            raise ValueError(f"{where}: {ref.kind} {ref.namespace or ''}/{ref.name} appears twice; keep one")
        kept[ref] = _trimmed(item, f"{where}: {ref.kind} {ref.namespace or ''}/{ref.name}")
    return list(kept.values())


def _trimmed(item: dict[str, Any], where: str) -> dict[str, Any]:
    """Trimming reads the fields it drops; a file may give them any shape."""
    try:
        return trimmed(item)
    except (AttributeError, KeyError, TypeError) as error:
        raise ValueError(f"{where}: not a Kubernetes object of its kind ({error})") from None


def _known(item: Mapping[str, Any], where: str) -> bool:
    api_version, kind = item.get("apiVersion"), item.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise ValueError(f"{where}: apiVersion and kind must be strings")
    return kind in KINDS and KINDS[kind].group == api_version.rpartition("/")[0]


def _entries(section: Mapping[str, Any], key: str, named: bool) -> list[Any]:
    """`listed` (Scope) or `got` (ObjectRef) entries, each checked against KINDS."""
    entries = section.get(key, [])
    if not isinstance(entries, list):
        raise ValueError(f"observed.{key}: must be a list")
    found = []
    for index, entry in enumerate(entries):
        where = f"observed.{key}[{index}]"
        entry = _mapping(entry, where)
        fields = {"apiVersion", "kind", "namespace", *(["name"] if named else [])}
        extra = sorted(set(entry) - fields)
        if extra:
            raise ValueError(f"{where}: unknown key {extra[0]!r}; use {', '.join(sorted(fields))}")
        try:
            found.append(_entry_of(entry, named))
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    return found


def _entry_of(entry: Mapping[str, Any], named: bool) -> Scope | ObjectRef:
    kind = kind_at(entry.get("kind"), entry.get("apiVersion"))
    namespace = entry.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise ValueError("namespace must be a string")
    return ObjectRef(kind.kind, namespace, entry.get("name")) if named else Scope(kind.kind, namespace)


def _crds(value: Any) -> dict[str, bool]:
    crds = _mapping(value if value is not None else {}, "observed.crds")
    for kind, installed in crds.items():
        if str(kind) not in KINDS or not isinstance(installed, bool):
            raise ValueError(f"observed.crds.{kind}: must be a kind the snapshot knows, set to true or false")
    return dict(crds)


def _cluster(section: Mapping[str, Any]) -> Cluster | None:
    server, context = section.get("server"), section.get("context")
    if server is None:
        return None
    if not isinstance(server, str) or not (context is None or isinstance(context, str)):
        raise ValueError("observed.server and observed.context must be strings")
    return Cluster(server, context)


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: must be a mapping (got {type(value).__name__})")
    return value
