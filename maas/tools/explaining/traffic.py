"""`explain request`: what the gateway does with one request as a client sends it (any path, host, headers and
body model), stage by stage, from the request simulator: the route Envoy picks (the backend), the ActionSet the
wasm-shim runs (the policies), authentication, maas-api's selection, authorization, and the limit that counts it.

A request that reaches a model's backend uncounted by a limit of that model for the selected subscription is a
bug signal (exit 1), as is a caller admitted to a model that no MaaSAuthPolicy grants them. A result that
depends on a status nobody wrote or observed (a `coexist` stack without `--observed`) is marked `on an assumed
status`, with one `assumes:` line per such status.
"""

from __future__ import annotations

from ..simulator import Outcome, Request, simulate
from ..simulator.invariant import violations
from .caller import assumption_lines
from .limits import describe_matched
from .report import Report, compact
from .world import World

TOKENS = {
    "kubernetes": "a Kubernetes token (TokenReview)",
    "oidc": "an OIDC token of the tenant's issuer",
    "api-key": "a maas-api key",
}


def explain_request(world: World, request: Request, gateway: str | None) -> Report:
    """SimulationError for a Gateway the stack does not have."""
    outcome = simulate(world.network, request, gateway)
    report = Report()
    _request_lines(report, outcome)
    _routing_lines(report, outcome)
    _auth_lines(report, outcome)
    _limit_lines(report, outcome)
    _verdict_lines(report, world, outcome)
    return report


def _request_lines(report: Report, outcome: Outcome) -> None:
    request, caller = outcome.request, outcome.request.caller
    body = f", body model {request.model}" if request.model is not None else ""
    report.add(f"request: {request.method} {request.path} on host {outcome.host}{body}")
    report.add(f"gateway: {outcome.gateway.gateway.key}")
    normalisation = "MERGE_SLASHES" if request.merge_slashes else "BASE (Istio's default)"
    report.add(f"path after Envoy's normalisation, {normalisation}: {outcome.path}")
    shown = ", ".join(f"{name}: {value}" for name, value in sorted(outcome.headers.items()) if name != "authorization")
    report.add(f"headers as the filters see them: {shown or '(none)'}")
    groups = ", ".join(caller.groups) or "(none)"
    report.add(f"caller: {caller.user}, groups {groups}, with {TOKENS[caller.token]}")
    if caller.token == "oidc":
        report.add(f"token claims: aud {list(caller.audience)}, azp {caller.authorized_party or '(none)'}", 1)
    if caller.token == "api-key":
        report.add(f"the key's subscription: {caller.key_subscription or '(none)'}", 1)


def _routing_lines(report: Report, outcome: Outcome) -> None:
    report.add()
    hit = outcome.route
    if hit is None:
        report.add("routing (Envoy): no route rule matches: 404")
    else:
        served = f"model {hit.route.model}" if hit.route.model else "no model (another route)"
        report.add(f"routing (Envoy): HTTPRoute {hit.route.key} rule {hit.rule.name}, host {hit.host}: {served}")
        report.add(f"match: {_match(hit.match)}", 1)
    action = outcome.action_set
    if action is None:
        report.add("wasm-shim: no ActionSet matches: no auth, no limits")
        return
    report.add(f"wasm-shim ActionSet: HTTPRoute {action.route.key} rule {action.rule}, host {action.host}")
    for predicate in action.predicates:
        report.add(f"when: {predicate}", 1)
    if hit is not None and (hit.route.key, hit.rule.name) != (action.route.key, action.rule):
        report.add("the policies that run are another rule's than the one Envoy routes to", 1)


def _match(match) -> str:
    parts = [f"{match.path_type} {match.path_value}"]
    parts += [f"method {match.method}"] if match.method else []
    parts += [f"header {name}: {value}" for name, value in match.headers]
    parts += [f"query {name}={value}" for name, value in match.query]
    return ", ".join(parts)


def _auth_lines(report: Report, outcome: Outcome) -> None:
    report.add()
    auth = outcome.auth
    if not auth.ran:
        report.add("authorization: no AuthPolicy runs for this request")
        return
    if auth.source is None:
        report.add(f"authentication: no identity source accepts the credential: {auth.denial}")
        return
    report.add(f"authentication: {auth.source}")
    if auth.select_request is not None and auth.selection is not None:
        report.add(f"subscription selection: {compact(auth.select_request)}")
        for reason in auth.selection.reasons:
            report.add(f"why: {reason}", 1)
        report.add(f"answer: {compact(auth.selection.answer)}", 1)
    else:
        report.add("subscription selection: not called (the request carries no model identity)")
    report.add("authorization (every rule that applies must pass):")
    width = max((len(f"{rule.policy} {rule.name}") for rule in auth.rules), default=0)
    for rule in auth.rules:
        report.add(f"{f'{rule.policy} {rule.name}'.ljust(width)}  {rule.kind:<15}  {rule.outcome}", 1)
    if auth.undecided:
        report.problem("a rule that applies could not be evaluated, so the decision is unknown", 1)


def _limit_lines(report: Report, outcome: Outcome) -> None:
    report.add()
    if outcome.auth.status != 200:
        report.add("token limits: not reached (denied before rate limiting)")
        return
    if not outcome.limits:
        report.add("token limits: none apply on this path")
        return
    report.add("token limits of the path's effective TokenRateLimitPolicy:")
    for verdict in outcome.limits:
        report.add(
            f"{verdict.policy} {verdict.name}: {'MATCH' if verdict.matched else 'no match'} ({verdict.rates})", 1
        )
    if outcome.matched:
        describe_matched(report, outcome.matched, outcome.limit_context, 1)


def _verdict_lines(report: Report, world: World, outcome: Outcome) -> None:
    report.add()
    status = outcome.status
    said = {404: "404: no route rule matches", 429: "429: a zero limit (the default deny)"}
    text = outcome.auth.denial if status in (401, 403) else said.get(status, str(status))
    marked = " (on an assumed status)" if outcome.assumed else ""
    report.add(f"result{marked}: {text}; backend {outcome.backend or 'none'}")
    assumption_lines(report, outcome.assumed, 1)
    for violation in violations(world, outcome):
        report.problem(violation)
