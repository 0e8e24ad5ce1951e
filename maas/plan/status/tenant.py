"""MaasTenantConfig status (seed 000, upstream-platform.md §3.3 decision table, §6): the tenant platform's phase.

`Failed` when the tenant's Gateway does not exist or is neither Accepted nor Programmed (seed 000: "gateway
invalid"; upstream checks the Gateway first, so its other conditions are then not judged), `Pending` while a
dependency CRD or the maas-api Deployment is not available, `Failed` without the `maas-db-config` Secret or when
maas-api's rollout failed ("platform apply failed"), `Active` once maas-api is available, `Degraded` when the
program has warnings for the tenant; a blocked IPP-to-Praxis migration makes `Ready=False` (`MigrationBlocked`,
seed 002). The status writer judges it again on the live cluster after the tenant's objects are applied: while
maas-api rolls out it writes `Pending` ("manifests applied but maas-api not ready yet"), then the phase the
rollout ends in (`rollout_settling`, `rollout_seconds`); when preflight fails, it is written alone (`failed.py`).
Without observation the status is the intended one, marked `NotObserved`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config.errors import escaped, quoted
from ...observe import KINDS, ObjectRef, Observed
from ...observe.views import DEFAULT_PROGRESS_DEADLINE, Condition, LiveDeployment, LiveGateway
from .conditions import condition
from .facts import Facts

NOT_OBSERVED = "not observed: Pulumi publishes this status from configuration"
GATEWAY_CONDITIONS = ("Accepted", "Programmed")  # a Gateway is valid when its controller says either is True
INVALID_GATEWAY = "InvalidGateway"  # upstream's reason for a tenant whose Gateway cannot be used
NOT_READY = "DeploymentsNotReady"  # maas-api is not available yet: `Pending`
DEPLOYMENT_FAILED = "DeploymentFailed"  # maas-api's rollout failed: seed 000's "platform apply failed"
PROGRESS_DEADLINE_EXCEEDED = "ProgressDeadlineExceeded"  # the Deployment controller's reason for a stuck rollout
ROLLOUT_REPORT_SECONDS = 60.0  # after the progress deadline, how long the controller may take to report it


@dataclass(frozen=True)
class TenantFacts(Facts):
    tenant: str
    infra_namespace: str
    deployment: str  # the tenant's maas-api Deployment in the infra namespace
    crd_kinds: tuple[str, ...] = ()  # custom kinds the tenant's platform writes
    warnings: tuple[str, ...] = ()  # the program's warnings that make the tenant Degraded
    migration_blocked: str = ""  # why the IPP-to-Praxis migration is blocked (Ready=False, MigrationBlocked)
    gateway_namespace: str = ""  # the tenant's Gateway ("": not judged, as in facts written before it was)
    gateway_name: str = ""


def observation_needed(facts: TenantFacts) -> tuple[ObjectRef, ...]:
    crds = [ObjectRef("CustomResourceDefinition", None, KINDS[kind].crd_name) for kind in facts.crd_kinds]
    gateway = [ObjectRef("Gateway", facts.gateway_namespace, facts.gateway_name)] if facts.gateway_name else []
    return (
        ObjectRef("Deployment", facts.infra_namespace, facts.deployment),
        ObjectRef("Secret", facts.infra_namespace, naming.MAAS_DB_SECRET),
        *gateway,
        *crds,
    )


def gateway_problem(gateway: LiveGateway | None) -> str:
    """Why a tenant cannot use its Gateway ("does not exist", "is neither Accepted nor Programmed (...)"), or ""
    when it can. A Gateway that reports neither condition is not judged: every Gateway the API server stores gets
    both (as `Unknown` until a controller looks), so only a hand-written snapshot lacks them. Live reasons and
    messages are escaped and shortened: they end up in a status message and on the terminal."""
    if gateway is None:
        return "does not exist"
    reported = [c for c in gateway.conditions if c.type in GATEWAY_CONDITIONS]
    if not reported or any(c.status == "True" for c in reported):
        return ""
    return "is neither Accepted nor Programmed (" + "; ".join(_condition_text(c) for c in reported) + ")"


def _condition_text(found: Condition) -> str:
    status, reason = (escaped(value or "?")[:64] for value in (found.status, found.reason))
    return f"{found.type}={status} {reason}" + (f": {quoted(found.message)}" if found.message else "")


def tenant_status(facts: TenantFacts, observed: Observed) -> dict[str, Any]:
    """As judged below, except that a blocked migration turns `Ready=True` into `Ready=False` and is named in
    any other `Ready=False` message (seed 002: the message names the force setting while blocked)."""
    status = _judged(facts, observed)
    ready = status["conditions"][0]
    if facts.migration_blocked and ready["status"] == "True":
        status["conditions"][0] = condition("Ready", "False", "MigrationBlocked", facts.migration_blocked)
    elif facts.migration_blocked:  # not ready for another reason too: both are said, the force setting included
        message = f"{ready['message']}; {facts.migration_blocked}"
        status["conditions"][0] = condition("Ready", "False", ready["reason"], message)
    return status


def _judged(facts: TenantFacts, observed: Observed) -> dict[str, Any]:
    deployment = observed.lookup("Deployment", facts.infra_namespace, facts.deployment)
    secret = observed.lookup("Secret", facts.infra_namespace, naming.MAAS_DB_SECRET)
    if deployment.state == "unknown" or secret.state == "unknown":
        return _intended(facts)
    gateway = _gateway_problem(facts, observed)
    if gateway:
        return _gateway_invalid(facts, gateway)
    missing = [kind for kind in facts.crd_kinds if observed.installed(kind) is False]
    if missing:
        return _dependencies_missing(facts, missing)
    if secret.object is None:
        return _prerequisites_missing(facts)
    deployment = observed.view(LiveDeployment, facts.infra_namespace, facts.deployment)
    failure = rollout_failure(deployment)
    if failure:
        return _rollout_failed(facts, f"Deployment {facts.infra_namespace}/{facts.deployment} {failure}")
    problem = _deployment_problem(facts, deployment)
    if problem:
        return _status(
            facts,
            "Pending",
            condition("Ready", "False", NOT_READY, problem),
            _dependencies_met(),
            _prerequisites_met(),
            condition("DeploymentsAvailable", "False", NOT_READY, problem),
            _degraded(facts),
        )
    return _status(
        facts,
        "Degraded" if facts.warnings else "Active",
        condition("Ready", "True", "Reconciled", "platform applied and maas-api available"),
        _dependencies_met(),
        _prerequisites_met(),
        condition("DeploymentsAvailable", "True", "DeploymentsReady", f"Deployment {facts.deployment} is available"),
        _degraded(facts),
    )


def _intended(facts: TenantFacts) -> dict[str, Any]:
    unknown = condition("DependenciesAvailable", "Unknown", "NotObserved", NOT_OBSERVED)
    return _status(
        facts,
        "Degraded" if facts.warnings else "Active",
        condition("Ready", "True", "Reconciled", "platform applied by Pulumi"),
        unknown,
        condition("MaaSPrerequisitesAvailable", "Unknown", "NotObserved", NOT_OBSERVED),
        condition("DeploymentsAvailable", "Unknown", "NotObserved", NOT_OBSERVED),
        _degraded(facts),
    )


def _gateway_problem(facts: TenantFacts, observed: Observed) -> str:
    """The full sentence for a Gateway the tenant cannot use; "" when it can, or when nobody looked."""
    if not facts.gateway_name:
        return ""
    where = (facts.gateway_namespace, facts.gateway_name)
    unknown = observed.lookup("Gateway", *where).state == "unknown"
    problem = "" if unknown else gateway_problem(observed.view(LiveGateway, *where))
    return f"Gateway {facts.gateway_namespace}/{facts.gateway_name} {problem}" if problem else ""


def _gateway_invalid(facts: TenantFacts, text: str) -> dict[str, Any]:
    """Upstream judges the Gateway before anything else: what comes after it is not judged (`Unknown`)."""
    unjudged = f"not judged: {text}"
    return _status(
        facts,
        "Failed",
        condition("Ready", "False", INVALID_GATEWAY, text),
        condition("DependenciesAvailable", "Unknown", INVALID_GATEWAY, unjudged),
        condition("MaaSPrerequisitesAvailable", "Unknown", INVALID_GATEWAY, unjudged),
        condition("DeploymentsAvailable", "Unknown", INVALID_GATEWAY, unjudged),
        condition("Degraded", "False", INVALID_GATEWAY, unjudged),
    )


def _dependencies_missing(facts: TenantFacts, kinds: list[str]) -> dict[str, Any]:
    text = "CRDs not installed: " + ", ".join(KINDS[kind].crd_name for kind in kinds)
    return _status(
        facts,
        "Pending",
        condition("Ready", "False", "DependenciesNotAvailable", text),
        condition("DependenciesAvailable", "False", "DependencyMissing", text),
        condition("MaaSPrerequisitesAvailable", "Unknown", "DependenciesNotMet", text),
        condition("DeploymentsAvailable", "False", "DependenciesNotMet", text),
        condition("Degraded", "False", "DependenciesNotMet", text),
    )


def _prerequisites_missing(facts: TenantFacts) -> dict[str, Any]:
    text = f"Secret {facts.infra_namespace}/{naming.MAAS_DB_SECRET} (maas-api's database) does not exist"
    return _status(
        facts,
        "Failed",
        condition("Ready", "False", "PrerequisitesNotMet", text),
        _dependencies_met(),
        condition("MaaSPrerequisitesAvailable", "False", "PrerequisitesMissing", text),
        condition("DeploymentsAvailable", "False", "PrerequisitesMissing", text),
        condition("Degraded", "True", "PrerequisitesMissing", text),
    )


def _dependencies_met() -> dict[str, str]:
    return condition("DependenciesAvailable", "True", "DependenciesMet", "every CRD the platform writes is installed")


def _prerequisites_met() -> dict[str, str]:
    return condition("MaaSPrerequisitesAvailable", "True", "PrerequisitesMet", f"Secret {naming.MAAS_DB_SECRET} exists")


def _degraded(facts: TenantFacts) -> dict[str, str]:
    if not facts.warnings:
        return condition("Degraded", "False", "NoWarnings", "no warnings")
    reason = "MultipleWarnings" if len(facts.warnings) > 1 else "ConfigurationWarning"
    return condition("Degraded", "True", reason, "; ".join(facts.warnings))


def rollout_failure(deployment: LiveDeployment | None) -> str:
    """How the Deployment controller says maas-api's rollout failed ("platform apply failed", seed 000), or "":
    `Progressing=False` with `ProgressDeadlineExceeded`, or `ReplicaFailure=True` (pods that cannot be created)."""
    for found in deployment.conditions if deployment else ():
        stuck = found.type == "Progressing" and found.status == "False" and found.reason == PROGRESS_DEADLINE_EXCEEDED
        if stuck or (found.type == "ReplicaFailure" and found.status == "True"):
            return "failed to roll out: " + _condition_text(found)
    return ""


def rollout_settling(facts: TenantFacts, observed: Observed) -> bool:
    """Whether maas-api is still rolling out (not available, not failed): the status writer publishes `Pending`
    and looks again until the rollout ends or its deadline passes (`rollout_seconds`)."""
    if observed.lookup("Deployment", facts.infra_namespace, facts.deployment).object is None:
        return False  # nothing rolls out, or nobody looked
    conditions = _judged(facts, observed)["conditions"]
    return any(c["type"] == "DeploymentsAvailable" and c["reason"] == NOT_READY for c in conditions)


def rollout_seconds(facts: TenantFacts, observed: Observed) -> float:
    """How long a rollout may take: the Deployment's own progress deadline, after which its controller reports
    `ProgressDeadlineExceeded`, plus the time that report may take."""
    deployment = observed.view(LiveDeployment, facts.infra_namespace, facts.deployment)
    return (deployment.progress_deadline if deployment else DEFAULT_PROGRESS_DEADLINE) + ROLLOUT_REPORT_SECONDS


def _rollout_failed(facts: TenantFacts, text: str) -> dict[str, Any]:
    return _status(
        facts,
        "Failed",
        condition("Ready", "False", DEPLOYMENT_FAILED, text),
        _dependencies_met(),
        _prerequisites_met(),
        condition("DeploymentsAvailable", "False", DEPLOYMENT_FAILED, text),
        condition("Degraded", "True", DEPLOYMENT_FAILED, text),
    )


def _deployment_problem(facts: TenantFacts, deployment: LiveDeployment | None) -> str:
    """Upstream §6.2: the latest generation observed, and as many updated and available replicas as wanted."""
    name = f"Deployment {facts.infra_namespace}/{facts.deployment}"
    if deployment is None:
        return f"{name} does not exist"
    wanted, updated, available = deployment.wanted, deployment.updated, deployment.available
    if deployment.observed_generation < deployment.generation:
        return f"{name} has not observed its latest generation yet"
    if updated < wanted or available < wanted:
        return f"{name} has {available} of {wanted} replicas available ({updated} updated)"
    return ""


def _status(facts: TenantFacts, phase: str, *conditions: dict[str, str]) -> dict[str, Any]:
    return {"phase": phase, "conditions": list(conditions), "infraNamespace": facts.infra_namespace}
