"""MaaSModelRef status: seed 004 and upstream 3.1-3.4, from configuration and what was observed of the cluster.

maas-api lists a model only when its phase is `Ready`, so the phase must be true of the cluster, not of the
intent: `Failed` when the backend does not exist, its route serves another Gateway, or a URL or hostname read from
the cluster may not be handed to clients (`urls.py`), `Pending` while the route is missing or not accepted, the
backend not ready or the model not governed, `Ready` otherwise. Every non-Ready phase clears `endpoint`. When the
snapshot did not look at the model's route (offline render without `--observed`, `platform.observe: false`) the
status is the intended one, marked `RuntimeReady: Unknown/NotObserved`.

The inputs are plain data (`ModelFacts`), so the status writer can judge the model again at `pulumi up`, just
before it writes, through this same function.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from ...config.errors import quoted
from ...observe import Lookup, ObjectRef, Observed
from ...observe.views import LiveGateway, LiveInferenceService, LiveRoute, ParentRef
from .conditions import condition, first_condition, has_condition
from .facts import Facts
from .urls import hostname_problem, url_problem

GOVERNANCE = ("authPolicy", "subscription")
CONFIG_KEYS = {"authPolicy": "maas:authPolicies", "subscription": "maas:subscriptions"}
NOT_OBSERVED = (
    "not observed: Pulumi publishes this status from configuration at `pulumi up` and does not watch the backend"
)
# Upstream's address preference for an LLMInferenceService's external URL (providers_llmisvc.go).
PREFERRED_ADDRESSES = ("gateway-external-model-routing", "gateway-external")
REFUSED_FIX = "it is published once it is an http(s) URL a client can call, or set the model's endpointOverride"


@dataclass(frozen=True)
class ModelFacts(Facts):
    """What configuration says of one model and its governance: everything the status needs besides the cluster."""

    name: str
    namespace: str
    kind: str  # LLMInferenceService | ExternalModel
    backend: str
    route_name: str
    route_namespace: str
    gateway_name: str
    gateway_namespace: str
    route_hostnames: tuple[str, ...] = ()
    gateway_hostname: str | None = None
    endpoint_override: str | None = None
    alias: str | None = None
    governed_by: tuple[str, ...] = ()

    @property
    def governed(self) -> bool:
        return set(self.governed_by) == set(GOVERNANCE)


def observation_needed(facts: ModelFacts) -> tuple[ObjectRef, ...]:
    """The objects `model_status` reads: the route, the Gateway, and the LLMInferenceService."""
    refs = [
        ObjectRef("HTTPRoute", facts.route_namespace, facts.route_name),
        ObjectRef("Gateway", facts.gateway_namespace, facts.gateway_name),
    ]
    if facts.kind == "LLMInferenceService":
        refs.append(ObjectRef("LLMInferenceService", facts.namespace, facts.backend))
    return tuple(refs)


def settling(facts: ModelFacts, observed: Observed) -> bool:
    """Whether a governed model waits only for its route (absent or not yet accepted): a route this `pulumi up`
    just created, which the Gateway accepts within seconds, so the status writer waits a little before it writes."""
    route = observed.lookup("HTTPRoute", facts.route_namespace, facts.route_name)
    backend = _backend(facts, observed)
    if not facts.governed or route.state == "unknown" or (facts.kind == "LLMInferenceService" and not backend.object):
        return False
    live = observed.view(LiveRoute, facts.route_namespace, facts.route_name)
    return live is None or (_references_gateway(live, facts) and not _accepted(live, facts))


def model_status(facts: ModelFacts, observed: Observed) -> dict[str, Any]:
    route = observed.lookup("HTTPRoute", facts.route_namespace, facts.route_name)
    backend = _backend(facts, observed)
    known_absent = facts.kind == "LLMInferenceService" and backend.state == "absent"  # Failed, whatever the route
    if (route.state == "unknown" and not known_absent) or backend.state == "unknown":
        return _intended(facts)
    live_route = observed.view(LiveRoute, facts.route_namespace, facts.route_name)
    live_backend = observed.view(LiveInferenceService, facts.namespace, facts.backend) if backend.object else None
    return _observed(facts, live_route, live_backend, observed.view(LiveGateway, *_gateway(facts)))


def _backend(facts: ModelFacts, observed: Observed) -> Lookup:
    """An LLMInferenceService model's backend; an ExternalModel's is this program's own CR (always there)."""
    if facts.kind != "LLMInferenceService":
        return Lookup("absent")
    return observed.lookup("LLMInferenceService", facts.namespace, facts.backend)


# -------------------------------------------------------------------------------------------- intended


def _intended(facts: ModelFacts) -> dict[str, Any]:
    """Without observation: `Ready` when governed, the endpoint from configuration (upstream 3.3 without status)."""
    ready = facts.governed
    endpoint = (facts.endpoint_override or _configured_endpoint(facts) or "") if ready else ""
    route = {"name": facts.route_name, "hostnames": list(facts.route_hostnames), "gateway": _gateway(facts)}
    ready_condition = (
        condition("Ready", "True", "Reconciled", "governed; published by Pulumi")
        if ready
        else condition("Ready", "False", "BackendNotReady", "waiting for a subscription and an auth policy")
    )
    conditions = [
        _governance_condition(facts),
        ready_condition,
        condition("RuntimeReady", "Unknown", "NotObserved", NOT_OBSERVED),
    ]
    return _status(facts, "Ready" if ready else "Pending", endpoint, route, conditions)


def _configured_endpoint(facts: ModelFacts) -> str | None:
    named = (h for h in facts.route_hostnames if not h.startswith("*."))  # a wildcard names no host to call
    host = next(named, None) or facts.gateway_hostname
    return None if host is None else _endpoint_on(facts, host)


def _endpoint_on(facts: ModelFacts, host: str) -> str:
    """LLMInferenceService endpoints carry the MaaSModelRef name as path; ExternalModel endpoints are the host.
    An IPv6 address (a Gateway's `status.addresses`) is bracketed, as a URL writes it."""
    authority = f"[{host}]" if ":" in host else host
    return f"https://{authority}" if facts.kind == "ExternalModel" else f"https://{authority}/{facts.name}"


# -------------------------------------------------------------------------------------------- observed


def _observed(
    facts: ModelFacts,
    route: LiveRoute | None,
    backend: LiveInferenceService | None,
    gateway: LiveGateway | None,
) -> dict[str, Any]:
    if facts.kind == "LLMInferenceService" and backend is None:
        return _failed(facts, None, f"LLMInferenceService {facts.namespace}/{facts.backend} not found")
    if route is None:
        where = f"{facts.route_namespace}/{facts.route_name}"
        return _pending(facts, None, f"HTTPRoute {where} does not exist yet", runtime=None)
    refused = _refused_hostname(facts, route) or _wrong_gateway(facts, route)
    if refused is not None:
        return _failed(facts, route, refused)
    problems = _runtime_problems(facts, route, backend)
    if problems:
        return _pending(facts, route, "; ".join(problems), runtime="; ".join(problems))
    if not facts.governed:
        return _pending(facts, route, "waiting for a subscription and an auth policy", runtime="")
    return _ready(facts, route, backend, gateway)


def _ready(
    facts: ModelFacts,
    route: LiveRoute,
    backend: LiveInferenceService | None,
    gateway: LiveGateway | None,
) -> dict[str, Any]:
    """Governed, backend ready, route accepted: `Ready`, unless the endpoint found on the cluster is refused."""
    found = None if facts.endpoint_override else _discovered_endpoint(facts, route, backend, gateway)
    refused = _refused_endpoint(found)
    if refused is not None:
        return _failed(facts, route, refused)
    endpoint = facts.endpoint_override or (found.url if found else "")
    conditions = [
        _governance_condition(facts),
        condition("Ready", "True", "Reconciled", "governed, backend ready and route accepted"),
        _runtime_condition(""),
    ]
    return _status(facts, "Ready", endpoint, _route_fields(facts, route), conditions, backend)


def _failed(facts: ModelFacts, route: LiveRoute | None, message: str) -> dict[str, Any]:
    conditions = [
        _governance_condition(facts),
        condition("Ready", "False", "ReconcileFailed", message),
        _runtime_condition(message),
    ]
    return _status(facts, "Failed", "", _route_fields(facts, route), conditions)


def _pending(facts: ModelFacts, route: LiveRoute | None, message: str, runtime: str | None) -> dict[str, Any]:
    """`runtime`: None when the runtime could not be judged (no route yet), "" when healthy, else its problem."""
    conditions = [_governance_condition(facts), condition("Ready", "False", "BackendNotReady", message)]
    if runtime is not None:
        conditions.append(_runtime_condition(runtime))
    return _status(facts, "Pending", "", _route_fields(facts, route), conditions)


def _status(
    facts: ModelFacts,
    phase: str,
    endpoint: str,
    route: dict[str, Any] | None,
    conditions: list[dict[str, str]],
    backend: LiveInferenceService | None = None,
) -> dict[str, Any]:
    """Every non-Ready phase has no endpoint (upstream `TestReconcile_EndpointOverride`); route fields only when
    the route exists."""
    status: dict[str, Any] = {"phase": phase, "endpoint": endpoint if phase == "Ready" else ""}
    if route is not None:
        status.update(
            {
                "httpRouteName": route["name"],
                "httpRouteNamespace": facts.route_namespace,
                "httpRouteGatewayName": route["gateway"][1],
                "httpRouteGatewayNamespace": route["gateway"][0],
                "httpRouteHostnames": route["hostnames"],
            }
        )
    status["conditions"] = conditions
    alias = _alias(facts, backend)
    if alias is not None:
        status["resolvedModelAlias"] = alias
    return status


def _governance_condition(facts: ModelFacts) -> dict[str, str]:
    missing = sorted(set(GOVERNANCE) - set(facts.governed_by))
    if not missing:
        return condition("GovernanceAttached", "True", "GovernancePaired", "a subscription and an auth policy apply")
    names = " and ".join(CONFIG_KEYS[what] for what in missing)
    return condition("GovernanceAttached", "False", "NoPairingFound", f"no entry of {names} references this model")


def _runtime_condition(problem: str) -> dict[str, str]:
    if not problem:
        return condition("RuntimeReady", "True", "RuntimeHealthy", "backend ready and route accepted")
    return condition("RuntimeReady", "False", "RuntimeHealthFailure", problem)


def _alias(facts: ModelFacts, backend: LiveInferenceService | None) -> str | None:
    """ExternalModel: its name. LLMInferenceService: configuration's `modelAlias`, else the first served model
    name KServe reports (`status.addresses[].models[0].name`)."""
    if facts.kind == "ExternalModel":
        return facts.backend
    if facts.alias is not None:
        return facts.alias
    return next((address.model for address in backend.addresses if address.model), None) if backend else None


# ----------------------------------------------------------------------------------------- route and gateway


def _gateway(facts: ModelFacts) -> tuple[str, str]:
    return facts.gateway_namespace, facts.gateway_name


def _parent(ref: ParentRef, route_namespace: str) -> tuple[str, str]:
    return ref.namespace or route_namespace, ref.name or ""


def _references_gateway(route: LiveRoute, facts: ModelFacts) -> bool:
    return any(_parent(ref, facts.route_namespace) == _gateway(facts) for ref in route.parent_refs)


def _wrong_gateway(facts: ModelFacts, route: LiveRoute) -> str | None:
    if _references_gateway(route, facts):
        return None
    found = "/".join(_first_parent(route, facts) or ("", ""))
    return (
        f"HTTPRoute {facts.route_namespace}/{facts.route_name} does not reference gateway "
        f"{facts.gateway_namespace}/{facts.gateway_name} (found: {found})"
    )


def _first_parent(route: LiveRoute, facts: ModelFacts) -> tuple[str, str] | None:
    parents = route.parent_refs
    return _parent(parents[0], facts.route_namespace) if parents else None


def _route_fields(facts: ModelFacts, route: LiveRoute | None) -> dict[str, Any] | None:
    """The observed route's name, the gateway it serves (the expected one, else its first parent) and hostnames:
    only those a Gateway accepts (any other fails the model, `_refused_hostname`)."""
    if route is None:
        return None
    gateway = _gateway(facts) if _references_gateway(route, facts) else _first_parent(route, facts) or ("", "")
    hostnames = [h for h in route.hostnames if hostname_problem(h) is None]
    return {"name": facts.route_name, "gateway": gateway, "hostnames": hostnames}


def _refused_hostname(facts: ModelFacts, route: LiveRoute) -> str | None:
    """The message for the first route hostname that may not reach the status (`urls.hostname_problem`)."""
    for index, hostname in route.positioned_hostnames:
        problem = hostname_problem(hostname)
        if problem is not None:
            where = f"HTTPRoute {facts.route_namespace}/{facts.route_name} spec.hostnames[{index}]"
            return f"{where} refused: {quoted(hostname)} {problem}"
    return None


def _accepted(route: LiveRoute, facts: ModelFacts) -> bool:
    """The Gateway accepted the route: its `status.parents` entry for our Gateway has `Accepted=True`."""
    return any(
        _parent(parent.ref, facts.route_namespace) == _gateway(facts)
        and has_condition(parent.conditions, "Accepted", "True")
        for parent in route.parents
    )


def _runtime_problems(facts: ModelFacts, route: LiveRoute, backend: LiveInferenceService | None) -> list[str]:
    problems = []
    if backend is not None and not has_condition(backend.conditions, "Ready", "True"):
        ready = first_condition(backend.conditions, "Ready")
        reason = ready and (ready.message or ready.reason)
        why = f": {reason}" if reason else ""
        problems.append(f"LLMInferenceService {facts.namespace}/{facts.backend} is not Ready{why}")
    if not _accepted(route, facts):
        problems.append(
            f"HTTPRoute {facts.route_namespace}/{facts.route_name} is not yet accepted by gateway "
            f"{facts.gateway_namespace}/{facts.gateway_name}"
        )
    return problems


# ---------------------------------------------------------------------------------------------- endpoint


@dataclass(frozen=True)
class Found:
    """An endpoint and the live field it was read or built from: a refusal names that field."""

    url: str
    source: str  # e.g. "LLMInferenceService llm/granite status.addresses[0].url"


def _refused_endpoint(found: Found | None) -> str | None:
    """Why the discovered endpoint is not published (the model is then Failed): `urls.url_problem`."""
    problem = None if found is None else url_problem(found.url)
    if found is None or problem is None:
        return None
    return f"{found.source} refused as the endpoint: {quoted(found.url)} {problem}; {REFUSED_FIX}"


def _discovered_endpoint(
    facts: ModelFacts,
    route: LiveRoute,
    backend: LiveInferenceService | None,
    gateway: LiveGateway | None,
) -> Found | None:
    """Upstream 3.3: the LLMInferenceService's own URLs first, then a host of the route or the Gateway."""
    if facts.kind == "LLMInferenceService":
        found = llmisvc_endpoint(backend, route.hostnames)
        if found is not None:
            return replace(found, source=f"LLMInferenceService {facts.namespace}/{facts.backend} {found.source}")
    first = next(_hosts(facts, route, gateway), None)
    return None if first is None else Found(_endpoint_on(facts, first[1]), first[0])


def llmisvc_endpoint(backend: LiveInferenceService | None, hostnames: Iterable[str]) -> Found | None:
    """`getEndpointFromLLMISvc`: the preferred named address (restricted to the route's hostnames when it has
    some, https first); with no hostnames, the first base-path address, `status.url`, then any URL; else None."""
    hosts = {h.lower() for h in hostnames}
    addresses = _address_urls(backend)
    for wanted in PREFERRED_ADDRESSES:
        urls = [f for name, f in addresses if name == wanted and (not hosts or _host(f.url) in hosts)]
        if urls:
            return next((f for f in urls if f.url.startswith("https://")), urls[0])
    if hosts:
        return None
    urls = [f for _, f in addresses]
    status_url = backend and backend.url
    url = Found(status_url, "status.url") if status_url else None
    base = [f for f in urls if _path(f.url) in ("", "/")]
    if base:
        return base[0]
    if url is not None and _path(url.url) in ("", "/"):
        return url
    return urls[0] if urls else url


def _address_urls(backend: LiveInferenceService | None) -> list[tuple[str | None, Found]]:
    """(name, URL) of each address that has a URL, the URL's field named by its position in the list."""
    addresses = backend.addresses if backend else ()
    return [(a.name, Found(a.url, f"status.addresses[{a.index}].url")) for a in addresses if a.url]


def _host(url: str) -> str:
    """The URL's host, lowercase; "" for a URL that does not parse (it then matches no hostname)."""
    try:
        return (urllib.parse.urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _path(url: str) -> str | None:
    try:
        return urllib.parse.urlsplit(url).path
    except ValueError:
        return None


def _hosts(facts: ModelFacts, route: LiveRoute, gateway: LiveGateway | None) -> Iterator[tuple[str, str]]:
    """(field, host) in upstream's order: the route's hostnames, the Gateway's listener hostnames, its first
    Hostname-type address, else its first address. A wildcard names no host to call and is passed over, as for the
    intended endpoint (`_configured_endpoint`)."""
    on_route = f"HTTPRoute {facts.route_namespace}/{facts.route_name}"
    for index, hostname in route.positioned_hostnames:
        if not hostname.startswith("*."):
            yield f"{on_route} spec.hostnames[{index}]", hostname
    on_gateway = f"Gateway {facts.gateway_namespace}/{facts.gateway_name}"
    for listener in gateway.listeners if gateway else ():
        if listener.hostname and not listener.hostname.startswith("*."):
            yield f"{on_gateway} spec.listeners[{listener.index}].hostname", listener.hostname
    addresses = gateway.addresses if gateway else ()
    named = [address for address in addresses if address.type == "Hostname"]
    for address in (named or addresses)[:1]:
        yield f"{on_gateway} status.addresses[{address.index}].value", address.value
