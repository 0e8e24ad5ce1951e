"""The MaasTenantConfig statuses a failed preflight publishes (seed 000: "Failed — blocking prerequisites missing,
gateway invalid, or platform apply failed").

Preflight stops `pulumi up` before any object is registered, so the live MaasTenantConfig would keep its last
phase (`Active`, say) while its Gateway is gone or maas-api's database Secret is missing. These are the status
writes that such an update still makes: for each tenant the failed preflight concerns
(`checks.preflight.concerned_tenants`), its planned MaasTenantConfig status write, judged again by the tenant
rules on the same snapshot with the tenant's Gateway in its facts, and without dependencies (none of the objects
it would wait for is registered by such an update). `deploy/program.py` decides how they are registered. Pure.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...config import MaasConfig, TenantConfig
from ...config.errors import ConfigIssue
from ...observe import Observed
from ..checks.preflight import concerned_tenants
from ..checks.selfcheck import check_plan
from ..desired import Desired, Plan
from . import writes_status
from .tenant import TenantFacts, tenant_status

TENANT_CONFIG = "MaasTenantConfig"
HEALTHY = ("Active", "Degraded")


def failed_tenant_writes(config: MaasConfig, plan: Plan, observed: Observed) -> dict[str, Desired]:
    """Tenant name -> the MaasTenantConfig status write a stopped update publishes; {} when preflight concerns no
    tenant, statuses are not this program's to write (`coexist`, render to a directory) or the MaasTenantConfig CRD
    itself is missing (there is no object to write to)."""
    if not writes_status(config.platform) or observed.installed(TENANT_CONFIG) is False:
        return {}
    tenants = {tenant.name: tenant for tenant in config.tenants}
    failed = {}
    for name in concerned_tenants(config, plan, observed):
        planned = _planned_write(plan, name)
        if planned is None or planned.status_facts is None:
            continue
        write = _judged_again(planned, gateway_facts(config, tenants[name]), observed)
        if write.body["status"]["phase"] not in HEALTHY:  # nothing the failure decides (a snapshot lacking the Secret)
            failed[name] = write
    return failed


def gateway_facts(config: MaasConfig, tenant: TenantConfig) -> dict[str, str]:
    """The `TenantFacts` fields naming the tenant's Gateway, which the tenant rules judge first."""
    return {
        "gateway_namespace": config.platform.gateway.namespace,
        "gateway_name": tenant.gateway_name(config.platform),
    }


def failure_issues(failed: dict[str, Desired]) -> list[ConfigIssue]:
    """What the API server would refuse in these writes (a bug, never expected): the same check as every plan's."""
    plan = Plan()
    for name, write in sorted(failed.items()):
        plan.add("Tenant", name, write)
    return check_plan(plan)


def _planned_write(plan: Plan, tenant: str) -> Desired | None:
    owner = plan.owners_by_key.get(("Tenant", tenant))
    writes = [] if owner is None else owner.objects
    return next((d for d in writes if d.subresource == "status" and d.kind == TENANT_CONFIG), None)


def _judged_again(planned: Desired, gateway: dict[str, Any], observed: Observed) -> Desired:
    """The planned write with the Gateway in its facts, the status those facts give, and no dependencies."""
    facts = TenantFacts.from_inputs({**planned.status_facts, **gateway})
    body = {**planned.body, "status": tenant_status(facts, observed)}
    return replace(planned, body=body, depends_on=(), status_facts=facts.to_inputs())
