"""Statuses the program publishes, judged from configuration facts and an observed snapshot.

The plan computes them at program start; the status writer calls `judge` again just before it writes, with a
fresh observation of exactly `needed(...)`, so that objects created in the same `pulumi up` are judged on their
live state. One function per kind, shared by both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...config import PlatformConfig
from ...observe import ObjectRef, Observed
from . import model, tenant

# kind -> (facts from plain inputs, what it reads, its status)
RULES = {
    "MaaSModelRef": (model.ModelFacts.from_inputs, model.observation_needed, model.model_status),
    "MaasTenantConfig": (tenant.TenantFacts.from_inputs, tenant.observation_needed, tenant.tenant_status),
}


def needed(kind: str, facts: Mapping[str, Any]) -> tuple[ObjectRef, ...]:
    """The live objects the status of `kind` depends on."""
    parse, reads, _ = RULES[kind]
    return reads(parse(facts))


def judge(kind: str, facts: Mapping[str, Any], observed: Observed) -> dict[str, Any]:
    parse, _, status = RULES[kind]
    return status(parse(facts), observed)


@dataclass(frozen=True)
class Settling:
    """A judgement the writer should not publish as final yet, and how it waits for the next one."""

    seconds: float | None  # how long it may wait from the start of its batch; None: the writer's own bound
    interim: bool = False  # publish what is judged meanwhile, since the wait is long (a rollout, not a route)
    overdue: str = ""  # when still settling at the deadline, the write fails with this (as an await would)


def settling(kind: str, facts: Mapping[str, Any], observed: Observed) -> Settling | None:
    """A route the same `up` just created that is not accepted yet (seconds); a maas-api rollout (minutes, with
    `Pending` published meanwhile: seed 000, "manifests applied but maas-api not ready yet"). None: settled."""
    if kind == "MaaSModelRef" and model.settling(model.ModelFacts.from_inputs(facts), observed):
        return Settling(None)
    if kind == "MaasTenantConfig" and tenant.rollout_settling(
        parsed := tenant.TenantFacts.from_inputs(facts), observed
    ):
        seconds = tenant.rollout_seconds(parsed, observed)
        return Settling(seconds, interim=True, overdue=f"maas-api did not become available within {seconds:.0f} s")
    return None


def failure(kind: str, status: Mapping[str, Any]) -> str:
    """Why a write must fail once it is published: a failed maas-api rollout fails `pulumi up`, as
    pulumi-kubernetes' Deployment await would, after the tenant says `Failed`."""
    ready = next((c for c in status.get("conditions", ()) if c.get("type") == "Ready"), {})
    return (
        ready.get("message", "")
        if kind == "MaasTenantConfig" and ready.get("reason") == tenant.DEPLOYMENT_FAILED
        else ""
    )


def writes_status(platform: PlatformConfig) -> bool:
    """`coexist`: a running maas-controller keeps the status. `renderYamlToDirectory`: nothing talks to a cluster."""
    return platform.controllerMode == "absent" and platform.kubernetes.renderYamlToDirectory is None
