"""The usage dashboard opt-in (seed 002 "Legacy metrics usage dashboard is opt-in", issue 11 item 6).

The key rule: every PromQL query of the rendered dashboard uses only metric names and label names that the
program's own rendered telemetry objects produce. The label sets are computed from the rendered TelemetryPolicy and
Istio Telemetry, never from the dashboard module, so a panel over a label no tenant captures fails here.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml

from maas import naming
from maas.config import load_config, raw_from_stack_file
from maas.crdschema import default_registry, validate_all
from maas.observe import KINDS, ObjectRef, Observed, what_to_observe
from maas.plan import dashboard
from maas.plan.build import build_plan
from maas.plan.checks.preflight import preflight
from maas.tools.render import render
from tests.conftest import ROOT, objects_of, owned

STACK = ROOT / "tests" / "stacks" / "Pulumi.usage-dashboard.yaml"
DOCS = ROOT / "docs" / "usage-dashboard.md"
NAME = "dashboard-3-maas-usage-admin"
PERSES = ("PersesDashboard", "PersesDatasource")

# Where the labels go. Kuadrant adds a TelemetryPolicy's labels to Limitador's three counters (kuadrant-operator
# doc/user-guides/observability/token-metrics.md and limitador-metrics.md); an Istio Telemetry override of
# REQUEST_DURATION tags Istio's request-duration histogram, whose series are _bucket (with Prometheus' `le`), _count
# and _sum.
LIMITADOR_COUNTERS = ("authorized_hits", "authorized_calls", "limited_calls")
ISTIO_METRICS = {"REQUEST_DURATION": "istio_request_duration_milliseconds"}
HISTOGRAM_SERIES = {"_bucket": {"le"}, "_count": set(), "_sum": set()}

# A deliberately small PromQL reader: selectors `metric{label op "value", ...}`, `by (labels)`, the two Perses range
# variables and numbers; anything else left over (a bare metric, another function, `without`, `on`) fails.
FUNCTIONS = {"sum", "rate", "increase", "topk", "histogram_quantile"}
SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\{([^{}]*)\}")
MATCHER = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*"[^"\\]*"\s*')
GROUPING = re.compile(r"\bby \(([^()]*)\)")
RANGE = re.compile(r"\[\$__(?:rate_interval|range)\]")
NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse(query: str) -> tuple[list[tuple[str, set[str]]], set[str]]:
    """(selectors as (metric, matcher labels), grouping labels); AssertionError on anything it does not know."""
    selectors = []
    for match in SELECTOR.finditer(query):
        metric, body = match.groups()
        matchers = [m for m in body.split(",") if m.strip()]
        assert matchers and all(MATCHER.fullmatch(m) for m in matchers), f"unreadable selector in {query!r}"
        selectors.append((metric, {MATCHER.fullmatch(m).group(1) for m in matchers}))
    rest = SELECTOR.sub(" ", query)
    grouping = {label.strip() for match in GROUPING.finditer(rest) for label in match.group(1).split(",")}
    rest = NUMBER.sub(" ", RANGE.sub(" ", GROUPING.sub(" ", rest)))
    leftovers = set(IDENTIFIER.findall(rest)) - FUNCTIONS
    assert not leftovers, f"{query!r}: not understood: {sorted(leftovers)}"
    rest = IDENTIFIER.sub(" ", rest)
    assert set(rest) <= set("(), "), f"{query!r}: not understood: {rest!r}"
    assert selectors, f"{query!r} selects no metric"
    return selectors, grouping


def produced(rendering) -> dict[str, set[str]]:
    """Metric name -> the label names the rendered telemetry objects give it."""
    labels: dict[str, set[str]] = {}
    for policy in objects_of(rendering, "TelemetryPolicy").values():
        for metric in LIMITADOR_COUNTERS:
            labels.setdefault(metric, set()).update(policy["spec"]["metrics"]["default"]["labels"])
    for telemetry in objects_of(rendering, "Telemetry").values():
        for override in (o for metric in telemetry["spec"]["metrics"] for o in metric["overrides"]):
            base = ISTIO_METRICS[override["match"]["metric"]]
            for suffix, own in HISTOGRAM_SERIES.items():
                labels.setdefault(base + suffix, set()).update({*override["tagOverrides"], *own})
    return labels


def queries(body: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Panel key -> the PrometheusTimeSeriesQuery specs of the panel."""
    return {
        key: [q["spec"]["plugin"]["spec"] for q in panel["spec"]["queries"]]
        for key, panel in body["spec"]["config"]["panels"].items()
    }


def stack_raw() -> dict[str, Any]:
    raw, _ = raw_from_stack_file(STACK)
    return copy.deepcopy(raw)


def opted_in(platform: dict | None = None, tenants: list | None = None) -> dict[str, Any]:
    raw: dict[str, Any] = {"platform": {"usageMetricsDashboard": True, **(platform or {})}}
    if tenants is not None:
        raw["tenants"] = tenants
    return raw


def perses(rendering) -> list[dict[str, Any]]:
    return [body for body in rendering.objects() if body["kind"] in PERSES]


def the_dashboard(rendering) -> dict[str, Any]:
    (body,) = [b for b in rendering.objects() if b["kind"] == "PersesDashboard"]
    return body


def all_flags(on: bool) -> dict[str, bool]:
    return dict.fromkeys(("captureOrganization", "captureUser", "captureGroup", "captureModelUsage"), on)


# --- opt-in: what is created, and when nothing is


@pytest.fixture(scope="module")
def stack_rendering():
    return render(stack_raw())


def test_openshift_dashboard_and_datasource_validate_against_their_crds(stack_rendering):
    bodies = perses(stack_rendering)
    assert [(b["apiVersion"], b["kind"], b["metadata"]["namespace"], b["metadata"]["name"]) for b in bodies] == [
        ("perses.dev/v1alpha2", "PersesDashboard", "maas-monitoring", NAME),
        ("perses.dev/v1alpha2", "PersesDatasource", "maas-monitoring", naming.USAGE_DATASOURCE),
    ]
    assert validate_all(bodies) == []
    assert all(b["metadata"]["labels"] == naming.platform_labels() for b in bodies)


def test_the_objects_belong_to_the_platform_component(stack_rendering):
    children = owned(stack_rendering, "Platform", "platform")
    assert ("PersesDashboard", f"maas-monitoring/{NAME}") in children
    assert ("PersesDatasource", f"maas-monitoring/{naming.USAGE_DATASOURCE}") in children


def test_the_datasource_is_openshifts_thanos_querier_with_the_service_ca(stack_rendering):
    (source,) = [b for b in perses(stack_rendering) if b["kind"] == "PersesDatasource"]
    assert source["spec"] == {
        "config": {
            "display": {"name": "Thanos Querier (MaaS usage)"},
            "default": False,
            "plugin": {
                "kind": "PrometheusDatasource",
                "spec": {
                    "proxy": {
                        "kind": "HTTPProxy",
                        "spec": {
                            "url": "https://thanos-querier.openshift-monitoring.svc.cluster.local:9091",
                            "secret": "maas-usage-thanos-querier-secret",
                        },
                    }
                },
            },
        },
        "client": {"tls": {"enable": True, "caCert": {"type": "file", "certPath": "/ca/service-ca.crt"}}},
    }


def test_every_query_names_the_datasource_the_program_creates(stack_rendering):
    wanted = {"kind": "PrometheusDatasource", "name": naming.USAGE_DATASOURCE}
    specs = [spec for found in queries(the_dashboard(stack_rendering)).values() for spec in found]
    assert specs and all(spec["datasource"] == wanted for spec in specs)


def test_xks_gets_the_dashboard_on_the_default_datasource_and_no_datasource_of_its_own():
    bodies = perses(render(opted_in({"flavor": "xks", "monitoringNamespace": "monitoring"})))
    assert [b["kind"] for b in bodies] == ["PersesDashboard"]
    assert validate_all(bodies) == []
    specs = [spec for found in queries(bodies[0]).values() for spec in found]
    assert specs and not any("datasource" in spec for spec in specs)


def test_default_false_creates_none(dev_rendering):
    assert perses(dev_rendering) == []
    assert not any("usageMetricsDashboard" in w for w in dev_rendering.warnings)


def test_empty_monitoring_namespace_creates_none_and_says_why():
    rendering = render(opted_in({"monitoringNamespace": ""}))
    assert perses(rendering) == []
    assert (
        'maas:platform.usageMetricsDashboard is true, but platform.monitoringNamespace is "" (dashboards disabled), '
        "so no usage dashboard is created; set monitoringNamespace to the namespace Perses reads dashboards from"
    ) in rendering.warnings


def test_no_tenant_with_telemetry_creates_none_and_says_why():
    tenants = [{"name": "models-as-a-service", "telemetry": {"enabled": False}}, {"name": "gone"}]
    tenants[1]["managementState"] = "Removed"
    rendering = render(opted_in(tenants=tenants))
    assert perses(rendering) == []
    assert (
        "maas:platform.usageMetricsDashboard is true, but no tenant that is not Removed has telemetry enabled, so "
        "there are no usage metrics and no usage dashboard is created; enable a tenant's telemetry or set it to false"
    ) in rendering.warnings


def test_the_api_version_is_the_storage_version_of_both_crds():
    version = naming.PERSES_API_VERSION.rpartition("/")[2]
    for plural in ("persesdashboards", "persesdatasources"):
        (crd,) = yaml.safe_load_all((default_registry().directory / f"perses.dev_{plural}.yaml").read_text())
        assert [v["name"] for v in crd["spec"]["versions"] if v["storage"]] == [version]
    assert KINDS["PersesDashboard"].api_version == naming.PERSES_API_VERSION


# --- the queries use what the telemetry really produces


CAPTURES = {
    "every flag on": [{"name": "models-as-a-service", "telemetry": {"metrics": all_flags(True)}}],
    "the defaults": [{"name": "models-as-a-service"}],
    "every flag off": [{"name": "models-as-a-service", "telemetry": {"metrics": all_flags(False)}}],
    "users only on a second tenant": [
        {"name": "models-as-a-service", "telemetry": {"metrics": all_flags(False)}},
        {"name": "blue", "telemetry": {"metrics": {**all_flags(False), "captureUser": True}}},
    ],
}


@pytest.mark.parametrize("tenants", list(CAPTURES.values()), ids=list(CAPTURES))
def test_every_query_uses_only_metrics_and_labels_the_telemetry_objects_produce(tenants):
    rendering = render(opted_in(tenants=tenants))
    labels = produced(rendering)
    for key, specs in queries(the_dashboard(rendering)).items():
        for spec in specs:
            selectors, grouping = parse(spec["query"])
            for metric, matched in selectors:
                assert metric in labels, f"{key}: {metric} is not a metric the telemetry produces"
                assert matched | grouping <= labels[metric], f"{key}: {sorted(matched | grouping - labels[metric])}"


@pytest.mark.parametrize("tenants", list(CAPTURES.values()), ids=list(CAPTURES))
def test_tokens_are_broken_down_by_every_captured_label_and_no_other(tenants):
    rendering = render(opted_in(tenants=tenants))
    token_groupings = set()
    for specs in queries(the_dashboard(rendering)).values():
        for spec in specs:
            selectors, grouping = parse(spec["query"])
            if [metric for metric, _ in selectors] == ["authorized_hits"]:
                token_groupings |= grouping
    assert token_groupings == produced(rendering)["authorized_hits"]


def test_the_stack_with_every_label_has_every_panel_in_this_order(stack_rendering):
    layouts = the_dashboard(stack_rendering)["spec"]["config"]["layouts"]
    assert [grid["spec"]["display"]["title"] for grid in layouts] == [
        "Overview",
        "Tokens",
        "Requests, rate limits and latency",
    ]
    assert [item["content"]["$ref"].rpartition("/")[2] for grid in layouts for item in grid["spec"]["items"]] == [
        "tokensInRange",
        "requestsInRange",
        "rateLimitedInRange",
        "tokensBySubscription",
        "tokensByModel",
        "tokensByUser",
        "tokensByGroups",
        "tokensByOrganization",
        "tokensByCostCenter",
        "requestsBySubscription",
        "rateLimitedBySubscription",
        "latencyBySubscription",
    ]


def test_the_query_reader_is_strict():
    assert parse('topk(10, sum by (user) (rate(authorized_hits{user!=""}[$__rate_interval])))') == (
        [("authorized_hits", {"user"})],
        {"user"},
    )
    assert parse('histogram_quantile(0.95, sum by (a, le) (rate(m_bucket{a!="", b=~"x|y"}[$__range])))') == (
        [("m_bucket", {"a", "b"})],
        {"a", "le"},
    )
    for query in (
        "sum(rate(authorized_hits[$__rate_interval]))",  # a bare metric
        'sum without (user) (authorized_hits{user!=""})',  # a grouping the reader does not know
        'avg(authorized_hits{user!=""})',  # a function it does not know
        'sum(authorized_hits{user!=""} offset 5m)',
        "sum(authorized_hits{user})",  # a matcher without a value
    ):
        with pytest.raises(AssertionError):
            parse(query)


def test_every_panel_is_laid_out_exactly_once(stack_rendering):
    config = the_dashboard(stack_rendering)["spec"]["config"]
    refs = [item["content"]["$ref"] for grid in config["layouts"] for item in grid["spec"]["items"]]
    assert sorted(refs) == sorted(f"#/spec/panels/{key}" for key in config["panels"])
    cells = [
        (grid["spec"]["display"]["title"], item["x"], item["y"])
        for grid in config["layouts"]
        for item in grid["spec"]["items"]
    ]
    assert len(cells) == len(set(cells))
    assert all(item["x"] + item["width"] <= 24 for grid in config["layouts"] for item in grid["spec"]["items"])


def test_the_docs_page_shows_every_panel_and_its_query(stack_rendering):
    text = DOCS.read_text(encoding="utf-8")
    for panel in the_dashboard(stack_rendering)["spec"]["config"]["panels"].values():
        assert f"**{panel['spec']['display']['name']}**" in text
        for spec in (q["spec"]["plugin"]["spec"] for q in panel["spec"]["queries"]):
            assert f"`{spec['query']}`" in text


# --- a copy this program does not manage


def live_copy(labels: dict[str, str] | None, namespace: str = "opendatahub") -> Observed:
    metadata: dict[str, Any] = {"name": NAME, "namespace": namespace}
    if labels is not None:
        metadata["labels"] = labels
    body = {"apiVersion": naming.PERSES_API_VERSION, "kind": "PersesDashboard", "metadata": metadata, "spec": {}}
    return Observed.of([body], got=[ObjectRef("PersesDashboard", namespace, NAME)])


CONTROLLER = {"app.kubernetes.io/managed-by": "maas-controller"}


def test_a_controller_owned_copy_is_reported_with_the_command_that_removes_it():
    plan = build_plan(load_config({}), live_copy(CONTROLLER))
    assert (
        "PersesDashboard opendatahub/dashboard-3-maas-usage-admin is in the cluster but not managed by this program "
        "(app.kubernetes.io/managed-by: 'maas-controller'), and maas:platform.usageMetricsDashboard is false (seed "
        "002: the legacy usage dashboard is opt-in); Pulumi does not delete what it does not manage, so remove it "
        "yourself: kubectl delete persesdashboard -n opendatahub dashboard-3-maas-usage-admin"
    ) in plan.warnings
    assert not [obj for obj in plan.objects() if obj.kind in PERSES]


def test_a_copy_without_a_manager_label_is_reported_too():
    (warning,) = [w for w in build_plan(load_config({}), live_copy(None)).warnings if "PersesDashboard" in w]
    assert "(no app.kubernetes.io/managed-by label)" in warning
    assert warning.endswith("kubectl delete persesdashboard -n opendatahub dashboard-3-maas-usage-admin")


def test_opting_in_over_a_foreign_copy_says_the_create_would_fail():
    plan = build_plan(load_config(opted_in()), live_copy({"app.kubernetes.io/managed-by": "maas-observability"}))
    assert (
        "PersesDashboard opendatahub/dashboard-3-maas-usage-admin is in the cluster but not managed by this program "
        "(app.kubernetes.io/managed-by: 'maas-observability'), so `pulumi up` cannot create this program's own in "
        "its place (AlreadyExists); remove it first: kubectl delete persesdashboard -n opendatahub "
        "dashboard-3-maas-usage-admin"
    ) in plan.warnings
    assert [obj.kind for obj in plan.objects() if obj.kind in PERSES] == list(PERSES)


@pytest.mark.parametrize(
    "observed",
    [
        live_copy({"app.kubernetes.io/managed-by": "pulumi"}),  # ours: Pulumi deletes it itself
        Observed.of([], got=[ObjectRef("PersesDashboard", "opendatahub", NAME)]),  # absent
        Observed.nothing(),  # not looked at
        live_copy(CONTROLLER, namespace="elsewhere"),  # not in the monitoring namespace
    ],
    ids=["own", "absent", "unknown", "other-namespace"],
)
def test_no_report_without_a_foreign_copy_in_the_monitoring_namespace(observed):
    assert not [w for w in build_plan(load_config({}), observed).warnings if "PersesDashboard" in w]


def test_the_snapshot_looks_for_the_copy_in_the_monitoring_namespace():
    gets = what_to_observe(load_config({"platform": {"monitoringNamespace": "mon"}})).gets
    assert ObjectRef("PersesDashboard", "mon", NAME) in gets
    assert ObjectRef("CustomResourceDefinition", None, "persesdashboards.perses.dev") in gets
    gets = what_to_observe(load_config({"platform": {"monitoringNamespace": ""}})).gets
    assert not [ref for ref in gets if ref.kind == "PersesDashboard"]


def test_opting_in_without_perses_installed_stops_before_anything_is_registered():
    config = load_config(opted_in())
    observed = Observed.of([], crds={"PersesDashboard": False})
    issues = preflight(config, build_plan(config, observed), observed)
    assert [issue.path for issue in issues] == ["cluster"]
    assert "persesdashboards.perses.dev (PersesDashboard perses.dev/v1alpha2) is not installed" in issues[0].message


def test_captured_labels_skip_removed_tenants():
    config = load_config(
        {
            "tenants": [
                {"name": "models-as-a-service", "telemetry": {"metrics": all_flags(False)}},
                {"name": "gone", "managementState": "Removed", "telemetry": {"metrics": all_flags(True)}},
            ]
        }
    )
    assert dashboard.captured_labels(config) == {"subscription", "cost_center"}


def test_a_copy_whose_labels_are_not_a_mapping_reads_as_unmanaged_never_a_crash():
    warnings = [w for w in build_plan(load_config({}), live_copy("oops")).warnings if "PersesDashboard" in w]
    unreadable, warning = warnings  # the wrong shape is said once, then the copy reads as unlabelled
    assert unreadable.startswith("unreadable live object: PersesDashboard") and "metadata.labels" in unreadable
    assert "(no app.kubernetes.io/managed-by label)" in warning
