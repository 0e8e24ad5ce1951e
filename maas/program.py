"""The program `pulumi up` runs: validate the configuration, compute the desired state, register it."""

from __future__ import annotations

from .config import load_config, raw_from_pulumi
from .deploy import deploy
from .desired import Plan
from .plan import build_plan


def run() -> Plan:
    """Raises ConfigError before registering anything when the configuration is invalid."""
    config = load_config(raw_from_pulumi())
    plan = build_plan(config)
    deploy(plan, config.platform)
    return plan
