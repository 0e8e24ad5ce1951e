"""Issue 21: `platform.subscriptionBatches` registers a tenant's MaaSSubscriptions in a few bounded batch resources
(`deploy/object_batch.py`) instead of one resource each, so that a first `up` on a DIY backend writes tens of GB,
not terabytes. The objects, their statuses and every review tool's view of them stay exactly as they were."""

from __future__ import annotations

import copy
import json
import random
from dataclasses import replace

import pulumi
import pytest

from maas import naming
from maas.config import ConfigError, load_config
from maas.deploy import batches
from maas.deploy.object_batch import MARKER_ANNOTATION, ObjectBatchProvider, batch_objects, object_key, projection
from maas.deploy.status_writer import batch_targets
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.checks.batches import batch_issues
from maas.tools.render import object_sort_key, render
from tests.fake_kube import FakeKube, all_crds
from tests.test_provider_options import WireMonitor, no_secret_keys, wire_secret  # noqa: F401 (`no_secret_keys`)
from tests.test_resource_count import MAAS, with_subscriptions

SUBSCRIPTION = f"{MAAS}:MaaSSubscription"


def batched(raw: dict) -> dict:
    raw = copy.deepcopy(raw)
    raw["platform"] = {**raw.get("platform", {}), "subscriptionBatches": True}
    return raw


def object_batches(rendering) -> list:
    """By name: the SDK registers a resource when its inputs resolve, in no fixed order."""
    return sorted((r for r in rendering.registrations if r.is_object_batch), key=lambda r: r.name)


def live_subscription(namespace: str, name: str, annotations: dict | None = None) -> dict:
    metadata = {"name": name, "namespace": namespace, "uid": f"uid-{name}", "annotations": annotations or {}}
    return {"apiVersion": naming.MAAS_API_VERSION, "kind": "MaaSSubscription", "metadata": metadata, "spec": {}}


@pytest.fixture(scope="module")
def wide(dev_raw_static) -> dict:
    return with_subscriptions(dev_raw_static, 30)


@pytest.fixture(scope="module")
def both(wide):
    return render(wide), render(batched(wide))


def test_batched_subscriptions_are_no_resources_of_their_own_and_every_object_is_rendered_the_same(both):
    one_each, in_batches = both
    assert not [r for r in in_batches.registrations if r.type == SUBSCRIPTION]
    assert [r.name for r in object_batches(in_batches)] == [
        "subscriptions/models-as-a-service",
        "subscriptions/redteam",
    ]
    assert in_batches.objects() == one_each.objects()
    assert in_batches.statuses() == one_each.statuses()
    subscriptions = sum(r.type == SUBSCRIPTION for r in one_each.registrations)
    assert len(in_batches.registrations) == len(one_each.registrations) - subscriptions + 2


def test_a_batch_holds_its_objects_bodies_as_planned_and_marks_them_for_this_stack_and_batch(both):
    one_each, in_batches = both
    batch = object_batches(in_batches)[0]
    planned = {
        r.inputs["metadata"]["name"]: r.inputs
        for r in one_each.registrations
        if r.type == SUBSCRIPTION and r.inputs["metadata"]["namespace"] == "models-as-a-service"
    }
    held = batch_objects(batch.inputs)
    assert {entry["body"]["metadata"]["name"]: entry["body"] for entry in held.values()} == planned
    assert {entry["resource"] for entry in held.values()} == {"maassubscriptions"}
    assert batch.inputs["marker"] == "maas/dev:subscriptions/models-as-a-service"
    assert batch.parent.endswith("maas:index:Tenant::models-as-a-service")


def test_the_statuses_of_batched_subscriptions_are_written_after_their_batch_which_nothing_replaces(both):
    _, in_batches = both
    batch = object_batches(in_batches)[0]
    statuses = [r for r in in_batches.registrations if r.is_status_batch and "models-as-a-service" in r.name]
    writer = next(r for r in statuses if any(k.startswith("MaaSSubscription/") for k in batch_targets(r.inputs)))
    assert batch.urn in writer.dependencies
    assert batch.urn not in writer.replace_with


def test_beyond_the_bounds_a_tenant_has_several_batches_and_each_object_exactly_one(wide, monkeypatch):
    monkeypatch.setattr(batches, "MAX_OBJECTS", 8)
    rendering = render(batched(wide))
    found = object_batches(rendering)
    assert len(found) > 2 and "subscriptions/redteam" in [r.name for r in found]
    assert all(r.name.startswith("subscriptions/models-as-a-service/") for r in found[:-1])
    keys = [key for r in found for key in batch_objects(r.inputs)]
    assert len(keys) == len(set(keys)) == sum(1 for b in rendering.objects() if b["kind"] == "MaaSSubscription")
    assert all(len(batch_objects(r.inputs)) <= 8 for r in found)


def test_batches_do_not_depend_on_the_order_of_the_configuration(wide, monkeypatch):
    monkeypatch.setattr(batches, "MAX_OBJECTS", 8)
    shuffled = batched(wide)
    random.Random(21).shuffle(shuffled["subscriptions"])

    def inputs(rendering) -> dict:
        return {r.name: json.dumps(r.inputs, sort_keys=True) for r in object_batches(rendering)}

    assert inputs(render(shuffled)) == inputs(render(batched(wide)))


def test_adding_a_subscription_changes_one_batch(wide, monkeypatch):
    monkeypatch.setattr(batches, "MAX_OBJECTS", 16)
    before = {r.name: r.inputs["objects"] for r in object_batches(render(batched(wide)))}
    grown = batched(wide)
    grown["subscriptions"].append({**copy.deepcopy(wide["subscriptions"][-1]), "name": "added"})
    after = {r.name: r.inputs["objects"] for r in object_batches(render(grown))}
    assert len(before) > 2 and before.keys() == after.keys()
    assert sum(before[name] != after[name] for name in before) == 1


def test_without_the_key_nothing_changes(dev_rendering):
    assert not object_batches(dev_rendering)


def test_batches_need_a_cluster_to_observe_and_write_no_files(dev_raw):
    raw = batched(dev_raw)
    raw["platform"]["observe"] = False
    raw["platform"]["kubernetes"] = {"renderYamlToDirectory": "out"}
    with pytest.raises(ConfigError) as error:
        load_config(raw)
    messages = [str(issue) for issue in error.value.issues]
    assert any("maas:platform.subscriptionBatches" in m and "observe: true" in m for m in messages)
    assert any("maas:platform.subscriptionBatches" in m and "renderYamlToDirectory" in m for m in messages)


def test_a_live_subscription_no_batch_created_stops_the_update_naming_it(dev_raw):
    """A stack that registered its subscriptions one by one would delete them once a batch holds them: the
    switch is refused before anything is registered, and so is any subscription another tool created."""
    config = load_config(batched(dev_raw))
    subscription = next(s for s in config.subscriptions)
    namespace, name = subscription.namespace, subscription.name
    marked = {MARKER_ANNOTATION: "maas/dev:subscriptions/models-as-a-service"}
    for found, refused in ((None, True), (marked, False)):
        observed = Observed.of([live_subscription(namespace, name, found)])
        issues = batch_issues(config, build_plan(config, observed), observed)
        assert bool(issues) is refused
        if refused:
            (issue,) = issues
            assert issue.path == "maas:platform.subscriptionBatches"
            assert f"{namespace}/{name}" in issue.message and MARKER_ANNOTATION in issue.message


@pytest.mark.parametrize("batches", [False, True])
def test_a_subscription_a_batch_holds_is_never_registered_on_its_own_while_the_batch_holds_it(dev_raw, batches):
    """With batches off, or for a subscription the plan adopts (`Desired.adopt`: registered on its own even with
    batches on), the batch that applied it would delete it once updated without it: refused, with the way to
    release it."""
    config = load_config(batched(dev_raw) if batches else dev_raw)
    subscription = next(s for s in config.subscriptions)
    annotations = {MARKER_ANNOTATION: "maas/dev:subscriptions/models-as-a-service"}
    observed = Observed.of([live_subscription(subscription.namespace, subscription.name, annotations)])
    plan = build_plan(config, observed)
    plan.replace_objects(lambda d: replace(d, adopt=True) if d.kind == "MaaSSubscription" else d)
    (issue,) = batch_issues(config, plan, observed)
    assert issue.path == "maas:platform.subscriptionBatches"
    assert f"1 ({subscription.namespace}/{subscription.name})" in issue.message
    assert ("it adopts or leaves them alone" if batches else "subscriptionBatches is off") in issue.message
    assert f"{MARKER_ANNOTATION}-" in issue.message  # how to release it


def test_a_live_subscription_without_the_annotation_is_no_concern_of_a_stack_without_batches(dev_raw):
    config = load_config(dev_raw)
    observed = Observed.of([live_subscription(s.namespace, s.name) for s in config.subscriptions])
    assert batch_issues(config, build_plan(config, observed), observed) == []


def test_the_refusal_reaches_render_with_exit_2_and_nothing_registered(dev_raw):
    config = load_config(batched(dev_raw))
    subscription = next(s for s in config.subscriptions)
    observed = Observed.of([live_subscription(subscription.namespace, subscription.name)])
    with pytest.raises(ConfigError) as error:
        render(batched(dev_raw), observed=observed)
    assert "maas:platform.subscriptionBatches" in str(error.value)


def test_an_adopted_or_unmanaged_subscription_is_registered_on_its_own(dev_raw):
    """Objects whose options say adopt, import or leave alone keep pulumi-kubernetes, which means exactly that."""
    from maas.plan.batching import is_batched
    from maas.plan.desired import Desired

    platform = load_config(batched(dev_raw)).platform
    body = live_subscription("ns", "a")
    assert is_batched(Desired(body), platform)
    assert not is_batched(Desired(body, adopt=True), platform)
    assert not is_batched(Desired(body, import_id="ns/a"), platform)
    assert not is_batched(Desired(body, retain_on_delete=True, ignore_changes=tuple(body)), platform)
    assert not is_batched(Desired({**body, "kind": "MaaSAuthPolicy"}), platform)
    assert not is_batched(Desired(body), load_config(dev_raw).platform)


@pytest.mark.usefixtures("no_secret_keys")
def test_a_secret_subscription_text_makes_its_batch_objects_secret_and_changes_nothing_else(
    dev_raw, tmp_path, monkeypatch
):
    """`maas:subscriptions` secret with no stack file to locate the values: every text of every subscription is a
    Pulumi secret (`config.secrets`). The batch still holds them, as one secret string."""
    monkeypatch.chdir(tmp_path)
    plain = render(batched(dev_raw))
    pulumi.runtime.set_all_config({}, secret_keys=["maas:subscriptions"])
    monitor = WireMonitor()
    rendering = render(batched(dev_raw), monitor=monitor)
    assert object_batches(rendering)
    for batch in object_batches(rendering):
        assert wire_secret(monitor.wire[f"{batch.type}::{batch.name}"]["objects"])
    held = sorted((body for body, r in rendering.registered_objects() if r.is_object_batch), key=object_sort_key)
    assert held == [body for body in plain.objects() if body["kind"] == "MaaSSubscription"]


def test_a_batch_is_applied_after_the_stacks_token_rate_limit_policies(both):
    """So the largest resources but the status writers come last in a first `up` (whose DIY writes grow with the
    state at each step), and a new subscription is applied once the policies that meter it are."""
    _, in_batches = both
    policies = {
        r.urn for r in in_batches.registrations if r.type == "kubernetes:kuadrant.io/v1alpha1:TokenRateLimitPolicy"
    }
    assert policies
    for batch in object_batches(in_batches):
        assert policies <= set(batch.dependencies)


def test_what_the_program_registers_the_provider_applies_and_a_removed_subscription_alone_is_deleted(dev_raw):
    """The whole path: the batches a render registers, created by their provider against an API server, hold
    exactly the planned subscriptions (each with its batch's marker); the next render without one subscription
    updates its batch, which deletes that one and sends nothing for the others."""
    first = render(batched(dev_raw))
    planned = {object_key(b): b for b in first.objects() if b["kind"] == "MaaSSubscription"}
    with FakeKube(all_crds()) as kube:
        connection = {"kubeconfig": kube.kubeconfig(), "context": "maas-dev"}
        provider = ObjectBatchProvider()
        outs = {}
        for batch in object_batches(first):
            outs[batch.name] = provider.create({**batch.inputs, "connection": connection}).outs
        live = {object_key(o): o for o in kube.objects if o["kind"] == "MaaSSubscription"}
        assert live.keys() == planned.keys()
        for key, body in planned.items():
            assert projection(live[key], body) == body
            assert live[key]["metadata"]["annotations"][MARKER_ANNOTATION].startswith("maas/dev:subscriptions/")
        fewer = batched(dev_raw)
        fewer["subscriptions"] = [s for s in fewer["subscriptions"] if s["name"] != "basic"]
        del kube.requests[:]
        for batch in object_batches(render(fewer)):
            news = {**batch.inputs, "connection": connection}
            if provider.diff("objects", outs[batch.name], news).changes:
                provider.update("objects", outs[batch.name], news)
        gone = "MaaSSubscription/models-as-a-service/basic"
        assert {object_key(o) for o in kube.objects if o["kind"] == "MaaSSubscription"} == planned.keys() - {gone}
        assert [(r.method, r.path.rpartition("/")[2]) for r in kube.requests] == [("GET", "basic"), ("DELETE", "basic")]


def test_a_batch_is_applied_after_the_namespace_the_stack_creates_for_its_subscriptions(both):
    """pulumi-kubernetes retries a create whose namespace does not exist yet; a batch applies at once, so it waits
    for the Namespace this stack registers (a new tenant's)."""
    _, in_batches = both
    namespace = next(
        r.urn
        for r in in_batches.registrations
        if r.type == "kubernetes:core/v1:Namespace" and r.name == "ai-tenant-redteam"
    )
    by_name = {r.name: r for r in object_batches(in_batches)}
    assert namespace in by_name["subscriptions/redteam"].dependencies
    assert namespace not in by_name["subscriptions/models-as-a-service"].dependencies


def test_a_tenant_without_subscriptions_has_no_batch(dev_raw):
    raw = batched(dev_raw)
    raw["subscriptions"] = [s for s in raw["subscriptions"] if s.get("namespace", "").startswith("ai-tenant-") is False]
    names = [r.name for r in object_batches(render(raw))]
    assert names and "subscriptions/redteam" not in names
