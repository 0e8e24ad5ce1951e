"""MaaSAuthPolicies to one AuthPolicy per model, plus each tenant's gateway policies (`reference/access.md`).

A model's route-level policy adds one authorization rule, `model-access`, to the rules its tenant's gateway
policy merges in: the caller must be in one of the granted groups or be one of the granted users. Grants of
every MaaSAuthPolicy that references the model are unioned, so the policy changes only when the set of
admitted groups and users does.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ... import naming
from ...config import MaasConfig, ModelConfig
from ...config.schema import Oidc, Subjects
from ...listing import listed
from ..desired import Desired, Plan
from ..models.routing import route_policy
from .gateway_auth import (
    HAS_KEY_METADATA,
    OIDC_IDENTITY,
    SELECTION,
    SELECTION_METADATA,
    oidc_naming,
    tenant_gateway_objects,
)

# Caller groups and username from the sources the gateway policy uses (API key validation, else OIDC claims,
# else the TokenReview user). Unlike gateway_auth.CALLER_GROUPS/CALLER_USERNAME, which reproduce upstream
# verbatim, every attribute is guarded: a caller that lacks them is denied, not an evaluation error.
KEY_METADATA = "auth.metadata.apiKeyValidation"
UNUSABLE_LISTED = 20  # subscriptions warned about one per line; the rest are counted in one line
SHOWN = 5  # names a line lists before it counts the rest
GUARDED_CALLER_GROUPS = (
    f"({HAS_KEY_METADATA} ? (has({KEY_METADATA}.groups) ? {KEY_METADATA}.groups : []) : "
    "(has(auth.identity.groups) ? auth.identity.groups : "
    "((has(auth.identity.user) && has(auth.identity.user.groups)) ? auth.identity.user.groups : [])))"
)
GUARDED_CALLER_USERNAME = (
    f'({HAS_KEY_METADATA} ? (has({KEY_METADATA}.username) ? {KEY_METADATA}.username : "") : '
    "(has(auth.identity.preferred_username) ? auth.identity.preferred_username : "
    "(has(auth.identity.sub) ? auth.identity.sub : "
    '((has(auth.identity.user) && has(auth.identity.user.username)) ? auth.identity.user.username : ""))))'
)
RULE = "model-access"
SUBSCRIPTION_RULE = "subscription-for-model"


def cel_list(values: Iterable[str]) -> str:
    """A CEL list literal of strings (`["a", "b"]`); JSON string escaping is valid CEL."""
    return json.dumps(list(values), ensure_ascii=False)


def guarded_username(oidc: Oidc | None) -> str:
    """The caller's username exactly as the gateway names it (`gateway_auth.token_username`, the same
    `oidc_naming`), every attribute guarded: a missing claim names nobody, never a Kubernetes user."""
    named_by = oidc_naming(oidc)
    if named_by is None:
        return GUARDED_CALLER_USERNAME
    claims, prefix = named_by
    claim = '""'
    for name in reversed(claims):
        claim = f"(has(auth.identity.{name}) ? auth.identity.{name} : {claim})"
    named = f'(({claim}) == "" ? "" : {json.dumps(prefix)} + {claim})' if prefix else claim
    return (
        f'({HAS_KEY_METADATA} ? (has({KEY_METADATA}.username) ? {KEY_METADATA}.username : "") : '
        f"({OIDC_IDENTITY} ? {named} : "
        '((has(auth.identity.user) && has(auth.identity.user.username)) ? auth.identity.user.username : "")))'
    )


def model_access_predicate(groups: Iterable[str], users: Iterable[str], username: str = GUARDED_CALLER_USERNAME) -> str:
    """True exactly when the caller is in one of `groups` or is one of `users` (both de-duplicated, sorted), the
    caller's name read by `username` (the tenant's `guarded_username`)."""
    clauses = []
    if groups := sorted(set(groups)):
        clauses.append(f"{GUARDED_CALLER_GROUPS}.exists(g, g in {cel_list(groups)})")
    if users := sorted(set(users)):
        clauses.append(f"{username} in {cel_list(users)}")
    return " || ".join(clauses) if clauses else "false"


@dataclass
class Grant:
    """Who may call one model, and which MaaSAuthPolicies say so."""

    groups: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    users: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))

    @property
    def policies(self) -> list[str]:
        return sorted(set().union(*self.groups.values(), *self.users.values()))

    def output(self) -> dict[str, Any]:
        return {
            "groups": {g: sorted(self.groups[g]) for g in sorted(self.groups)},
            "users": {u: sorted(self.users[u]) for u in sorted(self.users)},
        }


def selected_for_model_predicate(model: ModelConfig) -> str:
    """True only when maas-api selected the subscription for this very model (`resolvedModel`, its MaaSModelRef
    `ns/name` after alias resolution). The gateway derives the model from the path or the routing header, and
    Gateway API may route the request to another model's rule; without this check a subscription selected for
    one model would be spent on another model's backend, where none of that model's limits names it."""
    resolved = f"{SELECTION}.resolvedModel"
    return (
        f'has(auth.metadata) && "{SELECTION_METADATA}" in auth.metadata && has({resolved}) && '
        f"{resolved} == {json.dumps(model.key)}"
    )


def _pattern_rule(predicate: str) -> dict[str, Any]:
    return {"patternMatching": {"patterns": [{"predicate": predicate}]}, "metrics": False, "priority": 0}


def model_auth_policy(model: ModelConfig, grant: Grant, oidc: Oidc | None = None) -> dict:
    """The `maas-auth-{model}` object in the route namespace, targeting the model's HTTPRoute. A model that no
    MaaSAuthPolicy grants gets one too, admitting nobody: its route then denies whatever path or header led
    there, instead of relying on the gateway rules alone."""
    rules = {
        RULE: _pattern_rule(model_access_predicate(grant.groups, grant.users, guarded_username(oidc))),
        SUBSCRIPTION_RULE: _pattern_rule(selected_for_model_predicate(model)),
    }
    return route_policy(
        model,
        naming.AUTH_POLICY_API_VERSION,
        "AuthPolicy",
        naming.model_auth_policy_name(model.name),
        "maas-auth-policy",
        "auth-policy",
        {naming.AUTH_POLICIES_ANNOTATION: ",".join(grant.policies)},
        rules={"authorization": rules},
    )


@dataclass(frozen=True)
class AccessPlan:
    grants: dict[str, Grant]  # model key -> grant, for models that at least one MaaSAuthPolicy references
    policies: dict[str, dict]  # model key -> AuthPolicy body, for every model (deny-all without a grant)
    warnings: list[str]


def plan_model_access(config: MaasConfig) -> AccessPlan:
    """Every per-model AuthPolicy of the configuration, and warnings for references to unknown models."""
    models = config.models_by_key
    grants: dict[str, Grant] = defaultdict(Grant)
    warnings = []
    for policy in config.authPolicies:
        for ref in policy.modelRefs:
            if ref.key not in models:
                warnings.append(
                    f"auth policy {policy.key}: model {ref.key} is not in maas:models, so it grants no access "
                    "there; add the model or remove the reference"
                )
                continue
            grant = grants[ref.key]
            for group in policy.subjects.groups:
                grant.groups[group.name].add(policy.key)
            for user in policy.subjects.users:
                grant.users[user].add(policy.key)
    oidc = {tenant.name: tenant.oidc for tenant in config.tenants}
    policies = {
        key: model_auth_policy(models[key], grants.get(key, Grant()), oidc.get(models[key].tenant))
        for key in sorted(models)
    }
    return AccessPlan(dict(grants), policies, warnings + _unusable_subscriptions(config, grants))


def _unusable_subscriptions(config: MaasConfig, grants: dict[str, Grant]) -> list[str]:
    """A subscription whose owners no auth policy admits to a model is dead weight there: its callers get 403.
    Usually a forgotten `maas:authPolicies` entry, so say which: one line per subscription, and past
    UNUSABLE_LISTED of them one line that counts the rest (a stack without its auth policies would otherwise log a
    line per subscription and model, 50,000 at the benchmark's scale)."""
    models, unusable = config.models_by_key, []
    for subscription in config.subscriptions:  # usually none is unusable: sorted once found
        owner = subscription.owner
        refused = [
            model
            for model in (ref.key for ref in subscription.modelRefs)
            if model in models and not (model in grants and _admits(grants[model], owner))
        ]
        if refused:
            unusable.append((subscription.key, sorted(refused)))
    unusable.sort()  # by key: subscription keys are distinct
    if len(unusable) <= UNUSABLE_LISTED + 1:  # a count line for one more would not be shorter
        return [_unusable_line(key, models) for key, models in unusable]
    rest = unusable[UNUSABLE_LISTED:]
    return [
        *(_unusable_line(key, models) for key, models in unusable[:UNUSABLE_LISTED]),
        (
            f"{len(rest)} more subscriptions ({listed([key for key, _ in rest], SHOWN)}) name models no "
            f"maas:authPolicies entry admits their owners to ({sum(len(models) for _, models in rest)} model "
            "references), so their callers get 403 there; `python -m maas explain subscription NAME` shows one "
            "subscription's access per model"
        ),
    ]


def _unusable_line(key: str, models: list[str]) -> str:
    what = f"model {models[0]}" if len(models) == 1 else f"models {listed(models, SHOWN)}"
    references = "reference" if len(models) == 1 else "references"
    return (
        f"subscription {key}: no maas:authPolicies entry admits its owners to {what}, so its callers get 403 there; "
        f"grant them access or drop the model {references}"
    )


def _admits(grant: Grant, owner: Subjects) -> bool:
    """Looked up one owner at a time: a model may grant thousands of groups."""
    return any(group.name in grant.groups for group in owner.groups) or any(user in grant.users for user in owner.users)


def add_access_control(config: MaasConfig, plan: Plan) -> None:
    """Gateway policies under each tenant, per-model policies and their `access` outputs under each model."""
    for tenant in config.tenants:
        auth, deny = (Desired(body) for body in tenant_gateway_objects(config, tenant))
        plan.add("Tenant", tenant.name, auth, deny)
        outputs = plan.owner("Tenant", tenant.name).outputs
        outputs["gatewayAuthPolicy"], outputs["defaultDenyPolicy"] = auth.logical_name, deny.logical_name
    access = plan_model_access(config)
    for model in config.models:
        owner = plan.owner("Model", model.key)
        policy = access.policies.get(model.key)
        if policy is not None:
            owner.objects.append(Desired(policy))
        grant = access.grants.get(model.key, Grant())
        owner.outputs["access"] = {
            "authPolicy": None if policy is None else Desired(policy).logical_name,
            **grant.output(),
        }
    plan.warnings.extend(access.warnings)
