"""The MaaS custom resources maas-api reads, and the status this program publishes for them.

maas-api lists a model only when `MaaSModelRef.status.phase` is `Ready` and selects a subscription only when
`MaaSSubscription.status.phase` is `Active` or `Degraded` (`upstream-platform.md` section 9). Without a
maas-controller nobody else writes that status, so with `controllerMode: absent` the program computes it from the
configuration (the phase rules of seed 004 and `upstream-policies.md` 3.4) and writes it after the policies it
describes. Conditions carry no `lastTransitionTime` here: the status writer stamps it, so renders stay stable.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, NamedTuple

from ... import naming
from ...config import AuthPolicyConfig, MaasConfig, ModelConfig, SubscriptionConfig, SubscriptionModelRef
from ...config.schema import Metadata, ModelKey, Subjects
from ...observe import Observed
from ..desired import Desired, k8s_object, object_identity, status_write
from ..policies.identity import Identity
from ..policies.ratelimit import rates_of
from ..status import writes_status
from ..status.conditions import condition
from ..status.model import ModelFacts, model_status
from .flow_control import flow_control
from .routing import model_details, route_of, tenant_of

OwnerKey = tuple[str, str]
POSITION = attrgetter("namespace", "name")  # the order of model references in the CRs
# An unlimited model reference has no rates; the CRD requires at least one, so the CR carries the largest rate it
# admits (informational: maas-api only displays and orders by it; the TokenRateLimitPolicy enforces `unlimited`).
UNLIMITED_RATE = {"limit": 1_000_000_000, "window": "1s"}


@dataclass
class Publication:
    """What `plan.build` places under owners: objects, statuses (written last) and per-owner stack outputs."""

    objects: dict[OwnerKey, list[dict[str, Any]]] = field(default_factory=dict)
    statuses: dict[OwnerKey, list[Desired]] = field(default_factory=dict)
    outputs: dict[OwnerKey, dict[str, Any]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def publish(config: MaasConfig, observed: Observed, identities: Mapping[str, Identity]) -> Publication:
    """The MaaS CRs of every model, auth policy and subscription, with their status unless something else keeps it.

    `coexist`: a running maas-controller keeps the status. `renderYamlToDirectory`: nothing talks to a cluster.
    """
    with_status = writes_status(config.platform)
    governed = _governed_models(config)
    targets = _Targets.of(config)
    result = Publication()
    phases: dict[str, str] = {}
    for model in sorted(config.models, key=lambda m: m.key):
        owner = ("Model", model.key)
        facts = model_facts(config, model, governed.get(model.key, set()))
        body, status = model_ref(model), model_status(facts, observed)
        phases[model.key] = status["phase"]
        result.objects[owner] = [body]
        result.outputs[owner] = _model_outputs(model, status)
        if with_status:
            dependencies = _model_dependencies(config, model)
            result.statuses[owner] = [status_write(body, status, dependencies, facts.to_inputs())]
        if status["endpoint"] == "" and status["phase"] == "Ready":
            result.warnings.append(_no_endpoint_warning(model))
    for policy in sorted(config.authPolicies, key=lambda p: p.key):
        owner = ("AuthPolicy", policy.key)
        body, status = maas_auth_policy(policy), auth_policy_status(policy, phases)
        result.objects[owner] = [body]
        result.outputs[owner] = {"phase": status["phase"]}
        if with_status:
            result.statuses[owner] = [status_write(body, status, targets.auth_policy_dependencies(policy))]
    references = _References(config, phases, targets)
    for subscription in sorted(config.subscriptions, key=lambda s: s.key):
        owner = ("Subscription", subscription.key)
        identity, refs = identities[subscription.key], sorted(subscription.modelRefs, key=POSITION)
        parts = list(map(references.of, refs))
        body = _subscription_body(subscription, refs, [part.entry for part in parts], identity)
        status = _subscription_status(parts, identity)
        flow = flow_control(config, subscription, observed)  # issue 22: objectives under their models' owners
        if flow.statuses:
            status["flowControlStatuses"] = flow.statuses
        for key, objectives in flow.objectives.items():
            result.objects.setdefault(("Model", key), []).extend(objectives)
        result.warnings.extend(flow.warnings)
        result.objects[owner] = [body]
        result.outputs[owner] = {"phase": status["phase"], "rateLimitIdentity": identity}
        if with_status:
            policies = [part.policy for part in parts if part.policy is not None]
            dependencies = [targets.gateway_policies[subscription.namespace], *policies, *flow.identities]
            result.statuses[owner] = [status_write(body, status, dependencies)]
    return result


# ------------------------------------------------------------------------------------------------ the CRs


def model_ref(model: ModelConfig) -> dict[str, Any]:
    """MaaSModelRef in the model namespace; `tenantRef` names a non-default tenant (the CRD field upstream reads)."""
    spec: dict[str, Any] = {"modelRef": {"kind": model.modelRef.kind, "name": model.modelRef.name}}
    if model.endpointOverride is not None:
        spec["endpointOverride"] = model.endpointOverride
    if model.tenant != naming.DEFAULT_TENANT:
        spec["tenantRef"] = model.tenant
    return _maas_object("MaaSModelRef", model.name, model.namespace, model.tenant, model.annotations, spec)


def maas_auth_policy(policy: AuthPolicyConfig) -> dict[str, Any]:
    spec: dict[str, Any] = {"modelRefs": _model_refs(policy.modelRefs), "subjects": _subjects(policy.subjects)}
    if policy.meteringMetadata is not None:
        spec["meteringMetadata"] = _metadata(policy.meteringMetadata)
    tenant = _tenant_of_namespace(policy.namespace)
    return _maas_object("MaaSAuthPolicy", policy.name, policy.namespace, tenant, policy.annotations, spec)


def maas_subscription(subscription: SubscriptionConfig, identity: Identity) -> dict[str, Any]:
    """The mirror CRD has no `unlimited` and no `rateLimitIdentity`: unlimited references carry `UNLIMITED_RATE`
    and are listed in an annotation; the effective identity is published in the status, where maas-api reads it,
    and in an annotation, where it survives a CRD that prunes that status field (the sticky stamp)."""
    refs = sorted(subscription.modelRefs, key=POSITION)
    return _subscription_body(subscription, refs, list(map(_subscription_model_ref, refs)), identity)


def _subscription_body(
    subscription: SubscriptionConfig,
    refs: Sequence[SubscriptionModelRef],
    entries: list[dict[str, Any]],
    identity: Identity,
) -> dict[str, Any]:
    """`maas_subscription`, with its references sorted (`POSITION`) once for the body and the status, and their
    `spec.modelRefs` entries (`_subscription_model_ref`) given: publish shares one per distinct reference."""
    spec: dict[str, Any] = {
        "owner": _subjects(subscription.owner),
        "modelRefs": entries,
        "priority": subscription.priority,
    }
    if subscription.tokenMetadata is not None:
        spec["tokenMetadata"] = _metadata(subscription.tokenMetadata)
    annotations = {**subscription.annotations, naming.RATE_LIMIT_IDENTITY_ANNOTATION: identity}
    unlimited = [r.key for r in refs if r.unlimited]
    if unlimited:
        annotations[naming.UNLIMITED_MODELS_ANNOTATION] = ",".join(unlimited)
    tenant = _tenant_of_namespace(subscription.namespace)
    return _maas_object("MaaSSubscription", subscription.name, subscription.namespace, tenant, annotations, spec)


def _subscription_model_ref(ref: SubscriptionModelRef) -> dict[str, Any]:
    rates = [UNLIMITED_RATE] if ref.unlimited else [{"limit": n, "window": w} for n, w in rates_of(ref)]
    entry: dict[str, Any] = {"name": ref.name, "namespace": ref.namespace, "tokenRateLimits": rates}
    if ref.billingRate is not None:
        entry["billingRate"] = {"perToken": ref.billingRate.perToken}
    return entry


def _maas_object(kind: str, name: str, namespace: str, tenant: str, annotations: dict, spec: dict) -> dict[str, Any]:
    return k8s_object(
        naming.MAAS_API_VERSION,
        kind,
        name,
        namespace,
        labels=naming.tenant_labels(tenant),
        annotations=dict(sorted(annotations.items())),
        spec=spec,
    )


def _tenant_of_namespace(namespace: str) -> str:
    """Auth policies and subscriptions live in their tenant's namespace (checked by the configuration)."""
    return namespace.removeprefix(naming.TENANT_NAMESPACE_PREFIX)


def _model_refs(refs: Iterable[ModelKey]) -> list[dict[str, str]]:
    return [{"name": r.name, "namespace": r.namespace} for r in sorted(refs, key=POSITION)]


def _subjects(subjects: Subjects) -> dict[str, list]:
    """Both lists always present: the CRD's CEL rule reads `size(self.groups)` and `size(self.users)`."""
    return {
        "groups": [{"name": name} for name in sorted({g.name for g in subjects.groups})],
        "users": sorted(set(subjects.users)),
    }


def _metadata(metadata: Metadata) -> dict[str, Any]:
    fields = {"organizationId": metadata.organizationId, "costCenter": metadata.costCenter}
    result: dict[str, Any] = {key: value for key, value in fields.items() if value is not None}
    if metadata.labels:
        result["labels"] = dict(sorted(metadata.labels.items()))
    return result


# ------------------------------------------------------------------------------------------------ statuses


def _governed_models(config: MaasConfig) -> dict[str, set[str]]:
    """Per model key, which of `subscription` and `authPolicy` reference it (seed 004 governance)."""
    governed: dict[str, set[str]] = {}
    for what, entries in (("subscription", config.subscriptions), ("authPolicy", config.authPolicies)):
        for key in {ref.key for entry in entries for ref in entry.modelRefs}:
            governed.setdefault(key, set()).add(what)
    return governed


def model_facts(config: MaasConfig, model: ModelConfig, governed_by: set[str]) -> ModelFacts:
    """What the status of `model` depends on in configuration (the cluster supplies the rest)."""
    route = route_of(config, model)
    return ModelFacts(
        name=model.name,
        namespace=model.namespace,
        kind=model.modelRef.kind,
        backend=model.modelRef.name,
        route_name=route.name,
        route_namespace=route.namespace,
        gateway_name=route.gateway_name,
        gateway_namespace=route.gateway_namespace,
        route_hostnames=route.hostnames,
        gateway_hostname=tenant_of(config, model).gateway_hostname(config.platform),
        endpoint_override=model.endpointOverride,
        alias=model.modelAlias,
        governed_by=tuple(sorted(governed_by)),
    )


class _Reference(NamedTuple):
    """What one model reference contributes to a subscription's CR, its status and that status's write."""

    entry: dict[str, Any]  # in `spec.modelRefs` (`_subscription_model_ref`)
    state: dict[str, Any]  # in `status.modelRefStatuses` (`_reference_state`)
    unusable: str  # why its model cannot serve, '' if it can (`_reference_state`)
    limit: dict[str, Any] | None  # in `status.tokenRateLimitStatuses`; None: the model is not configured
    policy: str | None  # the model's TokenRateLimitPolicy, which the write waits for; None: not configured


class _References:
    """Each distinct model reference's `_Reference`, built once per plan and shared by every subscription that
    lists it: ten thousand subscriptions spell a few thousand distinct references (`config.types.validated_once`
    makes identical ones one object, which is the key: looked up by identity, without hashing its fields; the
    configuration keeps it alive). Sharing parts between bodies is safe because no rule changes a body once
    built: `Desired.annotated` copies the metadata it changes, and the other rules replace options, never body
    parts."""

    def __init__(self, config: MaasConfig, phases: Mapping[str, str], targets: _Targets) -> None:
        self._models = config.models_by_key
        self._phases = phases  # each configured model's phase
        self._policies = targets.model_policies
        self._found: dict[int, _Reference] = {}

    def of(self, ref: SubscriptionModelRef) -> _Reference:
        found = self._found.get(id(ref))
        if found is None:
            found = self._found[id(ref)] = self._reference(ref)
        return found

    def _reference(self, ref: SubscriptionModelRef) -> _Reference:
        state, unusable = _reference_state(ref, self._phases.get(ref.key))
        model = self._models.get(ref.key)
        if model is None:
            return _Reference(_subscription_model_ref(ref), state, unusable, None, None)
        policy = self._policies[ref.key][TRLP]
        return _Reference(_subscription_model_ref(ref), state, unusable, _limit_status(model), policy)


def _reference_state(ref: ModelKey, phase: str | None) -> tuple[dict[str, Any], str]:
    """A reference's entry in `modelRefStatuses`, and why its model cannot serve ('' if it can). `phase`: the
    model's, None when it is not configured. A model that is not configured, or whose backend is `Failed`, cannot
    serve; a `Pending` model still can once it is ready (its policies are in place already)."""
    key = ref.key
    if phase is None:
        reason, message, unusable = "NotFound", f"model {key} is not in maas:models", f"{key} (not in maas:models)"
    elif phase == "Failed":
        reason, message, unusable = "BackendNotReady", f"model {key} is Failed", f"{key} (Failed)"
    else:
        return {"name": ref.name, "namespace": ref.namespace, "ready": True, "reason": "Valid"}, ""
    entry = {"name": ref.name, "namespace": ref.namespace, "ready": False, "reason": reason, "message": message}
    return entry, unusable


# Shared by every status whose models can all serve: no rule changes a status once built (`_References`).
_ACTIVE = ("Active", condition("Ready", "True", "Reconciled", "all referenced models exist"))


def _readiness(unusable: list[str], count: int) -> tuple[str, dict[str, str]]:
    """Phase and Ready condition of a subscription or auth policy (upstream vector 11) with `count` references, of
    which `unusable` (in the order of the CR, `POSITION`) cannot serve."""
    if not unusable:
        return _ACTIVE
    text = f"models that cannot serve: {', '.join(unusable)}"
    if len(unusable) < count:
        return "Degraded", condition("Ready", "False", "PartialFailure", text)
    return "Failed", condition("Ready", "False", "ReconcileFailed", text)


def subscription_status(
    config: MaasConfig, subscription: SubscriptionConfig, phases: dict[str, str], identity: Identity
) -> dict[str, Any]:
    """Phase by unusable models, one ready token-limit entry per configured model, and the rate-limit identity.

    `rateLimitIdentity` is a 3.6 status field (seed 002) that the mirror CRD lacks; the API server prunes it there.
    """
    references = _References(config, phases, _Targets.of(config))
    return _subscription_status(list(map(references.of, sorted(subscription.modelRefs, key=POSITION))), identity)


def _subscription_status(parts: Sequence[_Reference], identity: Identity) -> dict[str, Any]:
    """`subscription_status`, from the `_Reference` of each of its references, in the order of the CR."""
    phase, ready = _readiness([part.unusable for part in parts if part.unusable], len(parts))
    return {
        "phase": phase,
        "conditions": [ready],
        "modelRefStatuses": [part.state for part in parts],
        "tokenRateLimitStatuses": [part.limit for part in parts if part.limit is not None],
        "rateLimitIdentity": identity,
    }


def _limit_status(model: ModelConfig) -> dict[str, Any]:
    """Ready: the status is written after the model's TokenRateLimitPolicy (`_Reference.policy`)."""
    return {
        "model": model.name,
        "name": naming.trlp_name(model.name),
        "namespace": model.route_namespace,
        "ready": True,
        "reason": "Reconciled",
    }


def auth_policy_status(policy: AuthPolicyConfig, phases: dict[str, str]) -> dict[str, Any]:
    states = [_reference_state(ref, phases.get(ref.key)) for ref in sorted(policy.modelRefs, key=POSITION)]
    phase, ready = _readiness([unusable for _, unusable in states if unusable], len(states))
    return {"phase": phase, "conditions": [ready]}


# --------------------------------------------------------------------------------------- dependencies, outputs


def _gateway_auth_policy(config: MaasConfig, gateway: str) -> str:
    name = naming.gateway_auth_policy_name(gateway, config.platform.gateway.name)
    return object_identity("AuthPolicy", config.platform.gateway.namespace, name)


def _model_policies(model: ModelConfig) -> tuple[str, str]:
    """The identities of a model's TokenRateLimitPolicy (`TRLP`) and AuthPolicy (`AUTH`)."""
    return (
        object_identity("TokenRateLimitPolicy", model.route_namespace, naming.trlp_name(model.name)),
        object_identity("AuthPolicy", model.route_namespace, naming.model_auth_policy_name(model.name)),
    )


TRLP, AUTH = 0, 1


def _model_dependencies(config: MaasConfig, model: ModelConfig) -> list[str]:
    route = route_of(config, model)
    return [
        object_identity("HTTPRoute", route.namespace, route.name),
        _gateway_auth_policy(config, route.gateway_name),
        *_model_policies(model),
    ]


@dataclass(frozen=True)
class _Targets:
    """The policies a status describes, looked up once per tenant namespace and model rather than per entry."""

    gateway_policies: dict[str, str]  # tenant namespace -> its gateway AuthPolicy
    model_policies: dict[str, tuple[str, str]]  # model key -> `_model_policies`

    @classmethod
    def of(cls, config: MaasConfig) -> _Targets:
        gateways: dict[str, str] = {}
        for tenant in config.tenants:
            gateways.setdefault(tenant.namespace, _gateway_auth_policy(config, tenant.gateway_name(config.platform)))
        return cls(gateways, {model.key: _model_policies(model) for model in config.models})

    def auth_policy_dependencies(self, policy: AuthPolicyConfig) -> list[str]:
        """The tenant's gateway AuthPolicy, then the AuthPolicy of each configured model the policy references
        (`status_write` sorts them)."""
        models = [self.model_policies.get(ref.key) for ref in policy.modelRefs]
        return [self.gateway_policies[policy.namespace], *[policies[AUTH] for policies in models if policies]]


def _model_outputs(model: ModelConfig, status: dict[str, Any]) -> dict[str, Any]:
    outputs: dict[str, Any] = {"endpoint": status["endpoint"], "phase": status["phase"]}
    details = model_details(model.annotations)
    if details is not None:
        outputs["modelDetails"] = details
    return outputs


def _no_endpoint_warning(model: ModelConfig) -> str:
    return (
        f"model {model.key}: no endpoint can be derived from configuration, so maas-api lists it without a URL; "
        "set route.hostnames, the tenant's gateway.hostname, platform.gateway.hostname or endpointOverride"
    )
