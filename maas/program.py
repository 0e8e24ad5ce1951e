"""The program `pulumi up` runs: validate the configuration, compute the desired state, register it."""

from __future__ import annotations

import pulumi

from .config import ConfigError, load_config, raw_from_pulumi
from .deploy import deploy
from .desired import Plan
from .identities import identity_issues
from .plan import build_plan
from .selfcheck import check_plan


def run() -> Plan:
    """Raises ConfigError before registering anything when the configuration is invalid."""
    config = load_config(raw_from_pulumi())
    plan = build_plan(config)
    issues = identity_issues(plan) + check_plan(plan)
    if issues:
        raise ConfigError(issues)
    deploy(plan, config.platform)
    return plan


def main() -> None:
    """`pulumi preview`/`up`: configuration errors end the program as one clean list of problems (a RunError),
    not as a Python traceback with the program's source."""
    try:
        run()
    except ConfigError as error:
        raise pulumi.RunError(str(error)) from None
