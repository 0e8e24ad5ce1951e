"""`maas:tenants` and `maas:platform` from the controller's AITenant, MaasTenantConfig, legacy Tenant and Config CRs
(upstream-platform.md §1-§3).

A tenant is named by its namespace (`models-as-a-service`, or `ai-tenant-{name}`) or by its AITenant. Its
settings come from its MaasTenantConfig; a legacy Tenant fills what the MaasTenantConfig leaves unset, as the
AITenant reconciler's migration does. The Gateway and OIDC come from the AITenant (else the legacy Tenant).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ... import naming
from ...observe import Observed
from ...plan.tenants.platform import MAAS_API_REPLICAS_ANNOTATION
from .common import Object, Report, describe, handed_over, listed, metadata, picked, report_unknown_keys, spec_of

DEPRECATED_PAYLOAD_REPLICAS_ANNOTATION = "maas.opendatahub.io/payload-processing-replicas"
MANAGEMENT_STATES = ("Managed", "Removed", "Unmanaged")
OIDC_FIELDS = ("issuerUrl", "clientId", "ttl")
# How the controller names OIDC callers; the import keeps it, saying why it is unsafe (the program's default
# prefixes them: `oidc.usernamePrefix`).
UPSTREAM_OIDC_NAMES = {"usernameClaim": "preferred_username", "usernamePrefix": ""}
METRICS_FIELDS = ("captureOrganization", "captureUser", "captureGroup", "captureModelUsage")
AUTOSCALING_FIELDS = ("maxReplicas", "targetCPUUtilization", "targetMemoryUtilization")
SETTINGS = ("apiKeys", "telemetry", "payloadProcessing")
LEGACY_SETTINGS = ("apiKeys", "telemetry")  # what the AITenant reconciler copies from a legacy Tenant
# The Config CRD's defaults for the fields this program has no key for: only other values are worth a report.
CONFIG_WITHOUT_KEY = {"limitadorScrapeInterval": "30s", "usageLogging": False}


@dataclass
class Sources:
    """The CRs one tenant is made of."""

    aitenant: Object | None = None
    config: Object | None = None  # MaasTenantConfig/default-tenant in the tenant namespace
    legacy: Object | None = None  # the deprecated Tenant/default-tenant


def tenant_of_namespace(namespace: str) -> str | None:
    """The tenant whose namespace this is, or None: this program derives tenant namespaces from tenant names."""
    if namespace == naming.DEFAULT_TENANT:
        return naming.DEFAULT_TENANT
    name = namespace.removeprefix(naming.TENANT_NAMESPACE_PREFIX)
    return name if name != namespace and name else None


def import_tenants(observed: Observed, report: Report) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The tenant entries (the default tenant first) and the platform settings the CRs determine."""
    sources = _sources(observed, report)
    order = sorted(sources, key=lambda name: (name != naming.DEFAULT_TENANT, name))
    tenants = [_tenant(name, sources[name], report) for name in order]
    return tenants, _platform(observed, sources, report)


def _sources(observed: Observed, report: Report) -> dict[str, Sources]:
    sources: dict[str, Sources] = {}
    for obj in listed(observed, "AITenant", report):
        sources.setdefault(metadata(obj)["name"], Sources()).aitenant = obj
    for kind, slot in (("MaasTenantConfig", "config"), ("Tenant", "legacy")):
        for obj in listed(observed, kind, report):
            name = tenant_of_namespace(metadata(obj)["namespace"])
            if name is None:
                report.add(
                    f"{describe(obj)} is in a namespace that is neither {naming.DEFAULT_TENANT} nor "
                    f"{naming.TENANT_NAMESPACE_PREFIX}{{tenant}}; this program derives each tenant's namespace from "
                    "its name, so that tenant cannot be expressed and is not imported"
                )
                continue
            setattr(sources.setdefault(name, Sources()), slot, obj)
    return sources


def _tenant(name: str, sources: Sources, report: Report) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    if sources.aitenant is not None:
        report_unknown_keys(sources.aitenant, spec_of(sources.aitenant), ("gateway", "oidc"), "spec", report)
    gateway = _gateway_name(sources)
    if name != naming.DEFAULT_TENANT and gateway not in (None, name):
        entry["gateway"] = {"name": gateway}
    oidc = _oidc(sources, report)
    if oidc:
        entry["oidc"] = {**oidc, **UPSTREAM_OIDC_NAMES}
        report.add(
            f"tenant {name}: oidc keeps the controller's usernames (usernameClaim preferred_username, usernamePrefix "
            '""), so its callers keep their grants and counters; those names share the Kubernetes users\' namespace '
            '(an IdP user "alice" owns Kubernetes user alice\'s subscriptions): drop both keys once OIDC users are '
            "listed as oidc:{sub} (docs/what-it-renders.md, OIDC identities)"
        )
    entry.update(_settings(sources, report))
    if sources.config is not None:
        entry.update(_annotated_settings(sources.config, entry, report))
    return entry


def _gateway_name(sources: Sources) -> str | None:
    if sources.aitenant is not None:
        spec_gateway = spec_of(sources.aitenant).get("gateway") or {}
        status_gateway = (sources.aitenant.get("status") or {}).get("gatewayRef") or {}
        return spec_gateway.get("name") or status_gateway.get("name") or None
    if sources.legacy is not None:
        return (spec_of(sources.legacy).get("gatewayRef") or {}).get("name") or None
    return None


def _gateway_namespace(sources: Sources) -> str | None:
    if sources.aitenant is not None:
        return ((sources.aitenant.get("status") or {}).get("gatewayRef") or {}).get("namespace") or None
    if sources.legacy is not None:
        return (spec_of(sources.legacy).get("gatewayRef") or {}).get("namespace") or None
    return None


def _oidc(sources: Sources, report: Report) -> dict[str, Any]:
    if sources.aitenant is not None and spec_of(sources.aitenant).get("oidc"):
        return picked(sources.aitenant, spec_of(sources.aitenant)["oidc"], OIDC_FIELDS, "spec.oidc", report)
    if sources.legacy is not None and spec_of(sources.legacy).get("externalOIDC"):
        return picked(sources.legacy, spec_of(sources.legacy)["externalOIDC"], OIDC_FIELDS, "spec.externalOIDC", report)
    return {}


def _settings(sources: Sources, report: Report) -> dict[str, Any]:
    """apiKeys, telemetry and payloadProcessing from the MaasTenantConfig; a legacy Tenant fills apiKeys and
    telemetry (what the controller's migration copies). Upstream an absent `telemetry` means no gateway telemetry,
    where this program's default is on: it is written as off."""
    found: dict[str, tuple[Object, Any]] = {}
    if sources.legacy is not None:
        spec = spec_of(sources.legacy)
        report_unknown_keys(sources.legacy, spec, (*SETTINGS, "gatewayRef", "externalOIDC"), "spec", report)
        found.update({key: (sources.legacy, spec[key]) for key in LEGACY_SETTINGS if spec.get(key)})
        if spec.get("payloadProcessing"):
            report.add(
                f"{describe(sources.legacy)}: spec.payloadProcessing is not in effect (the controller's migration "
                "does not copy it to the MaasTenantConfig), so it is left out"
            )
    if sources.config is not None:
        spec = spec_of(sources.config)
        report_unknown_keys(sources.config, spec, (*SETTINGS, "apiTranslation"), "spec", report)
        found.update({key: (sources.config, spec[key]) for key in SETTINGS if spec.get(key)})
    result: dict[str, Any] = {}
    if "apiKeys" in found:
        result["apiKeys"] = picked(*found["apiKeys"], ("maxExpirationDays",), "spec.apiKeys", report)
    result["telemetry"] = _telemetry(*found["telemetry"], report) if "telemetry" in found else {"enabled": False}
    payload = _payload(*found["payloadProcessing"], report) if "payloadProcessing" in found else {}
    translation = spec_of(sources.config).get("apiTranslation") if sources.config is not None else None
    if translation:
        payload["apiTranslation"] = picked(sources.config, translation, ("enabled",), "spec.apiTranslation", report)
    if payload:
        result["payloadProcessing"] = payload
    return result


def _telemetry(obj: Object, value: Any, report: Report) -> dict[str, Any]:
    telemetry = picked(obj, value, ("enabled", "metrics"), "spec.telemetry", report)
    if "metrics" in telemetry:
        telemetry["metrics"] = picked(obj, telemetry["metrics"], METRICS_FIELDS, "spec.telemetry.metrics", report)
    return telemetry


def _payload(obj: Object, value: Any, report: Report) -> dict[str, Any]:
    payload = picked(obj, value, ("replicas", "autoscaling"), "spec.payloadProcessing", report)
    if "autoscaling" in payload:
        where = "spec.payloadProcessing.autoscaling"
        payload["autoscaling"] = picked(obj, payload["autoscaling"], AUTOSCALING_FIELDS, where, report)
    return payload


def _annotated_settings(config: Object, entry: Mapping[str, Any], report: Report) -> dict[str, Any]:
    """What the MaasTenantConfig's annotations set: replicas, payload processing type and migration, management
    state (unless this program wrote it while handing the tenant to a running controller)."""
    annotations = metadata(config).get("annotations") or {}
    result: dict[str, Any] = {}
    payload = dict(entry.get("payloadProcessing") or {})
    replicas = _replicas(config, annotations, MAAS_API_REPLICAS_ANNOTATION, report)
    if replicas is not None:
        result["maasApiReplicas"] = replicas
    legacy_replicas = _replicas(config, annotations, DEPRECATED_PAYLOAD_REPLICAS_ANNOTATION, report)
    if legacy_replicas is not None and "replicas" not in payload:
        payload["replicas"] = legacy_replicas
    kind = annotations.get(naming.PAYLOAD_PROCESSING_TYPE_ANNOTATION)
    if kind == "praxis":
        payload["type"] = "praxis"
    elif kind not in (None, "ipp"):
        report.add(f"{describe(config)}: payload processing type {kind!r} is neither ipp nor praxis; it is left out")
    if annotations.get(naming.FORCE_MIGRATION_ANNOTATION) == "true":
        payload["forceMigration"] = True
    if payload:
        result["payloadProcessing"] = payload
    state = annotations.get(naming.MANAGEMENT_STATE_ANNOTATION)
    if state in ("Removed", "Unmanaged") and not handed_over(config):
        result["managementState"] = state
    elif state not in (None, *MANAGEMENT_STATES):
        report.add(f"{describe(config)}: management state {state!r} is not one of {', '.join(MANAGEMENT_STATES)}")
    return result


def _replicas(obj: Object, annotations: Mapping[str, str], key: str, report: Report) -> int | None:
    text = annotations.get(key)
    if text is None:
        return None
    if text.isascii() and text.isdigit() and 1 <= int(text) <= 100:
        return int(text)
    report.add(f"{describe(obj)}: annotation {key} is {text!r}, not a whole number from 1 to 100; it is left out")
    return None


def _platform(observed: Observed, sources: dict[str, Sources], report: Report) -> dict[str, Any]:
    """coexist: the controller still runs while Pulumi takes over (see the README's migration walk-through)."""
    platform: dict[str, Any] = {"controllerMode": "coexist"}
    gateway: dict[str, str] = {}
    default = sources.get(naming.DEFAULT_TENANT)
    name = _gateway_name(default) if default is not None else None
    if name:
        gateway["name"] = name
    namespaces = {n: _gateway_namespace(s) for n, s in sources.items() if _gateway_namespace(s)}
    namespace = _one(namespaces, "Gateways", "platform.gateway.namespace", report)
    if namespace:
        gateway["namespace"] = namespace
    if gateway:
        platform["gateway"] = gateway
    infra = {n: (s.config.get("status") or {}).get("infraNamespace") for n, s in sources.items() if s.config}
    infra_namespace = _one({n: ns for n, ns in infra.items() if ns}, "maas-api", "platform.infraNamespace", report)
    if infra_namespace:
        platform["infraNamespace"] = infra_namespace
    platform.update(_cluster_config(observed, report))
    if observed.cluster is not None and observed.cluster.context:
        platform["kubernetes"] = {"context": observed.cluster.context}
    return platform


def _one(per_tenant: dict[str, str], what: str, key: str, report: Report) -> str | None:
    """One value for a platform-wide key; when tenants disagree, the default tenant's, and a report."""
    values = sorted(set(per_tenant.values()))
    if len(values) > 1:
        shown = ", ".join(f"{tenant}: {value}" for tenant, value in sorted(per_tenant.items()))
        report.add(f"the tenants' {what} live in different namespaces ({shown}); {key} holds one, so check it")
    return per_tenant.get(naming.DEFAULT_TENANT, values[0]) if values else None


def _cluster_config(observed: Observed, report: Report) -> dict[str, Any]:
    """Config/default: `usageMetricsDashboard`; the fields without a key are reported when not the CRD default."""
    settings: dict[str, Any] = {}
    for config in listed(observed, "Config", report):
        spec = spec_of(config)
        report_unknown_keys(config, spec, ("usageMetricsDashboard", *CONFIG_WITHOUT_KEY), "spec", report)
        for key, default in CONFIG_WITHOUT_KEY.items():
            if key in spec and spec[key] != default:
                report.add(
                    f"{describe(config)}: spec.{key} is {spec[key]!r}; this program has no key for it, so it is "
                    "left out (that part of the platform stays as the operator installs it)"
                )
        if "usageMetricsDashboard" in spec:
            settings["usageMetricsDashboard"] = spec["usageMetricsDashboard"]
    return settings
