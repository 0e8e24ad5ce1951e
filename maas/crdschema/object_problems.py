"""The public checks: everything the API server would reject (or silently prune) in an object."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .caching import compact_json, digest, memoised
from .cel_engine import CelEngine
from .core import core_schemas, split_api_version
from .crd_version import CrdVersion
from .defaults import apply_defaults, copy_json
from .errors import Problem, render_problems
from .metadata import metadata_problems
from .registry import CrdRegistry, default_registry
from .rule_walker import rule_problems
from .validators import json_problems


def validate(obj: dict, unknown_ok: Iterable[tuple[str, str]] = (), registry: CrdRegistry | None = None) -> list[str]:
    """All errors of one object; [] when valid.

    ``unknown_ok`` lists (apiVersion, kind) pairs without any schema here (e.g. cert-manager
    Certificate) that are accepted unchecked instead of reported as "no schema".
    """
    return _validated(obj, unknown_ok, registry, lambda: compact_json(obj))


def validate_measured(
    obj: dict, unknown_ok: Iterable[tuple[str, str]] = (), registry: CrdRegistry | None = None
) -> tuple[list[str], int | None]:
    """``validate``, and the bytes of the object's compact JSON (what the API server receives and stores): one
    encoding keys the cache and measures the object. No size for what is not plain JSON data."""
    text = compact_json(obj)
    return _validated(obj, unknown_ok, registry, lambda: text), None if text is None else len(text.encode())


def validate_all(
    objs: Iterable[dict], unknown_ok: Iterable[tuple[str, str]] = (), registry: CrdRegistry | None = None
) -> list[str]:
    """All errors of all objects, in order (see ``validate``)."""
    allowed = set(unknown_ok)
    return [error for obj in objs for error in validate(obj, allowed, registry)]


def _validated(
    obj: dict, unknown_ok: Iterable[tuple[str, str]], registry: CrdRegistry | None, text: Callable[[], str | None]
) -> list[str]:
    """``validate`` with the object's compact JSON (None when it is not plain JSON data) given by ``text()``."""
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return render_problems(obj, [((), "apiVersion and kind must be strings")])
    registry = registry or default_registry()
    problems = _cached_problems(obj, registry, text())
    if problems is None:
        if (api_version, kind) in set(unknown_ok):
            return []
        problems = [((), _no_schema_message(registry, api_version, kind))]
    return render_problems(obj, problems)


def _cached_problems(obj: dict, registry: CrdRegistry, text: str | None) -> list[Problem] | None:
    """``_problems`` memoised by object content: tests validate the same rendered objects many times. The key is
    the compact JSON in the object's own key order (equal objects built alike, as the plan builds them, share it;
    sorting every key cost a tenth of the check at 10,000 subscriptions, for hits that differ only in order)."""
    if text is None:  # not plain JSON data: validate (and report) without caching
        return _problems(obj, registry, plain=False)
    return memoised(registry.problem_cache, digest(text), lambda: _problems(obj, registry, plain=True))


def _problems(obj: dict, registry: CrdRegistry, plain: bool) -> list[Problem] | None:
    """Problems found with the object's CRD or core schema; None when there is neither. ``plain``: the object is
    plain JSON data (what json.dumps encodes converts to CEL in full)."""
    obj = copy_json(obj)  # never modified by validation, and tuples checked as the arrays they serialize to
    group, version = split_api_version(obj["apiVersion"])
    crd = registry.lookup(group, version, obj["kind"])
    if crd is not None:
        return _crd_problems(obj, crd, registry.engine, plain)
    core = core_schemas().validator(obj["apiVersion"], obj["kind"])
    if core is not None:
        return json_problems(core, obj) + metadata_problems(obj)
    return None


def _crd_problems(obj: dict, crd: CrdVersion, engine: CelEngine, plain: bool) -> list[Problem]:
    """Schema, metadata, CEL and list-type problems; ``obj`` is a private copy and gets defaulted in place."""
    apply_defaults(obj, crd.defaulting_schema, crd.has_defaults)
    problems = json_problems(crd.validator, obj)
    problems += json_problems(core_schemas().metadata_validator(), obj.get("metadata"), ("metadata",))
    problems += metadata_problems(obj, cluster_scoped=crd.scope == "Cluster")
    return problems + rule_problems(obj, crd, engine, plain)


def _no_schema_message(registry: CrdRegistry, api_version: str, kind: str) -> str:
    served = registry.served_versions(split_api_version(api_version)[0], kind)
    if served:
        return f"no schema for {api_version}/{kind}: the CRD serves only {', '.join(served)}"
    return f"no schema for {api_version}/{kind} (neither a CRD in {registry.directory} nor a core kind)"
