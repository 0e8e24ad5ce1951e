"""Gateway telemetry (upstream-platform.md §7): labels follow the capture flags exactly; off removes both."""

from __future__ import annotations

import itertools

import pytest

from maas.config import load_config
from maas.plan.tenants.telemetry import gateway_telemetry, metric_labels
from maas.tools import cel
from maas.tools.render import render
from tests.conftest import objects_of

FLAGS = ("captureOrganization", "captureUser", "captureGroup", "captureModelUsage")
FLAG_LABEL = {
    "captureOrganization": "organization_id",
    "captureUser": "user",
    "captureGroup": "group",
    "captureModelUsage": "model",
}


def _tenant(telemetry=None, name="redteam"):
    entry = {"name": name} if telemetry is None else {"name": name, "telemetry": telemetry}
    config = load_config({"tenants": [entry]})
    return config.platform, config.tenants[0]


@pytest.mark.parametrize("flags", list(itertools.product([False, True], repeat=4)))
def test_labels_follow_every_combination_of_capture_flags(flags):
    metrics = dict(zip(FLAGS, flags, strict=True))
    platform, tenant = _tenant({"metrics": metrics})
    objects, _ = gateway_telemetry(platform, tenant)
    policy = next(o.body for o in objects if o.kind == "TelemetryPolicy")
    labels = policy["spec"]["metrics"]["default"]["labels"]
    expected = {"subscription", "cost_center"} | {FLAG_LABEL[f] for f, on in metrics.items() if on}
    assert set(labels) == expected


def test_absent_telemetry_block_means_the_documented_defaults():
    """Upstream treats a missing spec.telemetry as off; here it is enabled with the CRD defaults."""
    platform, tenant = _tenant()
    objects, warnings = gateway_telemetry(platform, tenant)
    assert sorted(o.kind for o in objects) == ["Telemetry", "TelemetryPolicy"]
    policy = objects[0].body
    assert sorted(policy["spec"]["metrics"]["default"]["labels"]) == [
        "cost_center",
        "model",
        "organization_id",
        "subscription",
    ]
    assert warnings == []


def test_label_expressions_of_upstream():
    labels = metric_labels(
        load_config({}).tenants[0].telemetry.metrics.model_copy(update={"captureUser": True, "captureGroup": True})
    )
    assert labels["subscription"] == "auth.identity.selected_subscription"
    assert labels["user"] == "auth.identity.userid"
    assert labels["group"] == "auth.identity.groups_str"
    assert labels["model"] == 'responseBodyJSON("/model")'


@pytest.mark.parametrize(
    ("label", "field", "value"),
    [("cost_center", "costCenter", "cc-100"), ("organization_id", "organizationId", "acme")],
)
def test_metadata_labels_fall_back_to_empty_when_the_subscription_has_none(label, field, value):
    expression = metric_labels(load_config({}).tenants[0].telemetry.metrics)[label]
    with_field = {"auth": {"identity": {"subscription_info": {field: value}}}}
    without = {"auth": {"identity": {"subscription_info": {}}}}
    assert cel.evaluate(expression, with_field) == value
    assert cel.evaluate(expression, without) == ""


def test_subscription_and_user_labels_read_the_identity():
    identity = cel.subscription_identity(subscription="premium", userid="alice")
    context = cel.request(identity={**identity, "groups_str": "a,b"})
    assert cel.evaluate("auth.identity.selected_subscription", context) == "premium"
    assert cel.evaluate("auth.identity.userid", context) == "alice"


def test_policy_and_latency_target_the_tenant_gateway():
    platform, tenant = _tenant({"metrics": {}})
    policy, latency = (o.body for o in gateway_telemetry(platform, tenant)[0])
    assert policy["metadata"]["name"] == "maas-telemetry-redteam"
    assert policy["metadata"]["namespace"] == "openshift-ingress"
    assert policy["spec"]["targetRef"] == {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "redteam"}
    assert latency["metadata"]["name"] == "latency-per-subscription-redteam"
    assert latency["spec"]["selector"] == {"matchLabels": {"gateway.networking.k8s.io/gateway-name": "redteam"}}
    override = latency["spec"]["metrics"][0]["overrides"][0]
    assert override["tagOverrides"] == {
        "subscription": {"operation": "UPSERT", "value": 'request.headers["x-maas-subscription"]'}
    }
    assert policy["metadata"]["labels"]["app.kubernetes.io/part-of"] == "maas-observability"
    assert policy["metadata"]["labels"]["maas.opendatahub.io/tenant-name"] == "redteam"


def test_default_tenant_names():
    platform, tenant = _tenant(name="models-as-a-service")
    names = {o.kind: o.name for o in gateway_telemetry(platform, tenant)[0]}
    assert names == {"TelemetryPolicy": "maas-telemetry", "Telemetry": "latency-per-subscription"}


def test_capture_user_warns_about_privacy():
    platform, tenant = _tenant({"metrics": {"captureUser": True}})
    _, warnings = gateway_telemetry(platform, tenant)
    assert len(warnings) == 1 and "privacy" in warnings[0] and "redteam" in warnings[0]


def test_disabling_telemetry_removes_both_objects(dev_raw):
    before = render(dev_raw)
    assert "openshift-ingress/maas-telemetry-redteam" in objects_of(before, "TelemetryPolicy")
    dev_raw["tenants"][1]["telemetry"] = {"enabled": False, "metrics": {"captureUser": True}}
    after = render(dev_raw)
    assert set(objects_of(after, "TelemetryPolicy")) == {"openshift-ingress/maas-telemetry"}
    assert set(objects_of(after, "Telemetry")) == {"openshift-ingress/latency-per-subscription"}
    assert after.plan.outputs["tenants"]["redteam"]["telemetryLabels"] == []
    assert not any("privacy" in w for w in after.warnings)
