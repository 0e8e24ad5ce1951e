"""One caller's inference request to one model, traced by the request simulator through the rendered objects:
routing, the gateway and model AuthPolicies, maas-api's select, the token limits. `explain caller` and
`explain subscription` read their answers from such a trace."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config import ModelConfig, TenantConfig
from ..simulator import Caller, Outcome, Request, simulate
from ..simulator.authorization import RuleVerdict
from ..simulator.chain import subscriptions_of
from . import maasapi
from .limits import LimitVerdict
from .world import World


@dataclass(frozen=True)
class Objects:
    """The rendered objects one model's requests meet."""

    model: ModelConfig
    tenant: TenantConfig
    route_auth: dict[str, Any] | None
    limits: dict[str, Any] | None  # the model's TokenRateLimitPolicy, else the tenant's default deny
    subscriptions: list[maasapi.LiveSubscription]
    auth_policies: list[dict[str, Any]]
    gateway_namespace: str
    gateway_name: str
    route: str = ""  # `ns/name` of the HTTPRoute that serves the model

    @property
    def path(self) -> str:
        """A path-routed inference request on the path its route serves: `/{ns}/{backend}/...` (KServe's and the
        ExternalModel route's prefix), from which the gateway also takes the model identity."""
        return f"/{self.model.namespace}/{self.model.modelRef.name}/v1/chat/completions"

    @property
    def host(self) -> str | None:
        """The route's own first hostname, else the Gateway's (None)."""
        return self.model.route.hostnames[0] if self.model.route.hostnames else None

    @property
    def gateway_key(self) -> str:
        return naming.qualified(self.gateway_namespace, self.gateway_name)

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
    subscriptions = subscriptions_of(world, tenant.namespace)
    return Objects(
        model=model,
        tenant=tenant,
        route_auth=world.object("AuthPolicy", model_outputs["access"]["authPolicy"]),
        limits=limits,
        subscriptions=subscriptions,
        auth_policies=world.items("MaaSAuthPolicy", tenant.namespace),
        gateway_namespace=world.config.platform.gateway.namespace,
        gateway_name=tenant.gateway_name(world.config.platform),
        route=model_outputs.get("route", ""),
    )


@dataclass
class Trace:
    """A request of one caller to one model, as the request simulator answers it."""

    objects: Objects
    outcome: Outcome

    @property
    def select_request(self) -> dict[str, Any] | None:
        return self.outcome.auth.select_request

    @property
    def selection(self) -> maasapi.Selection | None:
        return self.outcome.selection

    @property
    def rules(self) -> list[RuleVerdict]:
        return self.outcome.auth.rules

    @property
    def identity(self) -> dict[str, Any]:
        return self.outcome.auth.identity

    @property
    def limits(self) -> list[LimitVerdict]:
        return self.outcome.limits

    @property
    def routed(self) -> bool:
        """Envoy has a route rule for the request (else 404, whatever the policies say)."""
        return self.outcome.route is not None

    @property
    def allowed(self) -> bool | None:
        """True when every applying rule passes, False when one denies or no route rule matches (404), None when
        one was not evaluated."""
        if self.outcome.auth.status != 200 or not self.routed:
            return False
        return None if self.outcome.auth.undecided else True

    @property
    def assumed(self) -> list[str]:
        """The assumed statuses the decision depends on (`Outcome.assumed`)."""
        return self.outcome.assumed

    @property
    def matched(self) -> list[LimitVerdict]:
        return [verdict for verdict in self.limits if verdict.matched]

    @property
    def limit_context(self) -> dict[str, Any]:
        return self.outcome.limit_context


def trace(
    world: World,
    objects: Objects,
    user: str,
    groups: Sequence[str],
    subscription: str | None,
    limits_if_denied: bool = False,
) -> Trace:
    """One inference request of `user` (with `groups`, asking for `subscription`) on the model's own path, on a
    host its route serves, through the request simulator. A denied request never reaches rate limiting, so its
    token limits are evaluated only with `limits_if_denied` (to show which limit a subscription lands in whoever
    calls)."""
    headers = (("X-MaaS-Subscription", subscription),) if subscription else ()
    request = Request(objects.path, Caller(user, tuple(groups)), host=objects.host, headers=headers)
    outcome = simulate(world.network, request, objects.gateway_key, limits_if_denied)
    return Trace(objects, outcome)
