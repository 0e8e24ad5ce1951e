"""What the API server rejects in metadata: name and namespace formats, label and annotation syntax."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .core import split_api_version
from .errors import Problem

NameCheck = Callable[[str], str | None]

_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_RBAC_KINDS = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}


def _name_format(pattern: str, max_length: int, description: str) -> NameCheck:
    compiled = re.compile(pattern)
    return lambda name: None if len(name) <= max_length and compiled.match(name) else f"must be a {description}"


_dns_label = _name_format(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", 63, "DNS-1123 label")
_dns_1035_label = _name_format(r"^[a-z]([-a-z0-9]*[a-z0-9])?$", 63, "DNS-1035 label")
_dns_subdomain = _name_format(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$", 253, "DNS-1123 subdomain"
)


def _path_segment(name: str) -> str | None:
    bad = name in (".", "..") or "/" in name or "%" in name
    return "must not be '.' or '..' nor contain '/' or '%'" if bad else None


def metadata_problems(obj: dict, cluster_scoped: bool | None = None) -> list[Problem]:
    """Problems of ``obj["metadata"]`` that its JSON schema cannot express."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        return [(("metadata",), "metadata must be an object with a name")]
    problems = _name_problems(meta, obj.get("apiVersion", ""), obj.get("kind", ""))
    namespace = meta.get("namespace")
    if namespace is not None:
        if not isinstance(namespace, str) or _dns_label(namespace):
            problems.append((("metadata", "namespace"), f"{namespace!r} must be a DNS-1123 label"))
        elif cluster_scoped:
            problems.append((("metadata", "namespace"), "not allowed on a cluster-scoped kind"))
    problems += _map_problems(meta, "labels", _label_value_problem)
    problems += _map_problems(meta, "annotations", _annotation_value_problem)
    return problems


def _name_problems(meta: dict, api_version: str, kind: str) -> list[Problem]:
    name = meta.get("name")
    if name is None and isinstance(meta.get("generateName"), str):
        return []
    if not isinstance(name, str) or not name:
        return [(("metadata", "name"), "name is required and must be a non-empty string")]
    problem = _name_rule(api_version, kind)(name)
    return [(("metadata", "name"), f"{name!r} {problem}")] if problem else []


def _name_rule(api_version: str, kind: str) -> NameCheck:
    """The API server's name format per kind (most kinds: DNS-1123 subdomain)."""
    group, _ = split_api_version(api_version)
    if kind in _RBAC_KINDS and group == "rbac.authorization.k8s.io":
        return _path_segment
    if group == "" and kind == "Namespace":
        return _dns_label
    if group == "" and kind == "Service":
        return _dns_1035_label
    return _dns_subdomain


def _map_problems(meta: dict, field_name: str, value_check: Callable[[Any], str | None]) -> list[Problem]:
    entries = meta.get(field_name)
    if not isinstance(entries, dict):
        return []
    problems = []
    for key, value in entries.items():
        path = ("metadata", field_name, key)
        for problem in (_qualified_key_problem(str(key)), value_check(value)):
            if problem:
                problems.append((path, problem))
    return problems


def _qualified_key_problem(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if prefix and _dns_subdomain(prefix):
        return f"key {key!r}: prefix must be a DNS-1123 subdomain"
    if len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return f"key {key!r}: name part must be 1-63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric"
    return None


def _label_value_problem(value: Any) -> str | None:
    if not isinstance(value, str):
        return _annotation_value_problem(value)
    if value and (len(value) > 63 or not _QUALIFIED_NAME.match(value)):
        return f"value {value!r} must be at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric"
    return None


def _annotation_value_problem(value: Any) -> str | None:
    return None if isinstance(value, str) else f"value {value!r} must be a string"
