"""The wasm configuration Kuadrant builds for one Gateway, as `kuadrant-operator` v1.5.2 and v1.4.6 build it
(`internal/controller/istio_extension_reconciler.go`, `internal/wasm/utils.go`, `ratelimit_workflow_helpers.go`,
`auth_workflow_helpers.go`).

One path per (listener, HTTPRoute rule) with an effective AuthPolicy or TokenRateLimitPolicy gives one action list:
the auth action (scope: SHA-256 of the path ID, predicates: the effective top-level `when`, sources: every policy
that contributed a rule), then per limit of the effective TokenRateLimitPolicy, in name order, a check and a report
action (they alternate services, so `mergeAndVerify` never merges two of them). Every (hostname, match) of the rule
is an ActionSet carrying that whole list; ActionSets are sorted by Gateway API precedence.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...observe.policy_views import limit_of
from .encoding import Composite, CompositeList, Spliced
from .policies import AUTH, AUTH_CONDITIONS, TOP_LEVEL_PREDICATES, TRLP, PolicyIndex, Rules, effective, predicates
from .routes import Gateway, Listener, Match, Route, attached, hostnames

AUTH_SERVICE = "auth-service"
CHECK_SERVICE = "ratelimit-check-service"
REPORT_SERVICE = "ratelimit-report-service"
RATE_LIMIT_CLUSTER = "kuadrant-ratelimit-service"


def _service(endpoint: str, kind: str, failure_mode: str, timeout: str) -> dict[str, str]:
    return {"endpoint": endpoint, "type": kind, "failureMode": failure_mode, "timeout": timeout}


# `NewServiceBuilder` with the operator's default timeouts and failure modes (no tracing configured).
SERVICES = {
    AUTH_SERVICE: _service("kuadrant-auth-service", "auth", "deny", "200ms"),
    "ratelimit-service": _service(RATE_LIMIT_CLUSTER, "ratelimit", "allow", "100ms"),
    CHECK_SERVICE: _service(RATE_LIMIT_CLUSTER, "ratelimit-check", "allow", "100ms"),
    REPORT_SERVICE: _service(RATE_LIMIT_CLUSTER, "ratelimit-report", "allow", "100ms"),
}
HITS = "ratelimit.hits_addend"
REPORTED_TOKENS = 'responseBodyJSON("/usage/total_tokens")'
_PATH_RANK = {"Exact": 0, "RegularExpression": 1, "PathPrefix": 2}


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def limit_id(namespace: str, policy: str, limit: str) -> str:
    """`TokenLimitNameToLimitadorIdentifier`: `tokenlimit.` + the name with every rune that is not a letter, a
    digit or `_` replaced by `_`, + `__` + the first 8 hex of SHA-256(`ns/policy/limit`)."""
    sanitized = "".join(c if c.isalpha() or c.isdecimal() or c == "_" else "_" for c in limit)
    return f"tokenlimit.{sanitized}__{sha256_hex(f'{namespace}/{policy}/{limit}')[:8]}"


def path_id(gateway: Gateway, listener: Listener, route: Route, rule: str) -> str:
    """`kuadrantv1.PathID`: `ns/name` of GatewayClass, Gateway, Listener, HTTPRoute and rule, joined by `|`."""
    gw = f"{gateway.namespace}/{gateway.name}"
    return f"{gateway.class_name}|{gw}|{gw}#{listener.name}|{route.key}|{route.key}#{rule}"


def match_predicates(match: Match) -> tuple[str, ...]:
    """`PredicatesFromHTTPRouteMatch`: method, path, each header, the first of each query parameter."""
    found = [f"request.method == '{match.method}'"] if match.method else []
    attribute, value = "request.url_path", match.path_value
    if match.path_type == "PathPrefix":
        found.append(f"{attribute}.startsWith('{value}')")
    elif match.path_type == "RegularExpression":
        found.append(f"{attribute}.matches('{value}')")
    else:
        found.append(f"{attribute} == '{value}'")
    for name, value in match.headers:
        lower = name.lower()
        found.append(f"request.headers.exists(h, h.lowerAscii() == '{lower}' && request.headers[h] == '{value}')")
    seen = set()
    for name, value in match.query:
        if name not in seen:
            seen.add(name)
            query = "queryMap(request.query)"
            found.append(f"'{name}' in {query} ? {query}['{name}'] == '{value}' : false")
    return tuple(found)


# --------------------------------------------------------------------------------------------------- actions


@dataclass(frozen=True)
class TokenActions:
    """The check and report actions of one route's effective TokenRateLimitPolicy, and its limit identifiers."""

    actions: tuple[dict[str, Any], ...]
    limits: tuple[str, ...]
    after_auth: bool  # `hasAuthAccess`: they read the identity, so they run after the auth action


def token_actions(route: Route, rules: Rules) -> TokenActions:
    """`buildWasmActionsForTokenRateLimit`: per limit in name order, check (hits 0) then report (the tokens)."""
    top = predicates(rules[TOP_LEVEL_PREDICATES].spec) if TOP_LEVEL_PREDICATES in rules else []
    actions, limits = [], []
    for name in sorted(key for key in rules if key != TOP_LEVEL_PREDICATES):
        rule = rules[name]
        identifier = limit_id(rule.source.namespace, rule.source.name, name)
        limits.append(identifier)
        limit = limit_of(rule.spec)
        data = [_expression(identifier, "1"), *(_expression(c, c) for c in limit.counters)]
        conditions = [*top, *limit.predicates]
        for service, hits in ((CHECK_SERVICE, "0"), (REPORT_SERVICE, REPORTED_TOKENS)):
            conditional: dict[str, Any] = {"data": [*data, _expression(HITS, hits)]}
            if conditions:
                conditional["predicates"] = conditions
            action = {"service": service, "scope": route.key, "sources": [rule.source.locator]}
            actions.append({**action, "conditionalData": [conditional]})
    return TokenActions(tuple(actions), tuple(limits), reads_identity(actions))


def _expression(key: str, value: str) -> dict[str, dict[str, str]]:
    return {"expression": {"key": key, "value": value}}


def auth_fields(rules: Rules) -> dict[str, list[str]]:
    """`buildWasmActionsForAuth` makes one action, `{service, scope: SHA-256 of the path ID, predicates, sources}`
    (the rules themselves go to Authorino): its `predicates` (the effective top-level `when`, left out when empty)
    and `sources`."""
    when = predicates(rules[AUTH_CONDITIONS].spec) if AUTH_CONDITIONS in rules else []
    sources = sorted({rule.source.locator for rule in rules.values()})
    return {"predicates": when, "sources": sources} if when else {"sources": sources}


def reads_identity(actions: Sequence[Mapping[str, Any]]) -> bool:
    """`hasAuthAccess`: a predicate or data expression mentions `auth.`, so the actions run after auth."""
    for action in actions:
        for conditional in action["conditionalData"]:
            texts = [*conditional.get("predicates", ()), *(d["expression"]["value"] for d in conditional["data"])]
            if any("auth." in text for text in texts):
                return True
    return False


# ----------------------------------------------------------------------------------------------- the config


@dataclass(frozen=True)
class ActionSet:
    """One ActionSet and what it is attributed to: its path (listener, route, rule), the hostname and match it
    stands for, and the limit identifiers it carries."""

    route: Route
    body: Composite
    limits: tuple[str, ...]
    listener: Listener
    rule: str
    host: str
    predicates: tuple[str, ...]


@dataclass(frozen=True)
class WasmConfig:
    gateway: Gateway
    action_sets: tuple[ActionSet, ...]

    @property
    def limits(self) -> frozenset[str]:
        return frozenset(limit for action_set in self.action_sets for limit in action_set.limits)

    def body(self) -> Composite:
        """`{actionSets, services}` (no observability: the program configures no tracing)."""
        return Composite(actionSets=CompositeList(a.body for a in self.action_sets), services=SERVICES)


NO_TOKENS = TokenActions((), (), False)


class Builder:
    """What many paths share is computed once: a match's predicates, the auth fields of one list of AuthPolicies,
    the token actions of one route under one list of TokenRateLimitPolicies (one run of every rule's action list),
    and the ActionSets of one route object on one listener. So building the Gateway again with some routes left
    out, moved or pinned, as the budget's levers do, makes no ActionSet twice, and a builder under another index
    (other TokenRateLimitPolicies) reuses the parts that do not depend on them; the same objects then measure from
    memory."""

    def __init__(self, gateway: Gateway, index: PolicyIndex, shared: Builder | None = None) -> None:
        """`shared`: a builder of the same Gateway under another index, whose match predicates, auth actions (of
        the very same AuthPolicies) and route conditions this one reuses."""
        self.gateway, self.index = gateway, index
        self._memo: dict[tuple[Any, ...], Any] = {}
        self._common: dict[tuple[Any, ...], Any] = {} if shared is None else shared._common

    def _once(self, key: tuple[Any, ...], compute: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def match(self, match: Match) -> tuple[tuple[str, ...], tuple[Any, ...]]:
        """A match's route predicates and its precedence."""
        key = ("match", match)
        if key not in self._common:
            self._common[key] = (match_predicates(match), match_precedence(match))
        return self._common[key]

    def actions(self, path: str, listener: Listener, route: Route, rule: str) -> tuple[Spliced, tuple[str, ...]]:
        """The path's action list (auth first unless the token actions read no identity) and its limits: the
        route's token actions are one run that every rule's list holds."""
        place = ((self.gateway.namespace, self.gateway.name), listener.name, (route.namespace, route.name), rule)
        auth, limits = self.index.on_path(AUTH, *place), self.index.on_path(TRLP, *place)
        tokens: TokenActions = self._once(
            ("tokens", route.key, *(p.locator for p in limits)),
            lambda: token_actions(route, effective(limits)) if limits else NO_TOKENS,
        )
        own: tuple[dict[str, Any], ...] = ()
        if auth:
            key = ("auth", path, *map(id, auth))  # these very policies (kept alive with it): another index may not
            if key not in self._common:
                fields = self._once(("auth", *(p.locator for p in auth)), lambda: auth_fields(effective(auth)))
                self._common[key] = (({"service": AUTH_SERVICE, "scope": sha256_hex(path), **fields},), auth)
            own = self._common[key][0]
        ordered = Spliced(own, tokens.actions) if tokens.after_auth else Spliced(tokens.actions, own)
        return ordered, tokens.limits

    def action_sets(self, listener: Listener, route: Route) -> list[tuple[tuple[Any, ...], ActionSet]]:
        """The ActionSets of one route on one listener, each with its precedence; once per route object (kept
        alive with them, so that its identity stays its own)."""
        key = ("sets", listener.name, id(route))
        if key not in self._memo:
            self._memo[key] = (route, self._action_sets(listener, route))
        return self._memo[key][1]

    def _action_sets(self, listener: Listener, route: Route) -> list[tuple[tuple[Any, ...], ActionSet]]:
        gateway, entries = self.gateway, []
        for rule in route.rules:
            path = path_id(gateway, listener, route, rule.name)
            shared, limits = self.actions(path, listener, route, rule.name)
            if not shared:
                continue
            # `shared`: one list, copied into every ActionSet of the rule, as Kuadrant does
            for host in hostnames(listener, route):
                for position, match in enumerate(rule.matches):
                    predicates, precedence = self.match(match)
                    name, conditions = self._head(path, position, host, predicates)
                    body = Composite(actions=shared, name=name, routeRuleConditions=conditions)
                    action_set = ActionSet(route, body, limits, listener, rule.name, host, predicates)
                    entries.append((_precedence(host, precedence, route), action_set))
        return entries

    def _head(self, path: str, position: int, host: str, predicates: tuple[str, ...]) -> tuple[str, Composite]:
        """An ActionSet's name and route conditions, whatever the policies."""
        key = ("head", path, position, host, predicates)
        if key not in self._common:
            conditions = Composite(hostnames=[host], predicates=list(predicates))
            self._common[key] = (sha256_hex(f"{path}|{position + 1}|{host}"), conditions)
        return self._common[key]


def wasm_config(
    gateway: Gateway, routes: Sequence[Route], index: PolicyIndex, builder: Builder | None = None
) -> WasmConfig:
    """Every ActionSet of one Gateway, in Kuadrant's order (`builder`: one of this Gateway and index, to build it
    again from what an earlier call made)."""
    builder = builder or Builder(gateway, index)
    entries = [entry for listener, route in attached(routes, gateway) for entry in builder.action_sets(listener, route)]
    entries.sort(key=lambda entry: entry[0])
    return WasmConfig(gateway, tuple(action_set for _, action_set in entries))


def _precedence(host: str, match: tuple[Any, ...], route: Route) -> tuple[Any, ...]:
    """`SortableHTTPRouteMatchConfigs`: the more specific host, path type, longer path, no method, more headers,
    more query parameters, the older route, then `ns/name` (ties keep their order, where Go's sort is unstable)."""
    return (-host.count("."), host.startswith("*"), host, *match, route.created, route.key)


def match_precedence(match: Match) -> tuple[int, int, bool, int, int]:
    path = (_PATH_RANK.get(match.path_type, 3), -len(match.path_value))
    return (*path, match.method is not None, -len(match.headers), -len(match.query))
