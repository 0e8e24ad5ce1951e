"""BASE and HEAD, each rendered by the program `pulumi up` runs (`maas.tools.render`), never re-derived.

HEAD is planned as `pulumi up` would plan it on the cluster BASE left: against the snapshot (or nothing) with
BASE's TokenRateLimitPolicies and MaaSSubscriptions (their annotations and the statuses BASE writes) in place of
the live ones. So sticky rate-limit identities carry over from BASE, and the quota report of that HEAD plan is
the report between BASE and HEAD. The warnings HEAD adds or drops are judged on that same cluster: against what
BASE's plan warns once BASE is applied (`settled_warnings`), not against a first `pulumi up` of BASE, so that a
warning about the cluster BASE starts from (an unobserved identity) never reads as something HEAD resolved.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config import ConfigError, load_config, raw_from_stack_file
from ...config.errors import escaped
from ...observe import Observed, Scope
from ...plan.build import build_plan
from ...plan.outputs import with_subscription_entries
from ..render import render
from .git import GitFile

Key = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name
APPLIED_KINDS = ("TokenRateLimitPolicy", "MaaSSubscription")  # what the quota report and the identities read live


class SideError(Exception):
    """One side cannot be rendered; the message names the side and its file."""


@dataclass(frozen=True)
class Side:
    """What one side registers: its objects and status writes (`{Kind}Status`) by key, its stack outputs, the
    warnings its plan gives, and the phase the plan gives each subscription (`ns/name`), also where it writes no
    status (`controllerMode: coexist`: the phase the controller's rules give that configuration)."""

    objects: Mapping[Key, Mapping[str, Any]] = field(default_factory=dict)
    outputs: Mapping[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    phases: Mapping[str, str] = field(default_factory=dict)


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
    plan = rendering.plan
    phases = {owner.name: owner.outputs["phase"] for owner in plan.owners if owner.kind == "Subscription"}
    objects = {object_key(body): body for body in bodies}
    outputs = with_subscription_entries(load_config(raw), observed, plan.outputs)
    return Side(objects, outputs, tuple(dict.fromkeys(rendering.warnings)), phases)


def settled_warnings(file: Path | GitFile, stack: str, observed: Observed) -> tuple[str, ...]:
    """The warnings of the side's plan on `observed` (the cluster the side itself leaves, `applied`): what a
    second `pulumi up` of it would warn. The side rendered once already, so its file and configuration are valid."""
    raw, _ = raw_from_stack_file(file)
    return tuple(dict.fromkeys(build_plan(load_config(raw), observed).warnings))


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
