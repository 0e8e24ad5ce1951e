"""Which live Limitador counters an update would reset: seed 002's quota continuity, made visible in review.

Kuadrant keys each Limitador limit by its name and a counter by the limit's counter expressions, so a subscription's
in-window usage starts again at zero when its limit is renamed (a rate change; a rate group split into
`tokens-…`/`tokens-…-id` or merged back; the rename from pre-grouping per-subscription limits), when its clause moves
to the other identity attribute, or when its limit's counters change. The live and the planned policies go through
one parser, so both sides attribute members alike; a live predicate it cannot read is reported, never guessed.
A counter also restarts when the value it counts changes: the gateway AuthPolicy's `auth.identity.userid` of OIDC
callers (issue 17's username prefix and claim), reported for every subscription of that tenant.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ... import naming
from ...config import ConfigIssue, MaasConfig, TenantConfig
from ...config.errors import escaped, quoted
from ...listing import listed
from ...observe import Observed
from ...observe.policy_views import Limit, LiveAuthPolicy, LiveTokenRateLimitPolicy
from ...observe.views import view_of
from ..desired import Desired, Plan
from ..policies.identity import Identity
from ..policies.ratelimit import (
    IDENTITY_ATTRIBUTE,
    USER_COUNTER,
    Rate,
    limit_name,
    model_scoped_key,
    rate_set,
    short_id,
)

KIND = "TokenRateLimitPolicy"
ACCEPT_KEY = "maas:acceptQuotaResets"
SHOWN = 5  # resets listed in the summary line

_GENERATION = {attribute: identity for identity, attribute in IDENTITY_ATTRIBUTE.items()}
_LABEL = r"[a-z0-9][a-z0-9.-]*"
_VALUE: dict[Identity, re.Pattern[str]] = {
    "short": re.compile(r"[0-9a-f]{16}"),
    "legacy": re.compile(rf"{_LABEL}/{_LABEL}@{_LABEL}/{_LABEL}"),
}
_ATTRIBUTE = r"(auth\.identity\.selected_subscription_(?:id|key))"
_STRING = r'"[^"\\]*"'
# The default form's `attribute == "value"`, or the compact form's `attribute in ["value", ...]`.
# No two whitespace runs meet: a live predicate is anyone's text, and `\s*\s+` backtracks quadratically on it.
_CLAUSE = re.compile(rf"\s*{_ATTRIBUTE}(?:\s*==\s*({_STRING})|\s+in\s*\[((?:\s*{_STRING}\s*,)*\s*{_STRING})?\s*\])\s*")
_VALUES = re.compile(r'"([^"\\]*)"')
# Upstream writes the exemption on `request.path`, this program on `request.url_path`: both are read.
# `(?<!\s)`: a match starts only where a whitespace run starts, so a long run is not rescanned from each position.
_EXEMPTION = re.compile(r'(?<!\s)\s*&&\s*!\s*request\.(?:url_)?path\.endsWith\(\s*"/v1/models"\s*\)\s*$')


@dataclass(frozen=True)
class Clause:
    identity: Identity
    value: str  # the short ID or the model-scoped key


def parse_predicate(text: str) -> tuple[Clause, ...] | None:
    """The member clauses of a token limit's predicate, optionally followed by the discovery exemption: one bare
    alternative, or several joined by `||` in parentheses, each an `==` clause (`predicateFormat: default`) or an
    `in` list (`compact`), so a switch of format attributes every member alike. None for any other form."""
    body = _EXEMPTION.sub("", text, count=1).strip()
    parts = body[1:-1].split("||") if body.startswith("(") and body.endswith(")") else [body]
    clauses: list[Clause] = []
    for part in parts:
        found = _clauses(part)
        if found is None:
            return None
        clauses += found
    return tuple(clauses)


def _clauses(text: str) -> list[Clause] | None:
    match = _CLAUSE.fullmatch(text)
    if match is None:
        return None
    identity = _GENERATION[match[1]]
    values = _VALUES.findall(match[2] or match[3] or "")
    pattern = _VALUE[identity]
    return [Clause(identity, value) for value in values] if all(map(pattern.fullmatch, values)) else None


@dataclass(frozen=True)
class Slot:
    """Where one subscription's counter lives in one policy."""

    limit: str
    identity: Identity
    rates: tuple[Rate, ...]  # empty: the limit holds no quota (`tokens-unlimited`)
    counters: frozenset[str]


Members = dict[str, list[Slot]]  # subscription key -> its slots in one policy


@dataclass(frozen=True)
class Reset:
    """One (subscription, model) whose in-window counter the update starts again at zero."""

    subscription: str  # ns/name
    model: str  # ns/name
    old_limit: str
    new_limit: str
    reason: str
    collateral: bool = False


@dataclass(frozen=True)
class QuotaReport:
    resets: tuple[Reset, ...]
    warnings: list[str]  # unreadable live limits, the summary, one line per reset
    outputs: list[dict[str, Any]]  # the `quotaResets` stack output


def quota_report(config: MaasConfig, observed: Observed, plan: Plan) -> QuotaReport:
    """Every model's live policy against its planned one; a policy Pulumi leaves unchanged resets nothing."""
    planned = {(obj.namespace, obj.name): obj for obj in plan.objects_of(KIND)}
    ids: dict[str, dict[str, str]] | None = None  # computed once some live policy needs them
    resets: list[Reset] = []
    warnings: list[str] = []
    elsewhere = _live_by_model(observed)
    unobserved = []
    for model in sorted(config.models, key=lambda m: m.key):
        where = (model.route_namespace, naming.trlp_name(model.name))
        target = planned.get(where)
        if not _changed_by_pulumi(target):
            continue
        if observed.lookup(KIND, *where).state == "unknown":
            unobserved.append(model.key)
        live = observed.view(LiveTokenRateLimitPolicy, *where)
        others = [other for other in elsewhere.get(model.key, ()) if _where(other) != where]
        if live is None and not others:
            continue  # no live counter to keep: nothing to compare
        ids = _short_ids(config) if ids is None else ids
        planned_view = view_of(LiveTokenRateLimitPolicy, target.body)
        after = _members(planned_view, model.key, ids[model.key], warnings)
        if live is not None:
            before = _members(live, model.key, ids[model.key], warnings)
            moved = _route_change(live, planned_view)
            resets += (
                _moved_resets(model.key, before, after, moved) if moved else _model_resets(model.key, before, after)
            )
        for other in others:
            before = _members(other, model.key, ids[model.key], warnings)
            resets += _moved_resets(model.key, before, after, f"its policy moves from {'/'.join(_where(other))}")
    resets = _with_userid_resets(resets, _userid_resets(config, observed, plan, warnings))
    resets = sorted(set(resets), key=lambda r: (r.subscription, r.model, r.old_limit))
    accepted = set(config.acceptQuotaResets)
    outputs = [_output(reset, reset.subscription in accepted) for reset in resets]
    notes = _unobserved_warning(unobserved, observed) + _stale_acceptances(accepted, resets)
    return QuotaReport(tuple(resets), warnings + notes + reset_lines(resets, accepted), outputs)


def _where(policy: LiveTokenRateLimitPolicy) -> tuple[str, str]:
    return policy.meta.namespace or "", policy.meta.name or ""


def _live_by_model(observed: Observed) -> dict[str, list[LiveTokenRateLimitPolicy]]:
    """Live policies by the model their labels name: a model whose route moved finds its old policy elsewhere."""
    found: dict[str, list[LiveTokenRateLimitPolicy]] = defaultdict(list)
    for ref in sorted(observed.objects, key=lambda ref: ref.sort_key):
        policy = observed.view(LiveTokenRateLimitPolicy, ref.namespace, ref.name) if ref.kind == KIND else None
        model = policy and policy.meta.label(naming.MODEL_LABEL)
        namespace = policy and policy.meta.label(naming.MODEL_NAMESPACE_LABEL)
        if policy and model and namespace:
            found[naming.qualified(namespace, model)].append(policy)
    return found


def _route_change(live: LiveTokenRateLimitPolicy, planned: LiveTokenRateLimitPolicy) -> str | None:
    """Kuadrant puts a policy's limits in the Limitador namespace of its target route: a new target is a new
    namespace, so every counter of the policy starts again."""
    before, after = live.target, planned.target
    if (before.name, before.kind) == (after.name, after.kind):
        return None
    return f"its model's route changes from {before.name} to {after.name}"


def _moved_resets(model: str, live: Members, planned: Members, reason: str) -> list[Reset]:
    """Every member kept on the model loses its counter: the limits are new to Limitador whatever their names."""
    resets = []
    for subscription in sorted(set(live) & set(planned)):
        new = planned[subscription][0]
        for old in live[subscription]:
            if old.rates and new.rates:
                resets.append(Reset(subscription, model, old.limit, new.limit, reason))
    return resets


def _unobserved_warning(models: list[str], observed: Observed) -> list[str]:
    """Say when continuity was not checked at all, unless nothing was observed (the renderer says that once)."""
    if not models or not (observed.listed or observed.got or observed.objects):
        return []
    shown = listed(models, SHOWN)
    return [
        f"quota continuity not checked for {len(models)} model(s) ({shown}): their live TokenRateLimitPolicies "
        "were not observed, so a reset there would not be reported"
    ]


def _stale_acceptances(accepted: set[str], resets: Sequence[Reset]) -> list[str]:
    """An acceptance left in place would silently accept the next, unrelated reset of that subscription."""
    resetting = {reset.subscription for reset in resets}
    return [
        f"{ACCEPT_KEY} lists {key}, but this update resets none of its counters; remove it so that a later reset "
        "is not accepted unseen"
        for key in sorted(accepted - resetting)
    ]


AUTH_KIND = "AuthPolicy"


def _userid_resets(config: MaasConfig, observed: Observed, plan: Plan, warnings: list[str]) -> list[Reset]:
    """Every token limit also counts per caller, on `auth.identity.userid`, which the tenant's gateway AuthPolicy
    derives: when the live one authenticates OIDC tokens and derives `userid` otherwise than planned (issue 17:
    `oidc.usernamePrefix`, `oidc.usernameClaim`), each OIDC caller's counters start again at zero. Which
    subscriptions OIDC callers use is unknown (their groups may match any owner), so every subscription with a
    live rated counter on the tenant's models is reported."""
    live_policies = [
        (tenant, observed.view(LiveAuthPolicy, *_gateway_policy(config, tenant))) for tenant in config.tenants
    ]
    if all(live is None for _, live in live_policies):
        return []  # no live counter to rename (the plan's policies are not worth collecting)
    planned = {(o.namespace, o.name): o for o in plan.objects_of(AUTH_KIND)}
    resets: list[Reset] = []
    for tenant, live in live_policies:
        target = planned.get(_gateway_policy(config, tenant))
        if not _changed_by_pulumi(target) or live is None:
            continue
        reason = _userid_change(live, view_of(LiveAuthPolicy, target.body), tenant)
        if reason is not None:
            resets += _per_user_counters(config, observed, plan, tenant, reason, warnings)
    return resets


def _gateway_policy(config: MaasConfig, tenant: TenantConfig) -> tuple[str, str]:
    gateway = tenant.gateway_name(config.platform)
    name = naming.gateway_auth_policy_name(gateway, config.platform.gateway.name)
    return config.platform.gateway.namespace, name


def _userid_change(live: LiveAuthPolicy, planned: LiveAuthPolicy, tenant: TenantConfig) -> str | None:
    """Why OIDC callers' `userid` changes, or None: only a live policy with OIDC authentication has OIDC callers
    with counters, and only another `userid` expression counts them under other names."""
    if "oidc-identities" not in live.authentications or tenant.oidc is None:
        return None
    if live.userid == planned.userid:
        return None
    oidc = tenant.oidc
    return (
        f"its OIDC callers' auth.identity.userid changes: tenant {tenant.name} names them by "
        f'oidc.usernamePrefix "{oidc.usernamePrefix}" and oidc.usernameClaim {oidc.usernameClaim}'
    )


def _per_user_counters(
    config: MaasConfig, observed: Observed, plan: Plan, tenant: TenantConfig, reason: str, warnings: list[str]
) -> list[Reset]:
    """Each (subscription, model) of the tenant kept by the update whose live rated limit counts per user."""
    planned = {(o.namespace, o.name): o for o in plan.objects_of(KIND)}
    ids, seen, resets = _short_ids(config), [], []
    for model in sorted((m for m in config.models if m.tenant == tenant.name), key=lambda m: m.key):
        where = (model.route_namespace, naming.trlp_name(model.name))
        live, target = observed.view(LiveTokenRateLimitPolicy, *where), planned.get(where)
        if live is None or target is None:
            continue
        before = _members(live, model.key, ids[model.key], seen)
        after = _members(view_of(LiveTokenRateLimitPolicy, target.body), model.key, ids[model.key], seen)
        for subscription in sorted(set(before) & set(after)):
            new = after[subscription][0]
            resets += [
                Reset(subscription, model.key, old.limit, new.limit, reason)
                for old in before[subscription]
                if old.rates and USER_COUNTER in old.counters
            ]
    warnings += [w for w in dict.fromkeys(seen) if w not in warnings]
    return resets


def _with_userid_resets(resets: list[Reset], more: list[Reset]) -> list[Reset]:
    """A counter that restarts for a reason of its own and because its callers are renamed is one reset, with
    both reasons."""
    out, index = list(resets), {}
    for i, reset in enumerate(out):
        index.setdefault((reset.subscription, reset.model, reset.old_limit), i)
    for reset in more:
        i = index.setdefault((reset.subscription, reset.model, reset.old_limit), len(out))
        if i == len(out):
            out.append(reset)
        else:
            out[i] = replace(out[i], reason=f"{out[i].reason}; {reset.reason}", collateral=False)
    return out


def _changed_by_pulumi(target: Desired | None) -> bool:
    return target is not None and "spec" not in target.ignore_changes


def _short_ids(config: MaasConfig) -> dict[str, dict[str, str]]:
    """Per model, short ID -> key of each configured subscription (a hash cannot be read back)."""
    ids: dict[str, dict[str, str]] = defaultdict(dict)
    for s in config.subscriptions:
        for ref in s.modelRefs:
            ids[ref.key][short_id(model_scoped_key(s.namespace, s.name, ref.namespace, ref.name))] = s.key
    return ids


def _members(policy: LiveTokenRateLimitPolicy, model: str, ids: Mapping[str, str], warnings: list[str]) -> Members:
    """Each subscription's slots in a policy, attributed through its predicate clauses."""
    members: Members = defaultdict(list)
    for name, limit in policy.limits:
        clauses = _limit_clauses(limit)
        if clauses is None:
            warnings.append(_unreadable_warning(policy, name, limit))
            continue
        rates, counters = _rates(limit), frozenset(limit.counters)  # Limitador keeps counter variables as a set
        slots = {identity: Slot(name, identity, rates, counters) for identity in IDENTITY_ATTRIBUTE}
        for clause in clauses:
            subscription = _subscription(clause, model, ids)
            if subscription is not None:
                members[subscription].append(slots[clause.identity])
    return members


def _limit_clauses(limit: Limit) -> tuple[Clause, ...] | None:
    predicate = _predicate(limit)
    return None if predicate is None else parse_predicate(predicate)


def _predicate(limit: Limit) -> str | None:
    """The text of a limit's one `when` predicate; None when it has no single predicate."""
    return limit.when[0] if len(limit.when) == 1 else None


def _subscription(clause: Clause, model: str, ids: Mapping[str, str]) -> str | None:
    """The subscription a clause names on this model; None for one that is not configured there any more (a short
    ID), or a key of another model."""
    if clause.identity == "short":
        return ids.get(clause.value)
    subscription, _, keyed_model = clause.value.partition("@")
    return subscription if keyed_model == model else None


def _rates(limit: Limit) -> tuple[Rate, ...]:
    """The limit's rates; entries of another shape are left out (a live object may hold anything)."""
    return rate_set((n, w) for n, w in limit.rates if n >= 0 and w is not None)


def _model_resets(model: str, live: Members, planned: Members) -> list[Reset]:
    """A subscription gone from the model is no reset (its counter simply goes), nor is a new one."""
    resets = []
    for subscription in sorted(set(live) & set(planned)):
        new = planned[subscription][0]
        for old in live[subscription]:
            why = _reason(subscription, model, old, new, live, planned)
            if why is not None:
                resets.append(Reset(subscription, model, old.limit, new.limit, *why))
    return resets


def _reason(
    subscription: str, model: str, old: Slot, new: Slot, live: Members, planned: Members
) -> tuple[str, bool] | None:
    """Why the counter resets, and whether that is collateral; None when it carries on. A limit without rates holds
    no quota, so moving into or out of it loses no usage."""
    if not old.rates or not new.rates:
        return None
    own = []
    if old.rates != new.rates:
        own.append("its rates changed")
    if old.identity != new.identity:
        own.append(f"its identity changed from {_named(old.identity)} to {_named(new.identity)}")
    if old.limit == _pre_grouping_name(subscription, model):
        own.append("its limit is renamed from the pre-grouping per-subscription format")
    if own:
        return " and ".join(own), False
    if old.counters != new.counters:
        return "its limit's counters changed", False
    if old.limit == new.limit:
        return None
    base = limit_name(new.rates)
    if {old.limit, new.limit} != {base, f"{base}-id"}:
        return "its limit is renamed", False
    return _group_change(new.rates, live, planned), True


def _named(identity: Identity) -> str:
    return f"{identity} ({IDENTITY_ATTRIBUTE[identity].removeprefix('auth.identity.')})"


def _pre_grouping_name(subscription: str, model: str) -> str:
    """Upstream's limit before rate grouping: `{subNs}-{subName}-{modelName}-tokens`."""
    return f"{subscription.replace('/', '-')}-{model.split('/')[1]}-tokens"


# (noun, what happened) for the legacy members of a rate set that appeared or went: only they rename the `-id` limit.
_LEFT, _TO_SHORT = ("legacy subscription", "left its rate group"), ("subscription", "switched to short")
_JOINED, _TO_LEGACY = ("legacy subscription", "joined its rate group"), ("subscription", "switched to legacy")


def _group_change(rates: tuple[Rate, ...], live: Members, planned: Members) -> str:
    """The collateral cause: which legacy members of the rate set came or went, splitting or merging its limit."""
    before, after = _legacy_members(live, rates), _legacy_members(planned, rates)
    events: dict[tuple[str, str], list[str]] = defaultdict(list)
    for subscription in sorted(before - after):
        events[_TO_SHORT if _in_rate_set(planned, subscription, rates) else _LEFT].append(subscription)
    for subscription in sorted(after - before):
        events[_TO_LEGACY if _in_rate_set(live, subscription, rates) else _JOINED].append(subscription)
    causes = []
    for noun, verb in (_LEFT, _TO_SHORT, _JOINED, _TO_LEGACY):
        names = events.get((noun, verb))
        if names:
            causes.append(f"{noun}{'s' if len(names) > 1 else ''} {', '.join(names)} {verb}")
    return "collateral: " + ("; ".join(causes) or "its own rates and identity did not change")


def _legacy_members(members: Members, rates: tuple[Rate, ...]) -> set[str]:
    return {s for s, slots in members.items() if any(x.identity == "legacy" and x.rates == rates for x in slots)}


def _in_rate_set(members: Members, subscription: str, rates: tuple[Rate, ...]) -> bool:
    return any(slot.rates == rates for slot in members.get(subscription, ()))


def reset_lines(resets: Sequence[Reset], accepted: Iterable[str]) -> list[str]:
    """One summary warning and one line per reset; accepted resets are still shown, marked accepted."""
    if not resets:
        return []
    accepted = set(accepted)
    return [_summary(resets)] + [_line(reset, reset.subscription in accepted) for reset in resets]


def _summary(resets: Sequence[Reset]) -> str:
    shown = listed([f"{r.subscription} on {r.model}" for r in resets], SHOWN)
    counters = "counter would" if len(resets) == 1 else "counters would"
    return (
        f"{len(resets)} token-rate {counters} reset: {shown}; their in-window usage starts again at zero. To "
        f"accept a reset, add its subscription to {ACCEPT_KEY} (with maas:platform.quotaResets: error an "
        "unaccepted reset stops the update)"
    )


def _line(reset: Reset, accepted: bool) -> str:
    line = (
        f"quota reset: subscription {reset.subscription} on model {reset.model}: limit {escaped(reset.old_limit)} "
        f"-> {reset.new_limit} ({reset.reason})"
    )
    return f"{line}; accepted in {ACCEPT_KEY}" if accepted else line


def _output(reset: Reset, accepted: bool) -> dict[str, Any]:
    return {
        "subscription": reset.subscription,
        "model": reset.model,
        "oldLimit": reset.old_limit,
        "newLimit": reset.new_limit,
        "reason": reset.reason,
        "collateral": reset.collateral,
        "accepted": accepted,
    }


def _unreadable_warning(policy: LiveTokenRateLimitPolicy, name: str, limit: Limit) -> str:
    predicate = _predicate(limit)
    shown = "not one `when` predicate" if predicate is None else quoted(predicate)
    return (
        f"{KIND} {policy.meta.namespace}/{policy.meta.name}: limit {quoted(name)} has a predicate this "
        f"program cannot attribute to subscriptions ({shown}), so whether its counters reset is not reported; "
        "compare it with the planned policy by hand before applying"
    )


def quota_issues(config: MaasConfig, resets: Iterable[Mapping[str, Any]]) -> list[ConfigIssue]:
    """With `platform.quotaResets: error`, each reset (a `quotaResets` stack-output record) of a subscription not
    listed in `maas:acceptQuotaResets` stops the update, so accepting one is a visible change in review."""
    if config.platform.quotaResets != "error":
        return []
    return sorted(
        ConfigIssue(
            f"maas:subscriptions ({r['subscription']})",
            f"this update resets its token-rate counter on model {r['model']} (limit {r['oldLimit']} -> "
            f"{r['newLimit']}, {r['reason']}) and maas:platform.quotaResets is error; add '{r['subscription']}' to "
            f"{ACCEPT_KEY} to accept the reset",
        )
        for r in resets
        if not r["accepted"]
    )
