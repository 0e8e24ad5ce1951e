"""Which route rule a request takes on a Gateway (Envoy, as Istio programs it from Gateway API), and which of
Kuadrant's ActionSets the wasm-shim runs for it. The two are chosen separately and need not agree.

Envoy: the request's host picks the most specific virtual host (an exact hostname, else the longest wildcard
suffix, else `*`); in it the first rule match in Gateway API precedence wins (exact path, longest prefix, method,
most headers, most query parameters, the older route, `ns/name`, rule order). A `PathPrefix` matches whole segments:
`/ext-a/cheap` takes `/ext-a/cheap` and `/ext-a/cheap/...`, never `/ext-a/cheapest`.

wasm-shim: the first ActionSet, in the order Kuadrant sorts them (`maas/plan/gateway/wasm.py`), whose hostname
covers the host and whose route-rule predicates hold, evaluated with the CEL engine as Kuadrant wrote them
(its `PathPrefix` is a string `startsWith`). Its actions are those of its path's effective policies.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from ...plan.gateway.routes import Gateway, Listener, Match, Route, Rule, attached, hostnames
from ...plan.gateway.wasm import ActionSet, WasmConfig, match_precedence
from .. import cel


@dataclass(frozen=True)
class RouteHit:
    """The route rule Envoy chose, and the virtual host (hostname entry) it was found in."""

    listener: Listener
    route: Route
    rule: Rule
    match: Match
    host: str


def covers(pattern: str, host: str) -> bool:
    """A listener or route hostname (`*`, `*.example.com`, `a.example.com`) covers the request's host."""
    if pattern == "*":
        return True
    if pattern.startswith("*."):
        return host.endswith(pattern[1:]) and len(host) > len(pattern) - 1
    return pattern.lower() == host.lower()


def _specificity(pattern: str) -> tuple[int, int]:
    """Envoy's virtual host order: exact names first, then the longest wildcard suffix, `*` last."""
    if pattern == "*":
        return (2, 0)
    return (1, -len(pattern)) if pattern.startswith("*") else (0, 0)


def envoy_route(
    gateway: Gateway, carried: Sequence[Route], path: str, host: str, request: Mapping[str, Any]
) -> RouteHit | None:
    """The rule Envoy routes the request to, or None (404). `request` is the CEL context's `request`."""
    entries = []
    for listener, route in attached(carried, gateway):
        for pattern in hostnames(listener, route):
            if covers(pattern, host):
                for rule_index, rule in enumerate(route.rules):
                    for match_index, match in enumerate(rule.matches):
                        order = (*match_precedence(match), route.created, route.key, rule_index, match_index)
                        entries.append((_specificity(pattern), order, RouteHit(listener, route, rule, match, pattern)))
    if not entries:
        return None
    best = min(entry[0] for entry in entries)
    for _, _, hit in sorted((e for e in entries if e[0] == best), key=lambda e: e[1]):
        if segment_match(hit.match, path, request):
            return hit
    return None


def segment_match(match: Match, path: str, request: Mapping[str, Any]) -> bool:
    """Gateway API match semantics as Envoy applies them (path without the query string)."""
    url_path, _, _ = path.partition("?")
    if match.method and match.method != request.get("method"):
        return False
    if not _path_holds(match, url_path):
        return False
    headers = request.get("headers", {})
    if any(headers.get(name.lower()) != value for name, value in match.headers):
        return False
    query = first_values(request.get("query", ""))
    return all(query.get(name) == value for name, value in match.query)


def first_values(query: str) -> dict[str, str]:
    """Each query parameter's first value, as a Gateway API query match compares it."""
    values: dict[str, str] = {}
    for name, value in parse_qsl(query, keep_blank_values=True):
        values.setdefault(name, value)
    return values


def _path_holds(match: Match, url_path: str) -> bool:
    value = match.path_value
    if match.path_type == "Exact":
        return url_path == value
    if match.path_type == "RegularExpression":
        return re.fullmatch(value, url_path) is not None
    prefix = value.rstrip("/")
    return prefix == "" or url_path == prefix or url_path.startswith(prefix + "/")


def wasm_action_set(config: WasmConfig, host: str, context: Mapping[str, Any]) -> ActionSet | None:
    """The ActionSet the wasm-shim runs: the first in Kuadrant's order that covers the host and whose
    predicates hold; None when none does (the request passes the wasm filter untouched)."""
    activation = cel.prepared(context)
    for action_set in config.action_sets:
        if covers(action_set.host, host) and all(cel.matches(p, activation) for p in action_set.predicates):
            return action_set
    return None
