"""Kuadrant's effective policy of one route rule: the AuthPolicies and TokenRateLimitPolicies on its path merged
as `kuadrant-operator` v1.5.2 merges them (`api/v1/merge_strategies.go`).

A path is Gateway, Listener, HTTPRoute, HTTPRouteRule; its policies are taken from the least to the most specific
(by creation time within a level) and reduced from the right: each less specific policy merges into what the more
specific ones made, by its own strategy. `defaults` (and a policy with neither `defaults` nor `overrides`) with
`atomic` keep the more specific policy whole when it has rules, so a model's TokenRateLimitPolicy replaces the
gateway's default-deny on its route; `merge` works rule by rule, so the gateway AuthPolicy's rules and its `when`
join a model AuthPolicy's `model-access` rule, and both become the auth action's sources.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...observe.policy_views import Limit, ProperSpec, limit_of, planned_limit, proper_of, target_of
from ...observe.policy_views import predicates as predicates  # read here by wasm.py and the tools

TRLP = "TokenRateLimitPolicy"
AUTH = "AuthPolicy"
TOP_LEVEL_PREDICATES = "###_TOP_LEVEL_PREDICATES_###"  # kuadrantv1.RulesKeyTopLevelPredicates
AUTH_CONDITIONS = "conditions#"


@dataclass(frozen=True)
class Policy:
    """One policy as Kuadrant reads it: kind, place, `spec`, its creation time when it is live, and whether `spec`
    is as this program writes it (well-formed, so its limits are read directly)."""

    kind: str
    namespace: str
    name: str
    spec: Mapping[str, Any]
    created: str = ""
    planned: bool = False

    @cached_property
    def locator(self) -> str:
        """policy-machinery's `LocatorFromObject`: `{kind}.{group}:{namespace}/{name}`, lowercase kind."""
        return f"{self.kind.lower()}.kuadrant.io:{self.namespace}/{self.name}"

    @property
    def target(self) -> tuple[str, str, str, str | None]:
        """(kind, namespace, name, sectionName) of what it targets; the namespace is always its own."""
        ref = target_of(self.spec)
        return ref.kind or "", self.namespace, ref.name or "", ref.section

    @cached_property
    def proper(self) -> ProperSpec:
        """`spec.defaults`, else `spec.overrides`, else `spec` itself (`Spec.Proper()`), read once."""
        return proper_of(self.spec)

    @property
    def overrides(self) -> bool:
        return self.proper.overrides

    @property
    def atomic(self) -> bool:
        """Only `merge` merges rule by rule; `atomic`, absent or anything else is atomic (Go's default branch)."""
        return self.proper.strategy != "merge"

    def rules(self) -> Rules:
        """Its rules by key, each with this policy as its source: a copy of what is read once (a Gateway's
        AuthPolicy is merged into the path of every rule of every route)."""
        return dict(self._rules)

    @cached_property
    def _rules(self) -> Rules:
        named = _trlp_rules(self.proper) if self.kind == TRLP else _auth_rules(self.proper)
        return {key: Rule(self, spec) for key, spec in named.items()}


@dataclass(frozen=True)
class Rule:
    """One mergeable rule and the policy it came from (its source)."""

    source: Policy
    spec: Any

    @property
    def limit(self) -> Limit:
        """A TokenRateLimitPolicy rule's limit, read leniently unless its policy is planned."""
        return planned_limit(self.spec) if self.source.planned else limit_of(self.spec)


Rules = dict[str, Rule]


def _trlp_rules(proper: ProperSpec) -> dict[str, Any]:
    rules: dict[str, Any] = dict(proper.limits)
    if proper.when:
        rules[TOP_LEVEL_PREDICATES] = list(proper.when)
    return rules


def _auth_rules(proper: ProperSpec) -> dict[str, Any]:
    """`AuthPolicy.Rules()`: named patterns, the top-level `when`, and every rule of `rules`."""
    rules: dict[str, Any] = {f"patterns#{k}": v for k, v in proper.patterns.items()}
    if proper.when:
        rules[AUTH_CONDITIONS] = list(proper.when)
    for section, named in proper.sections.items():
        rules.update({f"{section}#{k}": v for k, v in named.items()})
    rules.update({f"response.{denial}#": v for denial, v in proper.denials.items()})
    for section, key in (("headers", "headers"), ("filters", "metadata")):
        rules.update({f"response.success.{key}#{k}": v for k, v in proper.success[section].items()})
    return rules


def empty(kind: str, rules: Rules) -> bool:
    """A TokenRateLimitPolicy without limits, an AuthPolicy without auth rules (`Empty()`)."""
    if kind == TRLP:
        return all(key == TOP_LEVEL_PREDICATES for key in rules)
    return all(key == AUTH_CONDITIONS or key.startswith("patterns#") for key in rules)


def effective(policies: Sequence[Policy]) -> Rules | None:
    """The effective rules of a path whose policies (of one kind) run from least to most specific; None: none."""
    if not policies:
        return None
    result = policies[-1].rules()
    for source in reversed(policies[:-1]):
        result = _merged(source, result)
    return result


def _merged(source: Policy, target: Rules) -> Rules:
    """One step of the reduction: `source` (less specific) merges into `target` by its own strategy."""
    own = source.rules()
    if source.atomic:
        return own if source.overrides or empty(source.kind, target) else target
    return {**target, **own} if source.overrides else {**own, **target}


class PolicyIndex:
    """The policies of a plan by what they target, each level in Kuadrant's order (creation time, then name)."""

    def __init__(self, policies: Iterable[Policy]) -> None:
        self._by_target: dict[tuple[str, str, str, str, str | None], list[Policy]] = defaultdict(list)
        # A planned policy not yet created (`created` "") is the newest one once `up` creates it, so it comes last.
        for policy in sorted(policies, key=lambda p: (p.created == "", p.created, p.namespace, p.name)):
            self._by_target[(policy.kind, *policy.target)].append(policy)

    def gateway_targets(self) -> list[tuple[str, str]]:
        """(namespace, name) of every Gateway a policy targets, sorted."""
        return sorted({(ns, name) for (_, kind, ns, name, _) in self._by_target if kind == "Gateway"})

    def on_path(
        self, kind: str, gateway: tuple[str, str], listener: str, route: tuple[str, str], rule: str
    ) -> list[Policy]:
        """The `kind` policies of one path, from the Gateway to the route rule."""
        return self.on_rules(kind, gateway, listener, route, [rule])[0]

    def on_rules(
        self, kind: str, gateway: tuple[str, str], listener: str, route: tuple[str, str], rules: Sequence[str]
    ) -> list[list[Policy]]:
        """The `kind` policies of the path of each of the route's `rules` on one listener (the levels above the
        rule read once). The rules that no policy targets alone share one list, so that a caller tells those paths
        apart from the others by identity."""
        get = self._by_target.get
        above = [*get((kind, "Gateway", *gateway, None), ()), *get((kind, "Gateway", *gateway, listener), ())]
        above += get((kind, "HTTPRoute", *route, None), ())
        return [[*above, *own] if (own := get((kind, "HTTPRoute", *route, rule))) else above for rule in rules]
