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
    """The CRD folder: ``$MAAS_CRDS_DIR``, else ``<repo root>/../shared/crds`` (the CI layout)."""
    override = os.environ.get(CRDS_DIR_ENV)
    if override:
        return Path(override)
    return _REPO_ROOT.parent / "shared" / "crds"


def crds_available() -> bool:
    """Whether the CRD folder exists and holds CRD files, so callers can skip instead of failing."""
    directory = crds_dir()
    return directory.is_dir() and any(directory.glob("*.yaml"))


class CrdRegistry:
    """CRDs of a folder, indexed by (group, version, kind) for every served version.

    Files are parsed lazily per API group (from the ``<group>_<plural>.yaml`` naming convention), so
    validating gateway objects never pays for the 2.2 MB LLMInferenceService CRD.
    """

    def __init__(self, directory: Path) -> None:
        if not directory.is_dir():
            raise FileNotFoundError(f"CRD folder {directory} not found (set {CRDS_DIR_ENV})")
        self.directory = directory
        self.engine = CelEngine()
        self.problem_cache: dict[bytes, list[Problem] | None] = {}
        self._versions: dict[tuple[str, str, str], CrdVersion] = {}
        self._served: dict[tuple[str, str], list[str]] = {}
        self._unloaded: dict[str, list[Path]] = {}
        for path in sorted(directory.glob("*.yaml")):
            group = path.name.split("_", 1)[0] if "_" in path.name else ""
            self._unloaded.setdefault(group, []).append(path)
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
                if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                    self._add_crd(doc)

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


@functools.cache
def _registry_for(directory: str) -> CrdRegistry:
    return CrdRegistry(Path(directory))


def default_registry() -> CrdRegistry:
    """The registry of ``crds_dir()``, loaded once per process and shared."""
    return _registry_for(str(crds_dir()))
