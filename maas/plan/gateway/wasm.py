"""The wasm configuration Kuadrant builds for one Gateway, as `kuadrant-operator` v1.5.2 and v1.4.6 build it
(`internal/controller/istio_extension_reconciler.go`, `internal/wasm/utils.go`, `ratelimit_workflow_helpers.go`,
`auth_workflow_helpers.go`).

One path per (listener, HTTPRoute rule) with an effective AuthPolicy or TokenRateLimitPolicy gives one action list:
the auth action (scope: SHA-256 of the path ID, predicates: the effective top-level `when`, sources: every policy
that contributed a rule), then per limit of the effective TokenRateLimitPolicy, in name order, a check and a report
action (they alternate services, so `mergeAndVerify` never merges two of them). Every (hostname, match) of the rule
is an ActionSet carrying that whole list; ActionSets are sorted by Gateway API precedence.

`wasm_config` builds it (the simulator and the tests write it out); the budget measures it without building it
(`Builder.size`): per route and listener, each rule's action list once for every (hostname, match) that copies it,
each limit's check action once for its report action too (they differ only in service and hits), and every name
and auth scope as the SHA-256 in hex it is, which weighs the same whatever it hashes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, NamedTuple

from .encoding import NOTHING, Composite, CompositeList, Measure, Measurer, Spliced, array_punctuation
from .policies import (
    AUTH,
    AUTH_CONDITIONS,
    TOP_LEVEL_PREDICATES,
    TRLP,
    Policy,
    PolicyIndex,
    Rules,
    effective,
    predicates,
)
from .routes import Gateway, Listener, Match, Route, Rule, attached, hostnames

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


class _Sanitized(dict):
    """A `str.translate` table that keeps a letter, a digit or `_` and turns any other rune into `_`, each rune
    decided once (limit names share a few dozen)."""

    def __missing__(self, code: int) -> str:
        rune = chr(code)
        self[code] = found = rune if rune.isalpha() or rune.isdecimal() or rune == "_" else "_"
        return found


_SANITIZED = _Sanitized()


def limit_id(namespace: str, policy: str, limit: str) -> str:
    """`TokenLimitNameToLimitadorIdentifier`: `tokenlimit.` + the name with every rune that is not a letter, a
    digit or `_` replaced by `_`, + `__` + the first 8 hex of SHA-256(`ns/policy/limit`)."""
    return f"tokenlimit.{limit.translate(_SANITIZED)}__{sha256_hex(f'{namespace}/{policy}/{limit}')[:8]}"


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
    """The actions of one route's effective TokenRateLimitPolicy and its limit identifiers: each limit's check
    action, whose report action is made only when the actions are written out (it is the same but for the service
    and the hits, `REPORT_MORE`, so the budget measures the checks alone), and the limit each check is made of."""

    checks: tuple[dict[str, Any], ...]
    limits: tuple[str, ...]
    after_auth: bool  # `hasAuthAccess`: they read the identity, so they run after the auth action
    checked: tuple[tuple[Policy, str], ...]  # the policy and the name of each check's limit

    @cached_property
    def actions(self) -> tuple[dict[str, Any], ...]:
        """Per limit its check, then its report."""
        return tuple(action for check in self.checks for action in (check, _report(check)))


def token_actions(route: Route, rules: Rules) -> TokenActions:
    """`buildWasmActionsForTokenRateLimit`: per limit in name order, check (hits 0) then report (the tokens). A
    report reads what its check reads, and the tokens: the checks say whether they read the identity."""
    top = predicates(rules[TOP_LEVEL_PREDICATES].spec) if TOP_LEVEL_PREDICATES in rules else []
    checks, limits, checked = [], [], []
    for name in sorted(key for key in rules if key != TOP_LEVEL_PREDICATES):
        rule = rules[name]
        identifier = limit_id(rule.source.namespace, rule.source.name, name)
        limits.append(identifier)
        limit = rule.limit
        data = [_expression(identifier, "1"), *(_expression(c, c) for c in limit.counters)]
        conditions = [*top, *limit.predicates]
        checks.append(_limit_action(CHECK_SERVICE, "0", route.key, rule.source.locator, data, conditions))
        checked.append((rule.source, name))
    return TokenActions(tuple(checks), tuple(limits), reads_identity(checks), tuple(checked))


def _report(check: dict[str, Any]) -> dict[str, Any]:
    """A limit's report action, from its check: the tokens as hits."""
    (conditional,) = check["conditionalData"]
    data, conditions = conditional["data"][:-1], conditional.get("predicates", [])
    return _limit_action(REPORT_SERVICE, REPORTED_TOKENS, check["scope"], check["sources"][0], data, conditions)


def _limit_action(
    service: str, hits: str, scope: str, source: str, data: list[dict[str, Any]], conditions: list[str]
) -> dict[str, Any]:
    conditional: dict[str, Any] = {"data": [*data, _expression(HITS, hits)]}
    if conditions:
        conditional["predicates"] = conditions
    return {"service": service, "scope": scope, "sources": [source], "conditionalData": [conditional]}


def _expression(key: str, value: str) -> dict[str, dict[str, str]]:
    return {"expression": {"key": key, "value": value}}


def _report_more() -> Measure:
    """What a report action weighs more than its check: they differ only in the service and the hits."""
    measurer = Measurer()
    check = measurer.measure(_limit_action(CHECK_SERVICE, "0", "", "", [], []))
    return measurer.measure(_limit_action(REPORT_SERVICE, REPORTED_TOKENS, "", "", [], [])) - check


REPORT_MORE = _report_more()


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
        return config_body(CompositeList(a.body for a in self.action_sets))


def config_body(action_sets: Any) -> Composite:
    """`{actionSets, services}` (no observability: the program configures no tracing)."""
    return Composite(actionSets=action_sets, services=SERVICES)


def _action_set_body(actions: Any, name: str, conditions: Any) -> Composite:
    return Composite(actions=actions, name=name, routeRuleConditions=conditions)


def _frame() -> Measure:
    """An ActionSet body's braces, keys, colons and commas: the body with empty values, less those values."""
    measurer, empty = Measurer(), ([], "", {})
    return measurer.measure(_action_set_body(*empty)) - sum(map(measurer.measure, empty), NOTHING)


FRAME = _frame()
NAME = Measurer().measure(sha256_hex(""))  # every ActionSet name is a SHA-256 in hex: it weighs the same


class Head(NamedTuple):
    """What an ActionSet holds that no policy changes: its hostname, its match's position, predicates and
    precedence, and its route conditions."""

    host: str
    position: int
    predicates: tuple[str, ...]
    precedence: tuple[Any, ...]
    conditions: dict[str, list[str]]

    def name(self, path: str) -> str:
        return sha256_hex(f"{path}|{self.position + 1}|{self.host}")


@dataclass(frozen=True)
class RouteSize:
    """What one route on one listener adds to the Gateway: its ActionSets' bodies measured together (without the
    commas between them), how many there are, their limits, and each token action list its rules carry with the
    number of ActionSets that copy it."""

    route: Route
    bodies: Measure
    action_sets: int
    limits: frozenset[str]
    copies: tuple[tuple[TokenActions, int], ...]


@dataclass(frozen=True)
class RulePath:
    """One rule of a route on one listener, whatever the policies: its path ID and its ActionSets' heads."""

    rule: Rule
    path: str
    heads: tuple[Head, ...]


NO_TOKENS = TokenActions((), (), False, ())
AuthFields = dict[str, list[str]]


def auth_action(path: str, fields: AuthFields) -> dict[str, Any]:
    """The path's auth action: its scope is the SHA-256 of the path ID."""
    return {"service": AUTH_SERVICE, "scope": sha256_hex(path), **fields}


ANY_PATH = ""  # what an auth action is measured with: every scope is a SHA-256 in hex, and weighs the same


class Builder:
    """What many paths share is computed once: a match's predicates, the auth fields of one list of AuthPolicies,
    the token actions of one route under one list of TokenRateLimitPolicies (one run of every rule's action list),
    each rule's path ID and ActionSet heads (one per hostname and match) of one route object on one listener, and
    the ActionSets (or their size) of that route under this builder's index. So building or measuring the Gateway
    again with some routes left out, moved or pinned, as the budget's levers do, makes nothing twice, and a builder
    under another index (other TokenRateLimitPolicies) reuses the parts that do not depend on them."""

    def __init__(self, gateway: Gateway, index: PolicyIndex, shared: Builder | None = None) -> None:
        """`shared`: a builder of the same Gateway under another index, whose match predicates, auth fields (of
        the very same AuthPolicies), rules, heads and their measures this one reuses."""
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

    def _actions(
        self, route: Route, auth: list[Policy], limits: list[Policy]
    ) -> tuple[AuthFields | None, TokenActions]:
        """The fields of a path's auth action under these AuthPolicies (None: no auth action) and its token actions
        under these TokenRateLimitPolicies (one run that every rule's list holds)."""
        key = ("tokens", route.key, *(p.locator for p in limits))
        tokens: TokenActions = self._once(key, lambda: token_actions(route, effective(limits)) if limits else NO_TOKENS)
        if not auth:
            return None, tokens
        key = ("auth", *map(id, auth))  # these very policies (kept alive with it): another index may not have them
        if key not in self._common:
            self._common[key] = (auth_fields(effective(auth)), auth)
        return self._common[key][0], tokens

    def action_sets(self, listener: Listener, route: Route) -> list[tuple[tuple[Any, ...], ActionSet]]:
        """The ActionSets of one route on one listener, each with its precedence; once per route object (kept
        alive with them, so that its identity stays its own)."""
        key = ("sets", listener.name, id(route))
        if key not in self._memo:
            self._memo[key] = (route, self._action_sets(listener, route))
        return self._memo[key][1]

    def _action_sets(self, listener: Listener, route: Route) -> list[tuple[tuple[Any, ...], ActionSet]]:
        entries = []
        for rule, fields, tokens in self._paths(listener, route):
            # one list, copied into every ActionSet of the rule, as Kuadrant does
            auth = () if fields is None else (auth_action(rule.path, fields),)
            shared = Spliced(auth, tokens.actions) if tokens.after_auth else Spliced(tokens.actions, auth)
            for head in rule.heads:
                body = _action_set_body(shared, head.name(rule.path), head.conditions)
                action_set = ActionSet(route, body, tokens.limits, listener, rule.rule.name, head.host, head.predicates)
                entries.append((_precedence(head.host, head.precedence, route), action_set))
        return entries

    def size(self, listener: Listener, route: Route, measurer: Measurer) -> RouteSize:
        """What the route's ActionSets on one listener weigh, without building them; once per route object."""
        key = ("size", listener.name, id(route))
        if key not in self._memo:
            self._memo[key] = (route, self._size(listener, route, measurer))
        return self._memo[key][1]

    def _size(self, listener: Listener, route: Route, measurer: Measurer) -> RouteSize:
        """Each rule's action list is measured once and counted once per ActionSet that copies it."""
        bodies, count, limits, rules = NOTHING, 0, set(), []
        copies: dict[int, tuple[TokenActions, int]] = {}  # the rules of a route mostly share one token action list
        for rule, fields, tokens in self._paths(listener, route):
            bodies += self._actions_measure(fields, tokens, measurer) * len(rule.heads)
            count += len(rule.heads)
            limits.update(tokens.limits)
            rules.append(rule)
            _, before = copies.get(id(tokens), (tokens, 0))
            copies[id(tokens)] = (tokens, before + len(rule.heads))
        bodies += self._heads_measure(rules, measurer)
        return RouteSize(route, bodies, count, frozenset(limits), tuple(copies.values()))

    def _actions_measure(self, fields: AuthFields | None, tokens: TokenActions, measurer: Measurer) -> Measure:
        """A path's action list with these auth fields and token actions: the auth action as on any path, and
        each check measured once, for its report too (both kept alive by `_actions`)."""
        key = ("actions measure", id(fields), id(tokens))
        if key not in self._memo:
            found = measurer.run(tokens.checks) * 2 + REPORT_MORE * len(tokens.checks)
            if fields is not None:
                found += measurer.measure(auth_action(ANY_PATH, fields))
            self._memo[key] = found + array_punctuation((fields is not None) + 2 * len(tokens.checks))
        return self._memo[key]

    def _heads_measure(self, rules: Sequence[RulePath], measurer: Measurer) -> Measure:
        """The ActionSet bodies of these rules of one route without their actions, measured in one run (a route's
        rules are a dozen small runs otherwise)."""
        key = ("heads measure", *map(id, rules))  # the rules kept alive by `_rules`
        if key not in self._common:
            heads = [head for rule in rules for head in rule.heads]
            self._common[key] = (FRAME + NAME) * len(heads) + measurer.run(tuple(head.conditions for head in heads))
        return self._common[key]

    def _paths(self, listener: Listener, route: Route) -> Iterator[tuple[RulePath, AuthFields | None, TokenActions]]:
        """Each rule of the route with ActionSets on this listener (a hostname, and actions), with its auth fields
        and token actions."""
        rules = [rule for rule in self._rules(listener, route) if rule.heads]
        place = ((self.gateway.namespace, self.gateway.name), listener.name, (route.namespace, route.name))
        names = [rule.rule.name for rule in rules]
        auths, limits = (self.index.on_rules(kind, *place, names) for kind in (AUTH, TRLP))
        shared: dict[tuple[int, int], tuple[AuthFields | None, TokenActions]] = {}  # the rules of the same policies
        for rule, auth, limit in zip(rules, auths, limits, strict=True):
            key = (id(auth), id(limit))
            if key not in shared:
                shared[key] = self._actions(route, auth, limit)
            fields, tokens = shared[key]
            if fields is not None or tokens.checks:
                yield rule, fields, tokens

    def _rules(self, listener: Listener, route: Route) -> tuple[RulePath, ...]:
        """Each rule of the route on this listener, whatever the policies; once per route object (kept alive)."""
        key = ("rules", listener.name, id(route))
        if key not in self._common:
            hosts = hostnames(listener, route)
            paths = [(rule, path_id(self.gateway, listener, route, rule.name)) for rule in route.rules]
            self._common[key] = (tuple(RulePath(rule, path, self._heads(hosts, rule)) for rule, path in paths), route)
        return self._common[key][0]

    def _heads(self, hosts: Sequence[str], rule: Rule) -> tuple[Head, ...]:
        """One per (hostname, match) of the rule, in that order."""
        heads = []
        for host in hosts:
            for position, match in enumerate(rule.matches):
                predicates, precedence = self.match(match)
                conditions = {"hostnames": [host], "predicates": list(predicates)}
                heads.append(Head(host, position, predicates, precedence, conditions))
        return tuple(heads)


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
