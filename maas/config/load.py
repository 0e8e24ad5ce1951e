"""Turn raw stack configuration into one validated `MaasConfig`, or one `ConfigError` listing every problem.

The same function serves `pulumi up` (values from `pulumi.Config`) and the offline tools (values from a
`Pulumi.<stack>.yaml` file), so both accept and reject exactly the same configurations.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .batches import subscription_batch_issues
from .errors import ConfigError, ConfigIssue, entry_path, translate
from .kubernetes import kubernetes_option_issues
from .references import Known, check_references
from .schema import (
    AuthPolicyConfig,
    KubernetesProvider,
    MaasConfig,
    ModelConfig,
    PlatformConfig,
    SubscriptionConfig,
    TenantConfig,
    UnmanagedRef,
    UnmeteredKey,
)
from .stackfile import NAMESPACE
from .stackfile import raw_from_stack_file as raw_from_stack_file  # re-exported: callers import it from here
from .types import SubscriptionKey

ENTRY_TYPES: dict[str, type] = {
    "tenants": TenantConfig,
    "models": ModelConfig,
    "authPolicies": AuthPolicyConfig,
    "subscriptions": SubscriptionConfig,
    "unmanaged": UnmanagedRef,
    "acceptQuotaResets": SubscriptionKey,
    "acceptUnmeteredTraffic": UnmeteredKey,
}
KEYS = ("platform", *ENTRY_TYPES)


def load_config(raw: Mapping[str, Any]) -> MaasConfig:
    """Validate the `maas:` keys (without their prefix); raise ConfigError with all problems at once."""
    issues = [
        ConfigIssue(f"{NAMESPACE}:{key}", f"unknown configuration key; use one of: {', '.join(KEYS)}")
        for key in sorted(raw)
        if key not in KEYS
    ]
    values: dict[str, Any] = {}
    positions: dict[str, list[int]] = {}
    known = Known()
    shared: dict[tuple[type, bytes], Any] = {}  # identical entries validated once (`types.validated_once`)
    if raw.get("platform") is not None:
        platform, found = _validate(PlatformConfig, raw["platform"], "platform")
        issues += found
        if platform is not None:
            values["platform"] = platform
            issues += subscription_batch_issues(platform)
        issues += _kubernetes_issues(platform, raw["platform"])
    for key, entry_type in ENTRY_TYPES.items():
        if raw.get(key) is None:
            continue
        entries, positions[key], found = _validate_list(key, entry_type, raw[key], shared)
        values[key] = tuple(entries)
        issues += found
        if key == "tenants":
            known.broken_tenants = _names_of_invalid(raw[key], positions[key])
    config = MaasConfig.model_validate(values)
    issues += check_references(config, positions, known)
    if issues:
        raise ConfigError(sorted(set(issues), key=_order))
    return config


def _kubernetes_issues(platform: PlatformConfig | None, raw: Any) -> list[ConfigIssue]:
    """The provider option combinations refused (`kubernetes.py`), also when another platform key is invalid."""
    if platform is not None:
        return kubernetes_option_issues(platform.kubernetes)
    options = raw.get("kubernetes") if isinstance(raw, dict) else None
    if options is None:
        return []
    validated, found = _validate(KubernetesProvider, options, "platform.kubernetes")
    return [] if found or validated is None else kubernetes_option_issues(validated)


def _order(issue: ConfigIssue) -> tuple:
    return (issue.path.split("[")[0], _index(issue.path), issue.path, issue.message)


def _index(path: str) -> int:
    """The position in the path's first `[...]`, or -1: a key may be written with brackets of its own
    (`maas:platform.kubernetes[context]`), which hold no position."""
    match = _POSITION.match(path.partition("[")[2])
    return int(match.group(1)) if match else -1


_POSITION = re.compile(r"([0-9]{1,18})\]")


@cache
def _adapter(model: type) -> TypeAdapter:
    """One per entry type (and list of them): building an adapter costs more than validating an entry with it."""
    return TypeAdapter(model)


def _validate(
    model: type, raw: Any, key: str, index: int | None = None, shared: dict | None = None
) -> tuple[Any, list[ConfigIssue]]:
    """The entry `maas:{key}[index]` (or the value of `maas:{key}`) validated, or the issues naming its path."""
    try:
        return _adapter(model).validate_python(raw, context=shared), []
    except ValidationError as error:
        path = entry_path(key, index, raw)
        return None, [translate(path, model, e) for e in error.errors() if not _consequential(e)]


def _consequential(error: dict[str, Any]) -> bool:
    """pydantic also calls a list "too short" when its entries failed; those entries' errors already say why."""
    if error["type"] != "too_short":
        return False
    value = error.get("input")
    return isinstance(value, (list, tuple)) and len(value) >= error["ctx"]["min_length"]


def _validate_list(key: str, model: type, raw: Any, shared: dict) -> tuple[list[Any], list[int], list[ConfigIssue]]:
    """The valid entries, their positions, and the issues of the others. The list is validated in one call; only
    when it has errors is it validated again entry by entry, each entry's errors naming that entry."""
    if not isinstance(raw, list):
        return [], [], [ConfigIssue(entry_path(key), f"must be a list of entries (got {type(raw).__name__})")]
    try:
        entries = _adapter(list[model]).validate_python(raw, context=shared)
    except ValidationError:
        return _validate_each(key, model, raw, shared)
    return entries, list(range(len(entries))), []


def _validate_each(key: str, model: type, raw: list, shared: dict) -> tuple[list[Any], list[int], list[ConfigIssue]]:
    entries, indexes, issues = [], [], []
    for index, item in enumerate(raw):
        entry, found = _validate(model, item, key, index, shared)
        issues += found
        if entry is not None:
            entries.append(entry)
            indexes.append(index)
    return entries, indexes, issues


def _names_of_invalid(raw: Any, valid_positions: list[int]) -> set[str]:
    if not isinstance(raw, list):
        return set()
    valid = set(valid_positions)
    return {
        item["name"]
        for index, item in enumerate(raw)
        if index not in valid and isinstance(item, dict) and isinstance(item.get("name"), str)
    }
