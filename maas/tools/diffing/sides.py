"""BASE and HEAD, each rendered by the program `pulumi up` runs (`maas.tools.render`), never re-derived.

HEAD is planned as `pulumi up` would plan it on the cluster BASE left: against the snapshot (or nothing) with
BASE's TokenRateLimitPolicies and MaaSSubscriptions (their annotations and the statuses BASE writes) in place of
the live ones. So sticky rate-limit identities carry over from BASE, and the quota report of that HEAD plan is
the report between BASE and HEAD.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import ConfigError, raw_from_stack_file
from ...config.errors import escaped
from ...observe import Observed, Scope
from ..render import render
from .git import GitFile

Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name
APPLIED_KINDS = ("TokenRateLimitPolicy", "MaaSSubscription")  # what the quota report and the identities read live


class SideError(Exception):
    """One side cannot be rendered; the message names the side and its file."""


@dataclass(frozen=True)
class Side:
    """What one side registers: its objects and status writes (`{Kind}Status`) by key, and its stack outputs."""

    objects: Mapping[Key, Mapping[str, Any]] = field(default_factory=dict)
    outputs: Mapping[str, Any] = field(default_factory=dict)


def object_key(body: Mapping[str, Any]) -> Key:
    metadata = body["metadata"]
    return (body["kind"], metadata.get("namespace") or "", metadata["name"])


def render_side(label: str, file: Path | GitFile, stack: str, observed: Observed) -> Side:
    """The side's objects, status writes and outputs; the warnings of reading its file (an undecrypted secret
    hides a change on both sides) go to stderr, prefixed with `label`. SideError when the side is invalid."""
    try:
        raw, warnings = raw_from_stack_file(file)  # a GitFile reads as a file does
        rendering = render(raw, stack=stack, observed=observed)
    except ConfigError as error:
        raise SideError(f"{label} ({escaped(str(file))}): {error}") from None
    for warning in warnings:
        print(f"warning: {label}: {warning}", file=sys.stderr)
    bodies = rendering.objects() + rendering.statuses()
    return Side({object_key(body): body for body in bodies}, rendering.plan.outputs)


def applied(base: Side, observed: Observed) -> Observed:
    """The snapshot as it is once BASE is applied: BASE's policies and subscriptions, with the statuses BASE
    writes, replace the live ones, and their namespaces count as listed (BASE is all there is of them)."""
    bodies = []
    for key, body in base.objects.items():
        kind, namespace, name = key
        if kind in APPLIED_KINDS:
            status = base.objects.get((f"{kind}Status", namespace, name))
            bodies.append({**body, "status": status["status"]} if status else body)
    scopes = {Scope(body["kind"], body["metadata"]["namespace"]) for body in bodies}
    return Observed.of(
        [*observed.objects.values(), *bodies],
        listed=observed.listed | scopes,
        got=observed.got,
        crds=observed.crds,
        cluster=observed.cluster,
    )
