"""The status writer against a local API server (tests/fake_kube.py): the merge patch it sends, the status it judges
at write time, what `pulumi refresh` reads back, what the next preview compares, every way a write fails, and how
one resource writes the statuses of a whole component."""

from __future__ import annotations

import pickle
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from maas.deploy import status_writer as status_provider
from maas.deploy.status_writer import (
    MERGE_PATCH,
    StatusBatchProvider,
    StatusProvider,
    StatusWriteError,
    batch_targets,
    decode_status,
    encode_status,
)
from maas.observe import ObservationRequest, read_cluster
from maas.plan.status import needed
from maas.plan.status.model import ModelFacts, model_status
from maas.plan.status.writes import merge_patch, stamp_conditions, unstamped
from maas.tools.render import DYNAMIC_TYPE, render
from tests.fake_kube import FakeKube, Request, all_crds, kserve_route, llm_inference_service, platform_gateway
from tests.test_model_status import GRANITE

PATH = "/apis/maas.opendatahub.io/v1alpha1/namespaces/llm/maasmodelrefs/granite-7b/status"
LLAMA_PATH = "/apis/maas.opendatahub.io/v1alpha1/namespaces/llm/maasmodelrefs/llama-3-8b/status"
KEY = "MaaSModelRef/llm/granite-7b"
LLAMA = "MaaSModelRef/llm/llama-3-8b"
ROUTE_PATH = "/apis/gateway.networking.k8s.io/v1/namespaces/llm/httproutes/granite-7b-instruct-kserve-route"
T1, T2 = "2026-12-01T10:00:00Z", "2026-12-01T11:00:00Z"
FACTS = GRANITE.to_inputs()
READY = {
    "phase": "Ready",
    "endpoint": "https://maas.example.com/granite-7b",
    "conditions": [{"type": "Ready", "status": "True", "reason": "Reconciled", "message": "ok"}],
}


def model_ref(name: str = "granite-7b") -> dict:
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSModelRef",
        "metadata": {"name": name, "namespace": "llm", "uid": f"uid-{name}"},
        "spec": {"modelRef": {"kind": "LLMInferenceService", "name": "granite-7b-instruct"}},
    }


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    """The MaaSModelRef, its backend (ready) and the Gateway; no route yet."""
    objects = [model_ref(), llm_inference_service("llm", "granite-7b-instruct", ready=True), platform_gateway()]
    with FakeKube(objects + all_crds()) as server:
        yield server


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch) -> None:
    monkeypatch.setattr(status_provider, "POLL_SECONDS", 0.01)


def target(status: dict | None = None, name: str = "granite-7b", **extra) -> dict:
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSModelRef",
        "resource": "maasmodelrefs",
        "namespace": "llm",
        "name": name,
        "status": encode_status(status or READY),
        **extra,
    }


def connection(kube: FakeKube) -> dict:
    return {"kubeconfig": kube.kubeconfig(), "context": "maas-dev"}


def props(kube: FakeKube, status: dict | None = None, connection_: dict | None = None, **extra) -> dict:
    """One resource writing the status of granite-7b alone."""
    return batch(kube, target(status, **extra), connection_=connection_)


def batch(kube: FakeKube, *targets: dict, connection_: dict | None = None) -> dict:
    return {
        "connection": connection(kube) if connection_ is None else connection_,
        "targets": status_provider.encode_json({status_provider.target_key(t): t for t in targets}),
    }


def recorded(outs: dict, key: str = KEY) -> dict:
    return batch_targets(outs)[key]


def digest_of(status: dict) -> str:
    """How a record names the status it wrote (the state keeps the status in the inputs only)."""
    return status_provider.status_digest(encode_status(status))


def patches(kube: FakeKube) -> list[Request]:
    return [r for r in kube.requests if r.method == "PATCH"]


def stored_status(kube: FakeKube, name: str = "granite-7b") -> dict:
    return next(o for o in kube.objects if o["kind"] == "MaaSModelRef" and o["metadata"]["name"] == name)["status"]


def at(monkeypatch, now: str) -> None:
    monkeypatch.setattr(status_provider, "_now", lambda: now)


def planned(kube: FakeKube) -> dict:
    """The status the plan computes at program start from a snapshot of the cluster as it is now."""
    observed = read_cluster(ObservationRequest((), needed("MaaSModelRef", FACTS)), kube.kubeconfig(), "maas-dev")
    return model_status(ModelFacts.from_inputs(FACTS), observed)


# ----------------------------------------------------------------------------------------------- the write


def test_the_patch_is_a_merge_patch_with_the_field_manager_to_the_status_subresource(kube, monkeypatch):
    at(monkeypatch, T1)
    result = StatusBatchProvider().create(props(kube))
    [request] = patches(kube)
    assert (request.path, request.query) == (PATH, {"fieldManager": "maas-pulumi-status"})
    assert request.content_type == MERGE_PATCH == "application/merge-patch+json"
    assert list(request.body) == ["status"]
    stamped = {**READY, "conditions": [{**READY["conditions"][0], "lastTransitionTime": T1}]}
    assert request.body["status"] == stamped == stored_status(kube)
    assert result.id == "statuses"
    identity = {key: value for key, value in target().items() if key != "status"}
    assert recorded(result.outs) == {
        **identity,
        "digest": digest_of(READY),
        "applied": encode_status(
            {"fields": ["conditions", "endpoint", "phase"], "conditions": {"Ready": ["True", T1]}}
        ),
    }
    # what the next write starts from: the fields to null if it drops them, each condition's status and time
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": T1}
    assert status_provider.applied_status(recorded(result.outs)) == {
        "conditions": [ready],
        "endpoint": None,
        "phase": None,
    }
    assert result.outs["connection"] == connection(kube)


def test_the_kubeconfig_context_selects_the_cluster_and_its_token_authenticates(kube, tmp_path, monkeypatch):
    path = tmp_path / "config"
    path.write_text(kube.kubeconfig(current="elsewhere"))  # the current context points at a dead server
    StatusBatchProvider().create(props(kube, connection_={"kubeconfig": str(path), "context": "maas-dev"}))
    assert [r.authorization for r in patches(kube)] == ["Bearer good-token"]
    path.write_text(kube.kubeconfig(current="maas-dev"))
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{path}")
    StatusBatchProvider().create(props(kube, connection_={}))  # unset: $KUBECONFIG and its current context
    assert len(patches(kube)) == 2
    expired = {"kubeconfig": kube.kubeconfig(token="expired"), "context": "maas-dev"}
    with pytest.raises(StatusWriteError, match=r"HTTP 401 Unauthorized: Unauthorized; the API server rejected the"):
        StatusBatchProvider().create(props(kube, connection_=expired))


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (403, "forbidden", r"HTTP 403 Forbidden: forbidden; grant the identity of the kubeconfig `patch` on "),
        (404, "gone", r"HTTP 404 Not Found: gone; the object \(or its CRD\) does not exist"),
        (409, "conflict", r"HTTP 409 Conflict: conflict; the object changed while its status was written; run `pu"),
        (422, "invalid", r"HTTP 422 Unprocessable Entity: invalid; the installed CRD refuses this status"),
        (500, "boom", r"HTTP 500 Internal Server Error: boom; the API server failed; run `pulumi up` again"),
        (503, "later", r"HTTP 503 Service Unavailable: later; the API server failed"),
    ],
)
def test_api_errors_raise_a_clear_error(kube, code, message, expected):
    kube.patch_reply = (code, {"kind": "Status", "status": "Failure", "message": message, "code": code})
    with pytest.raises(StatusWriteError, match=expected) as caught:
        StatusBatchProvider().create(props(kube))
    assert str(caught.value).startswith("could not write the status of MaaSModelRef llm/granite-7b: HTTP")
    assert len(patches(kube)) == 1


def test_a_missing_object_or_a_missing_grant_names_what_to_do(kube):
    kube.forbidden = {"maasmodelrefs"}
    with pytest.raises(StatusWriteError) as forbidden:
        StatusBatchProvider().create(props(kube))
    assert str(forbidden.value).endswith(
        'cannot patch resource "maasmodelrefs/status"; grant the identity of the kubeconfig `patch` on '
        "maasmodelrefs/status"
    )
    kube.forbidden = set()
    kube.objects.remove(next(o for o in kube.objects if o["kind"] == "MaaSModelRef"))
    with pytest.raises(StatusWriteError, match=r'HTTP 404 Not Found: maasmodelrefs "granite-7b" not found; the obj'):
        StatusBatchProvider().create(props(kube))


def test_an_unreachable_api_server_is_a_clear_error(kube):
    gone = {"kubeconfig": kube.kubeconfig(), "context": "elsewhere"}
    with pytest.raises(StatusWriteError) as caught:
        StatusBatchProvider().create(props(kube, connection_=gone))
    text = str(caught.value)
    assert text.startswith("could not write the status of MaaSModelRef llm/granite-7b: API server http://127.0.0.1:9")
    assert "unreachable" in text
    assert text.endswith(
        "; check platform.kubernetes.kubeconfig and platform.kubernetes.context, then run `pulumi up` again"
    )


def test_every_request_is_bounded_in_time(kube, monkeypatch):
    monkeypatch.setattr(status_provider, "TIMEOUT_SECONDS", 0.3)
    kube.stall = 5
    started = time.monotonic()
    with pytest.raises(StatusWriteError, match=r"API server http://127\.0\.0\.1:\d+ gave no answer within 0\.3 s"):
        StatusBatchProvider().create(props(kube))
    assert time.monotonic() - started < 2


def test_an_invalid_kubeconfig_is_a_clear_error(kube):
    with pytest.raises(
        StatusWriteError, match=r"could not write the status of .*: invalid kubeconfig: .*no context 'prod'"
    ):
        StatusBatchProvider().create(props(kube, connection_={"kubeconfig": kube.kubeconfig(), "context": "prod"}))


def test_conditions_keep_their_transition_time_while_unchanged(kube, monkeypatch):
    provider = StatusBatchProvider()
    ready = {"type": "Ready", "status": "True", "reason": "R", "message": ""}
    governed = {"type": "GovernanceAttached", "status": "True", "reason": "G", "message": ""}
    at(monkeypatch, T1)
    created = provider.create(props(kube, {"phase": "Ready", "conditions": [ready, governed]}))
    at(monkeypatch, T2)
    flipped = {**ready, "status": "False", "reason": "B"}
    updated = provider.update("id", created.outs, props(kube, {"phase": "Pending", "conditions": [flipped, governed]}))
    times = {c["type"]: c["lastTransitionTime"] for c in patches(kube)[-1].body["status"]["conditions"]}
    assert times == {"Ready": T2, "GovernanceAttached": T1}
    assert status_provider.recorded_transitions(recorded(updated.outs)) == {"Ready": T2, "GovernanceAttached": T1}


def test_fields_dropped_since_the_last_write_are_set_to_null(kube):
    provider = StatusBatchProvider()
    created = provider.create(props(kube, {**READY, "resolvedModelAlias": "granite"}))
    provider.update("id", created.outs, props(kube, {"phase": "Pending", "endpoint": ""}))
    sent = patches(kube)[-1].body["status"]
    assert (sent["resolvedModelAlias"], sent["conditions"], sent["phase"]) == (None, None, "Pending")
    assert stored_status(kube) == {"phase": "Pending", "endpoint": ""}


def test_update_errors_are_not_silent_either(kube):
    provider = StatusBatchProvider()
    created = provider.create(props(kube))
    kube.patch_reply = (409, {"message": "conflict"})
    with pytest.raises(StatusWriteError, match="HTTP 409"):
        provider.update("id", created.outs, props(kube, {"phase": "Pending"}))


def test_delete_sends_nothing(kube):
    StatusBatchProvider().delete("id", props(kube))
    assert kube.requests == []


# -------------------------------------------------------------------------------------- one resource, many


def test_one_connection_writes_every_target_of_the_resource(kube, monkeypatch):
    kube.objects.append(model_ref("llama-3-8b"))
    connects = []
    real = status_provider.connect
    monkeypatch.setattr(status_provider, "connect", lambda *a: connects.append(a) or real(*a))
    result = StatusBatchProvider().create(batch(kube, target(), target({"phase": "Pending"}, name="llama-3-8b")))
    assert sorted(r.path for r in patches(kube)) == [PATH, LLAMA_PATH] and len(connects) == 1
    assert list(batch_targets(result.outs)) == [KEY, LLAMA]
    assert stored_status(kube, "llama-3-8b") == {"phase": "Pending"}


def test_one_failing_write_neither_hides_nor_blocks_the_others(kube):
    """llama-3-8b and zz-missing do not exist (404): granite-7b is written all the same, every write is attempted,
    and the resource fails naming both, so that its state records none and the next up attempts all three again."""
    with pytest.raises(StatusWriteError) as caught:
        StatusBatchProvider().create(batch(kube, target(name="llama-3-8b"), target(), target(name="zz-missing")))
    lines = str(caught.value).split("\n  ")
    assert lines[0] == "2 of 3 statuses failed:"
    assert lines[1].startswith("could not write the status of MaaSModelRef llm/llama-3-8b: HTTP 404 Not Found: maasmo")
    assert lines[2].startswith("could not write the status of MaaSModelRef llm/zz-missing: HTTP 404 Not Found")
    assert stored_status(kube)["phase"] == "Ready" and len(patches(kube)) == 3


def test_an_unusable_cluster_stops_the_resource_after_one_attempt(kube):
    gone = {"kubeconfig": kube.kubeconfig(), "context": "elsewhere"}
    with pytest.raises(StatusWriteError) as caught:
        StatusBatchProvider().create(batch(kube, target(), target(name="llama-3-8b"), connection_=gone))
    lines = str(caught.value).split("\n  ")
    assert lines[0] == "2 of 2 statuses failed:" and lines[2] == "1 more not attempted"
    assert lines[1].startswith("could not write the status of MaaSModelRef llm/granite-7b: API server http://127.0")


def test_update_writes_only_targets_that_are_new_or_changed(kube):
    kube.objects.append(model_ref("llama-3-8b"))
    provider = StatusBatchProvider()
    created = provider.create(props(kube))
    news = batch(kube, target(), target({"phase": "Pending"}, name="llama-3-8b"))
    updated = provider.update("id", created.outs, news)
    assert [r.path for r in patches(kube)] == [PATH, LLAMA_PATH]
    assert recorded(updated.outs) == recorded(created.outs)  # granite-7b kept as recorded, not written again
    changed = batch(kube, target({"phase": "Failed"}), target({"phase": "Pending"}, name="llama-3-8b"))
    provider.update("id", updated.outs, changed)
    assert [r.path for r in patches(kube)] == [PATH, LLAMA_PATH, PATH]


def test_a_new_connection_writes_every_target_again(kube):
    provider = StatusBatchProvider()
    created = provider.create(props(kube))
    provider.update("id", created.outs, props(kube, connection_={"kubeconfig": kube.kubeconfig(current="maas-dev")}))
    assert [r.path for r in patches(kube)] == [PATH, PATH]


def test_removing_a_target_sends_nothing_and_drops_it_as_deleting_its_writer_did(kube):
    kube.objects.append(model_ref("llama-3-8b"))
    provider = StatusBatchProvider()
    both = provider.create(batch(kube, target(), target(name="llama-3-8b")))
    requests = len(kube.requests)
    news = props(kube)
    assert provider.diff("id", both.outs, news).changes is True
    updated = provider.update("id", both.outs, news)
    assert len(kube.requests) == requests and list(batch_targets(updated.outs)) == [KEY]


def test_a_batch_recorded_as_a_mapping_before_the_targets_became_one_string_is_no_change(kube):
    """States written before 2026-12 hold a batch's targets as a mapping, in the inputs and the outputs: the same
    targets as one JSON string are no change (the engine then keeps the new inputs, a `same` step), and an update
    or a refresh of such a state reads the mapping and records one string."""
    kube.objects.append(model_ref("llama-3-8b"))
    provider = StatusBatchProvider()
    news = batch(kube, target(), target(name="llama-3-8b"))
    created = provider.create(news)
    old = {**created.outs, "targets": batch_targets(created.outs)}
    assert isinstance(news["targets"], str) and isinstance(old["targets"], dict)
    assert provider.diff("id", old, news).changes is False
    requests = len(kube.requests)
    updated = provider.update("id", old, batch(kube, target(), target({"phase": "Pending"}, name="llama-3-8b")))
    assert [r.path for r in patches(kube)[-1:]] == [LLAMA_PATH] and len(patches(kube)) == 3
    assert isinstance(updated.outs["targets"], str) and batch_targets(updated.outs)[KEY] == old["targets"][KEY]
    refreshed = provider.read("statuses", old)
    assert isinstance(refreshed.outs["targets"], str) and batch_targets(refreshed.outs)[KEY] == old["targets"][KEY]
    assert len(kube.requests) > requests


# ---------------------------------------------------------------------------------------- judged at write time


def test_a_route_that_appears_between_planning_and_writing_makes_the_written_status_ready(kube):
    status = planned(kube)
    assert status["phase"] == "Pending"  # the plan ran before the route existed
    kube.objects.append(kserve_route("llm", "granite-7b-instruct"))
    result = StatusBatchProvider().create(props(kube, status, facts=FACTS))
    written = patches(kube)[0].body["status"]
    assert (written["phase"], written["endpoint"]) == ("Ready", "https://maas.apps.example.com/llm/granite-7b-instruct")
    out = recorded(result.outs)
    assert unstamped(written) == model_status(ModelFacts.from_inputs(FACTS), _observed(kube))
    assert out["digest"] == digest_of(unstamped(written)) and out["facts"] == FACTS


def _observed(kube: FakeKube):
    return read_cluster(ObservationRequest((), needed("MaaSModelRef", FACTS)), kube.kubeconfig(), "maas-dev")


def test_the_writer_waits_for_a_route_the_gateway_accepts_after_a_few_polls(kube):
    kube.objects.append(kserve_route("llm", "granite-7b-instruct", accepted=False))

    def gateway_accepts_on_third_read(server: FakeKube, request: Request) -> None:
        if request.path == ROUTE_PATH and sum(r.path == ROUTE_PATH for r in server.requests) == 3:
            server.objects[-1] = kserve_route("llm", "granite-7b-instruct", accepted=True)

    kube.on_request = gateway_accepts_on_third_read
    StatusBatchProvider().create(props(kube, READY, facts=FACTS))
    assert patches(kube)[0].body["status"]["phase"] == "Ready"
    assert sum(r.path == ROUTE_PATH for r in kube.requests) == 3  # the first look, then two polls


def test_settling_is_bounded_and_then_the_judged_status_is_written(kube, monkeypatch):
    monkeypatch.setattr(status_provider, "SETTLE_SECONDS", 0.1)
    kube.objects.append(kserve_route("llm", "granite-7b-instruct", accepted=False))
    started = time.monotonic()
    StatusBatchProvider().create(props(kube, READY, facts=FACTS))
    assert time.monotonic() - started < 1
    written = patches(kube)[0].body["status"]
    assert written["phase"] == "Pending" and "is not yet accepted by gateway" in written["conditions"][1]["message"]
    assert sum(r.path == ROUTE_PATH for r in kube.requests) > 2


def test_once_the_processs_settle_window_closed_a_route_is_written_as_judged_without_waiting(kube, monkeypatch):
    """The engine's one dynamic-provider host serves four resources at a time, one per model: route waits end
    with one window per process, so hundreds of slow routes cannot hold `pulumi up` for hours."""
    monkeypatch.setattr(status_provider, "WINDOW_SECONDS", 0.0)
    status_provider.ROUTE_WINDOW.closes()  # opened, and closed at once, by an earlier model of this `pulumi up`
    kube.objects.append(kserve_route("llm", "granite-7b-instruct", accepted=False))
    StatusBatchProvider().create(props(kube, READY, facts=FACTS))
    assert patches(kube)[0].body["status"]["phase"] == "Pending"
    assert sum(r.path == ROUTE_PATH for r in kube.requests) == 1  # looked once, never again


def test_without_facts_the_planned_status_is_written_and_nothing_is_read(kube):
    StatusBatchProvider().create(props(kube, {"phase": "Active"}))
    assert [r.method for r in kube.requests] == ["PATCH"]
    assert patches(kube)[0].body == {"status": {"phase": "Active"}}


def test_a_cluster_that_cannot_be_observed_before_the_write_is_a_clear_error(kube):
    kube.forbidden = {"httproutes"}
    with pytest.raises(StatusWriteError) as caught:
        StatusBatchProvider().create(props(kube, facts=FACTS))
    assert str(caught.value).startswith(
        "could not judge the status of MaaSModelRef llm/granite-7b before writing it: cannot observe the cluster "
        f"{kube.url} (context maas-dev): HTTP 403 Forbidden reading {ROUTE_PATH}"
    )
    assert patches(kube) == []


# ------------------------------------------------------------------------------------------- refresh and diff


def test_read_returns_the_live_status_so_drift_shows(kube, monkeypatch):
    at(monkeypatch, T1)
    provider = StatusBatchProvider()
    created = provider.create(props(kube))
    stored_status(kube)["phase"] = "Failed"  # someone edited the status
    refreshed = provider.read(created.id, created.outs)
    ready = {"type": "Ready", "status": "True", "lastTransitionTime": T1}
    skeleton = {"conditions": [ready], "endpoint": None, "phase": None}
    assert (refreshed.id, status_provider.applied_status(recorded(refreshed.outs))) == (created.id, skeleton)
    assert recorded(refreshed.outs)["digest"] == digest_of({**READY, "phase": "Failed"})
    assert "storedDigest" not in recorded(refreshed.outs)
    assert provider.diff(created.id, refreshed.outs, props(kube)).changes is True  # the next up writes it again
    assert [r.method for r in kube.requests] == ["PATCH", "GET"]


def test_a_status_field_the_crd_prunes_is_not_drift_at_refresh(kube):
    """An older MaaSSubscription CRD has no `status.rateLimitIdentity`: the API server drops it on every write.
    Refreshing must not turn that into a change that every `up` (and the operator's every run) rewrites."""
    kube.pruned_status = frozenset({"rateLimitIdentity"})
    provider = StatusBatchProvider()
    planned_status = {**READY, "rateLimitIdentity": "short"}
    created = provider.create(props(kube, planned_status))
    assert "rateLimitIdentity" not in stored_status(kube)
    assert recorded(created.outs)["storedDigest"] == digest_of(READY)  # recorded: it differs from `status`
    refreshed = provider.read(created.id, created.outs)
    assert refreshed.outs == created.outs
    assert provider.diff(created.id, refreshed.outs, props(kube, planned_status)).changes is False


def test_read_drops_a_target_whose_object_is_gone_and_ends_the_resource_with_none_left(kube):
    kube.objects.append(model_ref("llama-3-8b"))
    provider = StatusBatchProvider()
    created = provider.create(batch(kube, target(), target(name="llama-3-8b")))
    kube.objects.remove(next(o for o in kube.objects if o["metadata"]["name"] == "llama-3-8b"))
    one_left = provider.read(created.id, created.outs)
    assert (one_left.id, list(batch_targets(one_left.outs))) == ("statuses", [KEY])
    kube.objects.remove(next(o for o in kube.objects if o["kind"] == "MaaSModelRef"))
    gone = provider.read(created.id, one_left.outs)
    assert (gone.id, gone.outs) == ("", {})


def test_the_status_written_is_what_the_next_preview_compares_so_there_is_no_spurious_diff(kube):
    provider = StatusBatchProvider()
    stale = planned(kube)  # Pending: planned before the route existed
    kube.objects.append(kserve_route("llm", "granite-7b-instruct"))
    created = provider.create(props(kube, stale, facts=FACTS))
    fresh = props(kube, planned(kube), facts=FACTS)  # the next preview plans from a new snapshot
    assert decode_status(recorded(fresh, KEY)["status"])["phase"] == "Ready"
    assert provider.diff(created.id, created.outs, fresh).changes is False
    refreshed = provider.read(created.id, created.outs)
    assert provider.diff(created.id, refreshed.outs, fresh).changes is False


def test_diff_compares_each_target_and_the_connection_and_never_replaces(kube):
    provider = StatusBatchProvider()
    olds = batch(kube, {**target(facts=FACTS), "transitions": {}})
    assert provider.diff("id", olds, props(kube, facts=FACTS)).changes is False
    older = batch(kube, {**target(facts=FACTS), "targetUid": "uid-granite-7b", "transitions": {}})
    assert provider.diff("id", older, props(kube, facts=FACTS)).changes is False  # an older state's uid: no change
    ungoverned = {**FACTS, "governed_by": ["subscription"]}
    for news in (
        props(kube, {"phase": "Pending"}, facts=FACTS),
        props(kube, facts=ungoverned),
        props(kube, facts=FACTS, connection_={"context": "other"}),
        props(kube, facts=FACTS, resource="maasmodelrefs2"),
        batch(kube, target(facts=FACTS), target(name="llama-3-8b")),
    ):
        changed = provider.diff("id", olds, news)
        assert (changed.changes, changed.replaces) == (True, [])


# ----------------------------------------------------------------------------------------- program and pickling


def test_the_program_gives_the_writer_facts_unless_observe_is_off(dev_raw):
    def granite_target(raw: dict) -> dict:
        registrations = render(raw).registrations
        writer = next(r for r in registrations if r.type == DYNAMIC_TYPE and r.name == "statuses/models-as-a-service")
        return batch_targets(writer.inputs)["MaaSModelRef/llm/granite-7b"]

    assert granite_target(dev_raw)["facts"]["route_name"] == "granite-7b-instruct-kserve-route"
    dev_raw["platform"]["observe"] = False
    assert "facts" not in granite_target(dev_raw)


@pytest.mark.parametrize("provider", [StatusBatchProvider, StatusProvider])
def test_provider_deserializes_in_a_process_that_did_not_run_the_program(tmp_path, provider):
    """Pulumi pickles the provider and unpickles it in its own host process (pulumi/pulumi#7453): `maas` must be
    importable there, which the editable install in requirements.txt guarantees."""
    from pulumi.dynamic.dynamic import serialize_provider

    serialized = serialize_provider(provider())
    script = "import base64, sys, dill; print(type(dill.loads(base64.b64decode(sys.stdin.read()))).__name__)"
    result = subprocess.run(
        [sys.executable, "-c", script], input=serialized, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == provider.__name__


def test_a_provider_pickled_before_the_package_layout_moved_still_loads(tmp_path):
    """States written before 2026-12 name `maas.status_provider.StatusProvider`: deleting or refreshing those
    resources unpickles it by that name."""
    old = pickle.dumps(StatusProvider(), protocol=0).replace(b"maas.deploy.status_writer", b"maas.status_provider")
    assert b"maas.status_provider" in old
    script = "import pickle, sys; print(type(pickle.loads(sys.stdin.buffer.read())).__qualname__)"
    result = subprocess.run([sys.executable, "-c", script], input=old, cwd=tmp_path, capture_output=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().strip() == "StatusProvider"


def test_a_status_resource_of_an_older_state_is_refreshed_and_deleted_without_a_request(kube):
    """One status per resource, as states before the batching hold: the next up deletes it (nothing is sent) and
    the batch of its component writes the status; a refresh before that keeps it as recorded."""
    old = {**target(), "connection": connection(kube), "appliedStatus": READY}
    refreshed = StatusProvider().read("MaaSModelRef/llm/granite-7b/status", old)
    assert (refreshed.id, refreshed.outs) == ("MaaSModelRef/llm/granite-7b/status", old)
    assert StatusProvider().delete("MaaSModelRef/llm/granite-7b/status", old) is None
    assert kube.requests == []


# ------------------------------------------------------------------------------------------ the pure helpers


def test_stamp_conditions_keeps_time_while_status_is_unchanged():
    previous = {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T1}]}
    same = stamp_conditions({"conditions": [{"type": "Ready", "status": "True"}]}, previous, T2)
    flipped = stamp_conditions({"conditions": [{"type": "Ready", "status": "False"}]}, previous, T2)
    assert same["conditions"][0]["lastTransitionTime"] == T1
    assert flipped["conditions"][0]["lastTransitionTime"] == T2
    assert stamp_conditions({"phase": "Active"}, None, T2) == {"phase": "Active"}


def test_stamp_conditions_tolerates_a_live_status_anyone_may_have_edited():
    edited = {"conditions": ["junk", {"status": "True"}, {"type": "Ready", "status": "True"}]}
    stamped = stamp_conditions({"conditions": [{"type": "Ready", "status": "True"}]}, edited, T2)
    assert stamped == {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T2}]}
    assert stamp_conditions({"conditions": ["junk"]}, None, T2) == {"conditions": ["junk"]}


def test_unstamped_removes_only_the_transition_times():
    live = {"phase": "Ready", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": T1}]}
    assert unstamped(live) == {"phase": "Ready", "conditions": [{"type": "Ready", "status": "True"}]}
    assert unstamped({"phase": "Ready"}) == {"phase": "Ready"}


def test_merge_patch_nulls_only_dropped_keys():
    assert merge_patch({"phase": "Pending"}, {"phase": "Ready", "endpoint": "x"}) == {
        "endpoint": None,
        "phase": "Pending",
    }
    assert merge_patch({"phase": "Ready"}, None) == {"phase": "Ready"}


def test_the_recorded_transition_times_restore_the_status_as_stamped():
    stamped = {
        "phase": "Ready",
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": T1},
            {"type": "GovernanceAttached", "status": "False", "lastTransitionTime": T2},
            "junk",
            {"status": "True"},
        ],
    }
    times = status_provider.transition_times(stamped)
    assert times == {"Ready": T1, "GovernanceAttached": T2}
    record = {"status": encode_status(unstamped(stamped)), "transitions": times}  # as states before issue 21 hold it
    assert status_provider.applied_status(record) == stamped
    active = {"status": encode_status({"phase": "Active"}), "transitions": {}}
    assert status_provider.applied_status(active) == {"phase": "Active"}


def test_a_status_travels_as_one_canonical_json_string():
    """Equal statuses give equal strings whatever the key order; the CLI shows the diff of a JSON string by field."""
    assert encode_status({"phase": "Ready", "endpoint": "é"}) == '{"endpoint":"é","phase":"Ready"}'
    assert encode_status({"b": 1, "a": [2]}) == encode_status({"a": [2], "b": 1})
    assert decode_status(encode_status(READY)) == READY


def test_an_unexpected_error_on_one_target_is_reported_with_the_others_and_the_rest_are_still_attempted():
    attempted = []

    def attempt(name: str) -> str:
        attempted.append(name)
        if name == "a":
            raise StatusWriteError("could not write the status of a: HTTP 403")
        if name == "b":
            raise ValueError("malformed facts")
        return name

    with pytest.raises(StatusWriteError) as caught:
        status_provider.each_target({"a": "a", "b": "b", "c": "c"}, attempt)
    assert attempted == ["a", "b", "c"]
    assert str(caught.value).splitlines() == [
        "2 of 3 statuses failed:",
        "  could not write the status of a: HTTP 403",
        "  b: unexpected ValueError: malformed facts",
    ]
