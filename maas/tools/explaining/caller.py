"""`explain caller`: which subscription maas-api selects for a caller and why, the auth decision on the model,
and the token limit the request lands in, each read off the rendered objects with the CEL engine.

A phase nobody wrote or observed (a `coexist` stack without `--observed`) is the one the program's status rules
give, shown `(assumed: why)`; a decision that depends on one says so on its own line, `assumes: ...`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .limits import describe_matched
from .maasapi import candidates
from .report import Report, compact
from .request import Objects, Trace, objects_for, trace
from .world import UnknownNameError, World, unknown_message

ASSUMED_NOTE = (
    "an assumed phase is the one the program's status rules give this configuration (what it would write if it "
    "owned the status), since no live one is known; --observed SNAPSHOT reads the live ones"
)
IDENTITY_FIELDS = ("userid", "selected_subscription", "selected_subscription_key", "selected_subscription_id")


def explain_caller(world: World, user: str, groups: Sequence[str], model: str, subscription: str | None) -> Report:
    """UnknownNameError for a model, or a requested subscription, that the stack does not have."""
    objects = objects_for(world, world.model(model))
    if subscription:
        _check_known(world, subscription)
    result = trace(world, objects, user, groups, subscription)
    report = Report()
    report.add(
        f"caller {user}, groups {', '.join(groups) or '(none)'}, X-MaaS-Subscription: {subscription or '(none)'}"
    )
    report.add(
        f"request: POST {objects.path} to model {objects.model.key} (tenant {objects.tenant.name}), "
        "authenticated by a Kubernetes token (TokenReview)"
    )
    _selection_lines(report, result)
    _authorization_lines(report, result)
    _limit_lines(report, result)
    return report


def _check_known(world: World, subscription: str) -> None:
    """maas-api matches `ns/name` or a bare name; a name that no subscription of the stack has is a typo."""
    keys = {s.key for s in world.config.subscriptions}
    if subscription not in keys | {s.name for s in world.config.subscriptions}:
        raise UnknownNameError(unknown_message("subscription", subscription, keys))


def _selection_lines(report: Report, result: Trace) -> None:
    objects = result.objects
    report.add()
    report.add(f"subscription selection: {objects.maas_api}, POST /internal/v1/subscriptions/select")
    if result.select_request is None or result.selection is None:
        report.add("no select call: the request carries no model identity", 1)
        return
    report.add(f"select request (the gateway AuthPolicy's subscription-info body): {compact(result.select_request)}", 1)
    report.add("subscriptions it reads, in its order (priority, largest token limit, name):", 1)
    username = str(result.select_request.get("username", ""))
    groups = [str(group) for group in result.select_request.get("groups") or []]
    for subscription in candidates(objects.subscriptions):
        owner = subscription.owner_match(username, groups)
        includes = "includes the model" if subscription.model_ref(objects.model.key) else "not for this model"
        owned = f"owned ({owner})" if owner else "not owned"
        phase = subscription.shown_phase
        report.add(f"{subscription.qualified}: priority {subscription.priority}, phase {phase}, {owned}, {includes}", 2)
    if not objects.subscriptions:
        report.add("(none)", 2)
    if any(subscription.assumed for subscription in objects.subscriptions):
        report.add(ASSUMED_NOTE, 1)
    for reason in result.selection.reasons:
        report.add(f"why: {reason}", 1)
    report.add(f"answer: {compact(result.selection.answer)}", 1)


def _authorization_lines(report: Report, result: Trace) -> None:
    objects = result.objects
    report.add()
    report.add(f"authorization on {objects.model.key} (every rule that applies must pass):")
    if objects.route_auth is None:
        report.add("the model has no AuthPolicy of its own (no maas:authPolicies entry references it)", 1)
    width = max((len(f"{rule.policy} {rule.name}") for rule in result.rules), default=0)
    for rule in result.rules:
        report.add(f"{f'{rule.policy} {rule.name}'.ljust(width)}  {rule.kind:<15}  {rule.outcome}", 1)
    if not result.outcome.auth.ran:
        report.add("no AuthPolicy runs for this request (no ActionSet of the wasm-shim matches it)", 1)
    marked = " (on an assumed status)" if result.assumed else ""
    if result.outcome.auth.status == 200 and not result.routed:
        report.add(f"decision{marked}: 404, {not_routed(objects)}", 1)
    elif result.allowed is None:
        report.problem("a rule that applies could not be evaluated, so the decision is unknown", 1)
    elif result.allowed:
        report.add(f"decision{marked}: allowed", 1)
    else:
        denied = ", ".join(rule.name for rule in result.rules if rule.applies and rule.passed is False)
        report.add(f"decision{marked}: DENIED by {denied}: {result.outcome.auth.denial}", 1)
    assumption_lines(report, result.assumed, 2)


def not_routed(objects: Objects) -> str:
    """Why a request on the model's own path gets 404."""
    return (
        f"no route rule matches: the model's HTTPRoute {objects.route or '(none)'} is not among the routes its "
        f"Gateway {objects.gateway_key} carries (not on the cluster, or not attached to it)"
    )


def assumption_lines(report: Report, assumed: Sequence[str], depth: int) -> None:
    """One `assumes:` line per assumed status a decision depends on."""
    for line in assumed:
        report.add(f"assumes: {line}", depth)


def _limit_lines(report: Report, result: Trace) -> None:
    limits = result.objects.limits
    report.add()
    if limits is None:
        report.add("token limits: no TokenRateLimitPolicy is rendered for this model or its tenant's Gateway")
        return
    target = limits["spec"]["targetRef"]
    fallback = " (the model has none: its tenant's default deny)" if target["kind"] == "Gateway" else ""
    report.add(
        f"token limits: TokenRateLimitPolicy {limits['metadata']['namespace']}/{limits['metadata']['name']}{fallback}"
    )
    if result.outcome.auth.status == 200 and not result.routed:
        report.add("not reached: no route rule matches the request (404)", 1)
        return
    if not result.allowed:
        report.add("not reached: the request is denied before rate limiting", 1)
        return
    shown = " ".join(f"{name}={compact(result.identity.get(name))}" for name in IDENTITY_FIELDS)
    report.add(f"identity (the gateway's identity properties, evaluated): {shown}", 1)
    for verdict in result.limits:
        report.add(f"{verdict.name}: {'MATCH' if verdict.matched else 'no match'} ({verdict.rates})", 1)
    describe_matched(report, result.matched, result.limit_context, 1)
