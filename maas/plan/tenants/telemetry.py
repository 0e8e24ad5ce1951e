"""Gateway telemetry of a tenant (upstream-platform.md §7): usage metric labels and latency per subscription.

Unlike upstream, a tenant without a `telemetry` block gets the documented defaults (enabled, organization and
model captured), not "off"; `telemetry.enabled: false` removes both objects.
"""

from __future__ import annotations

from typing import Any

from ... import naming
from ...config import PlatformConfig, TenantConfig
from ...config.schema import TelemetryMetrics
from ..desired import Desired, k8s_object

TELEMETRY_POLICY_API_VERSION = "extensions.kuadrant.io/v1alpha1"
ISTIO_TELEMETRY_API_VERSION = "telemetry.istio.io/v1"


def _guarded(field: str) -> str:
    """Subscriptions without the field must still yield a label value, so the expression falls back to ""."""
    attribute = f"auth.identity.subscription_info.{field}"
    return f'has({attribute}) ? {attribute} : ""'


ALWAYS = {
    "subscription": "auth.identity.selected_subscription",
    "cost_center": _guarded("costCenter"),
}
BY_FLAG = {
    "captureOrganization": ("organization_id", _guarded("organizationId")),
    "captureUser": ("user", "auth.identity.userid"),
    "captureGroup": ("group", "auth.identity.groups_str"),
    "captureModelUsage": ("model", 'responseBodyJSON("/model")'),
}


def metric_labels(metrics: TelemetryMetrics) -> dict[str, str]:
    """Label name to CEL expression: subscription and cost_center always, the others by their capture flag."""
    labels = dict(ALWAYS)
    for flag, (label, expression) in BY_FLAG.items():
        if getattr(metrics, flag):
            labels[label] = expression
    return dict(sorted(labels.items()))


def telemetry_labels(tenant: TenantConfig) -> list[str]:
    """The label names a tenant's usage metrics carry (a stack output); none when telemetry is off."""
    return sorted(metric_labels(tenant.telemetry.metrics)) if tenant.telemetry.enabled else []


def gateway_telemetry(platform: PlatformConfig, tenant: TenantConfig) -> tuple[list[Desired], list[str]]:
    """TelemetryPolicy and Istio Telemetry on the tenant's Gateway, with the warnings they raise."""
    if not tenant.telemetry.enabled:
        return [], []
    gateway = tenant.gateway_name(platform)
    namespace = platform.gateway.namespace
    labels = {**naming.tenant_labels(tenant.name), naming.PART_OF: naming.OBSERVABILITY_PART_OF}
    policy = k8s_object(
        TELEMETRY_POLICY_API_VERSION,
        "TelemetryPolicy",
        naming.for_tenant("maas-telemetry", tenant.name),
        namespace,
        spec={
            "targetRef": {"group": naming.GATEWAY_API_GROUP, "kind": "Gateway", "name": gateway},
            "metrics": {"default": {"labels": metric_labels(tenant.telemetry.metrics)}},
        },
        labels=labels,
    )
    latency = k8s_object(
        ISTIO_TELEMETRY_API_VERSION,
        "Telemetry",
        naming.for_tenant("latency-per-subscription", tenant.name),
        namespace,
        spec=_latency_spec(gateway),
        labels=labels,
    )
    return [Desired(policy), Desired(latency)], _privacy_warnings(tenant)


def _latency_spec(gateway: str) -> dict[str, Any]:
    subscription = {"operation": "UPSERT", "value": 'request.headers["x-maas-subscription"]'}
    return {
        "selector": {"matchLabels": {naming.GATEWAY_NAME_LABEL: gateway}},
        "metrics": [
            {
                "providers": [{"name": "prometheus"}],
                "overrides": [
                    {
                        "match": {"metric": "REQUEST_DURATION", "mode": "CLIENT_AND_SERVER"},
                        "tagOverrides": {"subscription": subscription},
                    }
                ],
            }
        ],
    }


def _privacy_warnings(tenant: TenantConfig) -> list[str]:
    if not tenant.telemetry.metrics.captureUser:
        return []
    return [
        f"maas:tenants ({tenant.name}).telemetry.metrics.captureUser is on: usage metrics carry every caller's user "
        f"ID, which may have GDPR / privacy implications; make sure this is compliant, or set it to false"
    ]
