"""Every check that stops an update before anything is registered, in one list: what `pulumi up` runs and what
`python -m maas validate` reports, so the two cannot drift apart."""

from __future__ import annotations

from ...config import ConfigIssue, MaasConfig
from ...crdschema import CrdRegistry
from ...observe import Observed
from ..desired import Plan
from .batches import batch_issues
from .gateway_budget import gateway_budget_issues
from .identities import identity_issues
from .preflight import preflight
from .provider_options import provider_option_issues
from .quota import quota_issues
from .selfcheck import check_plan
from .unmetered import unmetered_issues


def plan_issues(
    config: MaasConfig, plan: Plan, observed: Observed, registry: CrdRegistry | None = None
) -> list[ConfigIssue]:
    """Missing prerequisites, blocked quota resets, gateways over the budget, objects sharing an identity (in the
    whole configuration, also when `platform.scope` narrowed the plan), what the API server would refuse and
    subscriptions a batch must not take over."""
    identities = list(dict.fromkeys([*plan.issues, *identity_issues(plan)]))
    return (
        preflight(config, plan, observed)
        + quota_issues(config, plan.outputs["quotaResets"])
        + unmetered_issues(config, plan.outputs.get("unmeteredTraffic", {}).values())
        + gateway_budget_issues(config, plan.outputs.get("gateways", {}))
        + identities
        + check_plan(plan, registry)
        + provider_option_issues(config, plan)
        + batch_issues(config, plan, observed)
    )
