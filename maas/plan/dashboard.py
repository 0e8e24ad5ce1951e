"""The Prometheus usage dashboard, opt-in (seed 002 "Legacy metrics usage dashboard is opt-in"; upstream §10.3).

`platform.usageMetricsDashboard: true` puts the PersesDashboard `dashboard-3-maas-usage-admin` in the monitoring
namespace, with panels over exactly the metrics this program's gateway telemetry produces (`tenants/telemetry.py`):
Limitador's `authorized_hits` (tokens: every limit is a TokenRateLimitPolicy) and `limited_calls` (requests a limit
refused), both labelled by the TelemetryPolicy, and Istio's request-duration histogram, which the Istio Telemetry
tags with the subscription. A panel breaks tokens down by a label only when some tenant's telemetry writes it.

On OpenShift the dashboard queries its own PersesDatasource, the cluster's Thanos Querier (platform and user
workload metrics) through the Perses proxy with the service CA, as the Cluster Observability Operator documents.
xKS has no standard Prometheus to point at, so there the queries name no datasource and Perses uses the project's
(or the global) default one: no configuration key is needed.

A copy this program does not manage (the upstream controller's) is reported, never deleted: Pulumi deletes only what
its state holds, so the preview prints the command that removes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .. import naming
from ..config import MaasConfig, PlatformConfig
from ..config.errors import quoted
from ..observe import Observed
from .desired import Desired, k8s_object
from .tenants.telemetry import telemetry_labels

TOKENS = "authorized_hits"  # Limitador counts a TokenRateLimitPolicy's hits in tokens (`usage.total_tokens`)
LIMITED = "limited_calls"  # requests Limitador refused (the gateway answers 429)
DURATION = "istio_request_duration_milliseconds"  # Istio's REQUEST_DURATION histogram
THANOS_QUERIER_URL = "https://thanos-querier.openshift-monitoring.svc.cluster.local:9091"
SERVICE_CA_FILE = "/ca/service-ca.crt"  # where the Cluster Observability Operator's Perses mounts the service CA
RATE = "[$__rate_interval]"
RANGE = "[$__range]"
TOP = 10  # per-user and per-group panels show the heaviest consumers only
DURATION_SHOWN = "24h"
COLUMNS = 24  # width of a Perses grid
_NO_NAMESPACE = (
    'maas:platform.usageMetricsDashboard is true, but platform.monitoringNamespace is "" (dashboards disabled), so '
    "no usage dashboard is created; set monitoringNamespace to the namespace Perses reads dashboards from"
)
_NO_TELEMETRY = (
    "maas:platform.usageMetricsDashboard is true, but no tenant that is not Removed has telemetry enabled, so there "
    "are no usage metrics and no usage dashboard is created; enable a tenant's telemetry or set it to false"
)


@dataclass(frozen=True)
class Panel:
    """One panel: a single PromQL query, drawn as a time series or as one number."""

    key: str
    title: str
    description: str
    query: str
    unit: str
    series: str = ""  # Perses seriesNameFormat, e.g. "{{subscription}}"
    stat: bool = False


@dataclass(frozen=True)
class Row:
    """A titled grid of panels, `per_row` side by side."""

    title: str
    panels: tuple[Panel, ...]
    per_row: int
    height: int


@dataclass(frozen=True)
class Breakdown:
    """Tokens by one telemetry label; `top` caps a high-cardinality label to its TOP heaviest values."""

    label: str
    key: str
    title: str
    description: str
    top: bool = False

    def panel(self) -> Panel:
        total = f'sum by ({self.label}) (rate({TOKENS}{{{self.label}!=""}}{RATE}))'
        return Panel(
            self.key,
            self.title,
            self.description,
            f"topk({TOP}, {total})" if self.top else total,
            "decimal",
            f"{{{{{self.label}}}}}",
        )


BREAKDOWNS = (
    Breakdown("subscription", "tokensBySubscription", "Tokens by subscription", "Tokens per second, per subscription."),
    Breakdown("model", "tokensByModel", "Tokens by model", "Tokens per second, per model named in the responses."),
    Breakdown(
        "user", "tokensByUser", f"Tokens by user (top {TOP})", "Tokens per second of the heaviest users.", top=True
    ),
    Breakdown(
        "group",
        "tokensByGroups",
        f"Tokens by groups (top {TOP})",
        "Tokens per second of the heaviest callers' group lists (comma-joined).",
        top=True,
    ),
    Breakdown(
        "organization_id",
        "tokensByOrganization",
        "Tokens by organization",
        "Tokens per second, per subscription organization (tokenMetadata.organizationId).",
    ),
    Breakdown(
        "cost_center",
        "tokensByCostCenter",
        "Tokens by cost center",
        "Tokens per second, per subscription cost center (tokenMetadata.costCenter).",
    ),
)
OVERVIEW = (
    Panel(
        "tokensInRange",
        "Tokens",
        "Tokens counted by the token limits over the time range.",
        f'sum(increase({TOKENS}{{subscription!=""}}{RANGE}))',
        "decimal",
        stat=True,
    ),
    Panel(
        "requestsInRange",
        "Requests",
        "Gateway requests that carried a subscription, over the time range.",
        f'sum(increase({DURATION}_count{{subscription!=""}}{RANGE}))',
        "decimal",
        stat=True,
    ),
    Panel(
        "rateLimitedInRange",
        "Rate-limited requests",
        "Requests a token limit refused with 429, over the time range.",
        f'sum(increase({LIMITED}{{subscription!=""}}{RANGE}))',
        "decimal",
        stat=True,
    ),
)
TRAFFIC_TITLE = "Requests, rate limits and latency"
TRAFFIC = (
    Panel(
        "requestsBySubscription",
        "Requests by subscription",
        "Gateway requests per second, per subscription (any response code).",
        f'sum by (subscription) (rate({DURATION}_count{{subscription!=""}}{RATE}))',
        "requests/sec",
        "{{subscription}}",
    ),
    Panel(
        "rateLimitedBySubscription",
        "Rate-limited requests by subscription",
        "Requests per second a token limit refused with 429, per subscription.",
        f'sum by (subscription) (rate({LIMITED}{{subscription!=""}}{RATE}))',
        "requests/sec",
        "{{subscription}}",
    ),
    Panel(
        "latencyBySubscription",
        "Latency p95 by subscription",
        "95th percentile of the gateway's request duration, per subscription.",
        f'histogram_quantile(0.95, sum by (subscription, le) (rate({DURATION}_bucket{{subscription!=""}}{RATE})))',
        "milliseconds",
        "{{subscription}}",
    ),
)


def usage_dashboard(config: MaasConfig, observed: Observed) -> tuple[list[Desired], list[str]]:
    """The dashboard objects to register under the Platform (none unless opted in), and the warnings to show."""
    platform = config.platform
    warnings = _live_copy_warnings(platform, observed)
    if not platform.usageMetricsDashboard:
        return [], warnings
    if not platform.monitoringNamespace:
        return [], [*warnings, _NO_NAMESPACE]
    labels = captured_labels(config)
    if not labels:
        return [], [*warnings, _NO_TELEMETRY]
    bodies = [_dashboard(platform, labels)]
    if platform.flavor == "openshift":
        bodies.append(_datasource(platform))
    return [Desired(body) for body in bodies], warnings


def captured_labels(config: MaasConfig) -> frozenset[str]:
    """The metric labels some tenant's gateway telemetry writes (a Removed tenant has none left)."""
    tenants = [t for t in config.tenants if t.managementState != "Removed"]
    return frozenset(label for tenant in tenants for label in telemetry_labels(tenant))


def _dashboard(platform: PlatformConfig, labels: frozenset[str]) -> dict[str, Any]:
    tokens = tuple(b.panel() for b in BREAKDOWNS if b.label in labels)
    rows = [Row("Overview", OVERVIEW, 3, 4), Row("Tokens", tokens, 2, 8), Row(TRAFFIC_TITLE, TRAFFIC, 3, 8)]
    datasource = _datasource_ref(platform)
    config = {
        "display": {"name": "Usage", "description": "Token usage, rate limits and latency by subscription"},
        "duration": DURATION_SHOWN,
        "panels": {panel.key: _panel(panel, datasource) for row in rows for panel in row.panels},
        "layouts": [_grid(row) for row in rows],
    }
    return k8s_object(
        naming.PERSES_API_VERSION,
        "PersesDashboard",
        naming.USAGE_DASHBOARD,
        platform.monitoringNamespace,
        {"config": config},
        naming.platform_labels(),
    )


def _datasource(platform: PlatformConfig) -> dict[str, Any]:
    """OpenShift's Thanos Querier through the Perses proxy; the operator keeps the TLS settings in a Perses secret
    named `{datasource}-secret`. Not the default, so other dashboards of the namespace keep theirs."""
    proxy = {"url": THANOS_QUERIER_URL, "secret": f"{naming.USAGE_DATASOURCE}-secret"}
    spec = {
        "config": {
            "display": {"name": "Thanos Querier (MaaS usage)"},
            "default": False,
            "plugin": {"kind": "PrometheusDatasource", "spec": {"proxy": {"kind": "HTTPProxy", "spec": proxy}}},
        },
        "client": {"tls": {"enable": True, "caCert": {"type": "file", "certPath": SERVICE_CA_FILE}}},
    }
    name, namespace = naming.USAGE_DATASOURCE, platform.monitoringNamespace
    return k8s_object(naming.PERSES_API_VERSION, "PersesDatasource", name, namespace, spec, naming.platform_labels())


def _datasource_ref(platform: PlatformConfig) -> dict[str, str] | None:
    """This program's datasource on OpenShift; on xKS none, so Perses takes the default Prometheus datasource."""
    if platform.flavor != "openshift":
        return None
    return {"kind": "PrometheusDatasource", "name": naming.USAGE_DATASOURCE}


def _panel(panel: Panel, datasource: Mapping[str, str] | None) -> dict[str, Any]:
    query: dict[str, Any] = {"query": panel.query}
    if panel.series:
        query["seriesNameFormat"] = panel.series
    if datasource is not None:
        query["datasource"] = dict(datasource)
    unit = {"unit": panel.unit, **({"shortValues": True} if panel.unit == "decimal" else {})}
    if panel.stat:
        plugin = {"kind": "StatChart", "spec": {"calculation": "last-number", "format": unit}}
    else:
        plugin = {"kind": "TimeSeriesChart", "spec": {"legend": {"position": "bottom"}, "yAxis": {"format": unit}}}
    return {
        "kind": "Panel",
        "spec": {
            "display": {"name": panel.title, "description": panel.description},
            "plugin": plugin,
            "queries": [
                {"kind": "TimeSeriesQuery", "spec": {"plugin": {"kind": "PrometheusTimeSeriesQuery", "spec": query}}}
            ],
        },
    }


def _grid(row: Row) -> dict[str, Any]:
    width = COLUMNS // row.per_row
    items = [
        {
            "x": (index % row.per_row) * width,
            "y": (index // row.per_row) * row.height,
            "width": width,
            "height": row.height,
            "content": {"$ref": f"#/spec/panels/{panel.key}"},
        }
        for index, panel in enumerate(row.panels)
    ]
    return {"kind": "Grid", "spec": {"display": {"title": row.title, "collapse": {"open": True}}, "items": items}}


def _live_copy_warnings(platform: PlatformConfig, observed: Observed) -> list[str]:
    """A live `dashboard-3-maas-usage-admin` that this program does not manage: seed 002 has it removed on upgrade.

    Pulumi deletes only objects in its state, and adopting a foreign object just to delete it would also take away
    a copy someone keeps on purpose (a controller still running with `coexist`), so the preview names the command.
    """
    namespace, name = platform.monitoringNamespace, naming.USAGE_DASHBOARD
    if not namespace:
        return []
    live = observed.meta("PersesDashboard", namespace, name)
    manager = live and live.label(naming.MANAGED_BY)
    if live is None or manager == naming.MANAGER:
        return []
    who = f"{naming.MANAGED_BY}: {quoted(manager)}" if manager else f"no {naming.MANAGED_BY} label"
    head = f"PersesDashboard {namespace}/{name} is in the cluster but not managed by this program ({who})"
    command = f"kubectl delete persesdashboard -n {namespace} {name}"
    if platform.usageMetricsDashboard:
        return [
            f"{head}, so `pulumi up` cannot create this program's own in its place (AlreadyExists); remove it first: "
            f"{command}"
        ]
    return [
        f"{head}, and maas:platform.usageMetricsDashboard is false (seed 002: the legacy usage dashboard is opt-in); "
        f"Pulumi does not delete what it does not manage, so remove it yourself: {command}"
    ]
