"""What the API server rejects in metadata (apimachinery's ObjectMeta validation) that JSON schemas cannot express.

Every pattern is matched whole (``fullmatch``: with ``re.match``, ``$`` also matches before a trailing newline) and
spelled with explicit ASCII classes, as Go's regexp reads them (Python's ``\\d``, ``\\w`` and case folding admit
non-ASCII characters).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .core import split_api_version
from .errors import Problem

NameCheck = Callable[[str], str | None]

_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
_QUALIFIED_NAME_MAX = 63
_QUALIFIED_RULE = (
    "an optional DNS-1123 subdomain prefix (at most 253 characters) and '/', then 1-63 alphanumerics, '-', '_' "
    "or '.', starting and ending alphanumeric (e.g. 'example.com/my-name')"
)
_LABEL_VALUE_RULE = "at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric, or empty"
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024  # apimachinery TotalAnnotationSizeLimitB
CRONJOB_NAME_MAX = 52  # 63 - 11: the CronJob controller appends "-<timestamp>" to the names of its Jobs
_RBAC_KINDS = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
_MEMO_SIZE = 4096  # label and annotation keys and values seen, with their answers
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


@dataclass(frozen=True)
class _NameFormat:
    """A name format of apimachinery's ``validation`` package; called with a name, it returns the problem or None."""

    pattern: re.Pattern[str]
    max_length: int
    description: str

    @property
    def message(self) -> str:
        return f"must be a {self.description}; at most {self.max_length} characters"

    def __call__(self, name: str) -> str | None:
        return None if len(name) <= self.max_length and self.pattern.fullmatch(name) else self.message


_dns_label = _NameFormat(
    re.compile(_DNS_LABEL), 63, "DNS-1123 label (lower-case alphanumerics or '-', starting and ending alphanumeric)"
)
_dns_1035_label = _NameFormat(
    re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?"),
    63,
    "DNS-1035 label (lower-case alphanumerics or '-', starting with a letter, ending alphanumeric)",
)
_dns_subdomain = _NameFormat(
    re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*"),
    253,
    "DNS-1123 subdomain (lower-case alphanumerics, '-' or '.', starting and ending alphanumeric)",
)


def _cronjob_name(name: str) -> str | None:
    if len(name) > CRONJOB_NAME_MAX:
        return f"must be at most {CRONJOB_NAME_MAX} characters (the CronJob controller appends 11 to its Jobs' names)"
    return _dns_subdomain(name)


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
            problems.append((("metadata", "namespace"), f"{namespace!r} {_dns_label.message}"))
        elif cluster_scoped:
            problems.append((("metadata", "namespace"), "not allowed on a cluster-scoped kind"))
    return problems + _label_problems(meta.get("labels")) + _annotation_problems(meta.get("annotations"))


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
    if group == "batch" and kind == "CronJob":
        return _cronjob_name
    return _dns_subdomain


def _label_problems(labels: Any) -> list[Problem]:
    """apimachinery ValidateLabels: every key a qualified name, every value a label value."""
    if not isinstance(labels, dict):
        return []
    problems = []
    for key, value in labels.items():
        path = ("metadata", "labels", key)
        if isinstance(key, str) and (problem := _qualified_name_problem(key)):
            problems.append((path, f"key {problem}"))
        if problem := _label_value_problem(value):
            problems.append((path, problem))
    return problems


def _annotation_problems(annotations: Any) -> list[Problem]:
    """apimachinery ValidateAnnotations: keys are qualified names (case does not matter), at most 256 KiB in all.

    The API server lower-cases keys with Go's ``strings.ToLower``, which also folds a few non-ASCII letters (the
    Kelvin sign) into ASCII; only ASCII letters are folded here, so such a key is refused.
    """
    if not isinstance(annotations, dict):
        return []
    problems = []
    for key, value in annotations.items():
        path = ("metadata", "annotations", key)
        if isinstance(key, str) and (problem := _qualified_name_problem(key.translate(_ASCII_LOWER))):
            problems.append((path, f"key {problem}"))
        if not isinstance(value, str):
            problems.append((path, _not_a_string(value)))
    size = sum(_byte_length(k) + _byte_length(v) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        problems.append(
            (
                ("metadata", "annotations"),
                f"annotations total {size} bytes (keys plus values); the API server allows at most "
                f"{TOTAL_ANNOTATION_SIZE_LIMIT} bytes (256 KiB)",
            )
        )
    return problems


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _qualified_name_problem(key: str) -> str | None:
    """apimachinery IsQualifiedName: ``[prefix/]name``; memoised, as every object repeats the same keys."""
    prefix, slash, name = key.rpartition("/")
    if "/" in prefix:
        reason = "more than one '/'"
    elif slash and not prefix:
        reason = "empty prefix"
    elif slash and _dns_subdomain(prefix):
        reason = "the prefix is not a DNS-1123 subdomain"
    elif not name:
        reason = "empty name"
    elif len(name) > _QUALIFIED_NAME_MAX:
        reason = f"the name part has {len(name)} characters"
    elif not _QUALIFIED_NAME.fullmatch(name):
        reason = "invalid characters in the name"
    else:
        return None
    return f"is not a qualified name ({reason}): {_QUALIFIED_RULE}"


def _label_value_problem(value: Any) -> str | None:
    """apimachinery IsValidLabelValue."""
    if not isinstance(value, str):
        return _not_a_string(value)
    return _label_text_problem(value)


@functools.lru_cache(maxsize=_MEMO_SIZE)
def _label_text_problem(value: str) -> str | None:
    if not value or (len(value) <= _QUALIFIED_NAME_MAX and _QUALIFIED_NAME.fullmatch(value)):
        return None
    return f"value {value!r} must be a label value: {_LABEL_VALUE_RULE}"


def _not_a_string(value: Any) -> str:
    """The ObjectMeta JSON schema admits null here; the API server's map[string]string does not keep it."""
    return f"value {value!r} must be a string"


def _byte_length(value: Any) -> int:
    """Go's ``len`` of a string: its UTF-8 bytes."""
    return len(value.encode()) if isinstance(value, str) else 0
