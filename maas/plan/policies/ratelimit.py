"""MaaSSubscriptions to one TokenRateLimitPolicy per model, with 3.6 semantics (`reference/ratelimit.md`).

Subscriptions that share a rate set share one limit, so a new subscription at an existing rate adds a predicate
clause instead of a limit (Kuadrant copies every limit into the gateway's wasm configuration). Short IDs keep
those clauses small; legacy keys keep pre-3.6 subscriptions on their live Limitador counters.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config import MaasConfig, ModelConfig, SubscriptionConfig, SubscriptionModelRef
from ..models.routing import route_policy
from .identity import Identity

UNLIMITED = "tokens-unlimited"
# On the query-free path: Envoy's `request.path` is `:path` with the query string, so
# `.../v1/chat/completions?x=/v1/models` would end with `/v1/models` and escape every limit. The wasm-shim resolves
# `request.url_path` (a well-known attribute since v0.8), and Kuadrant writes its own route matches on it.
DISCOVERY_EXEMPTION = '!request.url_path.endsWith("/v1/models")'
IDENTITY_ATTRIBUTE: dict[Identity, str] = {
    "short": "auth.identity.selected_subscription_id",
    "legacy": "auth.identity.selected_subscription_key",
}
USER_COUNTER = "auth.identity.userid"


def model_scoped_key(subscription_namespace: str, subscription: str, model_namespace: str, model: str) -> str:
    return f"{subscription_namespace}/{subscription}@{model_namespace}/{model}"


def short_id(key: str) -> str:
    """First 16 lowercase hex characters of the SHA-256 of the UTF-8 key, as maas-api returns in `rateLimitId`."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


Rate = tuple[int, str]


@dataclass(frozen=True)
class Member:
    """One subscription's contribution to one model's policy."""

    subscription: str
    identity: Identity
    key: str
    rates: tuple[Rate, ...] | None  # None: unlimited

    @property
    def rate_limit_id(self) -> str:
        return short_id(self.key)

    @property
    def clause(self) -> str:
        value = self.rate_limit_id if self.identity == "short" else self.key
        return f'{IDENTITY_ATTRIBUTE[self.identity]} == "{value}"'


def member(subscription: SubscriptionConfig, ref: SubscriptionModelRef, identity: Identity) -> Member:
    rates = None if ref.unlimited else rate_set((r.limit, r.window) for r in ref.tokenRateLimits)
    key = model_scoped_key(subscription.namespace, subscription.name, ref.namespace, ref.name)
    return Member(subscription.key, identity, key, rates)


def segment(rate: Rate) -> str:
    return f"{rate[0]}-per-{rate[1]}"


def rate_set(rates: Iterable[Rate]) -> tuple[Rate, ...]:
    """De-duplicated and ordered by segment text (plain string order: `100-per-1m` before `20-per-1m`)."""
    return tuple(sorted(set(rates), key=segment))


def limit_name(rates: tuple[Rate, ...]) -> str:
    return "tokens-" + "-".join(segment(rate) for rate in rates)


def predicate(clauses: Iterable[str], exempt_model_discovery: bool) -> str:
    ordered = sorted(set(clauses))
    text = ordered[0] if len(ordered) == 1 else "(" + " || ".join(ordered) + ")"
    return f"{text} && {DISCOVERY_EXEMPTION}" if exempt_model_discovery else text


def counters(identity: Identity) -> list[dict[str, str]]:
    return [{"expression": IDENTITY_ATTRIBUTE[identity]}, {"expression": USER_COUNTER}]


def limit_names(members: Iterable[Member]) -> dict[str, str]:
    """The limit each member lands in, keyed by its model-scoped key."""
    members = list(members)
    generations: dict[tuple[Rate, ...], set[Identity]] = defaultdict(set)
    for m in members:
        if m.rates is not None:
            generations[m.rates].add(m.identity)
    names = {}
    for m in members:
        if m.rates is None:
            names[m.key] = UNLIMITED
        else:
            split = len(generations[m.rates]) == 2 and m.identity == "short"
            names[m.key] = limit_name(m.rates) + ("-id" if split else "")
    return names


def limits(members: Iterable[Member], exempt_model_discovery: bool) -> dict[str, dict[str, Any]]:
    """`spec.limits` of one model's policy, keyed and ordered by limit name."""
    members = list(members)
    names = limit_names(members)
    grouped: dict[str, list[Member]] = defaultdict(list)
    for m in members:
        grouped[names[m.key]].append(m)
    result = {}
    for name in sorted(grouped):
        group = grouped[name]
        entry: dict[str, Any] = {}
        if name != UNLIMITED:
            entry["rates"] = [{"limit": limit, "window": window} for limit, window in group[0].rates]
        entry["when"] = [{"predicate": predicate((m.clause for m in group), exempt_model_discovery)}]
        if name != UNLIMITED:
            entry["counters"] = counters(group[0].identity)
        result[name] = entry
    return result


def token_rate_limit_policy(model: ModelConfig, members: list[Member], exempt_model_discovery: bool) -> dict:
    """The `maas-trlp-{model}` object: one per model, in the route namespace, targeting the model's HTTPRoute."""
    return route_policy(
        model,
        naming.TRLP_API_VERSION,
        "TokenRateLimitPolicy",
        naming.trlp_name(model.name),
        "maas-subscription",
        "token-rate-limit-policy",
        {naming.SUBSCRIPTIONS_ANNOTATION: ",".join(sorted({m.subscription for m in members}))},
        limits=limits(members, exempt_model_discovery),
    )


@dataclass(frozen=True)
class RateLimitPlan:
    policies: dict[str, dict]  # model key -> TRLP body
    subscriptions: dict[str, dict[str, Any]]  # subscription key -> stack output
    warnings: list[str]


def plan_rate_limits(config: MaasConfig, identities: Mapping[str, Identity]) -> RateLimitPlan:
    """Every TRLP of the configuration, the per-subscription identities, and warnings for missing models."""
    models = config.models_by_key
    members: dict[str, list[Member]] = defaultdict(list)
    warnings = []
    for subscription in config.subscriptions:
        for ref in subscription.modelRefs:
            if ref.key in models:
                members[ref.key].append(member(subscription, ref, identities[subscription.key]))
            else:
                warnings.append(
                    f"subscription {subscription.key}: model {ref.key} is not in maas:models, so it contributes no "
                    "token limit there; add the model or remove the reference"
                )
    exempt = config.platform.exemptModelDiscovery
    policies = {key: token_rate_limit_policy(models[key], members[key], exempt) for key in sorted(members)}
    names = {key: limit_names(group) for key, group in members.items()}
    return RateLimitPlan(policies, _subscription_outputs(config, identities, names), warnings)


def _subscription_outputs(
    config: MaasConfig, identities: Mapping[str, Identity], names: dict[str, dict[str, str]]
) -> dict[str, dict[str, Any]]:
    outputs = {}
    for subscription in sorted(config.subscriptions, key=lambda s: s.key):
        models = {}
        for ref in sorted(subscription.modelRefs, key=lambda r: r.key):
            key = model_scoped_key(subscription.namespace, subscription.name, ref.namespace, ref.name)
            models[ref.key] = {"key": key, "shortId": short_id(key), "limit": names.get(ref.key, {}).get(key)}
        outputs[subscription.key] = {"rateLimitIdentity": identities[subscription.key], "models": models}
    return outputs


def matching_limits(policy: dict[str, Any], context: dict[str, Any]) -> list[str]:
    """Names of the policy's limits whose `when` predicates all hold for a request context (evaluated as CEL)."""
    from ...tools import cel

    return [
        name
        for name, limit in policy["spec"]["limits"].items()
        if all(cel.matches(condition["predicate"], context) for condition in limit["when"])
    ]


def caller_identity(member_identity: Identity, key: str, userid: str = "user") -> dict[str, str]:
    """What the gateway AuthPolicy sets for a caller of this subscription: maas-api returns `rateLimitId` only
    for short-ID subscriptions, so legacy callers carry an empty `selected_subscription_id`."""
    from ...tools import cel

    rate_limit_id = short_id(key) if member_identity == "short" else ""
    return cel.subscription_identity(key=key, rate_limit_id=rate_limit_id, userid=userid)
