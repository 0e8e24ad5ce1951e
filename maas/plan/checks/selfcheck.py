"""The program's own output, checked as the API server would before anything is registered.

Configuration validation cannot see every rule of the CRDs (their CEL rules, name formats, list uniqueness) nor the
size of what the program aggregates, and a bug in a concern module could produce an object the cluster refuses.
Either way `pulumi up` would fail halfway, after part of the stack was applied. So every object of the plan is
validated against its CRD (or the core Kubernetes schema), every status write against the status schema of its
kind, and every stored object against the API server's size limit; each problem names the configuration entry it
came from. Pure: no Pulumi.
"""

from __future__ import annotations

import json
from typing import Any

from ...config.errors import ConfigIssue, entry_path
from ...crdschema import (
    CRDS_DIR_ENV,
    CrdRegistry,
    added_status_problems_measured,
    crds_dir,
    default_registry,
    object_label,
    validate,
    validate_measured,
)
from ..desired import Desired, Owner, Plan, object_identity
from ..status.writes import stamp_conditions

# etcd's default request limit (--max-request-bytes), and so the largest object the API server can store.
MAX_OBJECT_BYTES = 1_572_864
# Kinds the program renders whose CRDs are not in crds/: accepted unchecked. cert-manager (installed by the user on
# `flavor: xks`, in a version this program does not pin) is not vendored; its Certificate has tests of its own.
UNCHECKED_KINDS = frozenset({("cert-manager.io/v1", "Certificate")})
# 3.6 status fields that the vendored MaaS CRDs (the mirror's HEAD) predate (seed 002): left out of the check
# instead of reported as unknown. The 3.6 CRD that `rateLimitIdentity: short` requires (README) declares them.
# `flowControlStatuses` (issue 22) is newer still: upstream publishes it after 3.6.
NEWER_THAN_VENDORED_STATUS = {
    ("maas.opendatahub.io/v1alpha1", "MaaSSubscription"): frozenset({"rateLimitIdentity", "flowControlStatuses"})
}
# The status writer stamps `lastTransitionTime` on every condition when it writes (status.writes.stamp_conditions).
WRITE_TIME = "2000-01-01T00:00:00Z"
# Owner kinds -> the configuration key their entries come from.
ENTRY_KEYS = {
    "Platform": "platform",
    "Tenant": "tenants",
    "Model": "models",
    "Subscription": "subscriptions",
    "AuthPolicy": "authPolicies",
}
_SPLIT_HINTS = {
    "TokenRateLimitPolicy": "split it: give the model fewer subscriptions (one per group, not per user) or rate sets",
    "AuthPolicy": "split it: grant the model to groups rather than to many single users",
}
_DEFAULT_SPLIT_HINT = "split it: spread this configuration entry over several smaller ones"


def check_plan(plan: Plan, registry: CrdRegistry | None = None) -> list[ConfigIssue]:
    """Every problem the API server would find in what `plan` registers, as issues naming their entries; [] if none."""
    try:
        registry = registry or default_registry()
    except FileNotFoundError:
        return [ConfigIssue(f"${CRDS_DIR_ENV}", _missing_folder_message())]
    checker = _PlanChecker(plan, registry)
    return [
        ConfigIssue(owner_path(owner), message)
        for owner in plan.owners
        for obj in owner.objects
        for message in checker.problems(obj)
    ]


def owner_path(owner: Owner) -> str:
    """The configuration entry an owner's objects come from, e.g. `maas:models (llm/granite)`."""
    key = ENTRY_KEYS.get(owner.kind)
    if key is None:
        return f"maas ({owner.kind} {owner.name})"
    return entry_path(key) if owner.kind == "Platform" else f"{entry_path(key)} ({owner.name})"


class _PlanChecker:
    """The checks of one plan. Each object body is validated and measured once (by identity: the plan keeps them
    alive), so the status write of an object reuses what its object's own check found."""

    def __init__(self, plan: Plan, registry: CrdRegistry) -> None:
        self._registry = registry
        self._targets = {obj.identity: obj.body for obj in plan.objects() if obj.subresource is None}
        self._checked: dict[int, tuple[list[str], int]] = {}

    def problems(self, obj: Desired) -> list[str]:
        if obj.subresource == "status":
            return self._status_problems(obj)
        problems, size = self._checked_body(obj.body)
        return problems + _size_problems(obj.body, size)

    def _checked_body(self, body: dict[str, Any]) -> tuple[list[str], int]:
        """The body's problems (without size) and its encoded size."""
        if id(body) not in self._checked:
            problems, size = validate_measured(body, UNCHECKED_KINDS, self._registry)
            self._checked[id(body)] = (problems, encoded_size(body) if size is None else size)
        return self._checked[id(body)]

    def _status_problems(self, obj: Desired) -> list[str]:
        """The object as stored after the write (its body from the plan plus this status), minus the object's own
        problems (reported with the object): what the status adds, without a missing `spec` for a bare identity."""
        target = self._targets.get(object_identity(obj.kind, obj.namespace, obj.name), obj.body)
        base = {key: value for key, value in target.items() if key != "status"}
        written = _as_written(obj)
        stored = {**base, "status": written}
        problems, written_size = added_status_problems_measured(base, written, self._registry)
        if problems is None:
            problems = self._added_by_status(target, base, stored)
        base_size = encoded_size(base) if "status" in target else self._checked_body(target)[1]
        if base_size > MAX_OBJECT_BYTES:
            return problems
        # compact JSON of `stored` is that of `base` with `,"status":<written>` before its closing brace
        written_size = encoded_size(written) if written_size is None else written_size
        size = base_size + len(',"status":' if base else '"status":') + written_size
        return problems + _size_problems(stored, size)

    def _added_by_status(self, target: dict[str, Any], base: dict[str, Any], stored: dict[str, Any]) -> list[str]:
        """The stored object's problems that the object without its status lacks, validating both whole (when the
        CRD's root may make more than the status differ)."""
        own = validate(base, UNCHECKED_KINDS, self._registry) if "status" in target else self._checked_body(target)[0]
        known = set(own)
        return [problem for problem in validate(stored, UNCHECKED_KINDS, self._registry) if problem not in known]


def _as_written(obj: Desired) -> Any:
    """The status the writer sends: conditions stamped, fields the vendored CRD predates left out."""
    status = obj.body.get("status")
    if not isinstance(status, dict):
        return status
    newer = NEWER_THAN_VENDORED_STATUS.get((obj.api_version, obj.kind), frozenset())
    written = {key: value for key, value in status.items() if key not in newer}
    return stamp_conditions(written, None, WRITE_TIME)


def _size_problems(body: dict[str, Any], size: int) -> list[str]:
    if size <= MAX_OBJECT_BYTES:
        return []
    hint = _SPLIT_HINTS.get(str(body.get("kind")), _DEFAULT_SPLIT_HINT)
    return [
        f"{object_label(body)} is {size} bytes; the API server stores at most 1.5 MiB ({MAX_OBJECT_BYTES} bytes); "
        f"{hint}"
    ]


def encoded_size(body: Any) -> int:
    """Bytes of the value's compact JSON encoding, what the API server receives and stores."""
    return len(json.dumps(body, separators=(",", ":"), ensure_ascii=False, default=str).encode())


def _missing_folder_message() -> str:
    return (
        f"CRD folder {crds_dir()} not found; point ${CRDS_DIR_ENV} at a folder of CRD files (e.g. one file from "
        f"`kubectl get crd -o yaml`), or unset it to use the copy in crds/ (install with `pip install -e .`)"
    )
