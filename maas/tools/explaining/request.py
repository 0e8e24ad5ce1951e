"""One model request traced through the rendered objects: gateway AuthPolicy, maas-api select, authorization,
identity, token limits. Both `explain` commands read their answers from such a trace."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...config import ModelConfig, TenantConfig
from ...observe.fields import mapping_at
from .. import cel
from . import authorino, maasapi
from .limits import LimitVerdict, evaluate_limits
from .world import World


@dataclass(frozen=True)
class Objects:
    """The rendered objects one model's requests meet."""

    model: ModelConfig
    tenant: TenantConfig
    gateway: dict[str, Any] | None
    route_auth: dict[str, Any] | None
    limits: dict[str, Any] | None  # the model's TokenRateLimitPolicy, else the tenant's default deny
    subscriptions: list[maasapi.LiveSubscription]
    auth_policies: list[dict[str, Any]]

    @property
    def path(self) -> str:
        """A path-routed inference request: the gateway takes the model identity from `/{ns}/{name}/...`."""
        return f"/{self.model.namespace}/{self.model.name}/v1/chat/completions"

    @property
    def maas_api(self) -> str:
        return f"maas-api of tenant {self.tenant.name} (reads namespace {self.tenant.namespace})"


def objects_for(world: World, model: ModelConfig) -> Objects:
    tenant = world.tenant_of(model)
    tenant_outputs = world.tenant_outputs.get(tenant.name, {})
    model_outputs = world.outputs["models"][model.key]
    limits = world.object("TokenRateLimitPolicy", model_outputs["tokenRateLimitPolicy"])
    if limits is None:
        limits = world.object("TokenRateLimitPolicy", tenant_outputs.get("defaultDenyPolicy"))
    subscriptions = [
        maasapi.LiveSubscription(body, _status(world, body))
        for body in world.items("MaaSSubscription", tenant.namespace)
    ]
    return Objects(
        model=model,
        tenant=tenant,
        gateway=world.object("AuthPolicy", tenant_outputs.get("gatewayAuthPolicy")),
        route_auth=world.object("AuthPolicy", model_outputs["access"]["authPolicy"]),
        limits=limits,
        subscriptions=subscriptions,
        auth_policies=world.items("MaaSAuthPolicy", tenant.namespace),
    )


def _status(world: World, body: Mapping[str, Any]) -> Mapping[str, Any]:
    """The status maas-api reads: the one the program writes, else the live one (a controller keeps it in
    `coexist`), else none."""
    written = world.status(body)
    if written is not None:
        return mapping_at(written, "status")
    metadata = body["metadata"]
    live = world.observed.lookup(body["kind"], metadata["namespace"], metadata["name"])
    return mapping_at(live.object, "status")


@dataclass
class Trace:
    objects: Objects
    gateway: dict[str, Any]  # the tenant's gateway AuthPolicy
    context: dict[str, Any]
    select_request: dict[str, Any] | None = None
    selection: maasapi.Selection | None = None
    rules: list[authorino.RuleVerdict] = field(default_factory=list)
    identity: dict[str, Any] = field(default_factory=dict)
    limit_context: dict[str, Any] = field(default_factory=dict)
    limits: list[LimitVerdict] = field(default_factory=list)

    @property
    def allowed(self) -> bool | None:
        """True when every applying rule passes, False when one denies, None when one was not evaluated."""
        applying = [rule.passed for rule in self.rules if rule.applies]
        if False in applying:
            return False
        return None if None in applying else True

    @property
    def matched(self) -> list[LimitVerdict]:
        return [verdict for verdict in self.limits if verdict.matched]


def trace(
    objects: Objects, user: str, groups: Sequence[str], subscription: str | None, limits_if_denied: bool = False
) -> Trace:
    """Evaluate one request of `user` (with `groups`, asking for `subscription`) to the model. A denied request
    never reaches rate limiting, so its token limits are evaluated only with `limits_if_denied` (to show which
    limit a subscription lands in whoever calls)."""
    gateway = objects.gateway
    if gateway is None:
        raise authorino.NotModelledError(f"tenant {objects.tenant.name} has no rendered gateway AuthPolicy")
    result = Trace(objects, gateway, authorino.caller_context(objects.path, user, groups, subscription))
    context = result.context
    result.select_request = authorino.select_request(gateway, context)
    if result.select_request is not None:
        result.selection = maasapi.select(result.select_request, objects.subscriptions, objects.auth_policies)
        context = authorino.with_selection(context, result.selection.answer)
    result.context = context
    result.rules = authorino.authorization(gateway, objects.route_auth, context)
    if (result.allowed or limits_if_denied) and objects.limits is not None:
        result.identity = authorino.identity(gateway, context)
        headers = context["request"]["headers"]
        result.limit_context = cel.request(objects.path, identity=result.identity, headers=headers)
        result.limits = evaluate_limits(objects.limits, result.limit_context)
    return result
