"""Issue 17, identity at the gateway: OIDC tokens bound to the tenant's client, OIDC usernames kept apart from
Kubernetes usernames, and an `X-MaaS-Group` header no group name can split. Every rule is evaluated with the CEL
engine on concrete request contexts, as Authorino would evaluate it."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maas.config import ConfigError, load_config
from maas.plan.policies import gateway_auth
from maas.tools import cel

ISSUER = "https://keycloak.example.com/realms/test"
CLIENT = "my-maas-client"
JWT = "Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl"
SA_JWT = "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW0ifQ.c2ln"  # a service-account token is JWT-shaped too
INJECTED = 'dev","premium-users'


def policy(oidc: dict | None = None, **options) -> dict:
    tenant = {"name": "models-as-a-service"}
    if oidc is not None or options:
        tenant["oidc"] = {"issuerUrl": ISSUER, "clientId": CLIENT, **(oidc or {}), **options}
    config = load_config({"tenants": [tenant]})
    return gateway_auth.tenant_gateway_objects(config, config.tenants[0])[0]["spec"]["defaults"]["rules"]


def request(identity: dict, authorization: str = JWT, **extra) -> dict:
    return cel.request(identity=identity, headers={"authorization": authorization}, **extra)


def oidc_identity(**claims) -> dict:
    """Verified claims as Authorino exposes them; with a `groups` claim, which the select body needs (upstream)."""
    return {"iss": ISSUER, "groups": ["team-a"], **claims}


def verdict(rule: dict, context: dict) -> bool | None:
    """None when the rule's `when` does not hold (it is skipped), else whether every pattern holds."""
    if not all(cel.matches(w["predicate"], context) for w in rule["when"]):
        return None
    return all(cel.matches(p["predicate"], context) for p in rule["patternMatching"]["patterns"])


# ------------------------------------------------------------------------------ 1. tokens bound to the client


@pytest.mark.parametrize(
    ("claims", "allowed"),
    [
        ({"aud": "other-client"}, False),  # upstream: no azp, so the rule was skipped and any client's token passed
        ({"aud": ["account", "other-client"]}, False),
        ({}, False),  # neither aud nor azp
        ({"aud": CLIENT}, True),
        ({"aud": ["account", CLIENT]}, True),
        ({"aud": "account", "azp": CLIENT}, True),  # Keycloak access tokens: aud is a resource, azp the client
        ({"aud": CLIENT, "azp": "other-client"}, False),  # OIDC Core: azp present must be the client
        ({"aud": [CLIENT], "azp": "other-client"}, False),
    ],
    ids=[
        "aud-other",
        "aud-list-without-client",
        "no-aud-no-azp",
        "aud-is-client",
        "aud-list-with-client",
        "azp-is-client",
        "azp-other-aud-client",
        "azp-other-aud-list-client",
    ],
)
def test_an_oidc_token_must_be_issued_for_the_tenants_client(claims, allowed):
    rule = policy({})["authorization"]["oidc-client-bound"]
    assert verdict(rule, request(oidc_identity(sub="u-1", **claims))) is allowed


def test_a_kubernetes_identity_of_a_jwt_shaped_token_is_not_asked_for_a_client():
    """A service-account token is JWT-shaped; when TokenReview authenticated it, its identity (a TokenReview
    status) has no `iss`, `aud` or `azp`, and the OIDC rules are skipped instead of denying it."""
    rules = policy({})["authorization"]
    review = {"authenticated": True, "user": {"username": "system:serviceaccount:ns:sa", "groups": []}}
    for name in ("oidc-client-bound", "oidc-username-claim"):
        assert verdict(rules[name], request(review, SA_JWT)) is None


def test_an_x_api_key_request_skips_the_oidc_rules_without_an_authorization_header():
    model = {
        "name": "claude",
        "namespace": "ext",
        "modelRef": {"kind": "ExternalModel", "name": "claude"},
        "external": {"provider": "anthropic", "targetModel": "claude-sonnet-4-5", "endpoint": "api.anthropic.com"},
    }
    model["external"] |= {"credentialRef": {"name": "anthropic-key"}, "apiFormat": "messages"}
    tenant = {"name": "models-as-a-service", "oidc": {"issuerUrl": ISSUER, "clientId": CLIENT}}
    config = load_config({"tenants": [tenant], "models": [model]})
    rules = gateway_auth.tenant_gateway_objects(config, config.tenants[0])[0]["spec"]["defaults"]["rules"]
    context = cel.request(identity={"userId": "u-1"}, headers={"x-api-key": "sk-oai-1"})
    for name in ("oidc-client-bound", "oidc-username-claim"):
        assert verdict(rules["authorization"][name], context) is None


def test_the_client_id_is_a_cel_literal_not_cel():
    rule = policy({"clientId": 'c" || true || "'})["authorization"]["oidc-client-bound"]
    assert verdict(rule, request(oidc_identity(aud="other"))) is False
    assert verdict(rule, request(oidc_identity(aud='c" || true || "'))) is True


# ------------------------------------------------------------------------ 2. OIDC usernames, their own namespace


def names(rules: dict, context: dict) -> dict[str, str]:
    """Every place the gateway derives the caller's name: select body, `userid`, X-MaaS-Username, cache key."""
    body = cel.plain(cel.evaluate(rules["metadata"]["subscription-info"]["http"]["body"]["expression"], context))
    properties = rules["response"]["success"]["filters"]["identity"]["json"]["properties"]
    header = rules["response"]["success"]["headers"]["X-MaaS-Username-Token"]["plain"]["expression"]
    key = rules["metadata"]["subscription-info"]["cache"]["key"]["selector"]
    return {
        "select": body["username"],
        "userid": cel.plain(cel.evaluate(properties["userid"]["expression"], context)),
        "header": cel.plain(cel.evaluate(header, context)),
        "cache": cel.plain(cel.evaluate(key, context)).split("|")[0],
    }


KUBERNETES_ALICE = {"authenticated": True, "user": {"username": "alice", "groups": ["system:authenticated"]}}


def test_oidc_alice_is_not_kubernetes_alice_anywhere():
    """Upstream named both `alice`, so the IdP user owned Kubernetes alice's subscriptions."""
    rules = policy(usernameClaim="preferred_username")
    oidc = names(rules, request(oidc_identity(preferred_username="alice", sub="f81d4fae")))
    kubernetes = names(rules, request(KUBERNETES_ALICE, "Bearer sha256~opaque"))
    assert oidc == dict.fromkeys(oidc, "oidc:alice")
    assert kubernetes == dict.fromkeys(kubernetes, "alice")
    kube_cache = rules["authorization"]["require-group-membership"]["cache"]["key"]["selector"]
    assert cel.evaluate(kube_cache, request(oidc_identity(preferred_username="alice"))).startswith("oidc:alice|")


@pytest.mark.parametrize(
    ("options", "claims", "expected"),
    [
        ({}, {"preferred_username": "bob", "sub": "f81d4fae"}, "oidc:f81d4fae"),  # default claim: sub
        ({"usernameClaim": "preferred_username"}, {"sub": "f81d4fae"}, "oidc:f81d4fae"),  # falls back to sub
        ({"usernamePrefix": "corp#"}, {"sub": "f81d4fae"}, "corp#f81d4fae"),
        ({"usernamePrefix": ""}, {"sub": "f81d4fae"}, "f81d4fae"),  # the explicit opt-in to one namespace
    ],
    ids=["default-sub", "preferred-falls-back-to-sub", "own-prefix", "empty-prefix"],
)
def test_the_oidc_username_is_prefix_plus_claim(options, claims, expected):
    assert set(names(policy({}, **options), request(oidc_identity(**claims))).values()) == {expected}


def test_empty_prefix_with_preferred_username_is_upstreams_text_exactly():
    """The opt-in back to upstream's shared namespace renders upstream's strings (no counter or cache reset)."""
    rules = policy(usernameClaim="preferred_username", usernamePrefix="")
    header = rules["response"]["success"]["headers"]["X-MaaS-Username-Token"]["plain"]["expression"]
    assert header == (
        "has(auth.identity.preferred_username) ? auth.identity.preferred_username : "
        "(has(auth.identity.sub) ? auth.identity.sub : auth.identity.user.username)"
    )


def test_a_jwt_without_the_claim_never_borrows_a_kubernetes_name():
    """Upstream fell through to `auth.identity.user.username`, which a JWT may carry as a claim of its own."""
    rules = policy({})
    forged = request(oidc_identity(user={"username": "alice"}, aud=CLIENT))
    with pytest.raises(cel.CelError):
        names(rules, forged)
    assert verdict(rules["authorization"]["oidc-username-claim"], forged) is False
    assert verdict(rules["authorization"]["oidc-username-claim"], request(oidc_identity(sub="u-1"))) is True


def test_preferred_username_mode_needs_either_claim():
    rule = policy(usernameClaim="preferred_username")["authorization"]["oidc-username-claim"]
    assert verdict(rule, request(oidc_identity(preferred_username="alice"))) is True
    assert verdict(rule, request(oidc_identity(aud=CLIENT))) is False


def test_api_key_and_kubernetes_names_are_unchanged_on_an_oidc_tenant():
    rules = policy({})
    key = {"apiKeyValidation": {"username": "alice", "userId": "u-1", "groups": [], "subscription": ""}}
    by_key = cel.request(identity={}, metadata=key, headers={"authorization": "Bearer sk-oai-1"})
    properties = rules["response"]["success"]["filters"]["identity"]["json"]["properties"]
    assert cel.evaluate(properties["userid"]["expression"], by_key) == "alice"
    assert set(names(rules, request(KUBERNETES_ALICE, "Bearer sha256~opaque")).values()) == {"alice"}


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"usernamePrefix": "system:oidc:"}, "starts with 'system:', which Kubernetes reserves"),
        ({"usernamePrefix": 'oidc" + "'}, "is not a username prefix"),
        ({"usernamePrefix": "o" * 64}, "is not a username prefix"),
        ({"usernameClaim": "email"}, "'email' is not allowed; use 'sub' or 'preferred_username'"),
    ],
)
def test_username_options_are_validated(options, error):
    with pytest.raises(ConfigError, match=error):
        policy(**options)


def test_username_defaults_are_sub_and_oidc_prefix():
    oidc = load_config({"tenants": [{"name": "t", "oidc": {"issuerUrl": ISSUER, "clientId": CLIENT}}]}).tenants[0].oidc
    assert (oidc.usernameClaim, oidc.usernamePrefix) == ("sub", "oidc:")


# ----------------------------------------------------------------------------- 3. X-MaaS-Group cannot be split


def group_header(rules: dict, context: dict, header: str) -> list:
    return json.loads(
        cel.plain(cel.evaluate(rules["response"]["success"]["headers"][header]["plain"]["expression"], context))
    )


POLICY_WITHOUT_OIDC = policy()


def kubernetes_caller(groups: list[str]) -> dict:
    return request({"authenticated": True, "user": {"username": "u", "groups": groups}}, "Bearer sha256~opaque")


def key_caller(groups: list[str]) -> dict:
    metadata = {"apiKeyValidation": {"username": "u", "userId": "u-1", "groups": groups, "subscription": ""}}
    return cel.request(identity={}, metadata=metadata, headers={"authorization": "Bearer sk-oai-1"})


@pytest.mark.parametrize(
    ("header", "caller", "expected"),
    [
        ("X-MaaS-Group-Token", kubernetes_caller, ["system:authenticated", "team-a"]),
        ("X-MaaS-Group", key_caller, ["team-a"]),
        ("X-MaaS-Group-Token", lambda g: request(oidc_identity(sub="u", groups=g)), ["system:authenticated"]),
    ],
    ids=["token-review", "api-key", "oidc"],
)
@pytest.mark.parametrize("oidc", [None, {}], ids=["plain", "with-oidc"])
def test_a_quoted_group_name_never_becomes_a_second_group(header, caller, expected, oidc):
    """Upstream joined TokenReview and API-key groups unescaped: `["system:authenticated","dev","premium-users"]`.
    The unsafe name is left out; the caller's other groups stay."""
    rules = policy(oidc) if oidc is not None else policy()
    groups = group_header(rules, caller([INJECTED, "team-a"]), header)
    assert "premium-users" not in groups and groups == expected


def test_safe_group_names_are_passed_through_in_order():
    rules = policy()
    assert group_header(rules, kubernetes_caller(["b", "a:x", "c/d"]), "X-MaaS-Group-Token") == [
        "system:authenticated",
        "b",
        "a:x",
        "c/d",
    ]
    assert group_header(rules, key_caller(["b", "a"]), "X-MaaS-Group") == ["b", "a"]
    assert group_header(rules, key_caller([INJECTED]), "X-MaaS-Group") == []


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=12), st.sampled_from([INJECTED, '"]', "a\\", "ok", "x,y"])), max_size=5))
def test_any_group_names_give_a_json_list_of_exactly_those_names_or_fewer(groups):
    rules = POLICY_WITHOUT_OIDC
    token = group_header(rules, kubernetes_caller(groups), "X-MaaS-Group-Token")
    key = group_header(rules, key_caller(groups), "X-MaaS-Group")
    assert token[0] == "system:authenticated" and set(token[1:]) <= set(groups)
    assert all(isinstance(g, str) for g in key) and set(key) <= set(groups)
