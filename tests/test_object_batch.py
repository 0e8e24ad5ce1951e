"""The object batches against a local API server (tests/fake_kube.py): what create, update, delete and refresh send,
the marker that tells a batch's objects from others, and every way a write fails."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pulumi
import pytest

from maas.deploy.object_batch import (
    FIELD_MANAGER,
    MARKER_ANNOTATION,
    ObjectBatchError,
    ObjectBatchProvider,
    batch_inputs,
    batch_objects,
    object_key,
    projection,
)
from tests.fake_kube import APPLY_PATCH, FakeKube, Request, all_crds

API_VERSION = "maas.opendatahub.io/v1alpha1"
RESOURCE = "maassubscriptions"
COLLECTION = f"/apis/{API_VERSION}/namespaces/tenant-a/{RESOURCE}"
MARKER = "maas/dev:subscriptions/tenant-a/0"
OTHER = "maas/dev:subscriptions/tenant-a/1"  # another batch of the same stack
ELSEWHERE = "maas/prod:subscriptions/tenant-a/0"  # a batch of another stack


def subscription(name: str, owner: str = "team-a", **annotations: str) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "tenant-a"}
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {
        "apiVersion": API_VERSION,
        "kind": "MaaSSubscription",
        "metadata": metadata,
        "spec": {"owner": {"groups": [{"name": owner}]}, "modelRefs": [{"name": "granite-7b", "namespace": "llm"}]},
    }


def key(name: str) -> str:
    return f"MaaSSubscription/tenant-a/{name}"


def path(name: str) -> str:
    return f"{COLLECTION}/{name}"


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with FakeKube(all_crds()) as server:
        yield server


def connection(kube: FakeKube, context: str = "maas-dev") -> dict[str, str]:
    return {"kubeconfig": kube.kubeconfig(), "context": context}


def props(kube: FakeKube, *bodies: dict[str, Any], marker: str = MARKER, context: str = "maas-dev") -> dict:
    """The inputs of a batch as the provider receives them: the program's own, the secret connection plain."""
    inputs = batch_inputs([(RESOURCE, body) for body in bodies], connection(kube), marker)
    return {**inputs, "connection": connection(kube, context)}


def live(kube: FakeKube, name: str) -> dict[str, Any] | None:
    found = [o for o in kube.objects if o["kind"] == "MaaSSubscription" and o["metadata"]["name"] == name]
    return found[0] if found else None


def put(kube: FakeKube, body: dict[str, Any], uid: str = "uid-live") -> dict[str, Any]:
    """An object already in the cluster."""
    stored = copy.deepcopy(body)
    stored["metadata"]["uid"] = uid
    kube.objects.append(stored)
    return stored


def writes(kube: FakeKube) -> list[Request]:
    return [r for r in kube.requests if r.method != "GET"]


def sent(kube: FakeKube) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in kube.requests]


def marker_of(obj: dict[str, Any]) -> str | None:
    return (obj["metadata"].get("annotations") or {}).get(MARKER_ANNOTATION)


def failure_lines(error: pytest.ExceptionInfo) -> list[str]:
    return str(error.value).split("\n  ")


# ----------------------------------------------------------------------------------------------- the inputs


def test_the_objects_travel_as_one_canonical_json_string_by_key_and_the_connection_is_secret():
    body = subscription("a")
    inputs = batch_inputs([(RESOURCE, body)], {"context": "maas-dev"}, MARKER)
    assert object_key(body) == key("a")
    assert inputs["marker"] == MARKER and isinstance(inputs["connection"], pulumi.Output)
    assert json.loads(inputs["objects"]) == {key("a"): {"resource": RESOURCE, "body": body}}
    assert '": ' not in inputs["objects"] and inputs["objects"].index('"body"') < inputs["objects"].index('"resource"')
    assert batch_objects(inputs) == {key("a"): {"resource": RESOURCE, "body": body}}


def test_the_projection_is_the_live_value_at_every_path_the_body_sets():
    planned = {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"list": [1, 2], "gone": 3}}
    seen = {
        "metadata": {"name": "a", "uid": "u", "labels": {"x": "2", "y": "3"}, "annotations": {MARKER_ANNOTATION: "m"}},
        "spec": {"list": [1, 2, 3]},
        "status": {"phase": "Active"},
    }
    assert projection(seen, planned) == {"metadata": {"name": "a", "labels": {"x": "2"}}, "spec": {"list": [1, 2, 3]}}


# -------------------------------------------------------------------------------------------------- create


def test_create_applies_every_object_in_key_order_with_the_marker_and_the_field_manager(kube):
    """A server-side apply creates each object: a POST's fields would belong to an `Update` entry of the manager,
    which every later apply of a changed value would conflict with."""
    inputs = props(kube, subscription("b"), subscription("a"))
    result = ObjectBatchProvider().create(inputs)
    assert sent(kube) == [("GET", path("a")), ("PATCH", path("a")), ("GET", path("b")), ("PATCH", path("b"))]
    applies = writes(kube)
    assert all(r.content_type == APPLY_PATCH for r in applies)
    assert all(r.query == {"fieldManager": FIELD_MANAGER} == {"fieldManager": "maas-pulumi"} for r in applies)
    assert [marker_of(r.body) for r in applies] == [MARKER, MARKER]
    assert marker_of(live(kube, "a")) == MARKER and live(kube, "a")["spec"] == subscription("a")["spec"]
    assert MARKER_ANNOTATION not in json.loads(inputs["objects"])  # the plan never has it, the state neither
    assert (result.id, result.outs) == ("objects", inputs)


def test_create_refuses_an_object_it_did_not_create_and_still_creates_the_others(kube):
    put(kube, subscription("b", owner="by-hand"))
    with pytest.raises(ObjectBatchError) as caught:
        ObjectBatchProvider().create(props(kube, subscription("a"), subscription("b"), subscription("c")))
    assert failure_lines(caught) == [
        "1 of 3 objects failed:",
        "MaaSSubscription tenant-a/b already exists and was created by no batch (no maas.opendatahub.io/batch "
        "annotation): by hand, the controller, `pulumi import`, another stack or a stack that registers "
        "subscriptions one by one. It is left as it is (docs/scale.md#subscription-batches). Adopt it only if no "
        "Pulumi stack registers it as a resource of its own (that stack would delete it): `kubectl annotate -n "
        "tenant-a maassubscriptions.maas.opendatahub.io b "
        "maas.opendatahub.io/batch=maas/dev:subscriptions/tenant-a/0 --overwrite`, then run `pulumi up` again",
    ]
    reads = [("GET", path(name)) for name in "abc"]
    assert sent(kube) == [reads[0], ("PATCH", path("a")), reads[1], reads[2], ("PATCH", path("c"))]
    assert live(kube, "b")["spec"]["owner"] == {"groups": [{"name": "by-hand"}]} and marker_of(live(kube, "b")) is None
    assert marker_of(live(kube, "a")) == marker_of(live(kube, "c")) == MARKER


def test_a_create_after_a_half_failed_create_takes_over_its_own_objects(kube):
    put(kube, subscription("a", owner="old", **{MARKER_ANNOTATION: MARKER}))
    ObjectBatchProvider().create(props(kube, subscription("a"), subscription("b")))
    assert sent(kube) == [("GET", path("a")), ("PATCH", path("a")), ("GET", path("b")), ("PATCH", path("b"))]
    apply = kube.requests[1]
    assert (apply.content_type, apply.query) == (APPLY_PATCH, {"fieldManager": "maas-pulumi"})
    assert apply.body == subscription("a", **{MARKER_ANNOTATION: MARKER})
    assert live(kube, "a")["spec"]["owner"] == {"groups": [{"name": "team-a"}]}
    assert live(kube, "a")["metadata"]["uid"] == "uid-live"  # the same object, applied


def test_an_object_moving_from_a_deleted_batch_is_taken_over_and_the_old_batchs_delete_leaves_it(kube):
    """The registration moves an object only with the deletion of its old batch, which the engine runs after the
    new batch's create: the new marker is on the object by then."""
    old = props(kube, subscription("a"), marker=OTHER)
    ObjectBatchProvider().create(old)
    ObjectBatchProvider().create(props(kube, subscription("a", owner="team-b")))
    assert marker_of(live(kube, "a")) == MARKER and live(kube, "a")["spec"]["owner"]["groups"] == [{"name": "team-b"}]
    del kube.requests[:]
    ObjectBatchProvider().delete("objects", old)
    assert sent(kube) == [("GET", path("a"))] and live(kube, "a") is not None


def test_create_refuses_an_object_a_batch_of_another_stack_wrote(kube):
    put(kube, subscription("a", owner="prod", **{MARKER_ANNOTATION: ELSEWHERE}))
    with pytest.raises(ObjectBatchError) as caught:
        ObjectBatchProvider().create(props(kube, subscription("a")))
    assert "was created by the batch 'maas/prod:subscriptions/tenant-a/0' of another stack" in str(caught.value)
    assert writes(kube) == [] and live(kube, "a")["spec"]["owner"] == {"groups": [{"name": "prod"}]}


# -------------------------------------------------------------------------------------------------- update


def test_update_sends_nothing_for_unchanged_objects_applies_changed_ones_and_creates_new_ones(kube):
    provider = ObjectBatchProvider()
    created = provider.create(props(kube, subscription("a"), subscription("b")))
    del kube.requests[:]
    news = props(kube, subscription("a"), subscription("b", owner="team-b"), subscription("c"))
    result = provider.update("objects", created.outs, news)
    assert sent(kube) == [("PATCH", path("b")), ("GET", path("c")), ("PATCH", path("c"))]
    assert kube.requests[0].body == subscription("b", owner="team-b", **{MARKER_ANNOTATION: MARKER})
    assert live(kube, "b")["spec"]["owner"] == {"groups": [{"name": "team-b"}]} and live(kube, "c") is not None
    assert result.outs == news


def test_a_new_marker_or_connection_applies_every_object_again(kube):
    provider = ObjectBatchProvider()
    created = provider.create(props(kube, subscription("a"), subscription("b")))
    del kube.requests[:]
    provider.update("objects", created.outs, props(kube, subscription("a"), subscription("b"), marker=OTHER))
    assert sent(kube) == [("PATCH", path("a")), ("PATCH", path("b"))]
    assert marker_of(live(kube, "a")) == marker_of(live(kube, "b")) == OTHER


def test_a_removed_object_is_deleted_only_while_it_carries_the_old_marker_and_with_its_uid(kube):
    provider = ObjectBatchProvider()
    created = provider.create(props(kube, subscription("a"), subscription("b"), subscription("c")))
    live(kube, "b")["metadata"]["annotations"][MARKER_ANNOTATION] = OTHER  # another batch's now
    uid = live(kube, "a")["metadata"]["uid"]
    del kube.requests[:]
    provider.update("objects", created.outs, props(kube, subscription("c")))
    assert sent(kube) == [("GET", path("a")), ("DELETE", path("a")), ("GET", path("b"))]
    assert kube.requests[1].body == {"kind": "DeleteOptions", "apiVersion": "v1", "preconditions": {"uid": uid}}
    assert live(kube, "a") is None and live(kube, "b") is not None and live(kube, "c") is not None


def test_an_object_re_created_between_the_read_and_the_delete_is_not_deleted(kube):
    provider = ObjectBatchProvider()
    created = provider.create(props(kube, subscription("a")))
    uid = live(kube, "a")["metadata"]["uid"]

    def re_create(server: FakeKube, request: Request) -> None:  # deleted and created again after the GET
        if request.method == "DELETE":
            live(server, "a")["metadata"]["uid"] = "uid-re-created"

    kube.on_request = re_create
    del kube.requests[:]
    provider.update("objects", created.outs, props(kube))
    assert sent(kube) == [("GET", path("a")), ("DELETE", path("a"))]
    assert kube.requests[1].body["preconditions"] == {"uid": uid}
    assert live(kube, "a")["metadata"]["uid"] == "uid-re-created"


def test_an_object_already_gone_is_fine_to_remove(kube):
    provider = ObjectBatchProvider()
    created = provider.create(props(kube, subscription("a")))
    kube.objects.remove(live(kube, "a"))
    provider.update("objects", created.outs, props(kube))
    provider.delete("objects", created.outs)
    assert [r.method for r in writes(kube)] == ["PATCH"]


# -------------------------------------------------------------------------------------------------- delete


def test_delete_deletes_every_object_of_the_batch_and_only_those(kube):
    put(kube, subscription("c"))  # not this batch's: no marker
    provider = ObjectBatchProvider()
    outs = provider.create(props(kube, subscription("a"), subscription("b"))).outs
    outs = {**outs, "objects": props(kube, subscription("a"), subscription("b"), subscription("c"))["objects"]}
    del kube.requests[:]
    provider.delete("objects", outs)
    assert [(r.method, r.path) for r in writes(kube)] == [("DELETE", path("a")), ("DELETE", path("b"))]
    assert live(kube, "a") is None and live(kube, "b") is None and live(kube, "c") is not None


# ------------------------------------------------------------------------------------------------- refresh


def test_refresh_keeps_an_untouched_object_records_drift_and_drops_a_deleted_one(kube):
    provider = ObjectBatchProvider()
    planned = props(kube, subscription("a"), subscription("b"), subscription("c"))
    outs = provider.create(planned).outs
    live(kube, "a")["status"] = {"phase": "Active"}  # what others add is no drift
    live(kube, "a")["metadata"]["labels"] = {"added": "by-someone"}
    live(kube, "b")["spec"]["owner"] = {"groups": [{"name": "edited"}]}
    kube.objects.remove(live(kube, "c"))
    result = provider.read("objects", outs)
    assert result.id == "objects" and result.outs["marker"] == MARKER
    recorded = batch_objects(result.outs)
    assert list(recorded) == [key("a"), key("b")]
    assert recorded[key("a")] == batch_objects(planned)[key("a")]
    assert recorded[key("b")]["body"]["spec"]["owner"] == {"groups": [{"name": "edited"}]}
    assert provider.diff("objects", result.outs, planned).changes is True  # the next up applies b's body again
    provider.update("objects", result.outs, planned)
    assert live(kube, "b")["spec"]["owner"] == {"groups": [{"name": "team-a"}]} and live(kube, "c") is not None


def test_refresh_ends_a_batch_whose_objects_are_all_gone(kube):
    provider = ObjectBatchProvider()
    outs = provider.create(props(kube, subscription("a"))).outs
    kube.objects.remove(live(kube, "a"))
    result = provider.read("objects", outs)
    assert (result.id, result.outs) == ("", {})


# ---------------------------------------------------------------------------------------------------- diff


def test_diff_compares_the_connection_the_marker_and_every_object_and_never_replaces(kube):
    provider = ObjectBatchProvider()
    olds = props(kube, subscription("a"), subscription("b"))
    variants = {
        "same": (olds, False),
        "connection": ({**olds, "connection": connection(kube, "elsewhere")}, True),
        "marker": (props(kube, subscription("a"), subscription("b"), marker=OTHER), True),
        "removed": (props(kube, subscription("a")), True),
        "added": (props(kube, subscription("a"), subscription("b"), subscription("c")), True),
        "body": (props(kube, subscription("a"), subscription("b", owner="x")), True),
    }
    for name, (news, changes) in variants.items():
        result = provider.diff("objects", olds, news)
        assert (name, result.changes, result.replaces, result.delete_before_replace) == (name, changes, [], False)
    assert kube.requests == []


# -------------------------------------------------------------------------------------- apply: force, conflicts


def test_an_apply_forces_only_when_the_body_says_pulumi_com_patch_force(kube):
    provider = ObjectBatchProvider()
    created = provider.create(props(kube, subscription("a")))
    kube.apply_conflicts = {"a"}
    changed = props(kube, subscription("a", owner="team-b"))
    with pytest.raises(ObjectBatchError) as caught:
        provider.update("objects", created.outs, changed)
    assert str(caught.value) == (
        "could not apply MaaSSubscription tenant-a/a: HTTP 409 Conflict: Apply failed with 1 conflict: conflict with "
        '"maas-controller": .spec.owner; another field manager owns those fields: resolve the conflict, or set the '
        'annotation `pulumi.com/patchForce: "true"` on the object to take them over'
    )
    assert "force" not in writes(kube)[-1].query
    forced = props(kube, subscription("a", owner="team-b", **{"pulumi.com/patchForce": "true"}))
    provider.update("objects", created.outs, forced)
    assert writes(kube)[-1].query == {"fieldManager": "maas-pulumi", "force": "true"}
    assert live(kube, "a")["spec"]["owner"] == {"groups": [{"name": "team-b"}]}


def test_every_write_carries_the_field_manager_and_the_marker(kube):
    provider = ObjectBatchProvider()
    put(kube, subscription("b", **{MARKER_ANNOTATION: MARKER}))
    created = provider.create(props(kube, subscription("a"), subscription("b")))
    provider.update("objects", created.outs, props(kube, subscription("a", owner="x"), subscription("c")))
    applies = [r for r in writes(kube) if r.method != "DELETE"]
    assert [r.method for r in applies] == ["PATCH"] * 4
    assert all(r.query["fieldManager"] == "maas-pulumi" for r in applies)
    assert all(marker_of(r.body) == MARKER for r in applies)


# -------------------------------------------------------------------------------------------------- failures


def test_a_forbidden_write_names_the_verb_and_the_resource(kube):
    kube.forbidden = {RESOURCE}
    with pytest.raises(ObjectBatchError) as caught:
        ObjectBatchProvider().create(props(kube, subscription("a")))
    assert str(caught.value) == (
        "could not read MaaSSubscription tenant-a/a: HTTP 403 Forbidden: maassubscriptions.maas.opendatahub.io is "
        'forbidden: User "me" cannot get resource "maassubscriptions"; grant the identity of the kubeconfig '
        "`get` on maassubscriptions"
    )


def test_a_create_without_the_crd_says_to_install_it():
    with FakeKube(all_crds("MaaSSubscription")) as kube, pytest.raises(ObjectBatchError) as caught:
        ObjectBatchProvider().create(props(kube, subscription("a")))
    assert str(caught.value) == (
        "could not apply MaaSSubscription tenant-a/a: HTTP 404 Not Found: the server could not find the requested "
        "resource; the CRD of maassubscriptions is not installed: install the MaaS CRDs of the release this program "
        "writes for"
    )


@pytest.mark.parametrize(
    ("code", "message", "hint"),
    [
        (422, "spec.owner: Required value", "the installed CRD refuses this object: install the MaaS CRDs of the"),
        (500, "etcd timeout", "the API server failed; run `pulumi up` again"),
    ],
)
def test_an_apply_the_server_refuses_quotes_its_message(kube, code, message, hint):
    provider = ObjectBatchProvider()
    created = provider.create(props(kube, subscription("a")))
    kube.patch_reply = (code, {"kind": "Status", "status": "Failure", "message": message, "code": code})
    with pytest.raises(ObjectBatchError) as caught:
        provider.update("objects", created.outs, props(kube, subscription("a", owner="x")))
    assert str(caught.value).startswith(f"could not apply MaaSSubscription tenant-a/a: HTTP {code} ")
    assert f": {message}; {hint}" in str(caught.value)


def test_one_failure_neither_hides_nor_blocks_the_others(kube):
    provider = ObjectBatchProvider()
    created = provider.create(props(kube, subscription("a"), subscription("b"), subscription("c")))
    kube.apply_conflicts = {"a", "c"}
    with pytest.raises(ObjectBatchError) as caught:
        provider.update("objects", created.outs, props(kube, *(subscription(n, owner="x") for n in "abc")))
    lines = failure_lines(caught)
    assert lines[0] == "2 of 3 objects failed:"
    assert [line.split(":")[0] for line in lines[1:]] == [
        "could not apply MaaSSubscription tenant-a/a",
        "could not apply MaaSSubscription tenant-a/c",
    ]
    assert live(kube, "b")["spec"]["owner"] == {"groups": [{"name": "x"}]}


def test_an_unreachable_api_server_stops_the_rest(kube):
    with pytest.raises(ObjectBatchError) as caught:
        ObjectBatchProvider().create(props(kube, *(subscription(n) for n in "abc"), context="elsewhere"))
    lines = failure_lines(caught)
    assert lines[0] == "3 of 3 objects failed:" and lines[2] == "2 more not attempted"
    assert lines[1].startswith("could not read MaaSSubscription tenant-a/a: API server http://127.0.0.1:9 unreach")
    assert lines[1].endswith(
        "check platform.kubernetes.kubeconfig and platform.kubernetes.context, then run `pulumi up` again"
    )
    assert kube.requests == []
