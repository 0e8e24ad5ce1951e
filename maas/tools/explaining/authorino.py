"""Authorino's side of a model request, evaluated on the rendered AuthPolicies with the CEL engine.

The caller is a Kubernetes-token caller (`openshift-identities`, TokenReview): its identity is the TokenReview's
`{user: {username, groups}}` and `X-MaaS-Subscription` carries the requested subscription. From that context
this module evaluates, in Authorino's order, the rendered gateway policy's metadata conditions and the select
request body it sends to maas-api, every authorization rule of the gateway policy and of the model's own policy
(`strategy: merge`: the route's rules join the gateway's, a same-named route rule replacing the gateway's), the
403 body, and the identity properties the TokenRateLimitPolicy then reads.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...plan.policies.gateway_auth import SELECTION, SELECTION_METADATA
from .. import cel

# A Kubernetes token is opaque: anything that is neither an API key (`sk-oai-`) nor shaped like a JWT.
KUBERNETES_TOKEN = "Bearer sha256~explain-caller-token"


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


def caller_context(path: str, user: str, groups: Sequence[str], subscription: str | None) -> dict[str, Any]:
    """The request as Authorino sees it after TokenReview authenticated the caller (header names lowercase)."""
    headers = {"authorization": KUBERNETES_TOKEN}
    if subscription:
        headers["x-maas-subscription"] = subscription
    identity = {"authenticated": True, "user": {"username": user, "groups": list(groups)}}
    return cel.request(path, identity=identity, headers=headers)


def qualified(policy: Mapping[str, Any]) -> str:
    return f"{policy['metadata']['namespace']}/{policy['metadata']['name']}"


def rules_of(policy: Mapping[str, Any]) -> Mapping[str, Any]:
    """`spec.rules`, or those of its `defaults` or `overrides` section (the gateway's are defaults)."""
    spec = policy["spec"]
    section = spec.get("defaults") or spec.get("overrides") or spec
    return section.get("rules", {})


def select_request(gateway: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any] | None:
    """The body the gateway posts to maas-api's select, or None when no metadata rule runs for this request.
    A metadata rule other than `subscription-info` that runs (API-key validation) is not modelled."""
    body = None
    for name, rule in sorted(rules_of(gateway).get("metadata", {}).items()):
        if not applies(rule, context):
            continue
        if name != SELECTION_METADATA:
            raise NotModelledError(f"metadata rule {name} of {qualified(gateway)} runs for this caller")
        body = cel.plain(cel.evaluate(rule["http"]["body"]["expression"], context))
    return body


def with_selection(context: Mapping[str, Any], answer: Mapping[str, Any]) -> dict[str, Any]:
    auth = {**context["auth"], "metadata": {SELECTION_METADATA: dict(answer)}}
    return {**context, "auth": auth}


def authorization(
    gateway: Mapping[str, Any], route: Mapping[str, Any] | None, context: Mapping[str, Any]
) -> list[RuleVerdict]:
    """Every authorization rule on the model's route, in Authorino's order (priority), the gateway's first."""
    rules = {name: (0, gateway, rule) for name, rule in rules_of(gateway).get("authorization", {}).items()}
    if route is not None:
        rules.update({name: (1, route, rule) for name, rule in rules_of(route).get("authorization", {}).items()})
    ordered = sorted(rules.items(), key=lambda item: (item[1][2].get("priority", 0), item[1][0], item[0]))
    return [_verdict(qualified(policy), name, rule, context) for name, (_, policy, rule) in ordered]


def _verdict(policy: str, name: str, rule: Mapping[str, Any], context: Mapping[str, Any]) -> RuleVerdict:
    kinds = [key for key in ("patternMatching", "opa") if key in rule]
    if not kinds:
        raise NotModelledError(f"authorization rule {name} of {policy} is neither patternMatching nor opa")
    kind = kinds[0]
    if not applies(rule, context):
        return RuleVerdict(policy, name, kind, False, None)
    if kind == "patternMatching":
        return RuleVerdict(policy, name, kind, True, all(holds(p, context) for p in rule[kind]["patterns"]))
    reading = REGO_AS_CEL.get((name, rego_digest(rule[kind].get("rego", ""))))
    return RuleVerdict(policy, name, kind, True, None if reading is None else cel.matches(reading, context))


def applies(rule: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    return all(holds(pattern, context) for pattern in rule.get("when", []))


def holds(pattern: Mapping[str, Any], context: Mapping[str, Any]) -> bool:
    if "predicate" not in pattern:
        raise NotModelledError(f"pattern {dict(pattern)} is not a CEL predicate")
    return cel.matches(pattern["predicate"], context)


def denial(gateway: Mapping[str, Any], context: Mapping[str, Any]) -> str:
    """What a denied caller receives: the rendered `unauthorized` response, its expressions evaluated."""
    response = rules_of(gateway)["response"]["unauthorized"]
    body = cel.plain(cel.evaluate(response["body"]["expression"], context))
    reason = cel.plain(cel.evaluate(response["headers"]["x-ext-auth-reason"]["expression"], context))
    return f"{response['code']} {body!r} (x-ext-auth-reason: {reason})"


def identity(gateway: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """`auth.identity` as the TokenRateLimitPolicy reads it: the gateway's identity properties, evaluated."""
    properties = rules_of(gateway)["response"]["success"]["filters"]["identity"]["json"]["properties"]
    return {name: cel.plain(cel.evaluate(value["expression"], context)) for name, value in sorted(properties.items())}
