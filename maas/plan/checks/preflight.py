"""What must exist in the cluster before anything is registered, judged on the snapshot.

A missing CRD, tenant Gateway or `maas-db-config` Secret would otherwise surface halfway through `pulumi up` (a
failed apply, or a maas-api Deployment that times out after ten minutes). The update stops instead, before any
resource is registered, with one list: what is missing, where, and how to fix it. Nothing is ever removed from
the plan because a prerequisite is gone, so a vanished prerequisite can never delete a tenant's live objects.
Only what the snapshot saw as absent counts; what it did not look at is not judged.
"""

from __future__ import annotations

from ... import naming
from ...config import MaasConfig
from ...config.errors import ConfigIssue
from ...observe import KINDS, Observed
from ..desired import Plan
from .selfcheck import owner_path

PATH = "cluster"


def preflight(config: MaasConfig, plan: Plan, observed: Observed) -> list[ConfigIssue]:
    return sorted(
        set(
            _missing_crds(config, plan, observed)
            + _missing_gateways(config, plan, observed)
            + _missing_db_secret(config, plan, observed)
        )
    )


def _missing_crds(config: MaasConfig, plan: Plan, observed: Observed) -> list[ConfigIssue]:
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
            issues.append(
                ConfigIssue(
                    PATH,
                    f"the CRD {crd.crd_name} ({kind} {crd.api_version}) is not installed, and {needed_by} needs it; "
                    "install the operator that provides it (Kuadrant, Gateway API, Istio, KServe or MaaS) first",
                )
            )
    return issues


def _missing_gateways(config: MaasConfig, plan: Plan, observed: Observed) -> list[ConfigIssue]:
    """Only the tenants this stack registers (`platform.scope`): another tenant's Gateway is its own stack's."""
    namespace = config.platform.gateway.namespace
    issues = []
    for tenant in config.tenants:
        if tenant.managementState != "Managed" or ("Tenant", tenant.name) not in plan.owners_by_key:
            continue
        name = tenant.gateway_name(config.platform)
        if observed.lookup("Gateway", namespace, name).state == "absent":
            issues.append(
                ConfigIssue(
                    PATH,
                    f"Gateway {namespace}/{name} of tenant '{tenant.name}' does not exist; create it (this program "
                    "attaches policies to it but does not create it) or set the tenant's gateway.name",
                )
            )
    return issues


def _missing_db_secret(config: MaasConfig, plan: Plan, observed: Observed) -> list[ConfigIssue]:
    """maas-api cannot start without its database Secret, which operators provide."""
    namespace = config.platform.infraNamespace
    serves = any(o.kind == "Deployment" and o.namespace == namespace for o in plan.objects())
    if not serves or observed.lookup("Secret", namespace, naming.MAAS_DB_SECRET).state != "absent":
        return []
    return [
        ConfigIssue(
            PATH,
            f"Secret {namespace}/{naming.MAAS_DB_SECRET} (maas-api's database connection) does not exist; create it "
            f"before `pulumi up` (kubectl create secret generic {naming.MAAS_DB_SECRET} -n {namespace} "
            "--from-literal=DB_CONNECTION_URL=postgres://...)",
        )
    ]
