"""A Gateway whose wasm object would exceed 1.5 MiB stops the update: past it the API server refuses the object
Kuadrant writes, and the gateway's policies silently stop updating. `platform.gatewayBudget: warn` lets it pass
(the report then warns instead). The error names the levers the report evaluated on this configuration, each with
the size it leaves, best first (`gateway/levers.py`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...config import ConfigIssue, MaasConfig
from ..gateway.budget import BUDGET
from ..gateway.levers import shrink_text
from ..gateway.report import describe

PATH = "maas:platform.gatewayBudget"


def gateway_budget_issues(config: MaasConfig, gateways: Mapping[str, Mapping[str, Any]]) -> list[ConfigIssue]:
    """One issue per Gateway over the budget (`gateways`: the plan's `gateways` stack output)."""
    if config.platform.gatewayBudget != "error":
        return []
    return [
        ConfigIssue(
            PATH,
            f"{describe(key, dict(output))}; it is over the limit, so the API server would refuse the object and the "
            f"gateway's policies stop updating; {shrink_text(output)}; or set {PATH}: warn to update anyway",
        )
        for key, output in sorted(gateways.items())
        if output["bytes"] > BUDGET
    ]
