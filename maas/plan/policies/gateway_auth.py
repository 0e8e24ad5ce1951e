"""The gateway AuthPolicy of every tenant and its default-deny safety net (`reference/access.md`).

The AuthPolicy reproduces the upstream maas-controller's gateway policy (`upstream-policies.md` section 2.8)
string for string, so that Authorino cache keys and the maas-api contract stay the same, plus the 3.6 identity
fields of seed 002: `selected_subscription_id`, the `X-MaaS-Subscription-Rate-Limit-Id` header and the guard
against a client-sent copy of it. Rules live under `spec.defaults` with `strategy: merge`, so the per-model
policies of `access.py` add their rule to these instead of replacing them.

Identity departs from upstream where upstream is unsafe (issue 17): an OIDC token must be issued for the tenant's
client (`oidc-client-bound`), OIDC usernames carry `oidc.usernamePrefix` and come from `oidc.usernameClaim`
(`token_username`), and `X-MaaS-Group` joins only names that need no JSON escaping (`_TOKEN_GROUPS_HEADER`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config import MaasConfig, PlatformConfig, TenantConfig
from ...config.schema import Oidc
from ..desired import k8s_object

# ---------------------------------------------------------------------------------- CEL building blocks (upstream)

# The model a request is for. Upstream splits `request.path` and drops empty segments, so `//ns-a/a/...` names
# model ns-a/a while Gateway API routing (which matches whole segments) no longer sends it to ns-a/a's route: a
# header rule of another model takes it, and A's subscription is selected for B's backend. Here the identity is
# read from the query-free `request.url_path` with empty segments kept: `/{ns}/{name}/...` with both segments
# non-empty and `ns` not reserved, or KServe's `/publishers/{ns}/models/{name}/...` (the form of its routing
# header), else the body-based routing header, else none (no subscription is selected).
_SEGMENTS = 'request.url_path.split("/")'
_RESERVED = "[" + ", ".join(f'"{segment}"' for segment in naming.RESERVED_FIRST_SEGMENTS) + "]"
_PATH_ROUTED = (
    f'size({_SEGMENTS}) >= 3 && {_SEGMENTS}[1] != "" && {_SEGMENTS}[2] != "" && !({_SEGMENTS}[1] in {_RESERVED})'
)
_PUBLISHER_ROUTED = (
    f'size({_SEGMENTS}) >= 5 && {_SEGMENTS}[1] == "publishers" && {_SEGMENTS}[2] != "" && '
    f'{_SEGMENTS}[3] == "models" && {_SEGMENTS}[4] != ""'
)
MODEL_IDENTITY = (
    f'(({_PATH_ROUTED}) ? {_SEGMENTS}[1] + "/" + {_SEGMENTS}[2] : (({_PUBLISHER_ROUTED}) ? '
    f'"publishers/" + {_SEGMENTS}[2] + "/models/" + {_SEGMENTS}[4] : ("x-gateway-model-name" in request.headers'
    '   ? request.headers["x-gateway-model-name"]   : "")))'
)
MODEL_IDENTITY_AVAILABLE = f'(({_PATH_ROUTED}) || ({_PUBLISHER_ROUTED}) || "x-gateway-model-name" in request.headers)'

HAS_KEY_METADATA = "(has(auth.metadata) && has(auth.metadata.apiKeyValidation))"
TOKEN_USERNAME = (
    "has(auth.identity.preferred_username) ? auth.identity.preferred_username : "
    "(has(auth.identity.sub) ? auth.identity.sub : auth.identity.user.username)"
)
# Caller groups and username: API key validation metadata, else OIDC claims, else the TokenReview user.
CALLER_GROUPS = (
    f"{HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.groups : "
    "(has(auth.identity.groups) ? auth.identity.groups : auth.identity.user.groups)"
)
REQUESTED_SUBSCRIPTION = (
    f"{HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.subscription : "
    '("x-maas-subscription" in request.headers ? request.headers["x-maas-subscription"] : "")'
)
# The identity came from the tenant's JWT authenticator: verified claims always carry `iss` (Authorino checks it
# against `issuerUrl`), a TokenReview status (`{authenticated, user, audiences}`) never does.
OIDC_IDENTITY = "has(auth.identity.iss)"


def oidc_naming(oidc: Oidc | None) -> tuple[tuple[str, ...], str] | None:
    """The claims (the first present wins) and the prefix that name an OIDC caller; None where upstream's naming
    holds (no OIDC, or OIDC configured as upstream has it: `preferred_username`, no prefix)."""
    if oidc is None or (oidc.usernameClaim == "preferred_username" and not oidc.usernamePrefix):
        return None
    claims = ("preferred_username", "sub") if oidc.usernameClaim == "preferred_username" else ("sub",)
    return claims, oidc.usernamePrefix


def token_username(oidc: Oidc | None) -> str:
    """A token caller's username: upstream's text where `oidc_naming` says so. Otherwise an OIDC identity is
    `{usernamePrefix}{claim}` and a TokenReview one its Kubernetes username, so an IdP user never carries a
    Kubernetes user's name (issue 17). The branch is chosen by which authenticator made the identity, not by which
    claims it has: a JWT lacking the claim is denied (`oidc-username-claim`) instead of falling through to a
    `user.username` claim of its own."""
    named_by = oidc_naming(oidc)
    if named_by is None:
        return TOKEN_USERNAME
    claims, prefix = named_by
    claim = f"auth.identity.{claims[-1]}"
    for earlier in reversed(claims[:-1]):
        claim = f"(has(auth.identity.{earlier}) ? auth.identity.{earlier} : {claim})"
    named = f"{json.dumps(prefix)} + {claim}" if prefix else claim
    return f"{OIDC_IDENTITY} ? {named} : auth.identity.user.username"


def caller_username(oidc: Oidc | None) -> str:
    """What maas-api's select, `userid` and the API-key branch know the caller as."""
    return f"{HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.username : ({token_username(oidc)})"


def subscription_cache_key(oidc: Oidc | None) -> str:
    """One select answer per caller, groups, requested subscription and model: the caller part is the same
    username the select body carries, so two callers maas-api tells apart never share a cached answer."""
    return (
        f"({HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.userId : ({token_username(oidc)}))"
        f' + "|" + ({CALLER_GROUPS}).join(",") + "|" + ({REQUESTED_SUBSCRIPTION}) + "|" + {MODEL_IDENTITY}'
    )


def oidc_username_claim_predicate(oidc: Oidc) -> str:
    """The OIDC identity carries the claim its username is made of (`sub`, the fallback of `preferred_username`)."""
    if oidc.usernameClaim == "preferred_username":
        return "has(auth.identity.preferred_username) || has(auth.identity.sub)"
    return "has(auth.identity.sub)"


def oidc_client_bound_predicate(client_id: str) -> str:
    """The token was issued for the tenant's client, as OIDC Core 3.1.3.7 has a client check it: with `azp` (the
    party the token was issued to) that party must be the client, even when `aud` also lists it (a token another
    client obtained is not this client's); without `azp`, `aud` (a string or a list, RFC 7519 4.1.3) must contain
    the client. A token with neither is denied. Upstream checked `azp` only when present, so any client's token
    without `azp` passed. (Core's SHOULD to require `azp` when `aud` lists several audiences is not enforced.)"""
    client, aud = json.dumps(client_id), "auth.identity.aud"
    return (
        f"has(auth.identity.azp) ? auth.identity.azp == {client} : "
        f"(has({aud}) && (type({aud}) == string ? {aud} == {client} : {client} in {aud}))"
    )


CALLER_USERNAME = caller_username(None)  # upstream's text: no OIDC
SUBSCRIPTION_CACHE_KEY = subscription_cache_key(None)
SELECTION_METADATA = "subscription-info"  # the metadata rule whose JSON is maas-api's select answer
SELECTION = f'auth.metadata["{SELECTION_METADATA}"]'
RESOLVED_MODEL = (
    f'(has({SELECTION}.resolvedModel) && {SELECTION}.resolvedModel != "" ? {SELECTION}.resolvedModel : '
    f"{MODEL_IDENTITY})"
)
SAFE_GROUP_NAME = "^[A-Za-z0-9:._/-]+$"
JWT_BEARER = 'request.headers.authorization.matches("^Bearer [^.]+\\\\.[^.]+\\\\.[^.]+$")'

# Identity headers the gateway sets; a client that sends its own copy is rejected (Envoy lowercases names).
CLIENT_IDENTITY_HEADERS = ("x-maas-username", "x-maas-group", "x-maas-subscription-rate-limit-id")
MAAS_HEADER_PREFIX = "x-maas-"
CLIENT_SENT_HEADERS = ("x-maas-subscription",)  # the one x-maas- header a client sends: which subscription to use
RATE_LIMIT_ID_HEADER = "X-MaaS-Subscription-Rate-Limit-Id"

_SUBSCRIPTION_VALID_REGO = (
    'allow {\n\tobject.get(input.auth.metadata["subscription-info"], "name", "") != ""\n'
    '\tobject.get(input.auth.metadata["subscription-info"], "error", "") == ""\n'
    '\tphase := object.get(input.auth.metadata["subscription-info"], "phase", "")\n'
    '\tany([phase == "Active", phase == "Degraded"])\n'
    '\tobject.get(input.auth.metadata["subscription-info"], "deletionTimestamp", "") == ""\n}'
)
_AUTH_VALID_REGO = (
    'allow {\n  object.get(input.auth.metadata, "apiKeyValidation", {})\n'
    "  input.auth.metadata.apiKeyValidation.valid == true\n}\n"
    "allow {\n  not input.auth.metadata.apiKeyValidation\n}"
)
_ACCESS_ALLOWED_REGO = (
    'allow {\n  object.get(input.auth.metadata["subscription-info"], "accessAllowed", false) == true\n}'
)
_OIDC_GROUPS_REGO = (
    f'unsafe_group[g] {{\n\tg := input.auth.identity.groups[_]\n\tnot regex.match("{SAFE_GROUP_NAME}", g)\n}}\n\n'
    "allow {\n\tcount(unsafe_group) == 0\n}"
)
# `X-MaaS-Group` is a JSON array maas-api parses, built by joining names (CEL has no JSON encoder), so only names
# that need no escaping may be joined: `dev","premium-users` would otherwise arrive as two groups, and an API key
# minted with that header would carry premium-users. OIDC tokens with such a name are denied (`oidc-groups-safe`;
# upstream's all-or-nothing fallback here is never reached). A TokenReview or API-key group with such a name is
# left out of the header and the rest kept: a smaller list can never lift access, while a deny would lock out
# everyone in, say, an OpenShift group with a space in its name. Matching (the select body) still sees every name.
_SAFE_USER_GROUPS = f"auth.identity.user.groups.filter(g, g.matches('{SAFE_GROUP_NAME}'))"
_SAFE_KEY_GROUPS = f"auth.metadata.apiKeyValidation.groups.filter(g, g.matches('{SAFE_GROUP_NAME}'))"
_TOKEN_GROUPS_HEADER = (
    "has(auth.identity.groups) ? (size(auth.identity.groups) > 0 && "
    f"auth.identity.groups.all(g, g.matches('{SAFE_GROUP_NAME}')) ? "
    "'[\"system:authenticated\",\"' + auth.identity.groups.join('\",\"') + '\"]' : '[\"system:authenticated\"]') : "
    f"(has(auth.identity.user.groups) && size({_SAFE_USER_GROUPS}) > 0 ? "
    f"'[\"system:authenticated\",\"' + {_SAFE_USER_GROUPS}.join('\",\"') + '\"]' : '[\"system:authenticated\"]')"
)
_KEY_GROUPS_HEADER = f"size({_SAFE_KEY_GROUPS}) > 0 ? '[\"' + {_SAFE_KEY_GROUPS}.join('\",\"') + '\"]' : '[]'"


@dataclass(frozen=True)
class ApiKeyCel:
    """How a request carries an API key: `Authorization: Bearer sk-oai-…`, and with x-api-key also `x-api-key`."""

    is_key: str
    not_key: str
    raw_key: str


BEARER_KEY = 'request.headers.authorization.matches("^Bearer sk-oai-.*")'
# Anthropic Messages clients send only `x-api-key`: with no Authorization header, the unguarded upstream test
# fails to evaluate, which would reject exactly the callers the x-api-key variant exists for.
GUARDED_BEARER_KEY = f'("authorization" in request.headers && {BEARER_KEY})'
X_API_KEY = '("x-api-key" in request.headers && request.headers["x-api-key"].matches("^sk-oai-.*"))'


def api_key_cel(x_api_key: bool) -> ApiKeyCel:
    bearer_raw = 'request.headers.authorization.replace("Bearer ", "")'
    if not x_api_key:
        return ApiKeyCel(BEARER_KEY, '!request.headers.authorization.startsWith("Bearer sk-oai-")', bearer_raw)
    is_key = f"{GUARDED_BEARER_KEY} || {X_API_KEY}"
    return ApiKeyCel(is_key, f"!({is_key})", f'{GUARDED_BEARER_KEY} ? {bearer_raw} : request.headers["x-api-key"]')


def selection_or(field: str, default: str) -> str:
    """A field of maas-api's select result, or `default` when the result lacks it."""
    return f"has({SELECTION}.{field}) ? {SELECTION}.{field} : {default}"


# ------------------------------------------------------------------------------------------------ configuration


def x_api_key_enabled(config: MaasConfig, tenant: TenantConfig) -> bool:
    """The tenant serves an ExternalModel reached with the Anthropic Messages API (clients send `x-api-key`)."""
    return any(
        m.tenant == tenant.name and m.external is not None and m.external.apiFormat == "messages" for m in config.models
    )


def authz_cache_ttl(platform: PlatformConfig) -> int:
    """Authorization results may not outlive the metadata they were computed from."""
    return min(platform.cache.authzTTL, platform.cache.metadataTTL)


def maas_api_url(platform: PlatformConfig, tenant: TenantConfig, path: str) -> str:
    """An internal endpoint of the tenant's own maas-api."""
    return f"{naming.maas_api_url(tenant.name, platform.infraNamespace)}/internal/v1/{path}"


def _labels(tenant: TenantConfig, part_of: str, component: str) -> dict[str, str]:
    return {**naming.tenant_labels(tenant.name), naming.PART_OF: part_of, naming.COMPONENT: component}


# ------------------------------------------------------------------------------------------------------- policy


def _when(*predicates: str) -> list[dict[str, str]]:
    return [{"predicate": p} for p in predicates]


def _evaluator(priority: int = 0, when: list | None = None, **body: Any) -> dict[str, Any]:
    """One Authorino evaluator with the upstream's explicit `metrics: false` and priority."""
    rule: dict[str, Any] = {} if when is None else {"when": when}
    return {**rule, **body, "metrics": False, "priority": priority}


def _cached(selector: str, ttl: int) -> dict[str, Any]:
    return {"key": {"selector": selector}, "ttl": ttl}


def _http_post(url: str, body: str) -> dict[str, Any]:
    return {"url": url, "contentType": "application/json", "method": "POST", "body": {"expression": body}}


def _authentication(platform: PlatformConfig, tenant: TenantConfig, keys: ApiKeyCel, x_api_key: bool) -> dict:
    rules = {
        "api-keys": _evaluator(
            0,
            [{"selector": "request.headers.authorization", "operator": "matches", "value": "^Bearer sk-oai-.*"}],
            plain={"selector": "request.headers.authorization"},
        ),
        "openshift-identities": _evaluator(
            2, _when(keys.not_key), kubernetesTokenReview={"audiences": [platform.clusterAudience]}
        ),
    }
    if x_api_key:
        rules["api-keys-x-api-key"] = _evaluator(
            1,
            _when(f"{X_API_KEY} && !{GUARDED_BEARER_KEY}"),
            plain={"selector": "request.headers.x-api-key"},
        )
    if tenant.oidc is not None:
        rules["oidc-identities"] = _evaluator(
            1,
            _when(f"{keys.not_key} && {JWT_BEARER}"),
            jwt={"issuerUrl": tenant.oidc.issuerUrl, "ttl": tenant.oidc.ttl},
        )
    return rules


def _metadata(platform: PlatformConfig, tenant: TenantConfig, keys: ApiKeyCel) -> dict:
    ttl = platform.cache.metadataTTL
    selection_body = (
        "{\n"
        f'  "groups": {CALLER_GROUPS},\n'
        f'  "username": {caller_username(tenant.oidc)},\n'
        f'  "requestedSubscription": {REQUESTED_SUBSCRIPTION},\n'
        f'  "requestedModel": {MODEL_IDENTITY}\n'
        "}"
    )
    return {
        "apiKeyValidation": _evaluator(
            0,
            _when(keys.is_key),
            http=_http_post(maas_api_url(platform, tenant, "api-keys/validate"), f'{{"key": {keys.raw_key}}}'),
            cache=_cached(keys.raw_key, ttl),
        ),
        SELECTION_METADATA: _evaluator(
            1,
            _when(MODEL_IDENTITY_AVAILABLE),
            http=_http_post(maas_api_url(platform, tenant, "subscriptions/select"), selection_body),
            cache=_cached(subscription_cache_key(tenant.oidc), ttl),
        ),
    }


def client_header_guard() -> list[dict[str, str]]:
    """One pattern per identity header (upstream's), then one for the whole `x-maas-` family but the header a
    client may send, so that an identity header added later cannot be spoofed either (seed 002: strip configs
    "treat x-maas-* (prefix or explicit list)"). Authorino cannot remove a request header, so a request already
    carrying one is denied (`request.headers` is lowercase)."""
    named = [{"predicate": f'!("{header}" in request.headers)'} for header in CLIENT_IDENTITY_HEADERS]
    allowed = ", ".join(f'"{header}"' for header in CLIENT_SENT_HEADERS)
    family = f'!request.headers.exists(h, h.startsWith("{MAAS_HEADER_PREFIX}") && !(h in [{allowed}]))'
    return [*named, {"predicate": family}]


def _authorization(platform: PlatformConfig, tenant: TenantConfig, keys: ApiKeyCel) -> dict:
    ttl, selection_key = authz_cache_ttl(platform), subscription_cache_key(tenant.oidc)
    on_model = _when(MODEL_IDENTITY_AVAILABLE)
    rules = {
        "deny-client-identity-headers": _evaluator(patternMatching={"patterns": client_header_guard()}),
        "auth-valid": _evaluator(
            opa={"rego": _AUTH_VALID_REGO},
            cache=_cached(f'"api-key|" + ({keys.raw_key}) + "|" + {MODEL_IDENTITY}', ttl),
        ),
        "subscription-valid": _evaluator(
            0, on_model, opa={"rego": _SUBSCRIPTION_VALID_REGO}, cache=_cached(selection_key, ttl)
        ),
        "require-group-membership": _evaluator(
            0, on_model, opa={"rego": _ACCESS_ALLOWED_REGO}, cache=_cached(selection_key, ttl)
        ),
    }
    if tenant.oidc is not None:
        rules["oidc-groups-safe"] = _evaluator(
            0,
            _when(f"{keys.not_key} && has(auth.identity.groups) && size(auth.identity.groups) > 0"),
            opa={"rego": _OIDC_GROUPS_REGO},
        )
        # Upstream's name, stricter: every OIDC identity (not only one with `azp`) must be the client's.
        oidc_caller = f"{keys.not_key} && {JWT_BEARER} && {OIDC_IDENTITY}"
        rules["oidc-client-bound"] = _evaluator(
            1,
            _when(oidc_caller),
            patternMatching={"patterns": [{"predicate": oidc_client_bound_predicate(tenant.oidc.clientId)}]},
        )
        rules["oidc-username-claim"] = _evaluator(
            1,
            _when(oidc_caller),
            patternMatching={"patterns": [{"predicate": oidc_username_claim_predicate(tenant.oidc)}]},
        )
    return rules


def _success_headers(keys: ApiKeyCel, oidc: Oidc | None) -> dict:
    return {
        "X-MaaS-Username": _evaluator(
            0, _when(keys.is_key), plain={"selector": "auth.metadata.apiKeyValidation.username"}
        ),
        "X-MaaS-Username-Token": _evaluator(
            1, _when(keys.not_key), plain={"expression": token_username(oidc)}, key="X-MaaS-Username"
        ),
        "X-MaaS-Group": _evaluator(0, _when(keys.is_key), plain={"expression": _KEY_GROUPS_HEADER}),
        "X-MaaS-Group-Token": _evaluator(
            1, _when(keys.not_key), plain={"expression": _TOKEN_GROUPS_HEADER}, key="X-MaaS-Group"
        ),
        "X-MaaS-Subscription": _evaluator(
            0,
            _when(
                "(has(auth.metadata) && has(auth.metadata.apiKeyValidation) && "
                'auth.metadata.apiKeyValidation.subscription != "") || "x-maas-subscription" in request.headers'
            ),
            plain={"expression": REQUESTED_SUBSCRIPTION},
        ),
        RATE_LIMIT_ID_HEADER: _evaluator(
            0,
            _when(f'has({SELECTION}.rateLimitId) && {SELECTION}.rateLimitId != ""'),
            plain={"expression": f"{SELECTION}.rateLimitId"},
        ),
    }


# Flow control (issue 22): their own response group, so that no other header's failure can drop them (Authorino
# drops the rest of a priority group when one of its evaluators fails).
FLOW_CONTROL_PRIORITY = 2


def selection_text_or_empty(field: str) -> str:
    """A string field of maas-api's select answer, else "": it never fails to evaluate, whatever the metadata holds
    (no metadata, no select answer, an error answer without the field, a field of another type)."""
    return (
        f'(has(auth.metadata) && type(auth.metadata) == map && "{SELECTION_METADATA}" in auth.metadata && '
        f"type({SELECTION}) == map && has({SELECTION}.{field}) && type({SELECTION}.{field}) == string) ? "
        f'{SELECTION}.{field} : ""'
    )


OBJECTIVE = selection_text_or_empty("objective")


def flow_control_headers(tenant: TenantConfig) -> dict:
    """The four llm-d scheduling headers on every authorized request, unconditionally: Authorino sends them on OK,
    and the wasm-shim sets each one under its lowercase name, replacing every client-sent copy (Envoy lowercases
    request header names). The fairness ID is the tenant (this policy is the tenant's own, so it is static); the
    objective is the name maas-api resolved for the selected subscription and the requested model's pool, or ""."""
    fairness = {
        name: _evaluator(FLOW_CONTROL_PRIORITY, plain={"value": tenant.name}) for name in naming.FAIRNESS_HEADERS
    }
    objective = {
        name: _evaluator(FLOW_CONTROL_PRIORITY, plain={"expression": OBJECTIVE}) for name in naming.OBJECTIVE_HEADERS
    }
    return {**fairness, **objective}


def identity_properties(oidc: Oidc | None = None) -> dict[str, str]:
    """`auth.identity.*` after the gateway policy: what TRLPs count and match on, and telemetry labels by."""
    return {
        "groups": CALLER_GROUPS,
        "groups_str": f'({CALLER_GROUPS}).join(",")',
        "userid": caller_username(oidc),
        "keyId": f'{HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.keyId : ""',
        "keyName": f'{HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.keyName : ""',
        "selected_subscription": selection_or("name", '""'),
        "selected_subscription_key": (
            f"(has({SELECTION}.namespace) && has({SELECTION}.name)) ? "
            f'{SELECTION}.namespace + "/" + {SELECTION}.name + "@" + {RESOLVED_MODEL} : ""'
        ),
        # 3.6: the short rate-limit ID maas-api returns for `short` subscriptions; "" for legacy ones.
        "selected_subscription_id": selection_or("rateLimitId", '""'),
        "subscription_info": f"has({SELECTION}.name) ? {SELECTION} : {{}}",
        "subscription_error": selection_or("error", '""'),
        "subscription_error_message": selection_or("message", '""'),
    }


def _response(keys: ApiKeyCel, oidc: Oidc | None) -> dict:
    properties = {name: {"expression": expression} for name, expression in identity_properties(oidc).items()}
    return {
        "success": {
            "headers": _success_headers(keys, oidc),
            "filters": {"identity": {"json": {"properties": properties}, "metrics": True, "priority": 0}},
        },
        "unauthenticated": {"code": 401, "message": {"value": "Authentication required"}},
        "unauthorized": {
            "code": 403,
            "body": {"expression": selection_or("message", '"Access denied"')},
            "headers": {
                "x-ext-auth-reason": {"expression": selection_or("error", '"unauthorized"')},
                "content-type": {"value": "text/plain"},
            },
        },
    }


def gateway_target(gateway: str) -> dict[str, str]:
    return {"group": naming.GATEWAY_API_GROUP, "kind": "Gateway", "name": gateway}


def gateway_auth_policy(platform: PlatformConfig, tenant: TenantConfig, x_api_key: bool) -> dict:
    """The tenant's gateway AuthPolicy: authenticate, select a subscription through its maas-api, shape identity."""
    gateway = tenant.gateway_name(platform)
    keys = api_key_cel(x_api_key)
    rules = {
        "metadata": _metadata(platform, tenant, keys),
        "authentication": _authentication(platform, tenant, keys, x_api_key),
        "authorization": _authorization(platform, tenant, keys),
        "response": _response(keys, tenant.oidc),
    }
    rules["response"]["success"]["headers"].update(flow_control_headers(tenant))
    return k8s_object(
        naming.AUTH_POLICY_API_VERSION,
        "AuthPolicy",
        naming.gateway_auth_policy_name(gateway, platform.gateway.name),
        platform.gateway.namespace,
        labels=_labels(tenant, "maas-gateway-auth", "gateway-auth"),
        spec={
            "targetRef": gateway_target(gateway),
            "defaults": {
                "strategy": "merge",
                "when": _when('request.path != "/maas-api/health" || request.method != "GET"'),
                "rules": rules,
            },
        },
    )


# ------------------------------------------------------------------------------------------------- default deny

# Paths that stay reachable without a per-route TRLP: maas-api itself, model discovery, subscriptions, API keys.
DEFAULT_DENY_EXEMPT_PREFIXES = ("/maas-api", "/v1/models", "/v1/subscriptions", "/v1/api-keys")


def default_deny_predicate() -> str:
    """True outside the exempt paths, each taken as whole segments of the query-free path: a string prefix would
    let `/v1/modelsX/...` or `/maas-apiX/...` escape the zero limit on any route without a policy of its own. One
    anchored regex: Kuadrant copies this predicate into every ActionSet of such a route (the gateway budget)."""
    return f"!request.url_path.matches('^({'|'.join(DEFAULT_DENY_EXEMPT_PREFIXES)})(/|$)')"


def default_deny_policy(platform: PlatformConfig, tenant: TenantConfig) -> dict:
    """Safety net: a model route with no token limit of its own gets 429 (limit 0), not free tokens."""
    return k8s_object(
        naming.TRLP_API_VERSION,
        "TokenRateLimitPolicy",
        naming.gateway_default_deny_name(tenant.name),
        platform.gateway.namespace,
        labels=_labels(tenant, "maas-controller", "default-policy"),
        spec={
            "targetRef": gateway_target(tenant.gateway_name(platform)),
            "defaults": {
                "limits": {
                    "deny-all-by-default": {
                        "rates": [{"limit": 0, "window": "1m"}],
                        "when": _when(default_deny_predicate()),
                        "counters": [{"expression": "auth.identity.userid"}],
                    }
                }
            },
        },
    )


def tenant_gateway_objects(config: MaasConfig, tenant: TenantConfig) -> list[dict]:
    """Everything a tenant contributes at its Gateway for access control."""
    return [
        gateway_auth_policy(config.platform, tenant, x_api_key_enabled(config, tenant)),
        default_deny_policy(config.platform, tenant),
    ]
