"""Rules across configuration entries: uniqueness, references between keys, and tenant isolation.

They run over the entries that passed their own validation. A reference to an entry that failed its own
validation is not reported again: that entry's errors already say what to fix.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from .. import naming
from .endpoints import cluster_namespaces, internal_reason
from .errors import ConfigIssue, entry_path, quoted
from .schema import AuthPolicyConfig, MaasConfig, ModelConfig, SubscriptionConfig


class Indexed(NamedTuple):
    """A validated entry with its position in the configuration (positions are for messages only). A named
    tuple: one is built per entry, ten thousand subscriptions included, and a frozen dataclass costs four times."""

    index: int
    entry: object

    def path(self, key: str) -> str:
        raw = (
            self.entry.model_dump(include={"name", "namespace", "kind"}) if hasattr(self.entry, "model_dump") else None
        )
        return entry_path(key, self.index, raw)


@dataclass
class Known:
    """Names that exist in the configuration, including those of entries that failed validation."""

    broken_tenants: set[str] = field(default_factory=set)


def check_references(config: MaasConfig, positions: dict[str, list[int]], known: Known) -> list[ConfigIssue]:
    """Every cross-entry problem of `config`; `positions` maps each key's entries to their original indexes."""

    def indexed(key: str, entries: Iterable[object]) -> list[Indexed]:
        entries = list(entries)
        indexes = positions.get(key, range(len(entries)))  # defaulted keys have no positions of their own
        return [Indexed(i, e) for i, e in zip(indexes, entries, strict=True)]

    tenants = indexed("tenants", config.tenants)
    models = indexed("models", config.models)
    issues: list[ConfigIssue] = []
    issues += _unique(tenants, "tenants", lambda t: t.name, "tenant")
    issues += _unique_gateways(config, tenants)
    issues += _unique(models, "models", lambda m: m.key, "model")
    issues += _model_tenants(config, models, known)
    issues += _scoped_tenant(config, known)
    issues += _outside_platform_namespaces(config, models)
    issues += _unique(models, "models", lambda m: (m.route_namespace, m.route_name), "HTTPRoute", _route_text)
    issues += _unique(models, "models", lambda m: (m.route_namespace, m.name), "policy name", _policy_text)
    issues += _internal_endpoints(config, models)
    issues += _routing_headers(config, models)
    scoped = (
        ("authPolicies", config.authPolicies, "auth policy"),
        ("subscriptions", config.subscriptions, "subscription"),
    )
    for key, entries, what in scoped:
        items = indexed(key, entries)
        issues += _unique(items, key, lambda e: e.key, what)
        issues += _tenant_scoped(config, key, items, known)
    issues += _unique(indexed("unmanaged", config.unmanaged), "unmanaged", lambda u: u, "entry", _unmanaged_text)
    issues += _accepted_resets(config, indexed("acceptQuotaResets", config.acceptQuotaResets))
    issues += _accepted_unmetered(config, indexed("acceptUnmeteredTraffic", config.acceptUnmeteredTraffic))
    return issues


def _accepted_unmetered(config: MaasConfig, items: list[Indexed]) -> list[ConfigIssue]:
    """An accepted unmetered case names a configured model, or `*` (the plan warns when it names no current case)."""
    issues = _unique(items, "acceptUnmeteredTraffic", lambda key: key, "accepted case")
    for item in items:
        model = item.entry.partition(":")[0]
        if model != "*" and model not in config.models_by_key:
            issues.append(
                ConfigIssue(
                    item.path("acceptUnmeteredTraffic"),
                    f"'{model}' is not in maas:models; remove '{item.entry}', it accepts nothing",
                )
            )
    return issues


def _accepted_resets(config: MaasConfig, items: list[Indexed]) -> list[ConfigIssue]:
    """An acceptance names a configured subscription, so a stale one cannot silently accept a future reset."""
    known = {s.key for s in config.subscriptions}
    issues = _unique(items, "acceptQuotaResets", lambda key: key, "accepted reset")
    for item in items:
        if item.entry not in known:
            issues.append(
                ConfigIssue(
                    item.path("acceptQuotaResets"),
                    f"'{item.entry}' is not in maas:subscriptions; remove it, it accepts resets of nothing",
                )
            )
    return issues


def _unique(items, key, identity, what, text=None) -> list[ConfigIssue]:
    seen: dict[object, Indexed] = {}
    issues = []
    for item in items:
        ident = identity(item.entry)
        first = seen.setdefault(ident, item)
        if first is not item:
            shown = text(ident) if text else f"{what} '{ident}'"
            issues.append(
                ConfigIssue(item.path(key), f"{shown} is defined twice (first at {first.path(key)}); keep one of them")
            )
    return issues


def _route_text(ident: tuple[str, str]) -> str:
    return f"HTTPRoute {ident[0]}/{ident[1]} (one model per route, since Kuadrant allows one policy per route)"


def _policy_text(ident: tuple[str, str]) -> str:
    return (
        f"model name '{ident[1]}' in route namespace {ident[0]} (its policies would both be "
        f"{naming.trlp_name(ident[1])}); rename a model or move its route"
    )


def _unmanaged_text(ident) -> str:
    return f"{ident.kind} {ident.namespace}/{ident.name}"


def _unique_gateways(config: MaasConfig, tenants: list[Indexed]) -> list[ConfigIssue]:
    owners: dict[str, Indexed] = {}
    issues = []
    for item in tenants:
        gateway = item.entry.gateway_name(config.platform)
        first = owners.setdefault(gateway, item)
        if first is not item and first.entry.name != item.entry.name:
            issues.append(
                ConfigIssue(
                    f"{item.path('tenants')}.gateway",
                    f"Gateway '{gateway}' already serves tenant '{first.entry.name}'; two tenants may not share a "
                    "Gateway, so set a different gateway.name",
                )
            )
    return issues


def _platform_namespaces(config: MaasConfig) -> dict[str, str]:
    """The namespaces whose objects the platform alone names: maas-api of every tenant, and the Gateways with
    their AuthPolicies and telemetry. An entry there could take the identity of one of those objects."""
    return {
        config.platform.infraNamespace: "platform.infraNamespace, where every tenant's maas-api runs",
        config.platform.gateway.namespace: "platform.gateway.namespace, where the Gateways and their policies live",
    }


def _outside_platform_namespaces(config: MaasConfig, models: list[Indexed]) -> list[ConfigIssue]:
    """Models and their routes stay out of the platform's namespaces, and so do tenants (subscriptions and auth
    policies live in tenant namespaces)."""
    reserved = _platform_namespaces(config)
    issues = []
    for item in models:
        model: ModelConfig = item.entry
        places = {"namespace": model.namespace, "route.namespace": model.route.namespace}
        for place, namespace in places.items():
            if namespace in reserved:
                issues.append(
                    ConfigIssue(
                        f"{item.path('models')}.{place}",
                        f"'{namespace}' is {reserved[namespace]}; models may not live there, so use the "
                        "namespace of the model's backend",
                    )
                )
    issues += _distinct_platform_namespaces(config)
    for tenant in config.tenants:
        if tenant.namespace in reserved:
            setting = reserved[tenant.namespace].split(",")[0]
            issues.append(
                ConfigIssue(
                    f"maas:{setting}",
                    f"'{tenant.namespace}' is the namespace of tenant '{tenant.name}'; the platform's namespaces "
                    "may not be tenant namespaces, so choose another",
                )
            )
    return issues


def _distinct_platform_namespaces(config: MaasConfig) -> list[ConfigIssue]:
    """maas-api's namespace gets the platform's NetworkPolicies (one isolates every pod there) and is adopted and
    relabelled, so it must be a namespace of its own: not the Gateways' nor one the cluster itself runs in."""
    infra = config.platform.infraNamespace
    if infra == config.platform.gateway.namespace:
        return [
            ConfigIssue(
                "maas:platform.infraNamespace",
                f"'{infra}' is also maas:platform.gateway.namespace; maas-api's NetworkPolicies would isolate the "
                "Gateway pods there, so give maas-api a namespace of its own (default odh-ai-gateway-infra)",
            )
        ]
    if infra in naming.SYSTEM_NAMESPACES or infra.startswith(naming.SYSTEM_PREFIXES):
        return [
            ConfigIssue(
                "maas:platform.infraNamespace",
                f"'{infra}' is a namespace of the cluster itself; give maas-api a namespace of its own "
                "(default odh-ai-gateway-infra)",
            )
        ]
    return []


def _internal_endpoints(config: MaasConfig, models: list[Indexed]) -> list[ConfigIssue]:
    """An ExternalModel's endpoint is outside the cluster and its network unless `allowInternalEndpoint` says the
    model is served inside (`endpoints.py`); `{service}.{namespace}` needs the namespaces of the whole config."""
    namespaces = cluster_namespaces(config)
    issues = []
    for item in models:
        external = item.entry.external
        if external is None or external.allowInternalEndpoint:
            continue
        reason = internal_reason(external.endpoint, namespaces)
        if reason is not None:
            issues.append(
                ConfigIssue(
                    f"{item.path('models')}.external.endpoint",
                    f"{quoted(external.endpoint)} {reason}; use the provider's public endpoint, or set "
                    "external.allowInternalEndpoint: true if the model really is served inside your network",
                )
            )
    return issues


# KServe's routing header of an LLMInferenceService (`naming.kserve_model_header`), whatever its namespace and name.
PUBLISHER_FORM = re.compile(r"publishers/[^/]+/models/.+", re.DOTALL)


def _routing_headers(config: MaasConfig, models: list[Indexed]) -> list[ConfigIssue]:
    """One `X-Gateway-Model-Name` value per model on each Gateway: Gateway API sends a body-routed request that
    several routes match exactly to one of them (the oldest), so the other model never gets one. KServe models
    claim first, so a clash with an ExternalModel is reported at the ExternalModel, and an ExternalModel may not
    use KServe's form at all: an LLMInferenceService added later would take its header."""
    gateways = {t.name: t.gateway_name(config.platform) for t in config.tenants}
    claims: dict[tuple[str, str], Indexed] = {}
    issues = []
    for item in sorted(models, key=lambda i: i.entry.external is not None):  # stable: configuration order
        model: ModelConfig = item.entry
        if model.tenant not in gateways:
            continue  # reported as an unknown tenant
        header, place = _routing_header(model)
        gateway = gateways[model.tenant]
        first = claims.setdefault((gateway, header), item)
        if first is not item:
            issues.append(ConfigIssue(f"{item.path('models')}.{place}", _clash_text(header, gateway, first, config)))
        elif model.external is not None and PUBLISHER_FORM.fullmatch(header):
            issues.append(
                ConfigIssue(
                    f"{item.path('models')}.{place}",
                    f"{quoted(header)} has the publishers/<ns>/models/<name> form, which is KServe's routing header "
                    "for LLMInferenceServices; use the provider's own model name",
                )
            )
    return issues


def _routing_header(model: ModelConfig) -> tuple[str, str]:
    """The header value the model's route matches, and the configuration field that decides it."""
    if model.external is not None:
        return model.external.targetModel, "external.targetModel"
    place = "modelAlias" if model.modelAlias else "modelRef.name"
    return naming.kserve_model_header(model.namespace, model.served_name), place


def _clash_text(header: str, gateway: str, first: Indexed, config: MaasConfig) -> str:
    return (
        f"X-Gateway-Model-Name {quoted(header)} is already the routing header of {first.path('models')} on Gateway "
        f"{config.platform.gateway.namespace}/{gateway}; Gateway API would send every body-routed request for it to "
        "only one of the two routes, so give one model another value or serve it on another tenant's Gateway"
    )


def _model_tenants(config: MaasConfig, models: list[Indexed], known: Known) -> list[ConfigIssue]:
    names = {t.name for t in config.tenants}
    issues = []
    for item in models:
        tenant = item.entry.tenant
        if tenant not in names and tenant not in known.broken_tenants:
            issues.append(
                ConfigIssue(
                    f"{item.path('models')}.tenant",
                    f"tenant '{tenant}' is not in maas:tenants; add the tenant or fix the name "
                    f"(known: {', '.join(sorted(names))})",
                )
            )
    return issues


def _scoped_tenant(config: MaasConfig, known: Known) -> list[ConfigIssue]:
    """`platform.scope: tenant:<name>` renders that tenant alone, so the tenant must exist."""
    kind, _, tenant = config.platform.scope.partition(":")
    names = {t.name for t in config.tenants}
    if kind != "tenant" or tenant in names or tenant in known.broken_tenants:
        return []
    fix = f"use tenant:<name> with one of: {', '.join(sorted(names))}"
    return [ConfigIssue("maas:platform.scope", f"tenant {quoted(tenant)} is not in maas:tenants; {fix}")]


def _tenant_scoped(config: MaasConfig, key: str, items: list[Indexed], known: Known) -> list[ConfigIssue]:
    """Subscriptions and auth policies live in a tenant namespace and may only reach that tenant's models."""
    tenant_by_namespace = {t.namespace: t.name for t in config.tenants}
    broken_namespaces = {naming.tenant_namespace(t) for t in known.broken_tenants}
    models = config.models_by_key
    foreign = {t.name: {key for key, model in models.items() if model.tenant != t.name} for t in config.tenants}
    issues = []
    for item in items:
        entry: AuthPolicyConfig | SubscriptionConfig = item.entry
        tenant = tenant_by_namespace.get(entry.namespace)
        if tenant is None:
            if entry.namespace not in broken_namespaces:
                choices = ", ".join(sorted(tenant_by_namespace))
                issues.append(
                    ConfigIssue(
                        f"{item.path(key)}.namespace",
                        f"'{entry.namespace}' is not a tenant namespace; use one of: {choices}",
                    )
                )
            continue
        refs = {ref.key for ref in entry.modelRefs}
        if len(refs) < len(entry.modelRefs) or not refs.isdisjoint(foreign[tenant]):  # else nothing to say
            issues += _model_refs(item, key, tenant, models)
    return issues


def _model_refs(item: Indexed, key: str, tenant: str, models: dict[str, ModelConfig]) -> list[ConfigIssue]:
    """The entry's path is spelled only for an issue: ten thousand entries usually have none."""
    first_index: dict[str, int] = {}
    issues = []
    for index, ref in enumerate(item.entry.modelRefs):
        first = first_index.setdefault(ref.key, index)
        if first != index:
            issues.append(
                ConfigIssue(
                    _ref_path(item, key, index),
                    f"model {ref.key} is listed twice (also modelRefs[{first}]); merge the entries",
                )
            )
        model = models.get(ref.key)
        if model is not None and model.tenant != tenant:
            issues.append(
                ConfigIssue(
                    _ref_path(item, key, index),
                    f"model {ref.key} is served by tenant '{model.tenant}', not by '{tenant}' (tenant isolation); "
                    f"move this entry to namespace {naming.tenant_namespace(model.tenant)} or drop the reference",
                )
            )
    return issues


def _ref_path(item: Indexed, key: str, index: int) -> str:
    return f"{item.path(key)}.modelRefs[{index}]"
