"""MaaSSubscriptions to one TokenRateLimitPolicy per model, with 3.6 semantics (`reference/ratelimit.md`).

Subscriptions that share a rate set share one limit, so a new subscription at an existing rate adds a predicate
clause instead of a limit (Kuadrant copies every limit into the gateway's wasm configuration). Short IDs keep
those clauses small; legacy keys keep pre-3.6 subscriptions on their live Limitador counters. With
`platform.predicateFormat: compact` a limit's members are one CEL `in` list per identity attribute instead of one
`==` clause each: the same callers match, in fewer bytes the more members a limit has.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from ... import naming
from ...config import MaasConfig, ModelConfig, SubscriptionModelRef
from ..models.routing import route_policy
from .access import cel_list
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


_SHA256 = hashlib.sha256  # looked up once: a plan hashes one key per model reference


def short_id(key: str) -> str:
    """First 16 lowercase hex characters of the SHA-256 of the UTF-8 key, as maas-api returns in `rateLimitId`."""
    return _SHA256(key.encode()).hexdigest()[:16]


Rate = tuple[int, str]


@dataclass(slots=True, init=False)
class Member:
    """One subscription's contribution to one model's policy (not frozen: tens of thousands are built per plan)."""

    subscription: str
    identity: Identity
    key: str
    rates: tuple[Rate, ...] | None  # None: unlimited
    rate_limit_id: str = field(repr=False, compare=False)  # the short ID of `key`
    # What the gateway matches this member on: its short ID, or its key for a legacy member.
    value: str = field(repr=False, compare=False)
    # The limit it lands in on its model's policy, once `plan_rate_limits` has grouped the model's members; None
    # before, and for a model that is not in maas:models (its subscription's output says so).
    limit: str | None = field(repr=False, compare=False)

    def __init__(self, subscription: str, identity: Identity, key: str, rates: tuple[Rate, ...] | None) -> None:
        """Written out rather than generated with a `__post_init__`: a plan builds one per model reference."""
        self.subscription, self.identity, self.key, self.rates = subscription, identity, key, rates
        self.rate_limit_id = short_id(key)
        self.value = self.rate_limit_id if identity == "short" else key
        self.limit = None

    @property
    def clause(self) -> str:
        return f'{IDENTITY_ATTRIBUTE[self.identity]} == "{self.value}"'


def segment(rate: Rate) -> str:
    return f"{rate[0]}-per-{rate[1]}"


def rate_set(rates: Iterable[Rate]) -> tuple[Rate, ...]:
    """De-duplicated and ordered by segment text (plain string order: `100-per-1m` before `20-per-1m`)."""
    return tuple(sorted(set(rates), key=segment))


_rate_set = lru_cache(maxsize=1024)(rate_set)


def rates_of(ref: SubscriptionModelRef) -> tuple[Rate, ...]:
    """The rate set of a model reference, computed once per distinct list: thousands of references share a few."""
    return _rate_set(ref.rate_pairs)


def limit_name(rates: tuple[Rate, ...]) -> str:
    return "tokens-" + "-".join(segment(rate) for rate in rates)


def predicate(clauses: Iterable[str], exempt_model_discovery: bool) -> str:
    """The default form: one `==` clause per member, sorted."""
    return _joined(sorted(set(clauses)), exempt_model_discovery)


def compact_predicate(members: Iterable[Member], exempt_model_discovery: bool) -> str:
    """The compact form: per identity attribute one `in` list of the members' values, sorted (`tokens-unlimited`
    mixes both generations, so it may hold two lists, in the order of the default form's clauses)."""
    values: dict[Identity, set[str]] = defaultdict(set)
    for m in members:
        values[m.identity].add(m.value)
    lists = [f"{IDENTITY_ATTRIBUTE[identity]} in {cel_list(sorted(found))}" for identity, found in values.items()]
    return _joined(sorted(lists), exempt_model_discovery)


def _joined(ordered: list[str], exempt_model_discovery: bool) -> str:
    """One alternative stands bare; several are joined with ` || ` in one pair of parentheses."""
    text = ordered[0] if len(ordered) == 1 else "(" + " || ".join(ordered) + ")"
    return f"{text} && {DISCOVERY_EXEMPTION}" if exempt_model_discovery else text


def counters(identity: Identity) -> list[dict[str, str]]:
    return [{"expression": IDENTITY_ATTRIBUTE[identity]}, {"expression": USER_COUNTER}]


def limit_groups(members: Iterable[Member]) -> dict[str, list[Member]]:
    """One model's members by the limit each lands in, ordered by limit name: one limit per rate set, whose short-ID
    members get a limit of their own (`-id`) when legacy members share the rate set; unlimited members in
    `UNLIMITED`. Grouped once per plan: the policies and the gateway budget's levers read it
    (`RateLimitPlan.grouped`)."""
    generations: dict[tuple[tuple[Rate, ...] | None, Identity], list[Member]] = defaultdict(list)
    for m in members:
        generations[m.rates, m.identity].append(m)
    groups: dict[str, list[Member]] = defaultdict(list)
    for (rates, identity), found in generations.items():
        if rates is None:
            groups[UNLIMITED] += found
        else:
            split = identity == "short" and (rates, "legacy") in generations
            groups[limit_name(rates) + "-id" if split else limit_name(rates)] += found
    return {name: groups[name] for name in sorted(groups)}


def limits(
    members: Iterable[Member],
    exempt_model_discovery: bool,
    compact: bool = False,
    groups: Mapping[str, list[Member]] | None = None,
) -> dict[str, dict[str, Any]]:
    """`spec.limits` of one model's policy, keyed and ordered by limit name (`groups`: `limit_groups(members)`)."""
    result = {}
    for name, group in (limit_groups(members) if groups is None else groups).items():
        entry: dict[str, Any] = {}
        if name != UNLIMITED:
            entry["rates"] = [{"limit": limit, "window": window} for limit, window in group[0].rates]
        if compact:
            text = compact_predicate(group, exempt_model_discovery)
        else:
            text = predicate((m.clause for m in group), exempt_model_discovery)
        entry["when"] = [{"predicate": text}]
        if name != UNLIMITED:
            entry["counters"] = counters(group[0].identity)
        result[name] = entry
    return result


def token_rate_limit_policy(
    model: ModelConfig, members: list[Member], groups: Mapping[str, list[Member]], exempt: bool, compact: bool
) -> dict:
    """The `maas-trlp-{model}` object: one per model, in the route namespace, targeting the model's HTTPRoute."""
    return route_policy(
        model,
        naming.TRLP_API_VERSION,
        "TokenRateLimitPolicy",
        naming.trlp_name(model.name),
        "maas-subscription",
        "token-rate-limit-policy",
        {naming.SUBSCRIPTIONS_ANNOTATION: ",".join(sorted({m.subscription for m in members}))},
        limits=limits(members, exempt, compact, groups),
    )


@dataclass(frozen=True)
class ModelLimits:
    """One model's members and the limit each lands in: what its policy is written from, in either format."""

    model: ModelConfig
    members: list[Member]
    groups: dict[str, list[Member]]  # `limit_groups(members)`

    def policy(self, exempt: bool, compact: bool) -> dict:
        return token_rate_limit_policy(self.model, self.members, self.groups, exempt, compact)


@dataclass(frozen=True)
class RateLimitPlan:
    policies: dict[str, dict]  # model key -> TRLP body
    members: dict[str, dict[str, Member]] = field(repr=False)  # subscription key -> model key -> its member
    warnings: list[str]
    identities: Mapping[str, Identity]  # what it was planned with, per subscription key
    grouped: dict[str, ModelLimits] = field(repr=False)  # model key -> what its policy is written from
    exempt: bool = field(repr=False)  # `platform.exemptModelDiscovery`

    @cached_property
    def subscriptions(self) -> dict[str, dict[str, Any]]:
        """Subscription key -> its stack output entry (`_output`). Built when read: a plan under
        `subscriptionOutputs: summary` exports counts, and these entries are 10 MB at 10,000 subscriptions."""
        return {key: _output(self.members[key], self.identities[key]) for key in sorted(self.members)}


def _policies(grouped: Mapping[str, ModelLimits], exempt: bool, compact: bool) -> dict[str, dict]:
    return {key: limits.policy(exempt, compact) for key, limits in grouped.items()}


def plan_rate_limits(config: MaasConfig, identities: Mapping[str, Identity]) -> RateLimitPlan:
    """Every TRLP of the configuration, the per-subscription identities, and warnings for missing models."""
    models = config.models_by_key
    by_subscription = _members(config, identities)
    by_model: dict[str, list[Member]] = defaultdict(list)
    warnings = []
    for key, members in by_subscription.items():
        for model, found in members.items():
            if model in models:
                by_model[model].append(found)
            else:
                warnings.append(
                    f"subscription {key}: model {model} is not in maas:models, so it contributes no token limit "
                    "there; add the model or remove the reference"
                )
    platform = config.platform
    exempt, compact = platform.exemptModelDiscovery, platform.predicateFormat == "compact"
    grouped = {key: ModelLimits(models[key], found, limit_groups(found)) for key, found in sorted(by_model.items())}
    _land(grouped.values())
    return RateLimitPlan(_policies(grouped, exempt, compact), by_subscription, warnings, identities, grouped, exempt)


def _members(config: MaasConfig, identities: Mapping[str, Identity]) -> dict[str, dict[str, Member]]:
    """Subscription key -> model key -> its member there, in configuration order, once per reference."""
    found: dict[str, dict[str, Member]] = {}
    # Per distinct reference (identical ones are one object, `config.types.validated_once`): its key and rates.
    parts: dict[int, tuple[str, tuple[Rate, ...] | None]] = {}
    for s in config.subscriptions:
        key = s.key
        identity, scope, members = identities[key], f"{key}@", {}  # `model_scoped_key`, from the qualified keys
        for ref in s.modelRefs:
            part = parts.get(id(ref))
            if part is None:
                part = parts[id(ref)] = (ref.key, None if ref.unlimited else rates_of(ref))
            members[part[0]] = Member(key, identity, scope + part[0], part[1])
        found[key] = members
    return found


def _land(grouped: Iterable[ModelLimits]) -> None:
    """Sets each grouped member's `limit`: the subscriptions' outputs name it (a table by member key cost more)."""
    for limits in grouped:
        for name, group in limits.groups.items():
            for m in group:
                m.limit = name


def _output(members: Mapping[str, Member], identity: Identity) -> dict[str, Any]:
    """A subscription's stack output: its identity and, per model, its key, short ID and limit (None: no policy)."""
    models = {}
    for model in sorted(members):
        m = members[model]
        models[model] = {"key": m.key, "shortId": m.rate_limit_id, "limit": m.limit}
    return {"rateLimitIdentity": identity, "models": models}


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
