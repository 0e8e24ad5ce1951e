"""From a validated configuration to the full desired state, grouped by the component that owns each object.

Concern modules compute objects; this module only assembles them under their owners (`Platform`, one `Tenant`
per tenant, one `Model` per model) and applies the cross-cutting rules: the effective rate-limit identities, the
unmanaged objects (`unmanaged.py`), `controllerMode: coexist` (a running maas-controller keeps out), readiness,
forced applies over live objects (`adoption.py`), the quota-continuity report, and the status writes, last. Only
then is the whole plan narrowed to the stack's `platform.scope` (`scope.py`), so that every rule judges the whole
configuration in every stack.
"""

from __future__ import annotations

from collections.abc import Mapping

from .. import naming
from ..config import MaasConfig, TenantConfig, internal_endpoint_warnings, plaintext_endpoint_warnings
from ..observe import Observed
from .adoption import adopt_and_force
from .checks.ambiguous_selection import ambiguous_selection_warnings
from .checks.quota import quota_report
from .checks.routing_headers import routing_header_issues
from .checks.unmetered import unmetered_report
from .dashboard import usage_dashboard
from .desired import Desired, Plan
from .gateway import add_gateway_budget
from .models.resources import Publication, publish
from .models.routing import external_model_desired
from .outputs import output_warnings, subscription_outputs
from .policies.access import add_access_control
from .policies.identity import Identity, effective_identities
from .policies.ratelimit import RateLimitPlan, plan_rate_limits
from .readiness import controller_finalizer_warnings, set_readiness
from .scope import select_scope
from .server_fields import ignore_server_populated_fields
from .tenants.management import add_tenant_statuses, add_tenants, apply_management_states
from .unmanaged import apply_unmanaged


def build_plan(config: MaasConfig, observed: Observed) -> Plan:
    """Deterministic for a given configuration and snapshot; `Observed.nothing()` gives the intended state."""
    plan = Plan()
    plan.warnings.extend(observed.unreadable())  # each live object of a wrong shape, once, whoever reads it
    dashboard, dashboard_warnings = usage_dashboard(config, observed)
    if dashboard:
        plan.add("Platform", "platform", *dashboard)
    plan.warnings.extend(dashboard_warnings)
    plan.warnings.extend([*internal_endpoint_warnings(config), *plaintext_endpoint_warnings(config)])
    for tenant in config.tenants:
        plan.owner("Tenant", tenant.name).outputs = _tenant_outputs(config, tenant)
    identities = effective_identities(config, observed)
    plan.warnings.extend(identities.warnings)
    rate_limits = _add_rate_limits(config, identities.of, plan)
    publication = _add_models(config, observed, identities.of, plan)
    add_access_control(config, plan)
    plan.warnings.extend(ambiguous_selection_warnings(config))
    add_tenants(config, observed, plan)
    apply_management_states(config, plan)
    apply_unmanaged(config, observed, plan)
    quota = quota_report(config, observed, plan)  # after the opt-outs: a policy Pulumi leaves alone resets nothing
    plan.warnings.extend(quota.warnings)
    plan.outputs["quotaResets"] = quota.outputs
    unmetered = unmetered_report(config, observed, plan, rate_limits.grouped)  # issue 22: unmetered paths
    plan.warnings.extend(unmetered.warnings)
    plan.outputs["unmeteredTraffic"] = unmetered.outputs
    plan.warnings.extend(controller_finalizer_warnings(config, observed, plan))
    if config.platform.controllerMode == "coexist":
        _hand_over_from_controller(plan)
    set_readiness(plan, config.platform.awaitCustomResources)
    adopt_and_force(plan, config.platform.controllerMode)
    _add_statuses(publication, plan)
    add_tenant_statuses(config, observed, plan)
    carried = add_gateway_budget(config, observed, plan, rate_limits)  # on the whole plan, before the scope narrows it
    gateways = sorted({(config.platform.gateway.namespace, t.gateway_name(config.platform)) for t in config.tenants})
    plan.issues.extend(routing_header_issues(config, observed, carried, gateways))
    plan.warnings.extend(output_warnings(config, plan.outputs))
    ignore_server_populated_fields(plan)  # after every rule that sets options: adoption replaces nothing
    plan.resolve_dependencies()
    return select_scope(config, plan)


def _add_models(config: MaasConfig, observed: Observed, identities: Mapping[str, Identity], plan: Plan) -> Publication:
    """ExternalModel routing and the MaaS CRs maas-api reads, with their stack outputs; statuses come last."""
    for model in config.models:
        if model.modelRef.kind == "ExternalModel":
            plan.add("Model", model.key, *external_model_desired(config, model))
    publication = publish(config, observed, identities)
    for (kind, name), bodies in publication.objects.items():
        plan.add(kind, name, *map(Desired, bodies))
    for (kind, name), outputs in publication.outputs.items():
        plan.owner(kind, name).outputs.update(outputs)
    plan.warnings.extend(publication.warnings)
    return publication


def _add_statuses(publication: Publication, plan: Plan) -> None:
    """After every other rule (a status write is neither annotated nor unmanaged), waiting for what it describes."""
    for (kind, name), statuses in publication.statuses.items():
        plan.add(kind, name, *statuses)


def _tenant_outputs(config: MaasConfig, tenant: TenantConfig) -> dict:
    return {
        "namespace": tenant.namespace,
        "gateway": naming.qualified(config.platform.gateway.namespace, tenant.gateway_name(config.platform)),
        "managementState": tenant.managementState,
    }


def _add_rate_limits(config: MaasConfig, identities: Mapping[str, Identity], plan: Plan) -> RateLimitPlan:
    rate_limits = plan_rate_limits(config, identities)
    models = {}
    for model in sorted(config.models, key=lambda m: m.key):
        owner = plan.owner("Model", model.key)
        policy = rate_limits.policies.get(model.key)
        if policy is not None:
            owner.objects.append(Desired(policy))
        owner.outputs["route"] = naming.qualified(model.route_namespace, model.route_name)
        owner.outputs["tokenRateLimitPolicy"] = None if policy is None else Desired(policy).logical_name
        models[model.key] = owner.outputs
    plan.warnings.extend(rate_limits.warnings)
    plan.outputs["models"] = models
    plan.outputs["subscriptions"] = subscription_outputs(config, rate_limits)
    return rate_limits


def _hand_over_from_controller(plan: Plan) -> None:
    """With a maas-controller still running, mark every object so that the controller leaves it alone; a
    MaasTenantConfig also gets the tenant reconciler's own opt-out, so the controller does not reconcile it."""
    for owner in plan.owners:
        owner.objects = [_handed_over(obj) for obj in owner.objects]


def _handed_over(obj: Desired) -> Desired:
    """The second annotation tells this program's own opt-out from an operator's when it reads the object back."""
    obj = obj.annotated(naming.CONTROLLER_MANAGED_ANNOTATION, "false").annotated(naming.HANDED_OVER_ANNOTATION, "true")
    if obj.kind == "MaasTenantConfig":
        obj = obj.annotated(naming.MANAGEMENT_STATE_ANNOTATION, "Unmanaged")
    return obj
