"""One request through the rendered objects, stage by stage, as the data plane would take it:

1. Envoy normalises the path (`request.py`) and routes it (`routing.py`): the backend it reaches;
2. the wasm-shim picks its ActionSet (`routing.py`): whose policies run, merged as Kuadrant merges them;
3. Authorino authenticates, calls maas-api and authorizes (`authorization.py`, the select stage in
   `explaining/maasapi.py`);
4. the limits of the effective TokenRateLimitPolicy that hold count the request (`explaining/limits.py`).

The network (routes, Gateways, policies, wasm configurations, the MaaSModelRefs maas-api reads) is built once
per rendered stack and shared by every request.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ... import naming
from ...config import TenantConfig
from ...observe.fields import text_at
from ...plan.gateway.budget import plan_policies
from ...plan.gateway.policies import AUTH, TRLP, PolicyIndex, Rules, effective
from ...plan.gateway.routes import Gateway, Route, gateway_of, routes
from ...plan.gateway.wasm import ActionSet, WasmConfig, wasm_config
from .. import cel
from ..explaining.limits import LimitVerdict, evaluate_limits
from ..explaining.maasapi import LiveSubscription, ModelIndex, Selection, select
from ..explaining.world import World
from .authorization import CREDENTIALS, AuthResult, authorize
from .request import Request, normalised
from .routing import RouteHit, covers, envoy_route, wasm_action_set

NOT_FOUND, TOO_MANY = 404, 429
ANY_HOST = "gateway.example"  # the host of a request to a Gateway whose listener takes any host


def _frozen(found: Mapping[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {name: tuple(sorted(keys)) for name, keys in found.items()}


class SimulationError(Exception):
    """The request names a Gateway the stack does not attach policies to, or is ambiguous about it."""


@dataclass(frozen=True)
class GatewayView:
    gateway: Gateway
    wasm: WasmConfig
    tenant: TenantConfig | None  # whose maas-api the gateway AuthPolicy calls

    @property
    def host(self) -> str:
        """A host the Gateway's first listener takes: its hostname, else any."""
        named = next((listener.hostname for listener in self.gateway.listeners if listener.hostname), None)
        return named.replace("*", "any", 1) if named else ANY_HOST


@dataclass
class Network:
    """Everything the data plane of one rendered stack consists of."""

    world: World

    @cached_property
    def index(self) -> PolicyIndex:
        return PolicyIndex(plan_policies(self.world.plan, self.world.observed))

    @cached_property
    def carried(self) -> list[Route]:
        return routes(self.world.config, self.world.plan, self.world.observed)

    @cached_property
    def gateways(self) -> dict[str, GatewayView]:
        views = {}
        for namespace, name in self.index.gateway_targets():
            gateway = gateway_of(self.world.config, self.world.observed, namespace, name)
            views[gateway.key] = GatewayView(
                gateway, wasm_config(gateway, self.carried, self.index), self._tenant(gateway)
            )
        return views

    def _tenant(self, gateway: Gateway) -> TenantConfig | None:
        platform = self.world.config.platform
        return next(
            (
                t
                for t in self.world.config.tenants
                if t.gateway_name(platform) == gateway.name and platform.gateway.namespace == gateway.namespace
            ),
            None,
        )

    @cached_property
    def models(self) -> ModelIndex:
        """Every rendered MaaSModelRef, with the alias its published status carries (and which are assumed)."""
        keys, backends, aliases, assumed = set(), defaultdict(list), defaultdict(list), {}
        for (kind, namespace, name), body in self.world.objects.items():
            if kind != "MaaSModelRef":
                continue
            key = naming.qualified(namespace, name)
            keys.add(key)
            backends[naming.qualified(namespace, text_at(body, "spec", "modelRef", "name") or "")].append(key)
            published = self.world.published(body)
            if alias := text_at(published.status, "resolvedModelAlias"):
                aliases[alias].append(key)
            if published.assumed:
                assumed[key] = published.assumed
        return ModelIndex(frozenset(keys), _frozen(backends), _frozen(aliases), assumed)

    def subscriptions(self, tenant: TenantConfig) -> list[LiveSubscription]:
        """What the tenant's maas-api reads: the MaaSSubscriptions of its namespace with their statuses."""
        return subscriptions_of(self.world, tenant.namespace)

    def gateway_for(self, request: Request, gateway: str | None) -> GatewayView:
        """The named Gateway, else the platform's for a request without a host, else the one whose listeners
        take the request's host, else the only one."""
        if gateway is not None:
            if gateway not in self.gateways:
                known = ", ".join(sorted(self.gateways)) or "none"
                raise SimulationError(f"no policies attach to Gateway {gateway}; known: {known}")
            return self.gateways[gateway]
        views = list(self.gateways.values())
        platform = self.world.config.platform.gateway
        default = naming.qualified(platform.namespace, platform.name)
        if request.host is None and default in self.gateways:
            return self.gateways[default]
        if request.host is not None:
            host = request.host
            taking = [v for v in views if any(covers(item.hostname or "*", host) for item in v.gateway.listeners)]
            views = taking or views
        if len(views) != 1:
            known = ", ".join(sorted(v.gateway.key for v in views)) or "none"
            raise SimulationError(f"say which Gateway the request goes to (--gateway NS/NAME): {known}")
        return views[0]


@dataclass
class Outcome:
    """What the data plane does with one request."""

    request: Request
    gateway: GatewayView
    path: str  # after normalisation
    host: str
    headers: dict[str, str]
    route: RouteHit | None  # Envoy's choice: the backend
    action_set: ActionSet | None  # the wasm-shim's choice: the policies
    auth: AuthResult
    limits: list[LimitVerdict] = field(default_factory=list)

    @property
    def backend(self) -> str | None:
        """The model key (or, for another route, `route ns/name`) whose backend the request reaches."""
        if self.route is None:
            return None
        return self.route.route.model or f"route {self.route.route.key}"

    @property
    def model(self) -> str | None:
        return None if self.route is None else self.route.route.model

    @property
    def matched(self) -> list[LimitVerdict]:
        return [limit for limit in self.limits if limit.matched]

    @property
    def status(self) -> int:
        if self.auth.status != 200:
            return self.auth.status
        if any(limit.blocks for limit in self.matched):
            return TOO_MANY
        return NOT_FOUND if self.route is None else 200

    @property
    def limit_context(self) -> dict[str, Any]:
        """The context the limits read: the request and the identity the gateway set."""
        return _context(self.path, self.request.method, self.host, self.headers, self.auth.identity)

    @property
    def selection(self) -> Selection | None:
        return self.auth.selection

    @property
    def assumed(self) -> list[str]:
        """The assumed statuses the request's fate depends on (maas-api's answer read them), one line each."""
        return list(self.selection.assumed) if self.selection else []

    @property
    def selected(self) -> str | None:
        """`ns/name` of the subscription maas-api selected, if it selected one."""
        answer = self.selection.answer if self.selection else {}
        if answer.get("error") or not answer.get("name"):
            return None
        return naming.qualified(answer["namespace"], answer["name"])


def subscriptions_of(world: World, namespace: str) -> list[LiveSubscription]:
    """The MaaSSubscriptions of a tenant namespace as its maas-api reads them, each with the status it reads (an
    assumed one says why)."""
    found = []
    for body in world.items("MaaSSubscription", namespace):
        published = world.published(body)
        found.append(LiveSubscription(body, published.status, published.assumed))
    return found


def request_headers(request: Request) -> dict[str, str]:
    """Header names lowercased as Envoy passes them; the caller's credential; the body-routing header when the
    body names a model (the payload processor sets it from the body, replacing a client's copy)."""
    headers = {name.lower(): value for name, value in request.headers}
    headers["authorization"] = CREDENTIALS[request.caller.token]
    if request.model is not None:
        headers[naming.MODEL_NAME_HEADER.lower()] = request.model
    return headers


def simulate(network: Network, request: Request, gateway: str | None = None, limits_if_denied: bool = False) -> Outcome:
    """The request's fate on `gateway` (else the one `Network.gateway_for` picks). A denied request never reaches
    rate limiting: its limits are evaluated only with `limits_if_denied` (which limit a subscription lands in,
    whoever calls)."""
    view = network.gateway_for(request, gateway)
    path = normalised(request.path, request.merge_slashes)
    host = (request.host or view.host).lower()
    headers = request_headers(request)
    context = _context(path, request.method, host, headers)
    action_set = wasm_action_set(view.wasm, host, context)
    route = envoy_route(view.gateway, network.carried, path, host, context["request"])
    auth = authorize(_rules(network, view, action_set, AUTH), context, request.caller, _selector(network, view))
    outcome = Outcome(request, view, path, host, headers, route, action_set, auth)
    if (auth.status == 200 or (limits_if_denied and auth.status != 401)) and action_set is not None:
        outcome.limits = evaluate_limits(_rules(network, view, action_set, TRLP), outcome.limit_context)
    return outcome


def _context(
    path: str, method: str, host: str, headers: Mapping[str, str], identity: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    context = cel.request(path, identity=identity, headers=headers)
    context["request"].update({"method": method, "host": host})
    return context


def _rules(network: Network, view: GatewayView, action_set: ActionSet | None, kind: str) -> Rules | None:
    if action_set is None:
        return None
    gateway = view.gateway
    place = ((gateway.namespace, gateway.name), action_set.listener.name)
    route = (action_set.route.namespace, action_set.route.name)
    return effective(network.index.on_path(kind, *place, route, action_set.rule))


def _selector(network: Network, view: GatewayView) -> Callable[[dict[str, Any]], Selection]:
    """The tenant's maas-api, answering the gateway's select calls."""
    tenant = view.tenant
    subscriptions = [] if tenant is None else network.subscriptions(tenant)
    policies = [] if tenant is None else network.world.items("MaaSAuthPolicy", tenant.namespace)

    def answer(body: dict[str, Any]) -> Selection:
        return select(body, subscriptions, policies, network.models)

    return answer
