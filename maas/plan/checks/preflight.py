"""What must exist in the cluster before anything is registered, judged on the snapshot.

A missing CRD, a tenant Gateway that is missing or neither Accepted nor Programmed, or a missing `maas-db-config`
Secret would otherwise surface halfway through `pulumi up` (a failed apply, policies on a Gateway that serves
nothing, a maas-api Deployment that times out after ten minutes). The update stops instead, before any object is
registered, with one list: what is missing, where, and how to fix it. Nothing is ever removed from the plan
because a prerequisite is gone, so a vanished prerequisite can never delete a tenant's live objects. Only what
the snapshot saw counts; what it did not look at is not judged.

Each problem also names the tenants whose MaasTenantConfig status it makes `Failed` (or `Pending`), so that the
stopped update can still publish that status (`plan/status/failed.py`, `deploy/program.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import naming
from ...config import MaasConfig
from ...config.errors import ConfigIssue
from ...observe import KINDS, Observed
from ...observe.views import LiveGateway
from ..desired import Plan
from ..status.tenant import gateway_problem
from .selfcheck import owner_path

PATH = "cluster"


@dataclass(frozen=True)
class Finding:
    """One preflight problem and the tenants whose MaasTenantConfig status it decides."""

    issue: ConfigIssue
    tenants: tuple[str, ...] = ()


def preflight(config: MaasConfig, plan: Plan, observed: Observed) -> list[ConfigIssue]:
    return sorted({finding.issue for finding in findings(config, plan, observed)})


def concerned_tenants(config: MaasConfig, plan: Plan, observed: Observed) -> tuple[str, ...]:
    """The tenants a failed preflight concerns: those whose own objects need a missing CRD, whose Gateway cannot
    be used, or whose maas-api needs the missing database Secret."""
    return tuple(sorted({tenant for finding in findings(config, plan, observed) for tenant in finding.tenants}))


def findings(config: MaasConfig, plan: Plan, observed: Observed) -> list[Finding]:
    return (
        _missing_crds(config, plan, observed)
        + _unusable_gateways(config, plan, observed)
        + _missing_db_secret(config, plan, observed)
    )


def _tenants_with(plan: Plan, wanted) -> tuple[str, ...]:
    """The tenants (owners this stack registers) with an object for which `wanted(obj)` holds."""
    return tuple(
        sorted(
            name
            for (kind, name), owner in plan.owners_by_key.items()
            if kind == "Tenant" and any(map(wanted, owner.objects))
        )
    )


def _missing_crds(config: MaasConfig, plan: Plan, observed: Observed) -> list[Finding]:
    """Every custom kind the plan registers, and KServe's when a model is served by an LLMInferenceService."""
    needed: dict[str, str] = {}
    for owner in plan.owners:
        for obj in owner.objects:
            if obj.kind in KINDS and not KINDS[obj.kind].builtin:
                needed.setdefault(obj.kind, owner_path(owner))
    for model in config.models:  # a stack scoped to another tenant registers nothing of this model
        if model.modelRef.kind == "LLMInferenceService" and ("Model", model.key) in plan.owners_by_key:
            needed.setdefault("LLMInferenceService", f"maas:models ({model.key})")
    issues = []
    for kind, needed_by in sorted(needed.items()):
        if observed.installed(kind) is False:
            crd = KINDS[kind]
            message = (
                f"the CRD {crd.crd_name} ({kind} {crd.api_version}) is not installed, and {needed_by} needs it; "
                "install the operator that provides it (Kuadrant, Gateway API, Istio, KServe or MaaS) first"
            )
            issues.append(Finding(ConfigIssue(PATH, message), _tenants_with(plan, lambda o, k=kind: o.kind == k)))
    return issues


def _unusable_gateways(config: MaasConfig, plan: Plan, observed: Observed) -> list[Finding]:
    """Only the tenants this stack registers (`platform.scope`): another tenant's Gateway is its own stack's."""
    namespace = config.platform.gateway.namespace
    issues = []
    for tenant in config.tenants:
        if tenant.managementState != "Managed" or ("Tenant", tenant.name) not in plan.owners_by_key:
            continue
        name = tenant.gateway_name(config.platform)
        found = observed.lookup("Gateway", namespace, name)
        problem = "" if found.state == "unknown" else gateway_problem(observed.view(LiveGateway, namespace, name))
        if problem:
            message = f"Gateway {namespace}/{name} of tenant '{tenant.name}' {problem}; {_gateway_fix(found.object)}"
            issues.append(Finding(ConfigIssue(PATH, message), (tenant.name,)))
    return issues


def _gateway_fix(gateway) -> str:
    if gateway is None:
        return (
            "create it (this program attaches policies to it but does not create it) or set the tenant's gateway.name"
        )
    return "fix it (`kubectl describe gateway` shows why its controller refuses it) or set the tenant's gateway.name"


def _missing_db_secret(config: MaasConfig, plan: Plan, observed: Observed) -> list[Finding]:
    """maas-api cannot start without its database Secret, which operators provide."""
    namespace = config.platform.infraNamespace
    serves = _tenants_with(plan, lambda o: o.kind == "Deployment" and o.namespace == namespace)
    needed = serves or any(o.kind == "Deployment" and o.namespace == namespace for o in plan.objects())
    if not needed or observed.lookup("Secret", namespace, naming.MAAS_DB_SECRET).state != "absent":
        return []
    message = (
        f"Secret {namespace}/{naming.MAAS_DB_SECRET} (maas-api's database connection) does not exist; create it "
        f"before `pulumi up` (kubectl create secret generic {naming.MAAS_DB_SECRET} -n {namespace} "
        "--from-literal=DB_CONNECTION_URL=postgres://...)"
    )
    return [Finding(ConfigIssue(PATH, message), serves)]
