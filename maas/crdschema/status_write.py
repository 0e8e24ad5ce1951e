"""The problems a status write adds to its object, found on the status alone where that is exact.

A status write is checked on the object as stored (the object plus this status), minus what the object alone
already has. Validating the whole stored object again costs as much as the object itself, for problems that can only
differ below ``status``: unless the CRD's root could make them depend on the status. It cannot when its JSON schema
checks no more than the type, properties, required and unknown fields of the root, and no root rule reads ``status``.
"""

from __future__ import annotations

import json
from typing import Any

from .caching import compact_json, digest, memoised
from .cel_engine import CelEngine, UnsupportedRuleError
from .core import split_api_version
from .crd_version import CrdVersion
from .defaults import apply_defaults, copy_json
from .errors import Problem, render_problems
from .registry import CrdRegistry
from .rule_walker import node_rule_problems
from .validators import json_problems

_PLAIN_ROOT_KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties"})
_STATUS = "status"


def added_status_problems(base: dict, status: Any, registry: CrdRegistry) -> list[str] | None:
    """The problems of ``{**base, "status": status}`` that ``base`` (without a status) does not have, as ``validate``
    words them; None when they cannot be found on the status alone (then validate both and compare)."""
    return added_status_problems_measured(base, status, registry)[0]


def added_status_problems_measured(
    base: dict, status: Any, registry: CrdRegistry
) -> tuple[list[str] | None, int | None]:
    """``added_status_problems``, and the bytes of the status's compact JSON (None when it is not plain JSON data):
    one encoding keys the cache and measures the status."""
    text = compact_json(status)
    return _added_problems(base, status, registry, text), None if text is None else len(text.encode())


def _added_problems(base: dict, status: Any, registry: CrdRegistry, text: str | None) -> list[str] | None:
    """``added_status_problems`` with the status's compact JSON (None when it is not plain JSON data: root rules
    would fail to convert the stored object)."""
    crd = _crd_of(base, registry)
    if crd is None or text is None or not isinstance(status, dict) or not _splittable(crd, registry):
        return None
    key = digest(f"{json.dumps([_STATUS, base['apiVersion'], base['kind']])}{text}")
    problems = memoised(registry.problem_cache, key, lambda: _status_problems(status, crd, registry.engine))
    return render_problems({**base, _STATUS: status}, problems)


def _crd_of(base: dict, registry: CrdRegistry) -> CrdVersion | None:
    api_version, kind = base.get("apiVersion"), base.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return None
    group, version = split_api_version(api_version)
    return registry.lookup(group, version, kind)


def _status_problems(status: dict, crd: CrdVersion, engine: CelEngine) -> list[Problem]:
    """What ``_crd_problems`` finds below ``status`` in the stored object: defaulted, schema, rules and list types."""
    status = copy_json(status)
    schema = crd.schema["properties"][_STATUS]
    apply_defaults(status, schema, crd.has_defaults)
    problems = json_problems(crd.status_validator, status, (_STATUS,))
    return problems + node_rule_problems(status, schema, (_STATUS,), crd, engine)


def _splittable(crd: CrdVersion, registry: CrdRegistry) -> bool:
    """Decided once per CRD version of the registry."""
    key = (crd.group, crd.version, crd.kind)
    if key not in registry.status_alone:
        registry.status_alone[key] = _root_is_plain(crd) and not _root_rules_read_status(crd, registry.engine)
    return registry.status_alone[key]


def _root_is_plain(crd: CrdVersion) -> bool:
    """The root checks nothing of the object as a whole that a ``status`` could change, and declares ``status``."""
    root = crd.validator.schema
    properties = root.get("properties")
    return (
        set(root) <= _PLAIN_ROOT_KEYWORDS
        and root.get("type") == "object"
        and isinstance(properties, dict)
        and _STATUS in properties
        and isinstance(crd.schema.get("properties", {}).get(_STATUS), dict)
        and isinstance(root.get("required", []), list)
    )


def _root_rules_read_status(crd: CrdVersion, engine: CelEngine) -> bool:
    """Whether a root rule (or its message) may read ``status``; one that cannot run counts as reading it."""
    for rule in crd.rules_at(crd.schema):
        for text in filter(None, (rule.rule, rule.message_expression)):
            try:
                use = engine.compiled(text).self_use
            except UnsupportedRuleError:
                return True
            if use is None or use.whole or any(name == _STATUS for name, _ in use.fields):
                return True
    return False
