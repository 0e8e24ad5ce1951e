"""The program `pulumi up` runs: validate the configuration, observe the cluster, compute the desired state,
check it, register it."""

from __future__ import annotations

from typing import Any

import pulumi

from ..config import KEYS, NAMESPACE, ConfigError, MaasConfig, load_config
from ..observe import ObservationError, Observed, read_cluster, what_to_observe
from ..plan.build import build_plan
from ..plan.checks.issues import plan_issues
from ..plan.desired import Plan
from .components import deploy

NOT_OBSERVING = (
    "maas:platform.observe is false: nothing was read from the cluster, so model, subscription and tenant "
    "statuses are the intended ones (from configuration), not observed"
)


def run(observed: Observed | None = None) -> Plan:
    """Raises ConfigError before registering anything when the configuration is invalid. `observed`: a snapshot
    taken elsewhere (the offline renderer); None reads the cluster of `platform.kubernetes` once, now."""
    config = load_config(raw_from_pulumi())
    observation_warnings: list[str] = []
    if observed is None:
        observed, observation_warnings = observe(config)
    plan = build_plan(config, observed)
    plan.warnings[:0] = observation_warnings
    for note in plan.notes:  # before the checks, so that a refused update still shows every gateway's size
        pulumi.log.info(note)
    issues = plan_issues(config, plan, observed)
    if issues:
        raise ConfigError(issues)
    deploy(plan, config)
    return plan


def raw_from_pulumi() -> dict[str, Any]:
    """The `maas:` keys of the running stack, parsed from the JSON strings the engine passes."""
    config = pulumi.Config(NAMESPACE)
    prefix = f"{NAMESPACE}:"
    present = {*pulumi.runtime.config.CONFIG.get(), *pulumi.runtime.config.get_config_env()}
    names = sorted(name[len(prefix) :] for name in present if name.startswith(prefix))
    return {name: config.get_object(name) if name in KEYS else config.get(name) for name in names}


def observe(config: MaasConfig) -> tuple[Observed, list[str]]:
    """The snapshot `pulumi preview`/`up` plans against, read-only; ObservationError when the cluster cannot be
    read. Rendering to a directory talks to no cluster, so it observes nothing, as `platform.observe: false`."""
    kubernetes = config.platform.kubernetes
    if kubernetes.renderYamlToDirectory is not None:
        return Observed.nothing(), []
    if not config.platform.observe:
        return Observed.nothing(), [NOT_OBSERVING]
    return read_cluster(what_to_observe(config), kubernetes.kubeconfig, kubernetes.context), []


def main() -> None:
    """`pulumi preview`/`up`: configuration and observation errors end the program as one clean message (a
    RunError), not as a Python traceback with the program's source."""
    try:
        run()
    except (ConfigError, ObservationError) as error:
        raise pulumi.RunError(str(error)) from None
