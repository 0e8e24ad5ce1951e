"""Which HTTPRoutes attach to which Gateway listener, with the rules Kuadrant reads from them.

A route is taken from the first of: the plan (what this program renders: ExternalModel routes, each tenant's
maas-api route), the snapshot (a live route, e.g. KServe's), and for an LLMInferenceService whose route is neither
(and which the snapshot does not show absent), KServe's current route template
(`config/llmisvcconfig/config-llm-router-route.yaml`, opendatahub-io/kserve `3cf0a041`: 12 rules, 19 matches).
Every route gets the Gateway API defaults the API server applies (a rule without matches matches `PathPrefix /`;
a match without a path has that path), so it reads as stored.

A Gateway comes from the snapshot when present; otherwise it has one listener `https` for the tenant's
`gateway.hostname` (any host when none), which takes every route whatever `sectionName` it names, and class
`openshift-default` (the class and the listener name only enter hashes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from ... import naming
from ...config import MaasConfig, ModelConfig
from ...observe import Observed
from ...observe.views import LiveGateway, LiveInferenceService, LiveRoute, RouteMatch, RouteRule, meta_of, view_of
from ..desired import Desired, Plan

DEFAULT_LISTENER = "https"
DEFAULT_CLASS = "openshift-default"
DEFAULT_UID = "00000000-0000-0000-0000-000000000000"  # an unobserved Gateway's UID: same length as a real one
ENDPOINTS = ("completions", "chat/completions", "responses", "messages")


@dataclass(frozen=True)
class Listener:
    name: str
    hostname: str | None  # None: any host


@dataclass(frozen=True)
class Gateway:
    namespace: str
    name: str
    class_name: str
    uid: str
    listeners: tuple[Listener, ...]
    assumed: bool = False  # not observed: its one listener stands for whichever `sectionName` a route names

    @property
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)


class Match(NamedTuple):
    """One HTTPRouteMatch as stored (path defaulted): what Kuadrant turns into route predicates. A named tuple, as
    `Rule`: the gateway budget builds and hashes one per match of every model's route (19 in KServe's)."""

    path_type: str
    path_value: str
    method: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    query: tuple[tuple[str, str], ...] = ()


class Rule(NamedTuple):
    name: str  # the rule's `name`, else `rule-{n}` (policy-machinery's section name)
    matches: tuple[Match, ...]


@dataclass(frozen=True)
class Route:
    """An HTTPRoute as Kuadrant reads it, and the model it serves (None: another route on the Gateway)."""

    namespace: str
    name: str
    body: Mapping[str, Any]
    model: str | None = None
    planned: bool = False  # as this program renders it, or KServe's template: well-formed

    @cached_property
    def key(self) -> str:
        return naming.qualified(self.namespace, self.name)

    @cached_property
    def view(self) -> LiveRoute:
        """The body read once (a live route may hold anything; a planned one is read directly)."""
        return LiveRoute.planned(self.body) if self.planned else view_of(LiveRoute, self.body)

    @property
    def created(self) -> str:
        return self.view.meta.created or ""

    @property
    def hostnames(self) -> tuple[str, ...]:
        return self.view.hostnames

    @cached_property
    def rules(self) -> tuple[Rule, ...]:
        """Every rule with its matches as the API server stores them."""
        return tuple(Rule(r.name or f"rule-{i + 1}", defaulted_matches(r)) for i, r in enumerate(self.view.rules))

    def listeners(self, gateway: Gateway) -> list[Listener]:
        """The listeners its parentRefs attach it to: a parentRef without `sectionName` attaches every listener."""
        chosen: set[str] = set()
        wanted = (naming.GATEWAY_API_GROUP, "Gateway", gateway.namespace, gateway.name)
        for ref in self.view.parent_refs:
            group, kind = ref.group or naming.GATEWAY_API_GROUP, ref.kind or "Gateway"
            if (group, kind, ref.namespace or self.namespace, ref.name) != wanted:
                continue
            section = None if gateway.assumed else ref.section
            chosen.update(listener.name for listener in gateway.listeners if section in (None, listener.name))
        return [listener for listener in gateway.listeners if listener.name in chosen]


def defaulted_matches(rule: RouteRule) -> tuple[Match, ...]:
    """A rule's matches as stored: none means one `PathPrefix /`; a match's path defaults to `PathPrefix /`."""
    return tuple(_match(match) for match in rule.matches) or (_match(None),)


def _match(match: RouteMatch | None) -> Match:
    if match is None:
        return Match("PathPrefix", "/")
    return Match(match.path_type or "PathPrefix", match.path_value or "/", match.method, match.headers, match.query)


# ------------------------------------------------------------------------------------------------- gateways


def gateway_of(config: MaasConfig, observed: Observed, namespace: str, name: str) -> Gateway:
    """The live Gateway when observed, else the one the configuration describes."""
    live = observed.view(LiveGateway, namespace, name)
    if live is not None:
        listeners = tuple(Listener(item.name or "", item.hostname) for item in live.listeners)
        class_name = live.class_name or DEFAULT_CLASS
        return Gateway(namespace, name, class_name, live.meta.uid or DEFAULT_UID, listeners)
    hostname = next(
        (t.gateway_hostname(config.platform) for t in config.tenants if t.gateway_name(config.platform) == name),
        None,
    )
    return Gateway(namespace, name, DEFAULT_CLASS, DEFAULT_UID, (Listener(DEFAULT_LISTENER, hostname),), assumed=True)


def hostnames(listener: Listener, route: Route) -> list[str]:
    """`HostnamesFromListenerAndHTTPRoute`: the listener's host (`*` when none), or the route's hosts within it."""
    host = listener.hostname or "*"
    if not route.hostnames:
        return [host]
    return [h for h in route.hostnames if _subset_of(h, host)]


def _subset_of(name: str, other: str) -> bool:
    """Istio's `host.Name.SubsetOf`: `name` is covered by `other`."""
    if name.startswith("*"):
        return other.startswith("*") and len(name) >= len(other) and name[1:].endswith(other[1:])
    if other.startswith("*"):
        return name.endswith(other[1:])
    return name == other


# --------------------------------------------------------------------------------------------------- routes


def seen_and_planned(obj: Desired, observed: Observed) -> tuple[Mapping[str, Any], bool]:
    """An object as Kuadrant will see it, and whether that is its planned body. One Pulumi leaves alone
    (`maas:unmanaged`, the live opt-out, an Unmanaged tenant) is seen as it is live when the snapshot has it, else
    as planned; a planned body is this program's own writing, well-formed, so the views read it directly
    (`LiveRoute.planned`, `planned_limit`) rather than leniently."""
    live = observed.lookup(obj.kind, obj.namespace, obj.name).object if "spec" in obj.ignore_changes else None
    return (obj.body, True) if live is None else (live, False)


def routes(config: MaasConfig, plan: Plan, observed: Observed) -> list[Route]:
    """Every route the gateways will carry: rendered, else live, else KServe's template; sorted by key."""
    models = {(m.route_namespace, m.route_name): m for m in config.models}
    found: dict[tuple[str, str], Route] = {}
    rendered = (seen_and_planned(o, observed) for o in plan.objects() if not o.subresource and o.kind == "HTTPRoute")
    live = ((body, False) for ref, body in observed.objects.items() if ref.kind == "HTTPRoute")
    for bodies in (rendered, live):
        for body, planned in bodies:
            meta = meta_of(body)
            place = (meta.namespace or "", meta.name or "")
            if place not in found:
                model = models.get(place)
                found[place] = Route(*place, body, model.key if model else None, planned)
    for place, model in models.items():
        if place not in found and model.modelRef.kind == "LLMInferenceService" and _may_exist(model, observed):
            found[place] = Route(*place, kserve_route(config, model, observed), model.key, planned=True)
    return [found[place] for place in sorted(found)]


def _may_exist(model: ModelConfig, observed: Observed) -> bool:
    """KServe renders the route of an LLMInferenceService that exists, or that nobody looked for."""
    return observed.lookup("LLMInferenceService", model.namespace, model.modelRef.name).state != "absent"


def kserve_route(config: MaasConfig, model: ModelConfig, observed: Observed) -> dict[str, Any]:
    """The HTTPRoute KServe renders for an LLMInferenceService from its current template."""
    tenant = next(t for t in config.tenants if t.name == model.tenant)
    parent = {
        "group": naming.GATEWAY_API_GROUP,
        "kind": "Gateway",
        "name": tenant.gateway_name(config.platform),
        "namespace": config.platform.gateway.namespace,
    }
    spec: dict[str, Any] = {"parentRefs": [parent], "rules": kserve_rules(model, served_model_name(model, observed))}
    if model.route.hostnames:
        spec["hostnames"] = list(model.route.hostnames)
    metadata = {"name": model.route_name, "namespace": model.route_namespace}
    return {"apiVersion": naming.HTTPROUTE_API_VERSION, "kind": "HTTPRoute", "metadata": metadata, "spec": spec}


def served_model_name(model: ModelConfig, observed: Observed) -> str:
    """`spec.model.name` of the live LLMInferenceService, else what configuration says (`served_name`)."""
    live = observed.view(LiveInferenceService, model.namespace, model.modelRef.name)
    return (live and live.model_name) or model.served_name


def kserve_rules(model: ModelConfig, served: str) -> list[dict[str, Any]]:
    """12 rules, 19 matches: per endpoint a `/{ns}/{name}` path rule, one header rule of exact `/v1/...` paths
    (with and without a trailing slash), per endpoint a publisher path rule, then three catch-alls."""
    own = f"/{model.namespace}/{model.modelRef.name}"
    publisher = f"/{naming.kserve_model_header(model.namespace, served)}"
    header = [{"type": "Exact", "name": naming.MODEL_NAME_HEADER, "value": publisher[1:]}]

    def prefix(name: str, value: str) -> dict[str, Any]:
        return {"name": name, "matches": [{"path": {"type": "PathPrefix", "value": value}}]}

    def slug(endpoint: str) -> str:
        return endpoint.replace("/", "-")

    exact = [
        {"path": {"type": "Exact", "value": f"/v1/{endpoint}{slash}"}, "headers": header}
        for endpoint in ENDPOINTS
        for slash in ("", "/")
    ]
    return [
        *(prefix(f"v1-{slug(e)}-path", f"{own}/v1/{e}") for e in ENDPOINTS),
        {"name": "v1-model-routing", "matches": exact},
        *(prefix(f"v1-{slug(e)}-publisher-path", f"{publisher}/v1/{e}") for e in ENDPOINTS),
        prefix("v1-publisher-path-catch-all", publisher),
        prefix("v1-catch-all-path", own),
        {"name": "v1-catch-all-model-routing", "matches": [{"headers": header}]},
    ]


def attached(carried: Iterable[Route], gateway: Gateway) -> list[tuple[Listener, Route]]:
    """(listener, route) pairs of one Gateway, listener by listener in the Gateway's order."""
    pairs = [(listener, route) for route in carried for listener in route.listeners(gateway)]
    order = {listener.name: i for i, listener in enumerate(gateway.listeners)}
    return sorted(pairs, key=lambda pair: order[pair[0].name])
