"""How many resources the program registers (issue 13): one per subscription, plus a few per model and tenant.

A subscription or an auth policy is one Kubernetes object under its tenant's component, the statuses of a
component are one resource, and objects that moved keep their URNs through aliases.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from unittest import mock

import pulumi
import pytest
from pulumi.dynamic.dynamic import serialize_provider as pickle

from maas.deploy.status_writer import batch_targets
from maas.plan.desired import object_identity
from maas.tools.render import DYNAMIC_TYPE, RecordingMonitor, render

STACK = "urn:pulumi:dev::maas::pulumi:pulumi:Stack::maas-dev"
MAAS = "kubernetes:maas.opendatahub.io/v1alpha1"


def with_subscriptions(raw: dict, count: int) -> dict:
    raw = copy.deepcopy(raw)
    for index in range(count):
        refs = [{"name": "granite-7b", "namespace": "llm", "tokenRateLimits": [{"limit": 100 + index, "window": "1m"}]}]
        raw["subscriptions"].append(
            {"name": f"extra-{index:02d}", "owner": {"groups": [{"name": "premium-users"}]}, "modelRefs": refs}
        )
    return raw


def kinds(rendering) -> Counter:
    return Counter(r.type for r in rendering.registrations)


@pytest.fixture(scope="module")
def grown(dev_raw_static):
    """The dev stack with ten more subscriptions and one more auth policy, and each provider pickle it made."""
    raw = with_subscriptions(dev_raw_static, 10)
    subjects = {"groups": [{"name": "extra"}]}
    raw["authPolicies"].append(
        {"name": "extra", "modelRefs": [{"name": "granite-7b", "namespace": "llm"}], "subjects": subjects}
    )
    pickles = []
    with mock.patch.object(pulumi.dynamic.dynamic, "serialize_provider", lambda p: pickles.append(p) or pickle(p)):
        return render(raw), pickles


def test_a_subscription_or_an_auth_policy_registers_exactly_one_resource(dev_rendering, grown):
    rendering, _ = grown
    assert len(rendering.registrations) - len(dev_rendering.registrations) == 11
    assert kinds(rendering) - kinds(dev_rendering) == Counter(
        {f"{MAAS}:MaaSSubscription": 10, f"{MAAS}:MaaSAuthPolicy": 1}
    )


def test_components_are_one_per_tenant_and_model_and_the_platform(dev_config, dev_rendering):
    components = Counter(r.type for r in dev_rendering.registrations if r.type.startswith("maas:index:"))
    models, tenants = len(dev_config.models), len(dev_config.tenants)
    assert components == Counter({"maas:index:Model": models, "maas:index:Tenant": tenants, "maas:index:Platform": 1})
    writers = [r for r in dev_rendering.registrations if r.type == DYNAMIC_TYPE]
    assert len(writers) == tenants  # each tenant's statuses with its models', in one resource while they fit


def test_each_status_is_written_once_by_a_resource_of_its_tenant(dev_rendering):
    plan = dev_rendering.plan
    writes = [d for d in plan.objects() if d.subresource == "status"]
    by_urn = {r.urn: r for r in dev_rendering.registrations}
    targets = Counter()
    for writer in (r for r in dev_rendering.registrations if r.type == DYNAMIC_TYPE):
        component = by_urn[writer.parent]
        assert component.type == "maas:index:Tenant" and writer.name == f"statuses/{component.name}"
        for key, target in batch_targets(writer.inputs).items():
            targets[key] += 1
            assert key == f"{target['kind']}/{target['namespace']}/{target['name']}"
    assert targets == Counter(f"{d.kind}/{d.namespace}/{d.name}" for d in writes)


def test_a_batch_waits_for_everything_each_of_its_statuses_describes(dev_rendering):
    urns = {
        object_identity(r.inputs["kind"], r.inputs["metadata"].get("namespace"), r.inputs["metadata"]["name"]): r.urn
        for r in dev_rendering.registrations
        if r.is_kubernetes_object
    }
    writes = {d.identity: d for d in dev_rendering.plan.objects() if d.subresource == "status"}
    tenant = next(r for r in dev_rendering.registrations if r.name == "statuses/models-as-a-service")
    for key in batch_targets(tenant.inputs):
        kind, namespace, name = key.split("/")
        write = writes[object_identity(kind, namespace, name) + "/status"]
        assert write.depends_on and {urns[i] for i in write.depends_on} <= set(tenant.dependencies), key


def test_the_status_documents_of_a_render_are_one_per_write(dev_rendering):
    """`render --status` lists each write as a `{Kind}Status` document, as before the writes were batched."""
    writes = [d for d in dev_rendering.plan.objects() if d.subresource == "status"]
    planned = sorted(
        json.dumps([f"{d.kind}Status", d.body["metadata"], d.body["status"]], sort_keys=True) for d in writes
    )
    rendered = [json.dumps([s["kind"], s["metadata"], s["status"]], sort_keys=True) for s in dev_rendering.statuses()]
    assert sorted(rendered) == planned and len(rendered) == len(writes)


def test_objects_that_moved_under_their_tenant_keep_their_urns_through_aliases(dev_rendering):
    """Subscriptions and auth policies had components of their own (issue 2 to 12). Under their tenant's component
    their URN changes, so each names the old one as an alias, in the engine's form; the mock engine computes the
    same URN for a child of the old component, so Pulumi moves the object instead of replacing it."""
    monitor = RecordingMonitor()
    moved = {
        r.name: r
        for r in dev_rendering.registrations
        if r.type in (f"{MAAS}:MaaSSubscription", f"{MAAS}:MaaSAuthPolicy")
    }
    premium = moved["models-as-a-service/premium"]
    old = f"urn:pulumi:dev::maas::maas:index:Subscription${MAAS}:MaaSSubscription::models-as-a-service/premium"
    assert premium.aliases == (old,)
    assert (
        premium.urn == f"urn:pulumi:dev::maas::maas:index:Tenant${MAAS}:MaaSSubscription::models-as-a-service/premium"
    )
    for registration in moved.values():
        owner = "Subscription" if registration.type.endswith("MaaSSubscription") else "AuthPolicy"
        old_parent = monitor.make_urn(STACK, f"maas:index:{owner}", registration.name)
        assert registration.aliases == (monitor.make_urn(old_parent, registration.type, registration.name),)
    others = [r for r in dev_rendering.registrations if r.aliases and r.name not in moved]
    assert others == []


def test_tenant_component_outputs_count_its_subscriptions_and_auth_policies_by_phase(dev_rendering):
    """A count per phase, not an entry each: the component is one resource in the state (issue 21)."""
    tenant = next(
        r for r in dev_rendering.registrations if r.type == "maas:index:Tenant" and r.name == "models-as-a-service"
    )
    outputs = dev_rendering.component_outputs[tenant.urn]
    for kind, key in (("Subscription", "subscriptions"), ("AuthPolicy", "authPolicies")):
        entries = [o for o in dev_rendering.plan.owners if o.kind == kind and o.name.startswith("models-as-a-service/")]
        assert entries and outputs[key] == dict(Counter(o.outputs["phase"] for o in entries))
    assert outputs["namespace"] == "models-as-a-service"


def test_the_dynamic_provider_is_pickled_once_per_component_not_once_per_status(grown):
    rendering, pickles = grown
    writers = [r for r in rendering.registrations if r.type == DYNAMIC_TYPE]
    assert len(pickles) == len(writers) < len(rendering.statuses())
