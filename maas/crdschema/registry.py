"""Finding the CRD folder and loading its CRDs, indexed by what they serve."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path

import yaml

from .cel_engine import CelEngine, UnsupportedRuleError
from .crd_version import CrdVersion
from .errors import Problem
from .rules import Rule

CRDS_DIR_ENV = "MAAS_CRDS_DIR"

_REPO_ROOT = Path(__file__).resolve().parents[2]  # parent of the maas package
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def crds_dir() -> Path:
    """The CRD folder: ``$MAAS_CRDS_DIR`` (e.g. a cluster's own CRDs), else the copy vendored in ``<repo root>/crds``.

    The vendored folder sits beside the package, which an editable install (``pip install -e .``) reads in place.
    """
    override = os.environ.get(CRDS_DIR_ENV)
    if override:
        return Path(override)
    return _REPO_ROOT / "crds"


class CrdRegistry:
    """CRDs of a folder, indexed by (group, version, kind) for every served version.

    Files are parsed lazily per API group (from the ``<group>_<plural>.yaml`` naming convention), so
    validating gateway objects never pays for the 2.2 MB LLMInferenceService CRD. Files named otherwise (a CRD
    group always has a dot, so ``crds.yaml`` or ``my_crds.yaml`` do not name one) are parsed up front; a file may
    hold several CRDs, also as a ``List`` (``kubectl get crd -o yaml``).
    """

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise FileNotFoundError(f"CRD folder {directory} not found (set {CRDS_DIR_ENV})")
        self.directory = directory
        self.engine = CelEngine()
        self.problem_cache: dict[bytes, list[Problem] | None] = {}
        # (group, version, kind) -> whether its status writes are checked on the status alone (`status_write`)
        self.status_alone: dict[tuple[str, str, str], bool] = {}
        self._versions: dict[tuple[str, str, str], CrdVersion] = {}
        self._served: dict[tuple[str, str], list[str]] = {}
        self._unloaded: dict[str, list[Path]] = {}
        for path in sorted(directory.glob("*.yaml")):
            self._unloaded.setdefault(_file_group(path), []).append(path)
        for path in self._unloaded.pop("", []):
            self._load_file(path)

    def lookup(self, group: str, version: str, kind: str) -> CrdVersion | None:
        """The served CRD version for (group, version, kind), or None."""
        self._load_group(group)
        return self._versions.get((group, version, kind))

    def served_versions(self, group: str, kind: str) -> list[str]:
        """Versions the CRD of (group, kind) serves; empty when there is no such CRD."""
        self._load_group(group)
        return list(self._served.get((group, kind), []))

    def all_versions(self) -> list[CrdVersion]:
        """Every served CRD version in the folder (parses all files)."""
        for group in list(self._unloaded):
            self._load_group(group)
        return list(self._versions.values())

    def unsupported_rules(self, kinds: Iterable[tuple[str, str]] | None = None) -> list[str]:
        """Rules (of the given (apiVersion, kind)s, default all) that cel-python cannot run here."""
        wanted = set(kinds) if kinds is not None else None
        problems = []
        for crd in self.all_versions():
            if wanted is not None and (f"{crd.group}/{crd.version}", crd.kind) not in wanted:
                continue
            for path, rule in crd.rules():
                problems.extend(self._rule_problem(crd, path, rule))
        return problems

    def _rule_problem(self, crd: CrdVersion, path: str, rule: Rule) -> list[str]:
        if rule.is_transition:
            return []
        try:
            self.engine.compiled(rule.rule)
        except UnsupportedRuleError as exc:
            where = f"{crd.kind} {crd.group}/{crd.version} {path}"
            return [f"{where}: cannot evaluate rule {rule.rule!r}: {exc}"]
        return []

    def _load_group(self, group: str) -> None:
        for path in self._unloaded.pop(group, []):
            self._load_file(path)

    def _load_file(self, path: Path) -> None:
        with path.open(encoding="utf-8") as stream:
            for doc in yaml.load_all(stream, Loader=_YAML_LOADER):
                for crd in _crds_in(doc):
                    self._add_crd(crd)

    def _add_crd(self, crd: dict) -> None:
        spec = crd["spec"]
        group, kind = spec["group"], spec["names"]["kind"]
        for version in spec["versions"]:
            if not version.get("served", True):
                continue
            schema = version.get("schema", {}).get("openAPIV3Schema", {})
            self._versions[(group, version["name"], kind)] = CrdVersion(
                group, version["name"], kind, spec.get("scope", "Namespaced"), schema
            )
            self._served.setdefault((group, kind), []).append(version["name"])


def _file_group(path: Path) -> str:
    """The API group a ``<group>_<plural>.yaml`` file name announces; "" when the name follows no such convention."""
    prefix, separator, _ = path.name.partition("_")
    return prefix if separator and "." in prefix else ""


def _crds_in(doc: object) -> list[dict]:
    """The CRDs of one YAML document: a CRD itself, or the items of a List."""
    if not isinstance(doc, dict):
        return []
    if doc.get("kind") == "CustomResourceDefinition":
        return [doc]
    if doc.get("kind") in ("List", "CustomResourceDefinitionList"):
        items = doc.get("items") or []
        return [item for item in items if isinstance(item, dict) and item.get("kind") == "CustomResourceDefinition"]
    return []


@functools.cache
def _registry_for(directory: str) -> CrdRegistry:
    return CrdRegistry(Path(directory))


def default_registry() -> CrdRegistry:
    """The registry of ``crds_dir()``, loaded once per process and shared."""
    return _registry_for(str(crds_dir()))
