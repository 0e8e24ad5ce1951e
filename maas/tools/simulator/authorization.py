"""Authorino's answer for one request on one path: the effective AuthPolicy rules Kuadrant merged for it
(`maas/plan/gateway/policies.py`), evaluated in Authorino's phases with the CEL engine.

1. The policy's top-level `when`: when it does not hold, the auth action does not run at all.
2. Authentication: the first identity source, by priority, whose `when` holds and that accepts this caller's
   credential (TokenReview a Kubernetes token, the JWT verifier a token of the tenant's issuer, the API-key source
   an `sk-oai-` key); none: 401.
3. Metadata: API-key validation (maas-api's answer for the caller's key) and subscription selection (the rendered
   body expression, answered by the select stage); any other metadata rule is not modelled and says so.
4. Authorization: every rule whose `when` holds must pass (Rego rules through their keyed CEL readings); else 403
   with the rendered `unauthorized` response.
5. The identity properties the token limits then read.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...plan.gateway.policies import AUTH_CONDITIONS, Rules, predicates
from ...plan.policies.gateway_auth import SELECTION, SELECTION_METADATA
from .. import cel
from ..explaining.maasapi import Selection
from .request import Caller

EMPTY = '""'


def _field(name: str, default: str) -> str:
    return f"(has({SELECTION}.{name}) ? {SELECTION}.{name} : {default})"


# The gateway's OPA rules read only the select answer and the key validation; CEL has no Rego, so each is
# written here as the CEL of its Rego (gateway_auth.py; upstream-policies.md section 2.3) and evaluated like
# the rest. Each reading holds for one Rego text only, named by its SHA-256 prefix: a rule whose rendered Rego
# is another text (the program's changed, or an unlisted rule) is reported as not evaluated, never guessed.
REGO_AS_CEL = {
    ("auth-valid", "34cf293c18e616be"): (
        "!(has(auth.metadata) && has(auth.metadata.apiKeyValidation)) || "
        "(has(auth.metadata.apiKeyValidation.valid) && auth.metadata.apiKeyValidation.valid == true)"
    ),
    ("subscription-valid", "56bbf53e3538cffa"): (
        f'{_field("name", EMPTY)} != "" && {_field("error", EMPTY)} == "" && '
        f'{_field("phase", EMPTY)} in ["Active", "Degraded"] && {_field("deletionTimestamp", EMPTY)} == ""'
    ),
    ("require-group-membership", "ded82d430b06703b"): f"{_field('accessAllowed', 'false')} == true",
}


def rego_digest(rego: str) -> str:
    return hashlib.sha256(rego.encode()).hexdigest()[:16]


class NotModelledError(Exception):
    """The rendered policy asks for something this evaluator does not reproduce; said, never guessed."""


@dataclass(frozen=True)
class RuleVerdict:
    policy: str  # ns/name of the AuthPolicy the rule comes from
    name: str
    kind: str
    applies: bool
    passed: bool | None  # None: not evaluated (a Rego rule without its CEL reading)

    @property
    def outcome(self) -> str:
        if not self.applies:
            return "skipped (its when does not hold)"
        return {True: "pass", False: "DENY", None: "not evaluated (Rego)"}[self.passed]


# The credential each kind of caller presents (an opaque Kubernetes token, a JWT, a maas-api key).
CREDENTIALS = {
    "kubernetes": "Bearer sha256~simulated-kubernetes-token",
    "oidc": "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzaW11bGF0ZWQiOnRydWV9.c2ln",
    "api-key": "Bearer sk-oai-simulated",
}
_SOURCE_KIND = {"kubernetesTokenReview": "kubernetes", "jwt": "oidc", "plain": "api-key"}
UNAUTHENTICATED, UNAUTHORIZED = 401, 403


@dataclass
class AuthResult:
    ran: bool = False  # the auth action ran (the policy's top-level `when` held)
    status: int = 200  # 200, or the 401 / 403 Authorino answers
    source: str | None = None  # the identity source that authenticated the caller
    select_request: dict[str, Any] | None = None
    selection: Selection | None = None
    rules: list[RuleVerdict] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    identity: dict[str, Any] = field(default_factory=dict)  # `auth.identity` as the limits read it (not after 401)
    denial: str = ""

    @property
    def undecided(self) -> bool:
        """A rule that applies could not be evaluated (a Rego text without its CEL reading)."""
        return any(rule.applies and rule.passed is None for rule in self.rules)


def authorize(
    rules: Rules | None, context: dict[str, Any], caller: Caller, select: Callable[[dict[str, Any]], Selection]
) -> AuthResult:
    """Authorino's phases on the effective rules of the request's path (None: no AuthPolicy, nothing runs)."""
    result = AuthResult(context=context)
    if rules is None or not _conditions_hold(rules, context):
        return result
    result.ran = True
    identity = _authenticate(rules, context, caller)
    if identity is None:
        result.status, result.denial = UNAUTHENTICATED, _unauthenticated(rules)
        return result
    result.source, auth_identity = identity
    context = {**context, "auth": {"identity": auth_identity, "metadata": {}}}
    for name, spec in _ordered(rules, "metadata"):
        if _applies(spec, context):
            context = _with_metadata(context, name, spec, caller, select, result)
    result.context = context
    result.rules = [_verdict(rules, key, spec, context) for key, spec in _ordered_keys(rules, "authorization")]
    result.identity = _identity(rules, context)  # also for a denied request: which limit its subscription meets
    if any(rule.applies and rule.passed is False for rule in result.rules):
        result.status, result.denial = UNAUTHORIZED, _unauthorized(rules, context)
    return result


def _conditions_hold(rules: Rules, context: Mapping[str, Any]) -> bool:
    conditions = rules.get(AUTH_CONDITIONS)
    return conditions is None or all(cel.matches(p, context) for p in predicates(conditions.spec))


def _ordered_keys(rules: Rules, section: str) -> list[tuple[str, Mapping[str, Any]]]:
    """A section's rules by priority (Authorino's order), the gateway's before the route's, then by name."""
    prefix = f"{section}#"
    found = [(key, rule) for key, rule in rules.items() if key.startswith(prefix)]
    found.sort(key=lambda item: (item[1].spec.get("priority", 0), item[1].source.target[0] != "Gateway", item[0]))
    return [(key, rule.spec) for key, rule in found]


def _ordered(rules: Rules, section: str) -> list[tuple[str, Mapping[str, Any]]]:
    return [(key.partition("#")[2], spec) for key, spec in _ordered_keys(rules, section)]


def _authenticate(rules: Rules, context: Mapping[str, Any], caller: Caller) -> tuple[str, Any] | None:
    for name, spec in _ordered(rules, "authentication"):
        kinds = [_SOURCE_KIND[key] for key in _SOURCE_KIND if key in spec]
        if not kinds:
            raise NotModelledError(f"authentication rule {name} is none of {', '.join(_SOURCE_KIND)}")
        if kinds[0] == caller.token and _applies(spec, context):
            return name, _identity_object(spec, caller, context)
    return None


def _identity_object(spec: Mapping[str, Any], caller: Caller, context: Mapping[str, Any]) -> Any:
    """What the identity source puts in `auth.identity` for this caller."""
    if "kubernetesTokenReview" in spec:
        return {"authenticated": True, "user": {"username": caller.user, "groups": list(caller.groups)}}
    if "jwt" in spec:
        claims: dict[str, Any] = {
            "iss": spec["jwt"].get("issuerUrl", ""),
            "sub": caller.user,
            "preferred_username": caller.user,
            "groups": list(caller.groups),
            "aud": list(caller.audience),
        }
        if caller.authorized_party is not None:
            claims["azp"] = caller.authorized_party
        return claims
    return selected(spec["plain"].get("selector", ""), context)


def _with_metadata(
    context: dict[str, Any],
    name: str,
    spec: Mapping[str, Any],
    caller: Caller,
    select: Callable[[dict[str, Any]], Selection],
    result: AuthResult,
) -> dict[str, Any]:
    if name == "apiKeyValidation":
        answer: Any = {
            "valid": True,
            "username": caller.user,
            "groups": list(caller.groups),
            "subscription": caller.key_subscription,
            "userId": caller.user,
            "keyId": "simulated-key",
            "keyName": "simulated-key",
        }
    elif name == SELECTION_METADATA:
        result.select_request = cel.plain(cel.evaluate(spec["http"]["body"]["expression"], context))
        result.selection = select(result.select_request)
        answer = result.selection.answer
    else:
        raise NotModelledError(f"metadata rule {name} runs for this request")
    auth = context["auth"]
    return {**context, "auth": {**auth, "metadata": {**auth["metadata"], name: answer}}}


def _verdict(rules: Rules, key: str, spec: Mapping[str, Any], context: Mapping[str, Any]) -> RuleVerdict:
    policy = f"{rules[key].source.namespace}/{rules[key].source.name}"
    name = key.partition("#")[2]
    kind = next((k for k in ("patternMatching", "opa") if k in spec), None)
    if kind is None:
        raise NotModelledError(f"authorization rule {name} of {policy} is neither patternMatching nor opa")
    if not _applies(spec, context):
        return RuleVerdict(policy, name, kind, False, None)
    if kind == "patternMatching":
        return RuleVerdict(policy, name, kind, True, all(_holds(p, context) for p in spec[kind]["patterns"]))
    reading = REGO_AS_CEL.get((name, rego_digest(spec[kind].get("rego", ""))))
    return RuleVerdict(policy, name, kind, True, None if reading is None else cel.matches(reading, context))


def _applies(spec: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    return all(_holds(pattern, context) for pattern in spec.get("when", []))


def _holds(pattern: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    """A CEL `predicate`, or Authorino's `{selector, operator, value}` pattern."""
    if "predicate" in pattern:
        return cel.matches(pattern["predicate"], context)
    value = selected(pattern.get("selector", ""), context)
    expected = pattern.get("value", "")
    operator = pattern.get("operator")
    if operator == "eq":
        return value == expected
    if operator == "neq":
        return value != expected
    if operator == "matches":
        return isinstance(value, str) and re.search(expected, value) is not None
    if operator in ("incl", "excl"):
        included = isinstance(value, list) and expected in value
        return included if operator == "incl" else not included
    raise NotModelledError(f"pattern operator {operator!r} of {dict(pattern)}")


def selected(selector: str, context: Mapping[str, Any]) -> Any:
    """An Authorino selector (`request.headers.authorization`, `auth.identity.azp`): None where it is absent."""
    value: Any = context
    for part in selector.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _identity(rules: Rules, context: Mapping[str, Any]) -> dict[str, Any]:
    filters = [rule.spec for key, rule in rules.items() if key == "response.success.metadata#identity"]
    if not filters:
        return {}
    properties = filters[0]["json"]["properties"]
    return {name: cel.plain(cel.evaluate(value["expression"], context)) for name, value in sorted(properties.items())}


def _unauthenticated(rules: Rules) -> str:
    response = rules.get("response.unauthenticated#")
    message = response.spec.get("message", {}).get("value", "") if response else ""
    return f"401 {message!r}"


def _unauthorized(rules: Rules, context: Mapping[str, Any]) -> str:
    response = rules.get("response.unauthorized#")
    if response is None:
        return "403"
    spec = response.spec
    body = cel.plain(cel.evaluate(spec["body"]["expression"], context)) if "body" in spec else ""
    reason = spec.get("headers", {}).get("x-ext-auth-reason", {}).get("expression")
    shown = f" (x-ext-auth-reason: {cel.plain(cel.evaluate(reason, context))})" if reason else ""
    return f"{spec.get('code', UNAUTHORIZED)} {body!r}{shown}"
