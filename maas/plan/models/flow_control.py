"""Subscription request priority for llm-d flow control (issue 22): InferenceObjectives and their status.

Upstream (maas-controller after 3.6; `docs/content/architecture-internals/proposals/flow-control.md`) gives a
subscription an optional `inferencePriority`. Each model of the subscription that KServe serves through one
InferencePool (observed in `LLMInferenceService.status.router.scheduler.inferencePool`) maps to an objective name
for (tenant, subscription, pool), published per model in `status.flowControlStatuses`: maas-api returns it as
`objective` in its select answer, and the gateway injects it (`gateway_auth.py`). Upstream publishes the entries
(`NotRequired`) on subscriptions without a priority too; this program publishes them only where the priority is
set: without it every model is `NotRequired` at the scheduler's default priority 0, which an absent header gives
alike, and the entries would add about 1 KB to each of 10,000 statuses, in every write and in the state.
With the priority set, one `InferenceObjective` per distinct pool carries it, in the pool's (= the model's)
namespace; without it none exists and llm-d schedules at priority 0.

The states are those upstream's code publishes (`maassubscription_flowcontrol.go` at `353515fe`): `NotRequired`,
`Pending`, `Failed`, `NotApplicable`, `Unsupported`. Its design note's `Ready` is never set by that code, so it is
not here either. A model whose pool was not observed (an observation-free render, or a service still reconciling)
is `Pending` with no objective: no name can be derived without the pool. An unsupported pool is a warning (when the
priority is set, as upstream only emits events then), never a failure of the subscription.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ... import naming
from ...config import MaasConfig, ModelConfig, SubscriptionConfig
from ...observe import Observed
from ...observe.views import LiveInferenceService, LiveRoute, PoolRef
from ..desired import k8s_object, object_identity
from .routing import route_of

NOT_REQUIRED, PENDING, FAILED, NOT_APPLICABLE, UNSUPPORTED = (
    "NotRequired",
    "Pending",
    "Failed",
    "NotApplicable",
    "Unsupported",
)
OBJECTIVE_KIND = "InferenceObjective"


@dataclass(frozen=True)
class _Resolution:
    """One model's pool, or why it has none (`state`, `message`)."""

    pool: PoolRef | None = None
    state: str = ""
    message: str = ""


@dataclass
class FlowControl:
    """What one subscription contributes: its status entries, its objectives by owning model, warnings."""

    statuses: list[dict[str, Any]] = field(default_factory=list)
    objectives: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # model key -> InferenceObjectives
    warnings: list[str] = field(default_factory=list)

    @property
    def identities(self) -> list[str]:
        """The objectives' identities: the subscription's status is written after them."""
        if not self.objectives:  # most subscriptions: no inferencePriority
            return []
        bodies = [body for bodies in self.objectives.values() for body in bodies]
        return sorted(
            object_identity(OBJECTIVE_KIND, b["metadata"]["namespace"], b["metadata"]["name"]) for b in bodies
        )


# What a subscription without `inferencePriority` contributes (most of ten thousand): one shared value, never changed.
UNSCHEDULED = FlowControl()


def flow_control(config: MaasConfig, subscription: SubscriptionConfig, observed: Observed) -> FlowControl:
    """Per distinct model reference (sorted by namespace and name) its state, and the objectives the priority needs."""
    priority = subscription.inferencePriority
    if priority is None:
        return UNSCHEDULED  # nothing to schedule by: every model would be NotRequired at the scheduler's priority 0
    result = FlowControl()
    tenant = subscription.namespace.removeprefix(naming.TENANT_NAMESPACE_PREFIX)
    api_missing = priority is not None and observed.installed(OBJECTIVE_KIND) is False
    pools: dict[tuple[str, str], str] = {}  # (namespace, pool) -> the first model key served from it
    for key in sorted({ref.key for ref in subscription.modelRefs}):
        namespace, name = key.split("/", 1)
        entry: dict[str, Any] = {"name": name, "namespace": namespace}
        model = config.models_by_key.get(key)
        found = _resolve(config, model, key, observed)
        if found.pool is None:
            entry.update(state=found.state, message=found.message)
            if found.state == UNSUPPORTED and priority is not None:
                result.warnings.append(_unsupported_warning(subscription, key, found.message))
            result.statuses.append(entry)
            continue
        pool = found.pool
        objective = naming.inference_objective_name(
            tenant, (subscription.namespace, subscription.name), (namespace, pool.name)
        )
        entry["inferencePool"] = {"group": pool.group, "kind": pool.kind, "name": pool.name, "namespace": namespace}
        entry["objectiveName"] = objective
        entry.update(_state(priority, api_missing))
        result.statuses.append(entry)
        if priority is not None and not api_missing:
            pools.setdefault((namespace, pool.name), key)
            if pools[(namespace, pool.name)] == key:
                body = inference_objective(subscription, tenant, objective, namespace, pool, priority)
                result.objectives.setdefault(key, []).append(body)
    if api_missing and any("objectiveName" in entry for entry in result.statuses):
        result.warnings.append(_api_missing_warning(subscription))
    return result


def _state(priority: int | None, api_missing: bool) -> dict[str, str]:
    if priority is None:
        return {
            "state": NOT_REQUIRED,
            "message": "spec.inferencePriority is unset; no InferenceObjective is required and the scheduler "
            "applies priority 0",
        }
    if api_missing:
        return {"state": FAILED, "message": f"the {OBJECTIVE_KIND} API (inferenceobjectives.llm-d.ai) is not installed"}
    return {"state": PENDING, "message": "waiting for InferenceObjective reconciliation"}


def _resolve(config: MaasConfig, model: ModelConfig | None, key: str, observed: Observed) -> _Resolution:
    """Upstream's `resolveModelInferencePool` (`1cd64555`), over the snapshot, plus its tenant-Gateway check."""
    if model is None:
        return _Resolution(state=PENDING, message=f"MaaSModelRef {key} not found")
    if model.modelRef.kind != "LLMInferenceService":
        return _Resolution(
            state=NOT_APPLICABLE,
            message=f"model kind {model.modelRef.kind} is not served through an inference scheduler",
        )
    service = f"{model.namespace}/{model.modelRef.name}"
    lookup = observed.lookup("LLMInferenceService", model.namespace, model.modelRef.name)
    if lookup.state == "unknown":
        return _Resolution(state=PENDING, message=f"LLMInferenceService {service} was not observed")
    live = observed.view(LiveInferenceService, model.namespace, model.modelRef.name)
    if live is None:
        return _Resolution(state=PENDING, message=f"LLMInferenceService {service} not found")
    return _resolve_live(config, model, live, observed)


def _resolve_live(
    config: MaasConfig, model: ModelConfig, live: LiveInferenceService, observed: Observed
) -> _Resolution:
    service = f"{model.namespace}/{model.modelRef.name}"
    if live.group is not None and live.active_members > 1:
        return _Resolution(
            state=UNSUPPORTED,
            message=f"LLMInferenceService {service} splits traffic across routing group {live.group}; flow "
            "control requires a single InferencePool",
        )
    pool = live.pool
    if pool is None:
        if _ready(live):
            return _Resolution(
                state=NOT_APPLICABLE,
                message=f"LLMInferenceService {service} is not served through an inference scheduler",
            )
        return _Resolution(
            state=PENDING, message=f"waiting for LLMInferenceService {service} to report an InferencePool"
        )
    if pool.namespace and pool.namespace != model.namespace:
        return _Resolution(
            state=UNSUPPORTED,
            message=f"InferencePool {pool.namespace}/{pool.name} is not in the LLMInferenceService namespace "
            f"{model.namespace}",
        )
    off_gateway = _not_on_gateway(config, model, observed)
    if off_gateway:
        return _Resolution(state=UNSUPPORTED, message=off_gateway)
    group, kind = pool.group or naming.INFERENCE_POOL_GROUP, pool.kind or naming.INFERENCE_POOL_KIND
    return _Resolution(PoolRef(group, kind, pool.name, model.namespace))


def _ready(live: LiveInferenceService) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in live.conditions)


def _not_on_gateway(config: MaasConfig, model: ModelConfig, observed: Observed) -> str | None:
    """Upstream validates that the model's HTTPRoute references the tenant's Gateway; a route not observed (or not
    there yet) is not judged, as upstream skips it."""
    route = route_of(config, model)
    live = observed.view(LiveRoute, route.namespace, route.name)
    if live is None:
        return None
    gateway = (route.gateway_namespace, route.gateway_name)
    if any((ref.namespace or route.namespace, ref.name) == gateway for ref in live.parent_refs):
        return None
    return (
        f"HTTPRoute {route.namespace}/{route.name} does not reference the tenant's Gateway "
        f"{route.gateway_namespace}/{route.gateway_name}"
    )


def inference_objective(
    subscription: SubscriptionConfig, tenant: str, name: str, namespace: str, pool: PoolRef, priority: int
) -> dict[str, Any]:
    """Upstream's `buildInferenceObjective`: `poolRef` to the pool in its own namespace, `priority` copied."""
    labels = {
        **naming.tenant_labels(tenant),
        naming.PART_OF: naming.OBJECTIVE_PART_OF,
        naming.COMPONENT: naming.OBJECTIVE_COMPONENT,
        naming.SUBSCRIPTION_NAMESPACE_LABEL: subscription.namespace,
    }
    annotations = {naming.SUBSCRIPTION_NAME_ANNOTATION: subscription.name, naming.OBJECTIVE_TENANT_ANNOTATION: tenant}
    spec = {"priority": priority, "poolRef": {"group": pool.group, "kind": pool.kind, "name": pool.name}}
    return k8s_object(
        naming.INFERENCE_OBJECTIVE_API_VERSION, OBJECTIVE_KIND, name, namespace, spec, labels, annotations
    )


def _unsupported_warning(subscription: SubscriptionConfig, key: str, message: str) -> str:
    return (
        f"subscription {subscription.key}: inferencePriority is not applied to model {key}: {message} "
        "(the subscription is unaffected; its requests to that model run at the scheduler's default priority 0)"
    )


def _api_missing_warning(subscription: SubscriptionConfig) -> str:
    return (
        f"subscription {subscription.key}: inferencePriority is set but the cluster does not serve "
        f"{naming.INFERENCE_OBJECTIVE_API_VERSION} {OBJECTIVE_KIND} (install llm-d's inferenceobjectives.llm-d.ai "
        "CRD); no InferenceObjective is created and its models report Failed"
    )
