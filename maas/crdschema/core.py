"""Validators for core Kubernetes kinds, from kubernetes-validate's strict JSON schemas."""

from __future__ import annotations

import functools
import importlib.resources
import json
from typing import Any

from referencing import Registry, Resource

from .validators import CoreJsonValidator

KUBERNETES_VERSION = "1.37.0"  # newest schema set shipped by kubernetes-validate 1.37.0

_OBJECT_META = ("meta/v1", "ObjectMeta")


class CoreSchemas:
    """One cached validator per kind.

    The package's ``validate()`` stops at the first error and re-reads the 1.8 MB definitions file on
    every call, so its schema files are used directly.
    """

    def __init__(self, version: str = KUBERNETES_VERSION) -> None:
        root = importlib.resources.files("kubernetes_validate") / "kubernetes-json-schema"
        self._dir = root / f"v{version}-local-strict"
        if not self._dir.is_dir():
            raise FileNotFoundError(f"kubernetes-validate has no schemas for Kubernetes {version}")
        definitions = json.loads((self._dir / "_definitions.json").read_text(encoding="utf-8"))
        self._registry = Resource.from_contents(definitions) @ Registry()
        self._validators: dict[tuple[str, str], Any] = {}

    def validator(self, api_version: str, kind: str) -> Any | None:
        """Validator for a core (apiVersion, kind), or None when it is not a core kind."""
        key = (api_version, kind)
        if key not in self._validators:
            self._validators[key] = self._build(api_version, kind)
        return self._validators[key]

    def metadata_validator(self) -> Any:
        """ObjectMeta (strict), to check custom resources' metadata like the API server does."""
        return self.validator(*_OBJECT_META)

    def _build(self, api_version: str, kind: str) -> Any | None:
        if (api_version, kind) == _OBJECT_META:
            schema = {
                "$id": "https://kubernetes.io/api/objectmeta",
                "$ref": "/api/_definitions.json#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            }
            return CoreJsonValidator(schema, registry=self._registry)
        group, version = split_api_version(api_version)
        if not _is_core_group(group):
            return None
        short = group.split(".", 1)[0]
        path = self._dir / f"{kind.lower()}-{short + '-' if short else ''}{version}.json"
        if not path.is_file():
            return None
        schema = json.loads(path.read_text(encoding="utf-8"))
        gvks = schema.get("x-kubernetes-group-version-kind", [])
        if {"group": group, "version": version, "kind": kind} not in gvks:
            return None  # a sub-type file (e.g. Affinity) or another group with the same short name
        return CoreJsonValidator(schema, registry=self._registry)


def split_api_version(api_version: str) -> tuple[str, str]:
    """``group/version`` -> (group, version); the core group is ``""``."""
    group, _, version = api_version.rpartition("/")
    return group, version


def _is_core_group(group: str) -> bool:
    return group == "" or "." not in group or group.endswith(".k8s.io")


@functools.cache
def core_schemas() -> CoreSchemas:
    """The shared CoreSchemas for the pinned Kubernetes version."""
    return CoreSchemas()
