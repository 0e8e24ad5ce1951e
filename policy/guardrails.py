"""Organisation guardrails over the Kubernetes resources the MaaS program registers, as Pulumi policies.

The program keeps these rules when it builds its plan; the pack is the independent check an organisation runs at
`pulumi preview --policy-pack policy/`, so that a change to the program, a resource written by hand into the same
stack, or configuration that turns a safety off (`platform.exemptModelDiscovery: false`) is stopped in review.
Each policy reads only what the engine passes it: a resource's type, its inputs (`props`) and its options.
A batch of subscriptions (`platform.subscriptionBatches`) is read as the objects it holds (`kubernetes_objects`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import celpy
from pulumi_policy import (
    EnforcementLevel,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from maas import naming

# Where each tenant's MaaS resources live: their namespace is the tenant's namespace (maas-api scopes them so).
TENANT_SCOPED_KINDS = frozenset({"MaaSSubscription", "MaaSAuthPolicy", "MaasTenantConfig"})
# A model's Kuadrant policies list the entries they aggregate; those entries must be of the model's tenant.
SOURCES_ANNOTATIONS = {
    "TokenRateLimitPolicy": naming.SUBSCRIPTIONS_ANNOTATION,
    "AuthPolicy": naming.AUTH_POLICIES_ANNOTATION,
}
# Who answers for an object Pulumi no longer changes: a label or annotation naming its owner.
OWNER_LABELS = (naming.MANAGED_BY,)
OWNER_ANNOTATIONS = (naming.HANDED_OVER_ANNOTATION,)
# The organisation's rule, written here rather than taken from the program it checks, so that a change of the
# program's exemption fails the guardrail instead of moving it (reference/ratelimit.md, "Predicates").
DISCOVERY_EXEMPTION = '!request.url_path.endsWith("/v1/models")'
# Upstream's spelling of the exemption: `request.path` carries the query string, so `?x=/v1/models` escapes it.
QUERY_PATH_EXEMPTION = '!request.path.endsWith("/v1/models")'
LIMIT_SECTIONS = (("limits",), ("defaults", "limits"), ("overrides", "limits"))
# A batch of objects (`platform.subscriptionBatches`, `maas/deploy/object_batch.py`): a dynamic resource whose
# `objects` input is one JSON string `{key: {"resource": plural, "body": object}}`.
DYNAMIC_TYPE = "pulumi-python:dynamic:Resource"

_CEL = celpy.Environment()


# ---------------------------------------------------------------------------------------------- reading resources


def kubernetes_kind(resource_type: str) -> str | None:
    """`kubernetes:kuadrant.io/v1alpha1:TokenRateLimitPolicy` -> `TokenRateLimitPolicy`; None for other types."""
    parts = resource_type.split(":")
    return parts[2] if len(parts) == 3 and parts[0] == "kubernetes" else None


def kubernetes_objects(resource_type: str, props: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any]]]:
    """(kind, object) of every Kubernetes object a resource registers: itself, for a pulumi-kubernetes resource;
    each of its objects, for a batch, so that batching hides no object from a guardrail."""
    kind = kubernetes_kind(resource_type)
    if kind is not None:
        return [(kind, props)]
    objects = props.get("objects") if resource_type == DYNAMIC_TYPE else None
    if not isinstance(objects, str):
        return []
    bodies = [_mapping(_mapping(entry).get("body")) for entry in _mapping(json.loads(objects)).values()]
    return [(body["kind"], body) for body in bodies if isinstance(body.get("kind"), str)]


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _sequence(value: Any) -> Sequence[Any]:
    """A list input: the engine passes lists as read-only Sequence proxies (pulumi_policy.proxy), never `list`."""
    return value if isinstance(value, Sequence) and not isinstance(value, str) else ()


def _metadata(props: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(props.get("metadata"))


def _labels(props: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_metadata(props).get("labels"))


def _annotations(props: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_metadata(props).get("annotations"))


def label_of(kind: str, props: Mapping[str, Any]) -> str:
    """`Kind ns/name` (`Kind name` when cluster-scoped), as the program's own messages name objects."""
    metadata = _metadata(props)
    namespace, name = metadata.get("namespace"), metadata.get("name")
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


# --------------------------------------------------------------------------------- no cross-namespace targets


def _target_refs(spec: Any) -> Iterator[tuple[str, Mapping[str, Any]]]:
    spec = _mapping(spec)
    if isinstance(spec.get("targetRef"), Mapping):
        yield "spec.targetRef", spec["targetRef"]
    for index, ref in enumerate(_sequence(spec.get("targetRefs"))):
        if isinstance(ref, Mapping):
            yield f"spec.targetRefs[{index}]", ref


def validate_targets(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    """A policy in namespace X targets a route or Gateway in X only."""
    for kind, props in kubernetes_objects(args.resource_type, args.props):
        namespace = _metadata(props).get("namespace")
        for path, ref in _target_refs(props.get("spec")):
            target = ref.get("namespace")
            if target is not None and target != namespace:
                report_violation(
                    f"{label_of(kind, props)}: {path} targets {ref.get('kind')} {target}/{ref.get('name')} in "
                    f"another namespace; a policy may target only its own namespace ({namespace}): drop "
                    f"{path}.namespace and put the policy beside its target",
                    None,
                )


# ------------------------------------------------------------------------------------- tenant labels agree


def validate_tenant_labels(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    """`maas.opendatahub.io/tenant-namespace` is the namespace of the tenant the object is labelled with, and the
    object's own namespace for what lives in a tenant's namespace (its Namespace, MaaS subscriptions, auth policies
    and tenant config)."""
    for kind, props in kubernetes_objects(args.resource_type, args.props):
        _tenant_labels_agree(kind, props, report_violation)


def _tenant_labels_agree(kind: str, props: Mapping[str, Any], report_violation: ReportViolation) -> None:
    tenant_namespace = _labels(props).get(naming.TENANT_NAMESPACE_LABEL)
    if tenant_namespace is None:
        return
    tenant = _labels(props).get(naming.TENANT_NAME_LABEL)
    where = f"{label_of(kind, props)}: label {naming.TENANT_NAMESPACE_LABEL}={tenant_namespace}"
    if isinstance(tenant, str) and tenant_namespace != naming.tenant_namespace(tenant):
        report_violation(
            f"{where} is not the namespace of tenant {tenant} ({naming.tenant_namespace(tenant)}); one of the two "
            "tenant labels names another tenant",
            None,
        )
    home = _home_namespace(kind, props)
    if home is not None and tenant_namespace != home:
        report_violation(
            f"{where} does not agree with its namespace {home}: it lives in one tenant's namespace and claims another",
            None,
        )


def _home_namespace(kind: str, props: Mapping[str, Any]) -> Any:
    """The tenant namespace an object of a tenant-scoped kind is in (a tenant's Namespace: itself); else None."""
    if kind == "Namespace":
        return _metadata(props).get("name")
    return _metadata(props).get("namespace") if kind in TENANT_SCOPED_KINDS else None


# ------------------------------------------------------------------------------- no cross-tenant references


def validate_tenancy(args: StackValidationArgs, report_violation: ReportViolation) -> None:
    """Every model a MaaS subscription or auth policy names, and every entry a model's Kuadrant policy aggregates,
    belongs to one tenant: the tenant namespace on the model's MaaSModelRef."""
    owners = _model_tenants(args)
    for resource in args.resources:
        for kind, props in kubernetes_objects(resource.resource_type, resource.props):
            for problem in _foreign_models(kind, props, owners) + _foreign_sources(kind, props, owners):
                report_violation(problem, resource.urn)


def _model_tenants(args: StackValidationArgs) -> dict[str, str]:
    """`model-namespace/model` -> the tenant namespace its MaaSModelRef is labelled with."""
    owners = {}
    for resource in args.resources:
        for kind, props in kubernetes_objects(resource.resource_type, resource.props):
            tenant_namespace = _labels(props).get(naming.TENANT_NAMESPACE_LABEL)
            if kind == "MaaSModelRef" and isinstance(tenant_namespace, str):
                metadata = _metadata(props)
                owners[f"{metadata.get('namespace')}/{metadata.get('name')}"] = tenant_namespace
    return owners


def _foreign_models(kind: str, props: Mapping[str, Any], owners: Mapping[str, str]) -> list[str]:
    if kind not in ("MaaSSubscription", "MaaSAuthPolicy"):
        return []
    namespace = _metadata(props).get("namespace")
    problems = []
    for index, ref in enumerate(_sequence(_mapping(props.get("spec")).get("modelRefs"))):
        model = f"{_mapping(ref).get('namespace', namespace)}/{_mapping(ref).get('name')}"
        owner = owners.get(model)
        if owner is not None and owner != namespace:
            problems.append(
                f"{label_of(kind, props)}: spec.modelRefs[{index}] is model {model} of the tenant in {owner}; a "
                f"{kind} of the tenant in {namespace} may reach only its own tenant's models"
            )
    return problems


def _foreign_sources(kind: str, props: Mapping[str, Any], owners: Mapping[str, str]) -> list[str]:
    key = SOURCES_ANNOTATIONS.get(kind)
    labels = _labels(props)
    model = f"{labels.get(naming.MODEL_NAMESPACE_LABEL)}/{labels.get(naming.MODEL_LABEL)}"
    owner = owners.get(model)
    sources = _annotations(props).get(key) if key else None
    if owner is None or not isinstance(sources, str):
        return []
    foreign = [source for source in sources.split(",") if source and source.partition("/")[0] != owner]
    return [
        f"{label_of(kind, props)}: {key} lists {source}, which is not of model {model}'s tenant ({owner}): another "
        "tenant's entry reaches this model"
        for source in foreign
    ]


# ------------------------------------------------------------------ token limits exempt model discovery


def validate_discovery_exemption(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    """A model's TokenRateLimitPolicy (on an HTTPRoute) exempts model listing from every limit, on the query-free
    path: reference/ratelimit.md "Predicates"."""
    for kind, props in kubernetes_objects(args.resource_type, args.props):
        spec = _mapping(props.get("spec"))
        if kind != "TokenRateLimitPolicy" or _mapping(spec.get("targetRef")).get("kind") != "HTTPRoute":
            continue  # the Gateway's default-deny policy: its own path exemptions
        where = label_of(kind, props)
        for path, limit in _limits(spec):
            problem = _exemption_problem(_predicates(limit))
            if problem:
                report_violation(f"{where}: {path} {problem}", None)


def _limits(spec: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for section in LIMIT_SECTIONS:
        limits: Any = spec
        for key in section:
            limits = _mapping(limits).get(key)
        for name, limit in sorted(_mapping(limits).items()):
            yield f"spec.{'.'.join(section)}.{name}", _mapping(limit)


def _predicates(limit: Mapping[str, Any]) -> list[str]:
    items = _sequence(limit.get("when"))
    return [item["predicate"] for item in items if isinstance(item, Mapping) and isinstance(item.get("predicate"), str)]


def _exemption_problem(predicates: list[str]) -> str | None:
    """Why a limit (whose `when` predicates all must hold) still applies to `/v1/models`; None when it does not."""
    try:
        conjuncts = [conjunct for predicate in predicates for conjunct in top_level_conjuncts(predicate)]
    except celpy.CELParseError as error:
        return f"has a predicate that is not CEL ({' '.join(str(error).split())})"
    if conjunct_tree(DISCOVERY_EXEMPTION) in conjuncts:
        return None
    if conjunct_tree(QUERY_PATH_EXEMPTION) in conjuncts:
        return (
            "exempts model discovery on request.path, which includes the query string, so "
            f"`...?x=/v1/models` escapes the limit; write `&& {DISCOVERY_EXEMPTION}`"
        )
    return (
        f"applies to model discovery: no `when` predicate ends in `&& {DISCOVERY_EXEMPTION}` "
        "(set platform.exemptModelDiscovery: true)"
    )


def top_level_conjuncts(predicate: str) -> list[Any]:
    """The parse trees of a predicate's top-level `&&` operands: each must hold for the predicate to hold."""
    tree = _CEL.compile(predicate)
    if len(tree.children) != 1:  # `a ? b : c`
        return [tree]
    disjunction = tree.children[0]
    if len(disjunction.children) != 1:  # `a || b`: no operand must hold
        return [tree]
    conjuncts = []
    node = disjunction.children[0]
    while len(node.children) == 2:  # conditionaland: [left conditionaland, right relation]
        conjuncts.append(node.children[1])
        node = node.children[0]
    conjuncts.append(node.children[0])
    return conjuncts


@functools.cache
def conjunct_tree(text: str) -> Any:
    (conjunct,) = top_level_conjuncts(text)
    return conjunct


# ------------------------------------------------------------------------------- unmanaged objects have an owner


def validate_unmanaged_owner(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    """An object Pulumi neither changes nor deletes names who answers for it."""
    ignored = set(args.opts.ignore_changes or ())
    for kind, props in kubernetes_objects(args.resource_type, args.props):
        why = _unmanaged_because(props, ignored)
        labels, annotations = _labels(props), _annotations(props)
        if (
            why is None
            or any(labels.get(k) for k in OWNER_LABELS)
            or any(annotations.get(k) for k in OWNER_ANNOTATIONS)
        ):
            continue
        owners = [*(f"label {key}" for key in OWNER_LABELS), *(f"annotation {key}" for key in OWNER_ANNOTATIONS)]
        report_violation(
            f"{label_of(kind, props)} is unmanaged ({why}) and names no owner; set one of: {', '.join(owners)}", None
        )


def _unmanaged_because(props: Mapping[str, Any], ignored: set[str]) -> str | None:
    """Why Pulumi leaves an object alone; `ignored`: its resource's `ignore_changes` (a batch's objects have none)."""
    if _annotations(props).get(naming.CONTROLLER_MANAGED_ANNOTATION) == "false":
        return f'annotation {naming.CONTROLLER_MANAGED_ANNOTATION}: "false"'
    if props and set(props) <= ignored:
        return "maas:unmanaged: Pulumi ignores changes to every field"
    return None


POLICIES = [
    ResourceValidationPolicy(
        name="maas-targets-in-own-namespace",
        description="A policy targets a route or Gateway in its own namespace only.",
        validate=validate_targets,
    ),
    ResourceValidationPolicy(
        name="maas-tenant-labels-agree",
        description="Tenant labels name one tenant, and the namespace of what lives in a tenant's namespace.",
        validate=validate_tenant_labels,
    ),
    StackValidationPolicy(
        name="maas-no-cross-tenant-references",
        description="Subscriptions, auth policies and a model's Kuadrant policies stay within the model's tenant.",
        validate=validate_tenancy,
    ),
    ResourceValidationPolicy(
        name="maas-token-limits-exempt-model-discovery",
        description='Every token limit of a model carries `!request.url_path.endsWith("/v1/models")`.',
        validate=validate_discovery_exemption,
    ),
    ResourceValidationPolicy(
        name="maas-unmanaged-has-owner",
        description="An object Pulumi neither changes nor deletes carries an owner label or annotation.",
        validate=validate_unmanaged_owner,
    ),
]
ENFORCEMENT = EnforcementLevel.MANDATORY
