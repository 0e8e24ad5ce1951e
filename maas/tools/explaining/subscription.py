"""`explain subscription`: a subscription's rate-limit identity and why, its short ID per model, the limit each
model's rendered TokenRateLimitPolicy puts it in, and whether the rendered AuthPolicies admit its owners.

The limit is found by evaluating every `when` of the rendered policy with the CEL engine for a request that
selects this subscription; the plan's `subscriptions` stack output says which limit it should be, and a
disagreement is a bug signal.

The phase is the one the program writes, else the live one, else (a `coexist` stack explained without
`--observed`, a subscription the cluster does not have yet) the one the program's status rules give, shown
`(assumed: why)`; the answers that depend on it are marked `on an assumed status`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import naming
from ...config import SubscriptionConfig
from ...observe.fields import text_at
from ...plan.policies.identity import live_identity
from .caller import assumption_lines, not_routed
from .limits import describe_matched
from .maasapi import granting_policies
from .report import Report
from .request import Objects, objects_for, trace
from .world import NONE, OBSERVED, UnknownNameError, World, unknown_message


def explain_subscription(world: World, key: str, model: str | None = None) -> Report:
    """UnknownNameError for a subscription the stack does not have, or a `model` it does not reference."""
    subscription = world.subscription(key)
    output = world.outputs["subscriptions"][key]
    models = output["models"]
    if model is not None and model not in models:
        raise UnknownNameError(unknown_message(f"model of subscription {key}", model, models))
    report = Report()
    report.add(f"subscription {key}")
    report.add(f"owners: {', '.join(label for label, _, _ in owner_callers(subscription))}", 1)
    report.add(f"priority: {subscription.priority}", 1)
    body = world.object("MaaSSubscription", key)
    report.add(f"phase: {_phase(world, body)}", 1)
    report.add(f"rate-limit identity: {output['rateLimitIdentity']} ({identity_reason(world, subscription)})", 1)
    for model_key in [model] if model else sorted(models):
        _model_lines(report, world, subscription, model_key, models[model_key])
    return report


def _phase(world: World, body: Mapping[str, Any] | None) -> str:
    """The phase maas-api reads and where it comes from."""
    published = world.published(body) if body is not None else None
    if published is None or published.source == NONE:
        return "(no status written or observed)"
    if published.source == OBSERVED:
        return f"{published.phase} (observed: the live status)"
    return published.shown_phase


def identity_reason(world: World, subscription: SubscriptionConfig) -> str:
    """Why the plan uses that identity: seed 002's precedence, as `plan/policies/identity.py` applies it."""
    lookup = world.observed.lookup("MaaSSubscription", subscription.namespace, subscription.name)
    live = live_identity(lookup.object, subscription.key, []) if lookup.object is not None else None
    chosen = subscription.rateLimitIdentity
    if chosen is not None:
        change = "" if live in (None, chosen) else f"; it replaces the live identity {live}, which resets its counters"
        return f"set in configuration: rateLimitIdentity: {chosen}{change}"
    if lookup.state == "unknown":
        return (
            "not set and the cluster was not observed: short, as for a new subscription (--observed shows a live one's)"
        )
    if lookup.state == "absent":
        return "not set, and the cluster has no such MaaSSubscription: new, so short"
    return f"not set: sticky from the live MaaSSubscription, {_stamp(lookup.object)}"


def _stamp(live: Mapping[str, Any] | None) -> str:
    annotation = text_at(live, "metadata", "annotations", naming.RATE_LIMIT_IDENTITY_ANNOTATION)
    if annotation is not None:
        return f"annotation {naming.RATE_LIMIT_IDENTITY_ANNOTATION}: {annotation}"
    status = text_at(live, "status", "rateLimitIdentity")
    if status is not None:
        return f"status.rateLimitIdentity: {status}"
    return "which has no identity stamp (pre-3.6): legacy"


def _model_lines(
    report: Report, world: World, subscription: SubscriptionConfig, model_key: str, output: Mapping[str, Any]
) -> None:
    report.add()
    report.add(f"model {model_key}", 1)
    report.add(f"key: {output['key']}", 2)
    report.add(f"short ID: {output['shortId']}", 2)
    if model_key not in world.config.models_by_key:
        report.add("not in maas:models: it contributes no token limit and grants nothing", 2)
        return
    objects = objects_for(world, world.model(model_key))
    _limit_lines(report, world, objects, subscription, output["limit"])
    _access_lines(report, world, objects, subscription)


def _limit_lines(
    report: Report, world: World, objects: Objects, subscription: SubscriptionConfig, expected: str | None
) -> None:
    """The limit a request selecting this subscription matches, by CEL on the rendered policy (as the first
    owner, whoever is admitted: the limit depends on the subscription, not on the caller)."""
    _, user, groups = owner_callers(subscription)[0]
    result = trace(world, objects, user, groups, subscription.key, limits_if_denied=True)
    if not result.routed:
        report.add(f"no limit is reached (404): {not_routed(objects)}", 2)
        return
    answer = result.selection.answer if result.selection is not None else {}
    marked = " (on an assumed status)" if result.assumed else ""
    if "error" in answer:
        report.add(f"maas-api does not select it for inference{marked}: {answer['error']}: {answer['message']}", 2)
        assumption_lines(report, result.assumed, 3)
        return
    if objects.limits is None:
        report.problem(f"no TokenRateLimitPolicy is rendered for {objects.model.key}", 2)
        return
    metadata = objects.limits["metadata"]
    report.add(f"TokenRateLimitPolicy {metadata['namespace']}/{metadata['name']}, every limit's when evaluated:", 2)
    describe_matched(report, result.matched, None, 3)
    if [verdict.name for verdict in result.matched] != [expected]:
        report.problem(f"the stack output puts it in {expected}, which is not the one limit that matches", 3)


def _access_lines(report: Report, world: World, objects: Objects, subscription: SubscriptionConfig) -> None:
    """Each owner calling with `X-MaaS-Subscription` set to this subscription: the rendered AuthPolicies' verdict."""
    route = objects.route_auth
    name = f"{route['metadata']['namespace']}/{route['metadata']['name']}" if route else "none of its own"
    report.add(f"access: AuthPolicy {name}, with the gateway's rules:", 2)
    for label, user, groups in owner_callers(subscription):
        result = trace(world, objects, user, groups, subscription.key)
        policies = granting_policies(objects.auth_policies, objects.model.key, user, groups)
        via = f"MaaSAuthPolicy {', '.join(policies)}" if policies else "no MaaSAuthPolicy grants it"
        marked = ", on an assumed status" if result.assumed else ""
        if result.outcome.auth.status == 200 and not result.routed:
            report.add(f"{label}: not routed (404): {not_routed(objects)}", 3)
        elif result.allowed:
            report.add(f"{label}: admitted (via {via}){marked}", 3)
        else:
            denied = ", ".join(rule.name for rule in result.rules if rule.applies and rule.passed is not True)
            report.add(f"{label}: NOT admitted, denied by {denied} ({via}); its callers get 403 here{marked}", 3)
        assumption_lines(report, result.assumed, 4)


def owner_callers(subscription: SubscriptionConfig) -> list[tuple[str, str, list[str]]]:
    """(label, user, groups) per owner: a member of each owner group, under a name no real user has, then each
    owner user without groups."""
    members = [(f"group {g.name}", f"<a member of {g.name}>", [g.name]) for g in subscription.owner.groups]
    return members + [(f"user {user}", user, []) for user in subscription.owner.users]
