"""The gateway AuthPolicy of every tenant and its default-deny safety net (`reference/access.md`).

The AuthPolicy reproduces the upstream maas-controller's gateway policy (`upstream-policies.md` section 2.8)
string for string, so that Authorino cache keys and the maas-api contract stay the same, plus the 3.6 identity
fields of seed 002: `selected_subscription_id`, the `X-MaaS-Subscription-Rate-Limit-Id` header and the guard
against a client-sent copy of it. Rules live under `spec.defaults` with `strategy: merge`, so the per-model
policies of `access.py` add their rule to these instead of replacing them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ... import naming
from ...config import MaasConfig, PlatformConfig, TenantConfig
from ..desired import k8s_object

# ---------------------------------------------------------------------------------- CEL building blocks (upstream)

_SEGMENTS = 'request.path.split("/").filter(x, x != "")'
_PATH_ROUTED = f'size({_SEGMENTS}) >= 2 && {_SEGMENTS}[0] != "v1" && {_SEGMENTS}[0] != "maas-api"'
# The model a request is for: `{ns}/{name}` of a path-routed request, else the body-based routing header.
MODEL_IDENTITY = (
    f'({_PATH_ROUTED} ? {_SEGMENTS}[0] + "/" + {_SEGMENTS}[1] : ("x-gateway-model-name" in request.headers'
    '   ? request.headers["x-gateway-model-name"]   : ""))'
)
MODEL_IDENTITY_AVAILABLE = f'({_PATH_ROUTED} || "x-gateway-model-name" in request.headers)'

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
CALLER_USERNAME = f"{HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.username : ({TOKEN_USERNAME})"
REQUESTED_SUBSCRIPTION = (
    f"{HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.subscription : "
    '("x-maas-subscription" in request.headers ? request.headers["x-maas-subscription"] : "")'
)
SUBSCRIPTION_CACHE_KEY = (
    f"({HAS_KEY_METADATA} ? auth.metadata.apiKeyValidation.userId : ({TOKEN_USERNAME}))"
    f' + "|" + ({CALLER_GROUPS}).join(",") + "|" + ({REQUESTED_SUBSCRIPTION}) + "|" + {MODEL_IDENTITY}'
)
SELECTION = 'auth.metadata["subscription-info"]'
RESOLVED_MODEL = (
    f'(has({SELECTION}.resolvedModel) && {SELECTION}.resolvedModel != "" ? {SELECTION}.resolvedModel : '
    f"{MODEL_IDENTITY})"
)
SAFE_GROUP_NAME = "^[A-Za-z0-9:._/-]+$"
JWT_BEARER = 'request.headers.authorization.matches("^Bearer [^.]+\\\\.[^.]+\\\\.[^.]+$")'

# Identity headers the gateway sets; a client that sends its own copy is rejected (Envoy lowercases names).
CLIENT_IDENTITY_HEADERS = ("x-maas-username", "x-maas-group", "x-maas-subscription-rate-limit-id")
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
_TOKEN_GROUPS_HEADER = (
    "has(auth.identity.groups) ? (size(auth.identity.groups) > 0 && "
    f"auth.identity.groups.all(g, g.matches('{SAFE_GROUP_NAME}')) ? "
    "'[\"system:authenticated\",\"' + auth.identity.groups.join('\",\"') + '\"]' : '[\"system:authenticated\"]') : "
    "(has(auth.identity.user.groups) && size(auth.identity.user.groups) > 0 ? "
    "'[\"system:authenticated\",\"' + auth.identity.user.groups.join('\",\"') + '\"]' : '[\"system:authenticated\"]')"
)
_KEY_GROUPS_HEADER = (
    "size(auth.metadata.apiKeyValidation.groups) > 0 ? "
    "'[\"' + auth.metadata.apiKeyValidation.groups.join('\",\"') + '\"]' : '[]'"
)


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
        f'  "username": {CALLER_USERNAME},\n'
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
        "subscription-info": _evaluator(
            1,
            _when(MODEL_IDENTITY_AVAILABLE),
            http=_http_post(maas_api_url(platform, tenant, "subscriptions/select"), selection_body),
            cache=_cached(SUBSCRIPTION_CACHE_KEY, ttl),
        ),
    }


def client_header_guard() -> list[dict[str, str]]:
    """One pattern per identity header: a request already carrying it is denied (`request.headers` is lowercase)."""
    return [{"predicate": f'!("{header}" in request.headers)'} for header in CLIENT_IDENTITY_HEADERS]


def _authorization(platform: PlatformConfig, tenant: TenantConfig, keys: ApiKeyCel) -> dict:
    ttl = authz_cache_ttl(platform)
    on_model = _when(MODEL_IDENTITY_AVAILABLE)
    rules = {
        "deny-client-identity-headers": _evaluator(patternMatching={"patterns": client_header_guard()}),
        "auth-valid": _evaluator(
            opa={"rego": _AUTH_VALID_REGO},
            cache=_cached(f'"api-key|" + ({keys.raw_key}) + "|" + {MODEL_IDENTITY}', ttl),
        ),
        "subscription-valid": _evaluator(
            0, on_model, opa={"rego": _SUBSCRIPTION_VALID_REGO}, cache=_cached(SUBSCRIPTION_CACHE_KEY, ttl)
        ),
        "require-group-membership": _evaluator(
            0, on_model, opa={"rego": _ACCESS_ALLOWED_REGO}, cache=_cached(SUBSCRIPTION_CACHE_KEY, ttl)
        ),
    }
    if tenant.oidc is not None:
        rules["oidc-groups-safe"] = _evaluator(
            0,
            _when(f"{keys.not_key} && has(auth.identity.groups) && size(auth.identity.groups) > 0"),
            opa={"rego": _OIDC_GROUPS_REGO},
        )
        rules["oidc-client-bound"] = _evaluator(
            1,
            _when(f"{keys.not_key} && {JWT_BEARER} && has(auth.identity.azp)"),
            patternMatching={
                "patterns": [{"selector": "auth.identity.azp", "operator": "eq", "value": tenant.oidc.clientId}]
            },
        )
    return rules


def _success_headers(keys: ApiKeyCel) -> dict:
    return {
        "X-MaaS-Username": _evaluator(
            0, _when(keys.is_key), plain={"selector": "auth.metadata.apiKeyValidation.username"}
        ),
        "X-MaaS-Username-Token": _evaluator(
            1, _when(keys.not_key), plain={"expression": TOKEN_USERNAME}, key="X-MaaS-Username"
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


def identity_properties() -> dict[str, str]:
    """`auth.identity.*` after the gateway policy: what TRLPs count and match on, and telemetry labels by."""
    return {
        "groups": CALLER_GROUPS,
        "groups_str": f'({CALLER_GROUPS}).join(",")',
        "userid": CALLER_USERNAME,
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


def _response(keys: ApiKeyCel) -> dict:
    properties = {name: {"expression": expression} for name, expression in identity_properties().items()}
    return {
        "success": {
            "headers": _success_headers(keys),
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
        "response": _response(keys),
    }
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
    return " && ".join(f'!request.path.startsWith("{prefix}")' for prefix in DEFAULT_DENY_EXEMPT_PREFIXES)


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
