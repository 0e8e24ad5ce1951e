"""The MaaS custom resources maas-api reads, and the status this program publishes for them.

maas-api lists a model only when `MaaSModelRef.status.phase` is `Ready` and selects a subscription only when
`MaaSSubscription.status.phase` is `Active` or `Degraded` (`upstream-platform.md` section 9). Without a
maas-controller nobody else writes that status, so with `controllerMode: absent` the program computes it from the
configuration (the phase rules of seed 004 and `upstream-policies.md` 3.4) and writes it after the policies it
describes. Conditions carry no `lastTransitionTime` here: the status writer stamps it, so renders stay stable.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

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
    references = _References(phases, _limit_statuses(config))
    for policy in sorted(config.authPolicies, key=lambda p: p.key):
        owner = ("AuthPolicy", policy.key)
        body, status = maas_auth_policy(policy), _auth_policy_status(policy, references)
        result.objects[owner] = [body]
        result.outputs[owner] = {"phase": status["phase"]}
        if with_status:
            result.statuses[owner] = [status_write(body, status, targets.dependencies(policy, AUTH))]
    for subscription in sorted(config.subscriptions, key=lambda s: s.key):
        owner = ("Subscription", subscription.key)
        identity, refs = identities[subscription.key], sorted(subscription.modelRefs, key=POSITION)
        body = _subscription_body(subscription, refs, identity, references.entry)
        status = _subscription_status(refs, references, identity)
        flow = flow_control(config, subscription, observed)  # issue 22: objectives under their models' owners
        if flow.statuses:
            status["flowControlStatuses"] = flow.statuses
        for key, objectives in flow.objectives.items():
            result.objects.setdefault(("Model", key), []).extend(objectives)
        result.warnings.extend(flow.warnings)
        result.objects[owner] = [body]
        result.outputs[owner] = {"phase": status["phase"], "rateLimitIdentity": identity}
        if with_status:
            dependencies = [*targets.dependencies(subscription, TRLP), *flow.identities]
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
    return _subscription_body(subscription, refs, identity, _subscription_model_ref)


def _subscription_body(
    subscription: SubscriptionConfig,
    refs: Sequence[SubscriptionModelRef],
    identity: Identity,
    entry: Callable[[SubscriptionModelRef], dict[str, Any]],
) -> dict[str, Any]:
    """`maas_subscription`, with its references sorted (`POSITION`) once for the body and the status, and each
    reference's `spec.modelRefs` entry from `entry` (`_subscription_model_ref`, or the plan's shared one)."""
    spec: dict[str, Any] = {
        "owner": _subjects(subscription.owner),
        "modelRefs": list(map(entry, refs)),
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
        for entry in entries:
            for ref in entry.modelRefs:
                governed.setdefault(ref.key, set()).add(what)
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


class _References:
    """The parts of the auth policies' and subscriptions' CRs and statuses that depend on one model reference alone,
    built once per distinct reference and shared by every body that lists it: ten thousand subscriptions spell a
    few thousand distinct references (`config.types.validated_once` makes identical ones one object, whose value
    keys `entries`). Sharing is safe because no rule changes a body once built: `Desired.annotated` copies the
    metadata it changes, and the other rules replace options, never body parts."""

    def __init__(self, phases: Mapping[str, str], limits: Mapping[str, dict[str, Any]]) -> None:
        self.phases = phases  # each configured model's phase
        self.limits = limits  # `_limit_statuses`
        self._entries: dict[SubscriptionModelRef, dict[str, Any]] = {}
        self._states: dict[str, tuple[dict[str, Any], str]] = {}

    def entry(self, ref: SubscriptionModelRef) -> dict[str, Any]:
        """`_subscription_model_ref(ref)`, the CR's entry."""
        found = self._entries.get(ref)
        if found is None:
            found = self._entries[ref] = _subscription_model_ref(ref)
        return found

    def state(self, ref: ModelKey) -> tuple[dict[str, Any], str]:
        """`_reference_state` of the reference's model: its status entry, and why it cannot serve ('' if it can)."""
        found = self._states.get(ref.key)
        if found is None:
            found = self._states[ref.key] = _reference_state(ref, self.phases.get(ref.key))
        return found


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


def _references_status(refs: Sequence[ModelKey], references: _References) -> tuple[str, dict[str, str], list]:
    """Phase, Ready condition and per-reference entries of a subscription or auth policy (upstream vector 11), for
    `refs` in the order of the CR (`POSITION`)."""
    states = list(map(references.state, refs))
    unusable = [why for _, why in states if why]
    entries = [entry for entry, _ in states]
    if not unusable:
        return "Active", condition("Ready", "True", "Reconciled", "all referenced models exist"), entries
    text = f"models that cannot serve: {', '.join(unusable)}"
    if len(unusable) < len(refs):
        return "Degraded", condition("Ready", "False", "PartialFailure", text), entries
    return "Failed", condition("Ready", "False", "ReconcileFailed", text), entries


def subscription_status(
    config: MaasConfig, subscription: SubscriptionConfig, phases: dict[str, str], identity: Identity
) -> dict[str, Any]:
    """Phase by unusable models, one ready token-limit entry per configured model, and the rate-limit identity.

    `rateLimitIdentity` is a 3.6 status field (seed 002) that the mirror CRD lacks; the API server prunes it there.
    """
    refs = sorted(subscription.modelRefs, key=POSITION)
    return _subscription_status(refs, _References(phases, _limit_statuses(config)), identity)


def _subscription_status(
    refs: Sequence[SubscriptionModelRef], references: _References, identity: Identity
) -> dict[str, Any]:
    """`subscription_status`, with the parts of each distinct reference built once for every subscription."""
    phase, ready, entries = _references_status(refs, references)
    limits = references.limits
    return {
        "phase": phase,
        "conditions": [ready],
        "modelRefStatuses": entries,
        "tokenRateLimitStatuses": [limits[ref.key] for ref in refs if ref.key in limits],
        "rateLimitIdentity": identity,
    }


def _limit_statuses(config: MaasConfig) -> dict[str, dict[str, Any]]:
    """Each configured model's `_limit_status`, by model key: shared by every status that lists it."""
    return {key: _limit_status(model) for key, model in config.models_by_key.items()}


def _limit_status(model: ModelConfig) -> dict[str, Any]:
    """Ready: the status is written after the model's TokenRateLimitPolicy (`_Targets.dependencies`)."""
    return {
        "model": model.name,
        "name": naming.trlp_name(model.name),
        "namespace": model.route_namespace,
        "ready": True,
        "reason": "Reconciled",
    }


def _auth_policy_status(policy: AuthPolicyConfig, references: _References) -> dict[str, Any]:
    phase, ready, _ = _references_status(sorted(policy.modelRefs, key=POSITION), references)
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

    def dependencies(self, entry: AuthPolicyConfig | SubscriptionConfig, which: int) -> list[str]:
        """The tenant's gateway AuthPolicy, then policy `which` of each configured model the entry references."""
        models = [self.model_policies.get(key) for key in sorted([ref.key for ref in entry.modelRefs])]
        return [self.gateway_policies[entry.namespace], *[policies[which] for policies in models if policies]]


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
