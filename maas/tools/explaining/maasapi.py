"""maas-api's `POST /internal/v1/subscriptions/select`, as the gateway AuthPolicy calls it for each model request.

The rules are those of `reference/upstream-platform.md` section 9 ("maas-api's runtime contract with the
cluster", the `subscriptions/select` paragraph), applied to what that maas-api would read after `pulumi up`: the
rendered MaaSSubscriptions of its tenant namespace (its informer watches only `MAAS_SUBSCRIPTION_NAMESPACE`) with
the statuses the program writes, and the rendered MaaSAuthPolicies of the same namespace. Only inference is
modelled: the gateway calls select only when the request names a model (API-key minting selects without one).

- An explicit name (the `X-MaaS-Subscription` header) is matched qualified (`ns/name`) first, then bare; the
  caller must own it (`access_denied`), it must include the model (`model_not_in_subscription`), else
  `not_found`.
- Without one: the subscriptions the caller owns that include the model; none is `not_found`, exactly one is
  selected, several are `multiple_subscriptions` (the caller must send the header).
- Inference needs the selected subscription in phase `Active` or `Degraded`; a `Degraded`
  one also needs a ready TokenRateLimitPolicy status for the model when its reference has rate limits
  (`model_unhealthy` otherwise).
- Candidates are ordered by priority (desc), largest token limit (desc), name; `accessAllowed` is whether a
  MaaSAuthPolicy grants the caller (user or a group) the model.
- A status nobody wrote or observed (a `coexist` stack, explained without `--observed`) is the one the program's
  status rules give (`world.Published`): a subscription's phase so assumed, and an alias read off an assumed
  MaaSModelRef status, are named in `Selection.assumed`, so that an answer depending on them is marked as such.
- 3.6 (seed 002, section 9 **[seed-only]**): `rateLimitId`, the short ID of `ns/name@model`, only for a
  subscription stamped `short` (annotation `maas.opendatahub.io/rate-limit-identity`, else
  `status.rateLimitIdentity`).

Error messages are maas-api's own (`internal/subscription/selector.go` of the mirror), since the gateway
returns them as the 403 body.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ... import naming
from ...config.errors import quoted
from ...observe.fields import dig, items_at, strings_at, text_at
from ...plan.policies.ratelimit import short_id

INFERENCE_PHASES = ("Active", "Degraded")
NOT_FOUND = "no matching subscription found for user"
REQUESTED_NOT_FOUND = "requested subscription not found"
ACCESS_DENIED = "access denied to requested subscription"
MULTIPLE = "user has access to multiple subscriptions, must specify subscription using X-MaaS-Subscription header"


@dataclass(frozen=True)
class LiveSubscription:
    """A MaaSSubscription as maas-api reads it: the rendered object plus the status the program writes (or the
    live one); `assumed` says why that status is only assumed ("" when it was written or observed)."""

    body: Mapping[str, Any]
    status: Mapping[str, Any]
    assumed: str = ""

    @property
    def name(self) -> str:
        return self.body["metadata"]["name"]

    @property
    def namespace(self) -> str:
        return self.body["metadata"]["namespace"]

    @property
    def qualified(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def groups(self) -> tuple[str, ...]:
        return tuple(text_at(group, "name") or "" for group in items_at(self.body, "spec", "owner", "groups"))

    @property
    def users(self) -> tuple[str, ...]:
        return strings_at(self.body, "spec", "owner", "users")

    @property
    def priority(self) -> int:
        value = dig(self.body, "spec", "priority")
        return value if isinstance(value, int) else 0

    @property
    def model_refs(self) -> tuple[Mapping[str, Any], ...]:
        return items_at(self.body, "spec", "modelRefs")

    @property
    def max_limit(self) -> int:
        return max(
            (rate.get("limit", 0) for ref in self.model_refs for rate in items_at(ref, "tokenRateLimits")), default=0
        )

    @property
    def phase(self) -> str:
        return text_at(self.status, "phase") or ""

    @property
    def shown_phase(self) -> str:
        """`Active`, `Active (assumed: why)`, `(none)`."""
        phase = self.phase or "(none)"
        return f"{phase} (assumed: {self.assumed})" if self.assumed else phase

    @property
    def short(self) -> bool:
        stamp = text_at(self.body, "metadata", "annotations", naming.RATE_LIMIT_IDENTITY_ANNOTATION)
        return (stamp or text_at(self.status, "rateLimitIdentity")) == "short"

    def owner_match(self, username: str, groups: Sequence[str]) -> str | None:
        """How the caller owns it (`user alice`, `group team-x`), or None."""
        if username in self.users:
            return f"user {username}"
        caller = {group.strip() for group in groups}
        return next((f"group {group}" for group in self.groups if group in caller), None)

    def model_ref(self, model: str) -> Mapping[str, Any] | None:
        namespace, _, name = model.partition("/")
        return next(
            (ref for ref in self.model_refs if (ref.get("namespace"), ref.get("name")) == (namespace, name)), None
        )


@dataclass
class Selection:
    """The select answer (the JSON the gateway stores as `auth.metadata["subscription-info"]`) and why."""

    answer: dict[str, Any]
    reasons: list[str] = field(default_factory=list)
    assumed: list[str] = field(default_factory=list)  # the assumed statuses the answer depends on, one line each


def candidates(subscriptions: Sequence[LiveSubscription]) -> list[LiveSubscription]:
    """maas-api's order: priority desc, then the largest token limit desc, then name."""
    return sorted(subscriptions, key=lambda s: (-s.priority, -s.max_limit, s.name))


@dataclass(frozen=True)
class ModelIndex:
    """The MaaSModelRefs maas-api reads (every namespace): `ns/name`, and each published `resolvedModelAlias`."""

    keys: frozenset[str] = frozenset()
    backends: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # `ns/{spec.modelRef.name}` -> keys
    aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # `status.resolvedModelAlias` -> keys
    assumed: Mapping[str, str] = field(default_factory=dict)  # key -> why its status (so its alias) is assumed

    def resolve(self, requested: str) -> tuple[str | None, str]:
        """`resolvedModel` for a requested model, and why; None when it names no model or more than one. A
        requested model is a MaaSModelRef's `ns/name`, else the `ns/name` of the backend it references (the
        path KServe serves an LLMInferenceService on), else a published alias (the body-routing header's
        `publishers/{ns}/models/{id}`, an ExternalModel's name)."""
        if requested in self.keys:
            return requested, f"{quoted(requested)} is the MaaSModelRef {requested}"
        for owners, what in ((self.backends, "the backend of"), (self.aliases, "the resolvedModelAlias of")):
            found = owners.get(requested, ())
            if len(found) == 1:
                return found[0], f"{quoted(requested)} is {what} MaaSModelRef {found[0]}"
            if found:
                return None, f"{quoted(requested)} is {what} {len(found)} MaaSModelRefs ({', '.join(found)})"
        return None, f"{quoted(requested)} names no MaaSModelRef, backend or published alias"

    def assumption(self, requested: str) -> str:
        """How resolving `requested` depends on an assumed MaaSModelRef status, or "": an alias read off one, or,
        for a name nothing resolves, the aliases that assumed statuses may lack (the live ones may carry them)."""
        if requested in self.keys or requested in self.backends:
            return ""
        found = self.aliases.get(requested, ())
        assumed = [key for key in found if key in self.assumed]
        if assumed:
            alias = f"the resolvedModelAlias {quoted(requested)} of {', '.join(assumed)}"
            return f"{alias} comes from an assumed status {self._why(assumed)}"
        aliased = {key for keys in self.aliases.values() for key in keys}
        unknown = sorted(key for key in self.assumed if key not in aliased)
        if found or not unknown:
            return ""
        whose = "whose assumed status names none" if len(unknown) == 1 else "whose assumed statuses name none"
        owners = ", ".join(unknown)
        return f"{quoted(requested)} may be the live resolvedModelAlias of {owners}, {whose} {self._why(unknown)}"

    def _why(self, keys: Sequence[str]) -> str:
        reasons = sorted({self.assumed[key] for key in keys})
        return f"({'; '.join(reasons)})"


def select(
    request: Mapping[str, Any],
    subscriptions: Sequence[LiveSubscription],
    auth_policies: Sequence[Mapping[str, Any]],
    models: ModelIndex,
) -> Selection:
    """The answer of the tenant's maas-api to one select request (groups, username, requestedSubscription,
    requestedModel), with one reason line per rule applied. The requested model is resolved to its MaaSModelRef
    first; one that resolves to none is `not_found`."""
    requested_model = str(request.get("requestedModel") or "")
    resolved, why = models.resolve(requested_model)
    assumption = models.assumption(requested_model)
    if resolved is None:
        error = _error("not_found", f"model {requested_model} not found", f"requested model: {why}")
        error.assumed.extend([assumption] if assumption else [])
        return error
    selector = _Selector(
        model=resolved,
        username=str(request.get("username") or ""),
        groups=tuple(str(group) for group in request.get("groups") or []),
        auth_policies=tuple(auth_policies),
    )
    ordered = candidates(subscriptions)
    requested = str(request.get("requestedSubscription") or "")
    selection = selector.explicit(requested, ordered) if requested else selector.automatic(ordered)
    selection.reasons.insert(0, f"requested model: {why}")
    selection.assumed[:0] = [assumption] if assumption else []
    return selection


@dataclass(frozen=True)
class _Selector:
    """One select request's caller and model, and the MaaSAuthPolicies that decide `accessAllowed`."""

    model: str
    username: str
    groups: tuple[str, ...]
    auth_policies: tuple[Mapping[str, Any], ...]

    def explicit(self, requested: str, ordered: list[LiveSubscription]) -> Selection:
        """The X-MaaS-Subscription header: qualified name first, then bare name."""
        found = next((s for s in ordered if s.qualified == requested), None)
        how = "qualified name"
        if found is None and "/" not in requested:
            found, how = next((s for s in ordered if s.name == requested), None), "bare name"
        if found is None:
            reason = f"X-MaaS-Subscription {quoted(requested)} names no subscription this maas-api reads"
            return _error("not_found", REQUESTED_NOT_FOUND, reason)
        reasons = [f"X-MaaS-Subscription {quoted(requested)} names {found.qualified} ({how})"]
        owner = found.owner_match(self.username, self.groups)
        if owner is None:
            return _error("access_denied", ACCESS_DENIED, *reasons, f"the caller does not own {found.qualified}")
        if self.model and found.model_ref(self.model) is None:
            message = f"subscription {requested} does not include model {self.model}"
            reason = f"{found.qualified} does not include {self.model}"
            return _error("model_not_in_subscription", message, *reasons, reason)
        return self.selected(found, [*reasons, f"the caller owns it ({owner})"])

    def automatic(self, ordered: list[LiveSubscription]) -> Selection:
        """No header: the one subscription the caller owns that includes the model, else an error."""
        owned = [s for s in ordered if s.owner_match(self.username, self.groups) and s.model_ref(self.model)]
        if not owned:
            reason = f"no X-MaaS-Subscription header, and the caller owns no subscription that includes {self.model}"
            return _error("not_found", NOT_FOUND, reason)
        if len(owned) > 1:
            reason = (
                f"no X-MaaS-Subscription header, and the caller owns {len(owned)} subscriptions that include "
                f"{self.model}: {', '.join(s.qualified for s in owned)}; maas-api does not choose (send "
                "X-MaaS-Subscription: one of them)"
            )
            return _error("multiple_subscriptions", MULTIPLE, reason)
        only = owned[0]
        reason = (
            f"no X-MaaS-Subscription header: {only.qualified} is the only subscription the caller owns "
            f"({only.owner_match(self.username, self.groups)}) that includes {self.model}"
        )
        return self.selected(only, [reason])

    def selected(self, subscription: LiveSubscription, reasons: list[str]) -> Selection:
        """The success answer, unless the subscription may not serve inference (`model_unhealthy`)."""
        usable, reason, message = _health(subscription, self.model)
        assumed = [f"{subscription.qualified} is {subscription.phase or 'unreconciled'}: {subscription.assumed}"]
        if not usable:
            error = _error("model_unhealthy", message, *reasons, reason)
            error.answer["phase"] = subscription.phase
            error.assumed.extend(assumed if subscription.assumed else [])
            return error
        granted = granting_policies(self.auth_policies, self.model, self.username, self.groups)
        answer: dict[str, Any] = {
            "name": subscription.name,
            "namespace": subscription.namespace,
            "resolvedModel": self.model,
            "accessAllowed": bool(granted),
            "phase": subscription.phase,
            "ready": any(
                text_at(c, "type") == "Ready" and text_at(c, "status") == "True"
                for c in items_at(subscription.status, "conditions")
            ),
        }
        if subscription.priority:
            answer["priority"] = subscription.priority
        if subscription.short:
            answer["rateLimitId"] = short_id(f"{subscription.qualified}@{self.model}")
        metadata = subscription.body.get("spec", {}).get("tokenMetadata", {})
        answer.update({k: metadata[k] for k in ("organizationId", "costCenter", "labels") if metadata.get(k)})
        selected = [*reasons, f"{reason}: selected {subscription.qualified}"]
        return Selection(answer, selected, assumed if subscription.assumed else [])


def _health(subscription: LiveSubscription, model: str) -> tuple[bool, str, str]:
    """Whether an inference request may use the subscription, why, and maas-api's message when it may not."""
    phase = subscription.phase
    assumed = f" (assumed: {subscription.assumed})" if subscription.assumed else ""
    if phase not in INFERENCE_PHASES:
        shown = phase or "unreconciled"
        message = f"subscription is in {shown} phase (allowed: Active, Degraded)"
        return False, f"its phase is {shown}{assumed}; inference needs Active or Degraded", message
    ref = subscription.model_ref(model)
    if phase != "Degraded" or ref is None or not items_at(ref, "tokenRateLimits"):
        return True, f"phase {phase}{assumed}", ""
    statuses = [s for s in items_at(subscription.status, "tokenRateLimitStatuses") if s.get("model") == ref.get("name")]
    if statuses and statuses[0].get("ready") is True:
        return True, f"phase Degraded{assumed}, and its TokenRateLimitPolicy status for {model} is ready", ""
    reason = f"it is Degraded{assumed} and its TokenRateLimitPolicy status for {model} is not ready"
    return False, reason, "subscription rate limiting policies are not ready"


def granting_policies(
    auth_policies: Sequence[Mapping[str, Any]], model: str, username: str, groups: Sequence[str]
) -> list[str]:
    """The MaaSAuthPolicies (`ns/name`) that grant the caller `model`: maas-api's `accessAllowed`."""
    namespace, _, name = model.partition("/")
    caller = {group.strip() for group in groups}
    granted = []
    for policy in auth_policies:
        models = {(text_at(ref, "namespace"), text_at(ref, "name")) for ref in items_at(policy, "spec", "modelRefs")}
        users = {user.strip() for user in strings_at(policy, "spec", "subjects", "users")}
        subject_groups = {text_at(g, "name") for g in items_at(policy, "spec", "subjects", "groups")}
        if (namespace, name) in models and (username.strip() in users or caller & subject_groups):
            granted.append(f"{policy['metadata']['namespace']}/{policy['metadata']['name']}")
    return sorted(granted)


def _error(code: str, message: str, *reasons: str) -> Selection:
    """maas-api always answers 200; an error answer still carries `accessAllowed: false` and `phase`."""
    return Selection(
        {"error": code, "message": message, "accessAllowed": False, "phase": "", "ready": False}, list(reasons)
    )
