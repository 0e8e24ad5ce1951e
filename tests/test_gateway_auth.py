"""The gateway AuthPolicy of every tenant and the default-deny TRLP: upstream parity, 3.6 fields, CEL behaviour."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from maas import crdschema, naming
from maas.config import ConfigError, load_config
from maas.plan.policies import gateway_auth
from maas.plan.policies.upstream_text import as_written_here
from maas.tools import cel

UPSTREAM = Path(__file__).parent / "data" / "upstream_gateway_auth.yaml"
OIDC = {"issuerUrl": "https://keycloak.example.com/realms/test", "clientId": "my-maas-client"}
MESSAGES_MODEL = {
    "name": "claude",
    "namespace": "ext",
    "modelRef": {"kind": "ExternalModel", "name": "claude"},
    "external": {
        "provider": "anthropic",
        "targetModel": "claude-sonnet-4-5",
        "endpoint": "api.anthropic.com",
        "credentialRef": {"name": "anthropic-key"},
        "apiFormat": "messages",
    },
}
API_KEY = "Bearer sk-oai-abc123"
JWT = "Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl"
K8S_TOKEN = "Bearer sha256~opaque-openshift-token"


def policy(raw: dict | None = None, tenant: int = 0) -> dict:
    config = load_config(raw or {})
    return gateway_auth.tenant_gateway_objects(config, config.tenants[tenant])[0]


def rules(body: dict) -> dict:
    return body["spec"]["defaults"]["rules"]


def envoy_request(
    path: str = "/llm/granite-7b/v1/chat/completions",
    headers: dict[str, str] | None = None,
    method: str = "POST",
    **auth,
) -> dict:
    """A request context as Authorino sees it: Envoy lowercases header names, whatever case the client sent."""
    context = cel.request(path=path, headers={k.lower(): v for k, v in (headers or {}).items()}, **auth)
    context["request"]["method"] = method
    return context


def when(rule: dict) -> str:
    (entry,) = rule["when"]
    return entry["predicate"]


def upstream_with_our_deltas() -> dict:
    """The upstream policy plus exactly the documented differences (labels, merge strategy, 3.6 additions, the
    spellings `upstream_text.py` rewrites: the model identity, issue 17)."""
    expected = as_written_here(yaml.safe_load(UPSTREAM.read_text()))
    expected["metadata"]["labels"] = {
        "app.kubernetes.io/managed-by": "pulumi",
        "app.kubernetes.io/part-of": "maas-gateway-auth",
        "app.kubernetes.io/component": "gateway-auth",
        "maas.opendatahub.io/tenant-name": "models-as-a-service",
        "maas.opendatahub.io/tenant-namespace": "models-as-a-service",
    }
    defaults = expected["spec"]["defaults"]
    defaults["strategy"] = "merge"
    defaults["rules"]["authorization"]["deny-client-identity-headers"]["patternMatching"]["patterns"] += [
        {"predicate": '!("x-maas-subscription-rate-limit-id" in request.headers)'},
        {
            "predicate": '!request.headers.exists(h, h.startsWith("x-maas-") && !(h in ["x-maas-subscription"]))'
        },  # seed 002: the whole x-maas- family
    ]
    success = defaults["rules"]["response"]["success"]
    success["filters"]["identity"]["json"]["properties"]["selected_subscription_id"] = {
        "expression": 'has(auth.metadata["subscription-info"].rateLimitId) ? '
        'auth.metadata["subscription-info"].rateLimitId : ""'
    }
    success["headers"]["X-MaaS-Subscription-Rate-Limit-Id"] = {
        "when": [
            {
                "predicate": 'has(auth.metadata["subscription-info"].rateLimitId) && '
                'auth.metadata["subscription-info"].rateLimitId != ""'
            }
        ],
        "plain": {"expression": 'auth.metadata["subscription-info"].rateLimitId'},
        "metrics": False,
        "priority": 0,
    }
    # Issue 17: X-MaaS-Group joins only group names that need no JSON escaping (the TokenReview and API-key
    # branches; upstream's OIDC branch already did).
    headers = success["headers"]
    for header, groups in (("X-MaaS-Group-Token", "auth.identity.user.groups"), ("X-MaaS-Group", KEY_GROUPS)):
        safe = f"{groups}.filter(g, g.matches('^[A-Za-z0-9:._/-]+$'))"
        text = headers[header]["plain"]["expression"]
        text = text.replace(f"size({groups}) > 0", f"size({safe}) > 0").replace(f"{groups}.join", f"{safe}.join")
        headers[header]["plain"]["expression"] = text
    headers.update(gateway_auth.flow_control_headers(load_config({}).tenants[0]))  # issue 22: llm-d flow control
    return expected


KEY_GROUPS = "auth.metadata.apiKeyValidation.groups"


# ------------------------------------------------------------------------------------------ upstream parity


def test_default_tenant_policy_is_the_upstream_one_plus_the_documented_deltas():
    assert policy() == upstream_with_our_deltas()


def test_names_follow_the_gateway():
    raw = {
        "tenants": [{"name": "models-as-a-service"}, {"name": "redteam"}, {"name": "blue", "gateway": {"name": "gw-b"}}]
    }
    config = load_config(raw)
    names = [gateway_auth.tenant_gateway_objects(config, t)[0]["metadata"] for t in config.tenants]
    assert [(m["namespace"], m["name"]) for m in names] == [
        ("openshift-ingress", "maas-gateway-auth"),
        ("openshift-ingress", "redteam-maas-auth"),
        ("openshift-ingress", "gw-b-maas-auth"),
    ]


def test_custom_platform_gateway_keeps_the_default_name_and_moves_the_namespace():
    body = policy({"platform": {"gateway": {"name": "edge", "namespace": "ingress"}}})
    assert (body["metadata"]["namespace"], body["metadata"]["name"]) == ("ingress", "maas-gateway-auth")
    assert body["spec"]["targetRef"] == {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "edge"}


def test_tenant_policy_targets_its_gateway_with_merged_defaults():
    body = policy({"tenants": [{"name": "redteam"}]})
    assert body["spec"]["targetRef"] == {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "redteam"}
    assert body["spec"]["defaults"]["strategy"] == "merge"
    assert set(body["spec"]) == {"targetRef", "defaults"}
    assert body["metadata"]["labels"]["maas.opendatahub.io/tenant-name"] == "redteam"
    assert body["metadata"]["labels"]["maas.opendatahub.io/tenant-namespace"] == "ai-tenant-redteam"


def test_callbacks_reach_the_tenants_own_maas_api():
    body = policy({"platform": {"infraNamespace": "infra"}, "tenants": [{"name": "redteam"}]})
    metadata = rules(body)["metadata"]
    base = "https://maas-api-redteam.infra.svc.cluster.local:8443/internal/v1/"
    assert metadata["apiKeyValidation"]["http"]["url"] == base + "api-keys/validate"
    assert metadata["subscription-info"]["http"]["url"] == base + "subscriptions/select"
    default = rules(policy())["metadata"]["apiKeyValidation"]["http"]["url"]
    assert default == "https://maas-api.odh-ai-gateway-infra.svc.cluster.local:8443/internal/v1/api-keys/validate"


def test_token_review_uses_the_cluster_audience():
    body = policy({"platform": {"clusterAudience": "https://oidc.eks.example"}})
    review = rules(body)["authentication"]["openshift-identities"]["kubernetesTokenReview"]
    assert review == {"audiences": ["https://oidc.eks.example"]}


def test_responses_are_401_and_403_with_the_select_message():
    response = rules(policy())["response"]
    assert response["unauthenticated"] == {"code": 401, "message": {"value": "Authentication required"}}
    assert response["unauthorized"]["code"] == 403
    body = response["unauthorized"]["body"]["expression"]
    denied = envoy_request(metadata={"subscription-info": {"message": "no subscription for model"}})
    assert cel.evaluate(body, denied) == "no subscription for model"
    assert cel.evaluate(body, envoy_request(metadata={"subscription-info": {}})) == "Access denied"


# ------------------------------------------------------------------------- upstream test vectors 15 to 22


def test_vector_15_token_auth_without_oidc_or_x_api_key():
    r = rules(policy())
    assert set(r["authentication"]) == {"api-keys", "openshift-identities"}
    guard = r["authorization"]["deny-client-identity-headers"]["patternMatching"]["patterns"]
    assert guard == [
        {"predicate": '!("x-maas-username" in request.headers)'},
        {"predicate": '!("x-maas-group" in request.headers)'},
        {"predicate": '!("x-maas-subscription-rate-limit-id" in request.headers)'},
        {"predicate": '!request.headers.exists(h, h.startsWith("x-maas-") && !(h in ["x-maas-subscription"]))'},
    ]
    assert "oidc-groups-safe" not in r["authorization"] and "oidc-client-bound" not in r["authorization"]


def test_vector_16_x_api_key_variant():
    r = rules(policy({"models": [MESSAGES_MODEL]}))
    x_api_key = r["authentication"]["api-keys-x-api-key"]
    assert x_api_key["plain"]["selector"] == "request.headers.x-api-key"
    assert x_api_key["priority"] == 1
    # Upstream's `!request.headers.authorization.matches(...)`, guarded for requests without Authorization.
    assert '!("authorization" in request.headers && request.headers.authorization.matches' in when(x_api_key)
    assert "x-api-key" in when(r["metadata"]["apiKeyValidation"])
    assert "x-api-key" in when(r["authentication"]["openshift-identities"])
    for key in ("X-MaaS-Username", "X-MaaS-Username-Token", "X-MaaS-Group", "X-MaaS-Group-Token"):
        assert "x-api-key" in when(r["response"]["success"]["headers"][key])
    raw_key = gateway_auth.api_key_cel(True).raw_key
    assert r["metadata"]["apiKeyValidation"]["http"]["body"]["expression"] == f'{{"key": {raw_key}}}'
    assert r["metadata"]["apiKeyValidation"]["cache"]["key"]["selector"] == raw_key
    assert f"({raw_key})" in r["authorization"]["auth-valid"]["cache"]["key"]["selector"]


@pytest.mark.parametrize("ttl", [300, 60, 30])
def test_vector_17_oidc_rules(ttl):
    r = rules(policy({"tenants": [{"name": "models-as-a-service", "oidc": {**OIDC, "ttl": ttl}}]}))
    assert r["authentication"]["oidc-identities"]["jwt"] == {"issuerUrl": OIDC["issuerUrl"], "ttl": ttl}
    assert r["authentication"]["oidc-identities"]["priority"] == 1
    safe = r["authorization"]["oidc-groups-safe"]
    assert "^[A-Za-z0-9:._/-]+$" in safe["opa"]["rego"] and "unsafe_group" in safe["opa"]["rego"]
    assert "has(auth.identity.groups)" in when(safe)
    # Issue 17: upstream's rule name, but every OIDC identity must be the client's, not only one with `azp`
    # (tests/test_gateway_identity.py evaluates it).
    bound = r["authorization"]["oidc-client-bound"]
    (pattern,) = bound["patternMatching"]["patterns"]
    assert pattern["predicate"].startswith('has(auth.identity.azp) ? auth.identity.azp == "my-maas-client" : ')
    assert when(bound).endswith("&& has(auth.identity.iss)") and "has(auth.identity.azp)" not in when(bound)
    assert "Bearer [^.]+\\\\.[^.]+\\\\.[^.]+" in when(bound)


@pytest.mark.parametrize(
    ("oidc", "result"),
    [
        ({**OIDC, "ttl": 600}, 600),
        ({**OIDC, "ttl": 30}, 30),
        (OIDC, 300),
        ({**OIDC, "ttl": 10}, "oidc.ttl: 10 is too small; use a whole number of at least 30 seconds"),
        ({**OIDC, "ttl": -1}, "oidc.ttl: -1 is too small; use a whole number of at least 30 seconds"),
        ({"clientId": "c"}, "oidc.issuerUrl: is required"),
        ({"issuerUrl": OIDC["issuerUrl"]}, "oidc.clientId: is required"),
    ],
)
def test_vector_18_oidc_ttl_and_required_fields(oidc, result):
    """Upstream silently drops a bad OIDC block (no JWT auth at all); here it is a configuration error."""
    raw = {"tenants": [{"name": "models-as-a-service", "oidc": oidc}]}
    if isinstance(result, int):
        assert rules(policy(raw))["authentication"]["oidc-identities"]["jwt"]["ttl"] == result
    else:
        with pytest.raises(ConfigError, match=result):
            load_config(raw)


@pytest.mark.parametrize(
    ("metadata_ttl", "authz_ttl", "expected_authz"), [(60, 60, 60), (300, 60, 60), (60, 30, 30), (60, 300, 60)]
)
def test_vector_19_cache_ttls_with_authz_capped_at_metadata(metadata_ttl, authz_ttl, expected_authz):
    r = rules(policy({"platform": {"cache": {"metadataTTL": metadata_ttl, "authzTTL": authz_ttl}}}))
    assert r["metadata"]["apiKeyValidation"]["cache"]["ttl"] == metadata_ttl
    assert r["metadata"]["subscription-info"]["cache"]["ttl"] == metadata_ttl
    for name in ("auth-valid", "subscription-valid", "require-group-membership"):
        assert r["authorization"][name]["cache"]["ttl"] == expected_authz


def test_vector_20_cache_keys_are_isolated_per_caller_subscription_and_model():
    r = rules(policy())
    selection_key = r["metadata"]["subscription-info"]["cache"]["key"]["selector"]
    assert r["authorization"]["subscription-valid"]["cache"]["key"]["selector"] == selection_key
    assert r["authorization"]["require-group-membership"]["cache"]["key"]["selector"] == selection_key
    assert 'replace("Bearer ", "")' in r["metadata"]["apiKeyValidation"]["cache"]["key"]["selector"]
    auth_valid = r["authorization"]["auth-valid"]["cache"]["key"]["selector"]
    assert "api-key" in auth_valid and 'replace("Bearer ", "")' in auth_valid
    assert gateway_auth.MODEL_IDENTITY in auth_valid


def test_subscription_cache_key_separates_callers_groups_subscriptions_and_models():
    key = rules(policy())["metadata"]["subscription-info"]["cache"]["key"]["selector"]
    oidc = {"preferred_username": "alice", "groups": ["a", "b"]}
    headers = {"x-maas-subscription": "gold"}
    assert cel.evaluate(key, envoy_request(identity=oidc, headers=headers)) == "alice|a,b|gold|llm/granite-7b"
    api_key = {"apiKeyValidation": {"userId": "u-1", "groups": ["g"], "subscription": ""}}
    by_header = envoy_request("/v1/chat/completions", {"X-Gateway-Model-Name": "m"}, metadata=api_key)
    assert cel.evaluate(key, by_header) == "u-1|g||m"


def test_vector_21_group_membership_runs_on_model_requests_and_asks_maas_api():
    rule = rules(policy())["authorization"]["require-group-membership"]
    assert when(rule) == gateway_auth.MODEL_IDENTITY_AVAILABLE
    assert "accessAllowed" in rule["opa"]["rego"] and "model_access" not in rule["opa"]["rego"]


def test_vector_22_identity_headers_and_properties():
    response = rules(policy())["response"]["success"]
    assert set(response["headers"]) == {
        "X-MaaS-Username",
        "X-MaaS-Username-Token",
        "X-MaaS-Group",
        "X-MaaS-Group-Token",
        "X-MaaS-Subscription",
        "X-MaaS-Subscription-Rate-Limit-Id",
        *naming.FAIRNESS_HEADERS,
        *naming.OBJECTIVE_HEADERS,
    }
    identity = response["filters"]["identity"]
    properties = identity["json"]["properties"]
    assert {"userid", "groups", "selected_subscription", "keyId", "selected_subscription_id"} <= set(properties)
    assert "resolvedModel" in properties["selected_subscription_key"]["expression"]
    assert 'auth.metadata["subscription-info"]' in properties["subscription_info"]["expression"]
    assert identity["metrics"] is True


# ---------------------------------------------------------------------------------- CEL: 3.6 identity fields


def identity_value(name: str, context: dict):
    return cel.evaluate(gateway_auth.identity_properties()[name], context)


@pytest.mark.parametrize(
    ("selection", "expected"),
    [
        ({"name": "gold"}, ""),
        ({"name": "gold", "rateLimitId": ""}, ""),
        ({"rateLimitId": "e0b080a72144d7c5"}, "e0b080a72144d7c5"),
    ],
)
def test_selected_subscription_id_is_the_rate_limit_id_or_empty(selection, expected):
    assert (
        identity_value("selected_subscription_id", envoy_request(metadata={"subscription-info": selection})) == expected
    )


def test_selected_subscription_key_prefers_the_resolved_model_and_stays():
    selection = {"namespace": "models-as-a-service", "name": "gold", "resolvedModel": "llm/granite-7b"}
    by_header = envoy_request(
        "/v1/chat/completions", {"x-gateway-model-name": "granite"}, metadata={"subscription-info": selection}
    )
    assert identity_value("selected_subscription_key", by_header) == "models-as-a-service/gold@llm/granite-7b"
    selection.pop("resolvedModel")
    by_path = envoy_request(metadata={"subscription-info": selection})
    assert identity_value("selected_subscription_key", by_path) == "models-as-a-service/gold@llm/granite-7b"
    assert identity_value("selected_subscription_key", envoy_request(metadata={"subscription-info": {}})) == ""


@pytest.mark.parametrize(
    ("selection", "injected"),
    [
        ({"name": "gold"}, False),
        ({"name": "gold", "rateLimitId": ""}, False),
        ({"rateLimitId": "be9f74e5073ace26"}, True),
    ],
)
def test_rate_limit_id_header_only_for_a_non_empty_rate_limit_id(selection, injected):
    header = rules(policy())["response"]["success"]["headers"]["X-MaaS-Subscription-Rate-Limit-Id"]
    context = envoy_request(metadata={"subscription-info": selection})
    assert cel.matches(when(header), context) is injected
    if injected:
        assert cel.evaluate(header["plain"]["expression"], context) == "be9f74e5073ace26"


@pytest.mark.parametrize(
    ("context", "userid"),
    [
        (envoy_request(metadata={"apiKeyValidation": {"username": "key-owner"}}, identity={}), "key-owner"),
        (envoy_request(identity={"preferred_username": "alice", "sub": "123"}), "alice"),
        (envoy_request(identity={"sub": "123"}), "123"),
        (envoy_request(identity={"user": {"username": "system:serviceaccount:ns:sa"}}), "system:serviceaccount:ns:sa"),
    ],
)
def test_userid_comes_from_api_key_then_oidc_then_token_review(context, userid):
    assert identity_value("userid", context) == userid


# ------------------------------------------------------------------------------------- CEL: header guard


def guard_passes(headers: dict[str, str]) -> bool:
    patterns = rules(policy())["authorization"]["deny-client-identity-headers"]["patternMatching"]["patterns"]
    context = envoy_request(headers={"Authorization": API_KEY, **headers})
    return all(cel.matches(p["predicate"], context) for p in patterns)


@pytest.mark.parametrize(
    "header",
    [
        spelling
        for name in ("X-MaaS-Username", "X-MaaS-Group", "X-MaaS-Subscription-Rate-Limit-Id")
        for spelling in (name, name.lower(), name.upper())
    ],
)
def test_spoofed_identity_header_in_any_case_is_rejected(header):
    assert guard_passes({header: "admin"}) is False


def test_clean_request_passes_the_header_guard():
    assert guard_passes({"X-MaaS-Subscription": "gold", "Content-Type": "application/json"}) is True


# ------------------------------------------------------------------------------ CEL: authentication routing


@pytest.mark.parametrize(
    ("headers", "is_key", "raw"),
    [
        ({"Authorization": API_KEY}, True, "sk-oai-abc123"),
        ({"Authorization": JWT, "x-api-key": "sk-oai-xyz"}, True, "sk-oai-xyz"),
        ({"Authorization": JWT, "x-api-key": "not-a-key"}, False, None),
        ({"Authorization": K8S_TOKEN}, False, None),
        ({"x-api-key": "sk-oai-only"}, True, "sk-oai-only"),
        ({"X-Api-Key": "not-a-key"}, False, None),
    ],
)
def test_x_api_key_predicates(headers, is_key, raw):
    keys = gateway_auth.api_key_cel(True)
    context = envoy_request(headers=headers)
    assert cel.matches(keys.is_key, context) is is_key
    assert cel.matches(keys.not_key, context) is not is_key
    if raw:
        assert cel.evaluate(keys.raw_key, context) == raw


def test_x_api_key_authentication_defers_to_a_bearer_key():
    rule = rules(policy({"models": [MESSAGES_MODEL]}))["authentication"]["api-keys-x-api-key"]
    assert cel.matches(when(rule), envoy_request(headers={"Authorization": JWT, "X-Api-Key": "sk-oai-1"}))
    assert not cel.matches(when(rule), envoy_request(headers={"Authorization": API_KEY, "X-Api-Key": "sk-oai-1"}))


def test_x_api_key_alone_authenticates_as_anthropic_clients_send_it():
    """The Anthropic SDK sends `x-api-key` and no Authorization header: every rule it meets must evaluate."""
    r = rules(policy({"models": [MESSAGES_MODEL]}))
    context = envoy_request(headers={"X-Api-Key": "sk-oai-1"})
    assert cel.matches(when(r["authentication"]["api-keys-x-api-key"]), context)
    assert not cel.matches(when(r["authentication"]["openshift-identities"]), context)
    assert cel.matches(when(r["metadata"]["apiKeyValidation"]), context)


@pytest.mark.parametrize(("authorization", "is_jwt"), [(JWT, True), (API_KEY, False), (K8S_TOKEN, False)])
def test_oidc_only_for_jwt_shaped_non_key_tokens(authorization, is_jwt):
    rule = rules(policy({"tenants": [{"name": "models-as-a-service", "oidc": OIDC}]}))["authentication"]
    context = envoy_request(headers={"Authorization": authorization})
    assert cel.matches(when(rule["oidc-identities"]), context) is is_jwt
    assert cel.matches(when(rule["openshift-identities"]), context) is (authorization != API_KEY)


@pytest.mark.parametrize(
    ("path", "method", "enforced"),
    [
        ("/maas-api/health", "GET", False),
        ("/maas-api/health", "POST", True),
        ("/llm/m/v1/chat/completions", "POST", True),
    ],
)
def test_health_probe_skips_authentication(path, method, enforced):
    (condition,) = policy()["spec"]["defaults"]["when"]
    assert cel.matches(condition["predicate"], envoy_request(path, method=method)) is enforced


@pytest.mark.parametrize(
    ("path", "headers", "model"),
    [
        ("/llm/granite-7b/v1/chat/completions", {}, "llm/granite-7b"),
        (
            "/v1/chat/completions",
            {"X-Gateway-Model-Name": "publishers/llm/models/granite"},
            "publishers/llm/models/granite",
        ),
        ("/v1/models", {}, ""),
        ("/maas-api/v1/api-keys", {}, ""),
    ],
)
def test_model_identity_from_path_or_routing_header(path, headers, model):
    context = envoy_request(path, headers)
    assert cel.evaluate(gateway_auth.MODEL_IDENTITY, context) == model
    assert cel.matches(gateway_auth.MODEL_IDENTITY_AVAILABLE, context) is bool(model)


# ------------------------------------------------------------------------------------- x-api-key switch


def test_x_api_key_is_switched_on_only_for_the_tenant_serving_a_messages_model():
    raw = {
        "tenants": [{"name": "models-as-a-service"}, {"name": "redteam"}],
        "models": [{**MESSAGES_MODEL, "tenant": "redteam"}],
    }
    assert "api-keys-x-api-key" not in rules(policy(raw, 0))["authentication"]
    assert "api-keys-x-api-key" in rules(policy(raw, 1))["authentication"]


def test_openai_chat_external_model_does_not_switch_x_api_key_on():
    model = copy.deepcopy(MESSAGES_MODEL)
    del model["external"]["apiFormat"]
    config = load_config({"models": [model]})
    assert config.models[0].external.apiFormat == "openai-chat"
    assert "api-keys-x-api-key" not in rules(policy({"models": [model]}))["authentication"]


def test_unknown_api_format_is_a_configuration_error():
    model = copy.deepcopy(MESSAGES_MODEL)
    model["external"]["apiFormat"] = "anthropic"
    with pytest.raises(
        ConfigError, match=r"external\.apiFormat: 'anthropic' is not allowed; use 'openai-chat' or 'messages'"
    ):
        load_config({"models": [model]})


# ------------------------------------------------------------------------------------------ default deny


def deny(raw: dict | None = None, tenant: int = 0) -> dict:
    config = load_config(raw or {})
    return gateway_auth.tenant_gateway_objects(config, config.tenants[tenant])[1]


def test_default_deny_names_and_target():
    raw = {"tenants": [{"name": "models-as-a-service"}, {"name": "redteam"}]}
    assert deny(raw, 0)["metadata"]["name"] == "gateway-default-deny"
    redteam = deny(raw, 1)
    assert (redteam["metadata"]["namespace"], redteam["metadata"]["name"]) == (
        "openshift-ingress",
        "gateway-default-deny-redteam",
    )
    assert redteam["spec"]["targetRef"] == {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "redteam"}


def test_default_deny_limits_every_model_path_to_zero_per_minute():
    limits = deny()["spec"]["defaults"]["limits"]
    assert list(limits) == ["deny-all-by-default"]
    limit = limits["deny-all-by-default"]
    assert limit["rates"] == [{"limit": 0, "window": "1m"}]
    assert limit["counters"] == [{"expression": "auth.identity.userid"}]
    assert when(limit) == "!request.url_path.matches('^(/maas-api|/v1/models|/v1/subscriptions|/v1/api-keys)(/|$)')"


@pytest.mark.parametrize(
    ("path", "denied"),
    [
        ("/llm/granite-7b/v1/chat/completions", True),
        ("/v1/chat/completions", True),
        ("/maas-api/v1/tokens", False),
        ("/v1/models", False),
        ("/v1/subscriptions", False),
        ("/v1/api-keys/abc", False),
        ("/v1/modelsX/llm/x", True),
        ("/maas-apiX/steal", True),
        ("/llm/granite-7b/v1/chat/completions?next=/v1/models", True),
    ],
)
def test_default_deny_exempts_platform_paths(path, denied):
    assert cel.matches(when(deny()["spec"]["defaults"]["limits"]["deny-all-by-default"]), envoy_request(path)) is denied


# -------------------------------------------------------------------------------------------- CRD schemas


@pytest.mark.parametrize(
    "raw",
    [
        {},
        {"tenants": [{"name": "models-as-a-service", "oidc": OIDC}]},
        {"models": [MESSAGES_MODEL]},
        {"tenants": [{"name": "models-as-a-service", "oidc": OIDC}], "models": [MESSAGES_MODEL]},
    ],
    ids=["plain", "oidc", "x-api-key", "oidc+x-api-key"],
)
def test_gateway_objects_are_valid_against_the_crds(raw):
    config = load_config(raw)
    for body in gateway_auth.tenant_gateway_objects(config, config.tenants[0]):
        assert crdschema.validate(body) == []


def test_crd_rejects_mixing_implicit_and_explicit_defaults():
    """The validator really applies the AuthPolicy CEL rules our layout must respect."""
    body = policy()
    body["spec"]["rules"] = body["spec"]["defaults"]["rules"]
    assert any("Implicit and explicit defaults are mutually exclusive" in e for e in crdschema.validate(body))


@pytest.mark.parametrize(
    ("header", "admitted"),
    [
        ("X-MaaS-Subscription", True),
        ("X-MaaS-User-Id", False),
        ("x-maas-tenant", False),
        ("X-MaaS-Username", False),
        ("X-Other", True),
    ],
)
def test_every_x_maas_header_but_the_subscription_a_client_sends_is_refused(header, admitted):
    """Seed 002: "ensure Praxis / identity-header strip configs treat x-maas-* (prefix or explicit list) so it
    cannot be spoofed upstream". The gateway cannot strip a request header, so it refuses the request."""
    guard = rules(policy())["authorization"]["deny-client-identity-headers"]["patternMatching"]["patterns"]
    context = envoy_request(headers={"authorization": K8S_TOKEN, header.lower(): "x"})
    assert all(cel.matches(p["predicate"], context) for p in guard) is admitted
