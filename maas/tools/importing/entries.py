"""`maas:models`, `maas:authPolicies` and `maas:subscriptions` from MaaSModelRef, ExternalModel, MaaSAuthPolicy and
MaaSSubscription CRs, in the configuration's spelling (which is the CRDs' wherever they have the field)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ... import naming
from ...observe import Observed
from ...plan.models.resources import UNLIMITED_RATE
from ...plan.policies.identity import live_identity
from .common import (
    Object,
    Report,
    describe,
    handed_over,
    key_of,
    listed,
    metadata,
    model_keys,
    picked,
    report_unknown_keys,
    spec_of,
    subjects,
    user_annotations,
)

BACKENDS = ("LLMInferenceService", "ExternalModel")
EXTERNAL_FIELDS = ("provider", "targetModel", "endpoint", "credentialRef")
METADATA_FIELDS = ("organizationId", "costCenter", "labels")
OPT_OUT_KINDS = ("TokenRateLimitPolicy", "AuthPolicy")


# -------------------------------------------------------------------------------------------------------- models


def import_models(observed: Observed, report: Report) -> list[dict[str, Any]]:
    models, backends = [], set()
    for ref in listed(observed, "MaaSModelRef", report):
        entry = _model(observed, ref, report)
        if entry is not None:
            models.append(entry)
            backends.add(naming.qualified(entry["namespace"], entry["modelRef"]["name"]))
    for external in listed(observed, "ExternalModel", report):
        if key_of(external) not in backends:
            report.add(f"{describe(external)} is not the backend of any imported MaaSModelRef, so it is not imported")
    return models


def _model(observed: Observed, ref: Object, report: Report) -> dict[str, Any] | None:
    spec, meta = spec_of(ref), metadata(ref)
    report_unknown_keys(ref, spec, ("modelRef", "tenantRef", "endpointOverride"), "spec", report)
    backend = picked(ref, spec.get("modelRef"), ("kind", "name"), "spec.modelRef", report)
    if backend.get("kind") not in BACKENDS:
        report.add(
            f"{describe(ref)}: its backend kind {backend.get('kind')!r} is not one this program can serve "
            f"({' or '.join(BACKENDS)}), so the model is not imported"
        )
        return None
    entry: dict[str, Any] = {"name": meta["name"], "namespace": meta["namespace"]}
    if spec.get("tenantRef") and spec["tenantRef"] != naming.DEFAULT_TENANT:
        entry["tenant"] = spec["tenantRef"]
    entry["modelRef"] = backend
    if backend["kind"] == "LLMInferenceService":
        entry.update(_route(ref, backend["name"]))
    if spec.get("endpointOverride"):
        entry["endpointOverride"] = spec["endpointOverride"]
    annotations = user_annotations(ref)
    if annotations:
        entry["annotations"] = annotations
    if backend["kind"] == "ExternalModel":
        external = _external(observed, ref, backend["name"], report)
        if external is None:
            return None
        entry["external"] = external
    return entry


def _route(ref: Object, backend: str) -> dict[str, Any]:
    """The HTTPRoute the controller found (its status), when it is not KServe's `{backend}-kserve-route` beside
    the model."""
    status = ref.get("status") or {}
    name, namespace = status.get("httpRouteName"), status.get("httpRouteNamespace")
    model_namespace = metadata(ref)["namespace"]
    if not name or (name == naming.llmisvc_route_name(backend) and namespace in (None, model_namespace)):
        return {}
    route = {"name": name}
    if namespace and namespace != model_namespace:
        route["namespace"] = namespace
    return {"route": route}


def _external(observed: Observed, ref: Object, name: str, report: Report) -> dict[str, Any] | None:
    """The maas.opendatahub.io ExternalModel behind a model; port and TLS are its upstream annotations."""
    namespace = metadata(ref)["namespace"]
    found = observed.lookup("ExternalModel", namespace, name)
    if found.state != "present":
        why = "was not observed" if found.state == "unknown" else "does not exist"
        report.add(
            f"{describe(ref)}: its backend, maas.opendatahub.io ExternalModel {namespace}/{name}, {why}; an "
            "inference.opendatahub.io ExternalModel cannot be expressed by this program, so the model is not "
            "imported"
        )
        return None
    external = found.object
    spec = spec_of(external)
    result = picked(external, spec, EXTERNAL_FIELDS, "spec", report)
    if "credentialRef" in result:
        result["credentialRef"] = picked(external, result["credentialRef"], ("name",), "spec.credentialRef", report)
    annotations = metadata(external).get("annotations") or {}
    port = annotations.get(naming.EXTERNAL_PORT_ANNOTATION)
    if port is not None:
        if port.isascii() and port.isdigit():
            result["port"] = int(port)
        else:
            report.add(f"{describe(external)}: annotation {naming.EXTERNAL_PORT_ANNOTATION} is {port!r}, not a port")
    tls = annotations.get(naming.EXTERNAL_TLS_ANNOTATION)
    if tls == "false":
        result["tls"] = False
    elif tls not in (None, "true"):
        report.add(f"{describe(external)}: annotation {naming.EXTERNAL_TLS_ANNOTATION} is {tls!r}, not true or false")
    return result


# ------------------------------------------------------------------------------------- auth policies, subscriptions


def _in_tenant_namespace(obj: Object, namespaces: Collection[str], report: Report) -> bool:
    if metadata(obj)["namespace"] in namespaces:
        return True
    report.add(
        f"{describe(obj)} is outside every tenant namespace (the controller ignores it too), so it is not imported"
    )
    return False


def import_auth_policies(observed: Observed, namespaces: Collection[str], report: Report) -> list[dict[str, Any]]:
    policies = []
    for policy in listed(observed, "MaaSAuthPolicy", report):
        if not _in_tenant_namespace(policy, namespaces, report):
            continue
        spec, meta = spec_of(policy), metadata(policy)
        report_unknown_keys(policy, spec, ("modelRefs", "subjects", "meteringMetadata"), "spec", report)
        entry: dict[str, Any] = {"name": meta["name"], "namespace": meta["namespace"]}
        entry["modelRefs"] = model_keys(spec.get("modelRefs"))
        entry["subjects"] = subjects(spec.get("subjects"))
        if spec.get("meteringMetadata"):
            metering = picked(policy, spec["meteringMetadata"], METADATA_FIELDS, "spec.meteringMetadata", report)
            entry["meteringMetadata"] = metering
        _annotate(entry, policy)
        policies.append(entry)
    return policies


def import_subscriptions(observed: Observed, namespaces: Collection[str], report: Report) -> list[dict[str, Any]]:
    subscriptions = []
    for subscription in listed(observed, "MaaSSubscription", report):
        if _in_tenant_namespace(subscription, namespaces, report):
            subscriptions.append(_subscription(subscription, report))
    return subscriptions


def _subscription(subscription: Object, report: Report) -> dict[str, Any]:
    spec, meta = spec_of(subscription), metadata(subscription)
    known = ("owner", "modelRefs", "priority", "tokenMetadata", "rateLimitIdentity")
    report_unknown_keys(subscription, spec, known, "spec", report)
    entry: dict[str, Any] = {"name": meta["name"], "namespace": meta["namespace"]}
    entry["owner"] = subjects(spec.get("owner"))
    unlimited = _unlimited_refs(subscription)
    entry["modelRefs"] = [
        _subscription_ref(subscription, ref, unlimited, report) for ref in spec.get("modelRefs") or ()
    ]
    if spec.get("priority"):
        entry["priority"] = spec["priority"]
    if spec.get("tokenMetadata"):
        entry["tokenMetadata"] = picked(
            subscription, spec["tokenMetadata"], METADATA_FIELDS, "spec.tokenMetadata", report
        )
    stamp = _stamp(subscription, report)
    chosen = spec.get("rateLimitIdentity")
    if chosen in ("short", "legacy") and chosen != stamp:
        report.add(
            f"{describe(subscription)}: spec.rateLimitIdentity {chosen} differs from the identity it is counted by "
            f"({stamp}); the import keeps {stamp} so that no counter resets; set {chosen} later to switch"
        )
    if stamp != "short":
        entry["rateLimitIdentity"] = "legacy"
    _annotate(entry, subscription)
    return entry


def _unlimited_refs(subscription: Object) -> set[str]:
    """This program's convention for `unlimited: true`: the largest rate, and the reference in an annotation."""
    listed_refs = (metadata(subscription).get("annotations") or {}).get(naming.UNLIMITED_MODELS_ANNOTATION, "")
    return {key.strip() for key in listed_refs.split(",") if key.strip()}


def _subscription_ref(subscription: Object, ref: Any, unlimited: set[str], report: Report) -> dict[str, Any]:
    known = ("name", "namespace", "tokenRateLimits", "billingRate")
    entry = picked(subscription, ref, known, "spec.modelRefs[]", report)
    rates = entry.pop("tokenRateLimits", [])
    key = naming.qualified(str(entry.get("namespace")), str(entry.get("name")))
    if key in unlimited and rates == [UNLIMITED_RATE]:
        entry["unlimited"] = True
    else:
        if key in unlimited:
            report.add(
                f"{describe(subscription)}: {naming.UNLIMITED_MODELS_ANNOTATION} lists {key}, but its rates are "
                "not the unlimited marker; its rates are imported as they are"
            )
        entry["tokenRateLimits"] = rates
    if "billingRate" in entry:
        entry["billingRate"] = picked(subscription, entry.pop("billingRate"), ("perToken",), "billingRate", report)
    return entry


def _stamp(subscription: Object, report: Report) -> str:
    """Seed 002's sticky identity, read exactly as the program reads it (`policies.identity.live_identity`)."""
    found: list[str] = []
    meta = metadata(subscription)
    stamp = live_identity(subscription, f"{meta.get('namespace')}/{meta.get('name')}", found)
    for message in found:
        report.add(message)
    return stamp


def _annotate(entry: dict[str, Any], obj: Object) -> None:
    annotations = user_annotations(obj)
    if annotations:
        entry["annotations"] = annotations


# ---------------------------------------------------------------------------------------------- live opt-outs


def opt_outs(observed: Observed, report: Report) -> None:
    """Generated policies an operator opted out (`opendatahub.io/managed: "false"`): suggested for `maas:unmanaged`."""
    for kind in OPT_OUT_KINDS:
        for policy in listed(observed, kind, report):
            annotations: Mapping[str, str] = metadata(policy).get("annotations") or {}
            if annotations.get(naming.CONTROLLER_MANAGED_ANNOTATION) == "false" and not handed_over(policy):
                meta = metadata(policy)
                entry = f"{{kind: {kind}, namespace: {meta['namespace']}, name: {meta['name']}}}"
                report.add(
                    f'{describe(policy)} carries opendatahub.io/managed: "false" (an operator opted it out); Pulumi '
                    f"leaves it alone either way; to make that visible in review, add {entry} to maas:unmanaged"
                )
