"""The schema of a kind, as much of it as a server-side apply reads: list types, map types, defaults.

Custom resources: the served version of the CRD in `crds/` (or `$MAAS_CRDS_DIR`), via `maas.crdschema`. Built-in
kinds: the OpenAPI definitions kubernetes-validate ships for the pinned Kubernetes version, which carry
`x-kubernetes-list-type`, `x-kubernetes-list-map-keys` and `x-kubernetes-map-type` as the API server's own
OpenAPI does (not its defaults, which live in Go code). `metadata` is read with the ObjectMeta definition for
every kind (a CRD's schema says only `type: object` there). A kind without a schema is merged as the API server
merges a schema-less object: maps field by field, lists whole.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ...crdschema import KUBERNETES_VERSION, CrdVersion, default_registry
from ...crdschema.defaults import apply_defaults

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_EMPTY: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Node:
    """One node of a schema; `definitions` resolves the `$ref`s of the built-in kinds' definitions."""

    schema: Mapping[str, Any]
    definitions: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    ref: str | None = None  # the definition this node is (`...Quantity`), when it was reached through a `$ref`

    def resolved(self) -> Node:
        node = self
        while isinstance(node.schema.get("$ref"), str):
            name = node.schema["$ref"].rpartition("/")[2]
            node = Node(node.definitions.get(name, _EMPTY), node.definitions, name)
        return node

    def child(self, key: str) -> Node:
        node = self.resolved()
        properties = node.schema.get("properties")
        if isinstance(properties, Mapping) and isinstance(properties.get(key), Mapping):
            return Node(properties[key], node.definitions).resolved()
        additional = node.schema.get("additionalProperties")
        if isinstance(additional, Mapping):
            return Node(additional, node.definitions).resolved()
        return Node(_EMPTY, node.definitions)

    def items(self) -> Node:
        node = self.resolved()
        items = node.schema.get("items")
        return Node(items, node.definitions).resolved() if isinstance(items, Mapping) else Node(_EMPTY)

    @property
    def list_type(self) -> str:
        """`atomic` (the default of every list without one), `set` or `map`."""
        value = self.resolved().schema.get("x-kubernetes-list-type")
        return value if value in ("set", "map") else "atomic"

    @property
    def map_keys(self) -> tuple[str, ...]:
        keys = self.resolved().schema.get("x-kubernetes-list-map-keys")
        return tuple(key for key in keys if isinstance(key, str)) if isinstance(keys, list) else ()

    @property
    def atomic_map(self) -> bool:
        return self.resolved().schema.get("x-kubernetes-map-type") == "atomic"

    @property
    def is_quantity(self) -> bool:
        return self.resolved().ref == QUANTITY


@dataclass(frozen=True)
class KindSchema:
    """The root node of one kind at one version, and its CRD (for defaulting) when it is a custom resource."""

    root: Node
    crd: CrdVersion | None = None
    known: bool = True  # False: no schema was found; merged as a schema-less object

    def child(self, key: str) -> Node:
        if key == "metadata":
            definitions = _core()[0]
            return Node({"$ref": f"#/$defs/{OBJECT_META}"}, definitions).resolved()
        return self.root.child(key)

    def defaulted(self, body: dict[str, Any]) -> dict[str, Any]:
        """`body` (a plain copy, changed in place) with the CRD's defaults filled in, as the API server stores it."""
        if self.crd is not None:
            apply_defaults(body, self.crd.defaulting_schema, self.crd.has_defaults)
        return body


@functools.cache
def kind_schema(api_version: str, kind: str) -> KindSchema:
    group, _, version = api_version.rpartition("/")
    definitions, by_kind = _core()
    if (group, version, kind) in by_kind:
        return KindSchema(Node({"$ref": f"#/$defs/{by_kind[(group, version, kind)]}"}, definitions).resolved())
    crd = default_registry().lookup(group, version, kind) if group else None
    if crd is not None:
        return KindSchema(Node(crd.schema), crd)
    return KindSchema(Node(_EMPTY), known=False)


@functools.cache
def _core() -> tuple[Mapping[str, Any], Mapping[tuple[str, str, str], str]]:
    """The built-in kinds' definitions, and the definition of each (group, version, kind)."""
    root = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema"
    text = (root / f"v{KUBERNETES_VERSION}-local-strict" / "_definitions.json").read_text(encoding="utf-8")
    definitions = json.loads(text).get("$defs", {})
    by_kind = {}
    for name, definition in definitions.items():
        for gvk in definition.get("x-kubernetes-group-version-kind", ()):
            key = (gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", ""))
            by_kind.setdefault(key, name)
    return definitions, by_kind
