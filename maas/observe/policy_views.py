"""Typed views of the Kuadrant policies the plan reads live: their target, a TokenRateLimitPolicy's limits, and what
of an AuthPolicy names per-caller counters. Read as `views.py` reads every kind (see there)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from .meta import Meta
from .node import Node


@dataclass(frozen=True)
class TargetRef:
    """A policy's `spec.targetRef`: what Kuadrant attaches it to."""

    kind: str | None
    name: str | None
    section: str | None

    @classmethod
    def parse(cls, spec: Node) -> TargetRef:
        ref = spec.at("targetRef")
        return cls(ref.text("kind"), ref.text("name"), ref.text("sectionName"))


def target_of(spec: Any) -> TargetRef:
    """The target of a policy `spec` (planned, or live of any shape)."""
    return TargetRef.parse(Node(spec, "spec"))


@dataclass(frozen=True)
class Limit:
    """One TokenRateLimitPolicy limit (live or planned, of any shape): the predicate text of each `when` entry
    (None for an entry without one), its (limit, window) rates and its counter expressions, in order."""

    when: tuple[str | None, ...]
    rates: tuple[tuple[int, str | None], ...]
    counters: tuple[str, ...]

    @classmethod
    def parse(cls, node: Node) -> Limit:
        rates = tuple((rate.count("limit", default=-1), rate.text("window")) for rate in node.items("rates"))
        counters = tuple(counter.text("expression") or "" for counter in node.items("counters"))
        return cls(_when(node.at("when")), rates, counters)

    @property
    def predicates(self) -> list[str]:
        """The predicate texts of `when`, entries without one skipped (Kuadrant's reading)."""
        return [text for text in self.when if text is not None]


def _when(node: Node) -> tuple[str | None, ...]:
    """The predicate text of each entry of a `when` list, None for an entry without one."""
    texts = (entry.at("predicate").value for entry in node.entries())
    return tuple(text if isinstance(text, str) else None for text in texts)


def predicates(when: Any) -> list[str]:
    """The predicate texts of a `when` list (a policy's or a limit's), entries without one skipped."""
    return [text for text in _when(Node(when)) if text is not None]


def limit_of(value: Any) -> Limit:
    """A limit read from a policy's `limits` entry."""
    return Limit.parse(Node(value))


def planned_limit(value: Mapping[str, Any]) -> Limit:
    """A limit as this program writes it (`plan/policies/ratelimit.py`, the gateway's default deny), read directly:
    it is well-formed, so it reads as `limit_of` reads it, and the gateway budget reads thousands of them."""
    rates = tuple((rate["limit"], rate["window"]) for rate in value.get("rates", ()))
    counters = tuple(counter["expression"] for counter in value.get("counters", ()))
    return Limit(tuple(entry["predicate"] for entry in value.get("when", ())), rates, counters)


@dataclass(frozen=True)
class LivePolicy:
    """A Kuadrant policy as the plan reads it live: its target (its rules are merged verbatim, see
    `plan/gateway/policies.py`)."""

    meta: Meta
    target: TargetRef


_IDENTITY_PROPERTIES = ("response", "success", "filters", "identity", "json", "properties")


@dataclass(frozen=True)
class LiveAuthPolicy(LivePolicy):
    """Also the names of its authentication rules and the `auth.identity.userid` expression it derives (which
    name per-caller counters, see `plan/checks/quota.py`)."""

    KIND: ClassVar[str] = "AuthPolicy"
    authentications: tuple[str, ...]
    userid: str | None

    @classmethod
    def parse(cls, node: Node) -> LiveAuthPolicy:
        rules = node.at("spec", "defaults", "rules")  # upstream's and this program's layout, else `spec.rules`
        if not rules.mapping():
            rules = node.at("spec", "rules")
        authentications = tuple(str(name) for name in rules.mapping("authentication"))
        userid = rules.text(*_IDENTITY_PROPERTIES, "userid", "expression")
        return cls(Meta.parse(node), TargetRef.parse(node.at("spec")), authentications, userid)


@dataclass(frozen=True)
class LiveTokenRateLimitPolicy(LivePolicy):
    """Also its `spec.limits`, by name in name order."""

    KIND: ClassVar[str] = "TokenRateLimitPolicy"
    limits: tuple[tuple[str, Limit], ...]

    @classmethod
    def parse(cls, node: Node) -> LiveTokenRateLimitPolicy:
        named = sorted(node.fields("spec", "limits"), key=lambda item: str(item[0]))
        limits = tuple((str(name), Limit.parse(limit)) for name, limit in named)
        return cls(Meta.parse(node), TargetRef.parse(node.at("spec")), limits)

    @classmethod
    def planned(cls, body: Mapping[str, Any]) -> LiveTokenRateLimitPolicy:
        """A policy as this program writes it, read directly (`planned_limit`); it reads as `parse` reads it."""
        spec = body["spec"]
        ref = spec.get("targetRef", {})
        target = TargetRef(ref.get("kind"), ref.get("name"), ref.get("sectionName"))
        limits = tuple((name, planned_limit(limit)) for name, limit in sorted(spec.get("limits", {}).items()))
        return cls(Meta.planned(body["metadata"]), target, limits)


_AUTH_SECTIONS = ("authentication", "metadata", "authorization", "callbacks")


@dataclass(frozen=True)
class ProperSpec:
    """A Kuadrant policy `spec` as policy-machinery's merge reads it: `Spec.Proper()` (`defaults`, else
    `overrides`, else the spec itself) and the named rules in it, each kept verbatim (rules merge whole, and the
    tools read them). The mappings keep their order: it is the order the merge sees."""

    overrides: bool
    strategy: Any
    when: tuple[Any, ...]
    limits: Mapping[Any, Any]  # a TokenRateLimitPolicy's
    patterns: Mapping[Any, Any]  # an AuthPolicy's, and the rest below
    sections: Mapping[str, Mapping[Any, Any]]  # authentication, metadata, authorization, callbacks
    denials: Mapping[str, Any]  # response.unauthenticated / response.unauthorized, when present
    success: Mapping[str, Mapping[Any, Any]]  # response.success.headers / .filters

    @classmethod
    def parse(cls, spec: Node) -> ProperSpec:
        defaults, overrides = (isinstance(spec.at(block).value, Mapping) for block in ("defaults", "overrides"))
        proper = spec.at("defaults") if defaults else spec.at("overrides") if overrides else spec
        rules, response = proper.at("rules"), proper.at("rules", "response")
        found = response.mapping()
        return cls(
            overrides and not defaults,
            proper.at("strategy").value,
            tuple(entry.value for entry in proper.entries("when")),
            proper.mapping("limits"),
            proper.mapping("patterns"),
            {section: rules.mapping(section) for section in _AUTH_SECTIONS},
            {denial: found[denial] for denial in ("unauthenticated", "unauthorized") if denial in found},
            {key: response.mapping("success", key) for key in ("headers", "filters")},
        )


def proper_of(spec: Any) -> ProperSpec:
    """The proper spec of a policy `spec` (planned, or live of any shape)."""
    return ProperSpec.parse(Node(spec, "spec"))
