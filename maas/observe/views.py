"""Typed views of the live objects the plan reads, built once per object as configuration is through pydantic.

Each view holds exactly the fields the plan uses, read leniently (a value of the wrong type reads as absent, as it
always has) so a hand-edited snapshot never crashes the plan; the fields that had the wrong shape are kept in
`Parsed.problems`, and `Observed.unreadable()` says each such object once. A planned body parses the same way (it is
always well-formed), so a concern that takes "live, else planned" reads one type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, TypeVar

from .meta import Meta
from .node import Node
from .policy_views import LiveAuthPolicy, LiveTokenRateLimitPolicy


@dataclass(frozen=True)
class Condition:
    type: str | None
    status: str | None
    reason: str | None
    message: str | None

    @classmethod
    def all_of(cls, node: Node) -> tuple[Condition, ...]:
        """The mapping entries of `conditions` under `node`."""
        return tuple(
            cls(*(c.text(k) for k in ("type", "status", "reason", "message"))) for c in node.items("conditions")
        )


@dataclass(frozen=True)
class Listener:
    name: str | None
    hostname: str | None
    index: int  # its position in `spec.listeners`


@dataclass(frozen=True)
class Address:
    """A Gateway's `status.addresses` entry that has a value, with its position."""

    index: int
    type: str | None
    value: str


@dataclass(frozen=True)
class LiveGateway:
    KIND: ClassVar[str] = "Gateway"
    meta: Meta
    class_name: str | None
    listeners: tuple[Listener, ...]
    conditions: tuple[Condition, ...]
    addresses: tuple[Address, ...]

    @classmethod
    def parse(cls, node: Node) -> LiveGateway:
        listeners = tuple(
            Listener(item.text("name"), item.text("hostname"), item.index or 0)
            for item in node.items("spec", "listeners")
        )
        status = node.at("status")
        found = ((a.index or 0, a.text("type"), a.text("value")) for a in status.items("addresses"))
        addresses = tuple(Address(index, kind, value) for index, kind, value in found if value)
        class_name = node.text("spec", "gatewayClassName")
        return cls(Meta.parse(node), class_name, listeners, Condition.all_of(status), addresses)


@dataclass(frozen=True)
class ParentRef:
    group: str | None
    kind: str | None
    namespace: str | None
    name: str | None
    section: str | None

    @classmethod
    def parse(cls, node: Node) -> ParentRef:
        return cls(*(node.text(k) for k in _PARENT_FIELDS))


_PARENT_FIELDS = ("group", "kind", "namespace", "name", "sectionName")


@dataclass(frozen=True)
class RouteParent:
    """A `status.parents` entry: the parent it is about and what that parent's controller says."""

    ref: ParentRef
    conditions: tuple[Condition, ...]


class RouteMatch(NamedTuple):
    """One HTTPRouteMatch as written (no defaults): (name, value) pairs of its headers and query parameters. A
    named tuple, as `RouteRule`: the gateway budget reads one per match of every model's route."""

    path_type: str | None
    path_value: str | None
    method: str | None
    headers: tuple[tuple[str, str], ...]
    query: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, node: Node) -> RouteMatch:
        path = node.at("path")
        return cls(
            path.text("type"),
            path.text("value"),
            node.text("method"),
            _pairs(node, "headers"),
            _pairs(node, "queryParams"),
        )

    @classmethod
    def planned(cls, match: Mapping[str, Any]) -> RouteMatch:
        path = match.get("path", {})
        headers, query = (_planned_pairs(match.get(key, ())) for key in ("headers", "queryParams"))
        return cls(path.get("type"), path.get("value"), match.get("method"), headers, query)


class RouteRule(NamedTuple):
    name: str | None
    matches: tuple[RouteMatch, ...]


@dataclass(frozen=True)
class LiveRoute:
    KIND: ClassVar[str] = "HTTPRoute"
    meta: Meta
    positioned_hostnames: tuple[tuple[int, str], ...]  # each with its position in `spec.hostnames`
    parent_refs: tuple[ParentRef, ...]
    rules: tuple[RouteRule, ...]
    parents: tuple[RouteParent, ...]

    @classmethod
    def parse(cls, node: Node) -> LiveRoute:
        refs = tuple(ParentRef.parse(ref) for ref in node.items("spec", "parentRefs"))
        rules = tuple(
            RouteRule(rule.text("name"), tuple(RouteMatch.parse(m) for m in rule.items("matches")))
            for rule in node.items("spec", "rules")
        )
        parents = tuple(
            RouteParent(ParentRef.parse(p.at("parentRef")), Condition.all_of(p))
            for p in node.items("status", "parents")
        )
        return cls(Meta.parse(node), node.strings("spec", "hostnames"), refs, rules, parents)

    @classmethod
    def planned(cls, body: Mapping[str, Any]) -> LiveRoute:
        """A route as this program renders it (or KServe's template of one, `plan/gateway/routes.py`), read
        directly: it is well-formed and has no status, so it reads as `parse` reads it, at a third of the cost
        (the gateway budget reads one per model)."""
        meta, spec = Meta.planned(body["metadata"]), body.get("spec", {})
        refs = tuple(ParentRef(*map(ref.get, _PARENT_FIELDS)) for ref in spec.get("parentRefs", ()))
        rules = tuple(
            RouteRule(rule.get("name"), tuple(map(RouteMatch.planned, rule.get("matches", ()))))
            for rule in spec.get("rules", ())
        )
        return cls(meta, tuple(enumerate(spec.get("hostnames", ()))), refs, rules, ())

    @property
    def hostnames(self) -> tuple[str, ...]:
        return tuple(hostname for _, hostname in self.positioned_hostnames)


@dataclass(frozen=True)
class ServiceAddress:
    """An LLMInferenceService `status.addresses` entry, with its position: its name, URL and first model's name."""

    index: int
    name: str | None
    url: str | None
    model: str | None

    @classmethod
    def parse(cls, node: Node) -> ServiceAddress:
        model = next(iter(node.items("models")), Node(None))
        return cls(node.index or 0, node.text("name"), node.text("url"), model.text("name"))


@dataclass(frozen=True)
class PoolRef:
    """`status.router.scheduler.inferencePool`: the InferencePool KServe reports serving the service (issue 22)."""

    group: str | None
    kind: str | None
    name: str
    namespace: str | None

    @classmethod
    def parse(cls, node: Node) -> PoolRef | None:
        name = node.text("name")
        return None if not name else cls(node.text("group"), node.text("kind"), name, node.text("namespace"))


@dataclass(frozen=True)
class LiveInferenceService:
    """An LLMInferenceService: the model name KServe serves, and its status (conditions, URL, addresses, and for
    flow control the scheduler's InferencePool and how many routing group members receive traffic)."""

    KIND: ClassVar[str] = "LLMInferenceService"
    meta: Meta
    model_name: str | None
    conditions: tuple[Condition, ...]
    url: str | None
    addresses: tuple[ServiceAddress, ...]
    pool: PoolRef | None = None
    group: str | None = None  # `status.router.group.name`, when the service is a member of a routing group
    active_members: int = 0  # members of that group that are not stopped and have a positive weight

    @classmethod
    def parse(cls, node: Node) -> LiveInferenceService:
        status = node.at("status")
        addresses = tuple(ServiceAddress.parse(a) for a in status.items("addresses"))
        model = node.text("spec", "model", "name")
        router = status.at("router")
        pool = PoolRef.parse(router.at("scheduler", "inferencePool"))
        group = router.at("group")
        active = sum(1 for m in group.items("members") if not m.flag("stopped") and m.count("weight", default=0) > 0)
        conditions = Condition.all_of(status)
        return cls(Meta.parse(node), model, conditions, status.text("url"), addresses, pool, group.text("name"), active)


@dataclass(frozen=True)
class LiveSubscription:
    """A MaaSSubscription: the rate-limit identity its status was stamped with."""

    KIND: ClassVar[str] = "MaaSSubscription"
    meta: Meta
    status_identity: str | None

    @classmethod
    def parse(cls, node: Node) -> LiveSubscription:
        return cls(Meta.parse(node), node.text("status", "rateLimitIdentity"))


@dataclass(frozen=True)
class LiveTenantConfig:
    """A MaasTenantConfig: its annotations (in `meta`) and `spec.apiTranslation.enabled` as found."""

    KIND: ClassVar[str] = "MaasTenantConfig"
    meta: Meta
    api_translation: Any

    @classmethod
    def parse(cls, node: Node) -> LiveTenantConfig:
        return cls(Meta.parse(node), node.at("spec", "apiTranslation", "enabled").value)


@dataclass(frozen=True)
class LiveObject:
    """Any other kind: its metadata alone."""

    KIND: ClassVar[str] = ""
    meta: Meta

    @classmethod
    def parse(cls, node: Node) -> LiveObject:
        return cls(Meta.parse(node))


DEFAULT_PROGRESS_DEADLINE = 600  # seconds: the API server's default `spec.progressDeadlineSeconds`


@dataclass(frozen=True)
class LiveDeployment:
    """A Deployment: the replica counts its availability is judged by (upstream §6.2), the conditions its
    controller reports a failed rollout with, and the deadline it reports it after."""

    KIND: ClassVar[str] = "Deployment"
    meta: Meta
    generation: int
    wanted: int
    observed_generation: int
    updated: int
    available: int
    conditions: tuple[Condition, ...] = ()
    progress_deadline: int = DEFAULT_PROGRESS_DEADLINE

    @classmethod
    def parse(cls, node: Node) -> LiveDeployment:
        status = node.at("status")
        return cls(
            Meta.parse(node),
            node.count("metadata", "generation", default=0),
            node.count("spec", "replicas", default=1),
            status.count("observedGeneration", default=0),
            status.count("updatedReplicas", default=0),
            status.count("availableReplicas", default=0),
            Condition.all_of(status),
            node.count("spec", "progressDeadlineSeconds", default=DEFAULT_PROGRESS_DEADLINE),
        )


View = (
    LiveGateway
    | LiveRoute
    | LiveInferenceService
    | LiveSubscription
    | LiveTenantConfig
    | LiveDeployment
    | LiveAuthPolicy
    | LiveTokenRateLimitPolicy
    | LiveObject
)
_TYPED = (
    LiveGateway,
    LiveRoute,
    LiveInferenceService,
    LiveSubscription,
    LiveTenantConfig,
    LiveDeployment,
    LiveAuthPolicy,
    LiveTokenRateLimitPolicy,
)
V = TypeVar("V", bound=View)
_PARSERS: Mapping[str, Callable[[Node], View]] = {view.KIND: view.parse for view in _TYPED}


@dataclass(frozen=True)
class Parsed:
    """A view and the fields of its object that had the wrong shape (empty for a well-formed object)."""

    view: View
    problems: tuple[str, ...]


def parse(kind: str, body: Mapping[str, Any]) -> Parsed:
    """The view of one object of `kind`; never raises, whatever the body holds."""
    node = Node(body)
    view = _PARSERS.get(kind, LiveObject.parse)(node)
    return Parsed(view, tuple(node.problems))


def view_of(view: type[V], body: Mapping[str, Any]) -> V:
    """The view of a body known to be of `view.KIND` (a planned one, or a live one handed over as a mapping)."""
    return view.parse(Node(body))


def meta_of(body: Mapping[str, Any]) -> Meta:
    """The metadata of any body, read as a view reads it."""
    return Meta.parse(Node(body))


def _pairs(node: Node, key: str) -> tuple[tuple[str, str], ...]:
    return tuple((e.text("name") or "", e.text("value") or "") for e in node.items(key))


def _planned_pairs(entries: Iterable[Mapping[str, Any]]) -> tuple[tuple[str, str], ...]:
    return tuple((e.get("name") or "", e.get("value") or "") for e in entries)
