"""Statuses the program publishes, judged from configuration facts and an observed snapshot.

The plan computes them at program start; the status writer calls `judge` again just before it writes, with a
fresh observation of exactly `needed(...)`, so that objects created in the same `pulumi up` are judged on their
live state. One function per kind, shared by both.
"""

from __future__ import annotations

from collections.abc import Mapping
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


def settling(kind: str, facts: Mapping[str, Any], observed: Observed) -> bool:
    """Whether the writer should look again shortly (a route the same `up` just created is not accepted yet)."""
    return kind == "MaaSModelRef" and model.settling(model.ModelFacts.from_inputs(facts), observed)


def writes_status(platform: PlatformConfig) -> bool:
    """`coexist`: a running maas-controller keeps the status. `renderYamlToDirectory`: nothing talks to a cluster."""
    return platform.controllerMode == "absent" and platform.kubernetes.renderYamlToDirectory is None
