"""Management states (Managed, Removed, Unmanaged), readiness annotations and tenant removal, as registered."""

from __future__ import annotations

import pytest

from maas.plan.readiness import is_custom_resource
from maas.tools.render import render
from tests.conftest import owned

SKIP_AWAIT = "pulumi.com/skipAwait"


def _tenants(*entries):
    return {"tenants": [{"name": "models-as-a-service"}, *entries]}


ENTRY_KINDS = ("MaaSSubscription", "MaaSAuthPolicy")  # the tenant's entries, under its component since issue 13


def _platform_of(rendering, tenant):
    """What a tenant's management state governs: its component's objects except its subscriptions and auth
    policies (entries of their own, which share the tenant's component)."""
    return {key: r for key, r in owned(rendering, "Tenant", tenant).items() if key[0] not in ENTRY_KINDS}


def _identities(rendering):
    return {(r.type, r.name): r for r in rendering.registrations if r.is_kubernetes_object}


def test_removed_tenant_registers_nothing_but_its_component(dev_raw):
    dev_raw["tenants"][1]["managementState"] = "Removed"
    rendering = render(dev_raw)
    assert _platform_of(rendering, "redteam") == {}
    assert rendering.plan.outputs["tenants"]["redteam"]["phase"] == "Removed"
    default = owned(rendering, "Tenant", "models-as-a-service")
    assert ("Deployment", "odh-ai-gateway-infra/maas-api") in default
    assert ("ClusterRole", "maas-api") in owned(rendering, "Platform", "platform")


def test_removed_drops_objects_other_concerns_add_to_the_tenant(dev_raw, dev_rendering):
    before = owned(dev_rendering, "Tenant", "redteam")
    assert ("AuthPolicy", "openshift-ingress/redteam-maas-auth") in before
    assert ("TokenRateLimitPolicy", "openshift-ingress/gateway-default-deny-redteam") in before
    dev_raw["tenants"][1]["managementState"] = "Removed"
    after = _identities(render(dev_raw))
    assert not [key for key in after if key[1].endswith(("redteam-maas-auth", "gateway-default-deny-redteam"))]


def test_shared_objects_go_only_when_every_tenant_is_removed():
    one_left = render(_tenants({"name": "a", "managementState": "Removed"}))
    assert owned(one_left, "Platform", "platform")
    none_left = render({"tenants": [{"name": "models-as-a-service", "managementState": "Removed"}]})
    assert not [r for r in none_left.registrations if r.is_kubernetes_object and "Platform" in r.urn]


def test_unmanaged_tenant_is_neither_updated_nor_deleted(dev_raw):
    dev_raw["tenants"][1]["managementState"] = "Unmanaged"
    rendering = render(dev_raw)
    objects = _platform_of(rendering, "redteam")
    assert ("AuthPolicy", "openshift-ingress/redteam-maas-auth") in objects
    assert ("Deployment", "odh-ai-gateway-infra/maas-api-redteam") in objects
    for key, registration in objects.items():
        assert registration.retain_on_delete is True, key
        assert set(registration.ignore_changes) == set(registration.inputs) >= {"apiVersion", "kind", "metadata"}, key
    assert rendering.plan.outputs["tenants"]["redteam"]["phase"] == "Unmanaged"
    default = owned(rendering, "Tenant", "models-as-a-service")[("Deployment", "odh-ai-gateway-infra/maas-api")]
    assert default.retain_on_delete is False and default.ignore_changes == ()


def test_managed_objects_have_no_special_options_except_namespace_and_plugins(dev_rendering):
    for (kind, name), registration in owned(dev_rendering, "Tenant", "redteam").items():
        if kind == "Namespace":
            assert registration.retain_on_delete is True
        elif kind == "ConfigMap":
            assert registration.ignore_changes == ("data",)
        elif kind == "Service":  # the API server's allocated IPs (maas/plan/server_fields.py)
            expected = (False, ("spec.clusterIP", "spec.clusterIPs"))
            assert (registration.retain_on_delete, registration.ignore_changes) == expected, name
        else:
            assert (registration.retain_on_delete, registration.ignore_changes) == (False, ()), (kind, name)


def test_removing_a_tenant_removes_only_its_objects():
    with_a = render(_tenants({"name": "a"}, {"name": "b"}))
    without_a = render(_tenants({"name": "b"}))
    before, after = _identities(with_a), _identities(without_a)
    assert set(after) <= set(before)
    removed = {key[1] for key in set(before) - set(after)}
    assert removed == {name for _, name in owned(with_a, "Tenant", "a")}
    for key, registration in after.items():
        assert registration.inputs == before[key].inputs, key


@pytest.mark.parametrize(
    ("api_version", "custom"),
    [
        ("v1", False),
        ("apps/v1", False),
        ("rbac.authorization.k8s.io/v1", False),
        ("networking.k8s.io/v1", False),
        ("autoscaling/v2", False),
        ("gateway.networking.k8s.io/v1", True),
        ("kuadrant.io/v1", True),
        ("networking.istio.io/v1alpha3", True),
        ("maas.opendatahub.io/v1alpha1", True),
    ],
)
def test_custom_resources_are_told_apart_from_built_in_kinds(api_version, custom):
    assert is_custom_resource(api_version) is custom


def awaited_by_the_status_writer(body: dict) -> bool:
    """A tenant's maas-api Deployment: the status writer awaits it (`tests/test_tenant_rollout.py`)."""
    return body["kind"] == "Deployment" and body["metadata"]["name"].startswith("maas-api")


def test_custom_resources_are_not_awaited_by_default(dev_rendering):
    for body in dev_rendering.objects():
        annotations = body["metadata"].get("annotations", {})
        if is_custom_resource(body["apiVersion"]) or awaited_by_the_status_writer(body):
            assert annotations.get(SKIP_AWAIT) == "true", (body["kind"], body["metadata"]["name"])
        else:
            assert SKIP_AWAIT not in annotations, (body["kind"], body["metadata"]["name"])


def test_await_custom_resources_trades_the_annotation_for_a_condition_where_there_is_one(dev_raw):
    """Without `pulumi.com/waitFor` the provider awaits no custom resource (tests/test_engine_options.py): kinds
    with a condition to await carry it instead of skipAwait; the others keep skipAwait (maas/plan/readiness.py)."""
    dev_raw["platform"]["awaitCustomResources"] = True
    objects = render(dev_raw).objects()
    awaited = [o for o in objects if "pulumi.com/waitFor" in o["metadata"].get("annotations", {})]
    assert {"AuthPolicy", "TokenRateLimitPolicy", "HTTPRoute"} <= {o["kind"] for o in awaited}
    assert not [o for o in awaited if SKIP_AWAIT in o["metadata"]["annotations"]]
    skipped = [o for o in objects if SKIP_AWAIT in o["metadata"].get("annotations", {})]
    assert all(awaited_by_the_status_writer(o) or is_custom_resource(o["apiVersion"]) for o in skipped)


def test_coexist_marks_every_platform_object_for_the_controller(dev_raw):
    dev_raw["platform"]["controllerMode"] = "coexist"
    rendering = render(dev_raw)
    for owner in (("Tenant", "redteam"), ("Platform", "platform")):
        for key, registration in owned(rendering, *owner).items():
            assert registration.inputs["metadata"]["annotations"]["opendatahub.io/managed"] == "false", key


def test_tenant_order_changes_nothing():
    entries = [
        {"name": "models-as-a-service", "telemetry": {"metrics": {"captureUser": True}}},
        {"name": "b", "payloadProcessing": {"replicas": 9, "autoscaling": {"maxReplicas": 3}}},
        {"name": "a", "telemetry": {"metrics": {"captureUser": True}}},
    ]
    forward, backward = render({"tenants": entries}), render({"tenants": entries[::-1]})
    assert forward.objects() == backward.objects()
    assert forward.warnings == backward.warnings and len(forward.warnings) == 3
    assert forward.plan.outputs == backward.plan.outputs


def test_removed_tenant_with_entries_left_is_a_warning(dev_raw):
    next(t for t in dev_raw["tenants"] if t["name"] == "redteam")["managementState"] = "Removed"
    warnings = render(dev_raw).warnings
    assert (
        "maas:tenants (redteam) is Removed, so its gateway policies and maas-api are gone, but auth policy "
        "ai-tenant-redteam/redteam-access, model redteam-models/claude-sonnet, model redteam-models/qwen-coder, "
        "subscription ai-tenant-redteam/redteam-eval still reference it; remove them too, or set the tenant back to "
        "Managed"
    ) in warnings
