"""The Observed snapshot: present, absent and unknown kept apart; objects trimmed and read-only."""

from __future__ import annotations

import json

import pytest

from maas.observe import KINDS, Lookup, NotObservedError, ObjectRef, Observed, Scope
from maas.observe.snapshot import LLMISVC_API_VERSION, serves, thawed
from tests.fake_kube import crd, db_secret, kserve_route, llm_inference_service, platform_gateway

GRANITE = llm_inference_service("llm", "granite-7b-instruct", ready=True)


def snapshot() -> Observed:
    return Observed.of(
        [GRANITE, kserve_route("llm", "granite-7b-instruct"), db_secret(), platform_gateway()],
        listed=[Scope("LLMInferenceService", "llm"), Scope("HTTPRoute")],
        got=[ObjectRef("Secret", "odh-ai-gateway-infra", "maas-db-config"), ObjectRef("ConfigMap", "gw", "plugins")],
        crds={"TelemetryPolicy": False, "HTTPRoute": True},
    )


def test_an_object_in_the_snapshot_is_present():
    answer = snapshot().lookup("LLMInferenceService", "llm", "granite-7b-instruct")
    assert answer.state == "present"
    assert answer.object["status"]["url"] == "https://maas.apps.example.com/llm/granite-7b-instruct"


def test_an_object_missing_from_a_listed_namespace_is_absent():
    assert snapshot().lookup("LLMInferenceService", "llm", "qwen-coder") == Lookup("absent")
    assert snapshot().get("LLMInferenceService", "llm", "qwen-coder") is None


def test_an_object_in_a_namespace_nobody_listed_is_unknown_and_get_refuses_to_say_absent():
    observed = snapshot()
    assert observed.lookup("LLMInferenceService", "redteam-models", "qwen-coder") == Lookup("unknown")
    with pytest.raises(NotObservedError, match="LLMInferenceService redteam-models/qwen-coder was not observed"):
        observed.get("LLMInferenceService", "redteam-models", "qwen-coder")


def test_listing_all_namespaces_covers_every_namespace():
    assert snapshot().lookup("HTTPRoute", "anywhere", "some-route").state == "absent"
    assert [r["metadata"]["name"] for r in snapshot().items("HTTPRoute")] == ["granite-7b-instruct-kserve-route"]


def test_a_get_that_found_nothing_is_absent_only_for_that_object():
    observed = snapshot()
    assert observed.lookup("ConfigMap", "gw", "plugins").state == "absent"
    assert observed.lookup("ConfigMap", "gw", "plugins-redteam").state == "unknown"


def test_every_object_of_a_kind_that_is_not_installed_is_absent():
    observed = snapshot()
    assert observed.installed("TelemetryPolicy") is False
    assert observed.lookup("TelemetryPolicy", "openshift-ingress", "maas-telemetry").state == "absent"
    assert observed.items("TelemetryPolicy", "openshift-ingress") == ()


def test_installed_is_none_for_a_kind_nobody_looked_at_and_true_for_built_in_kinds():
    observed = snapshot()
    assert (observed.installed("HTTPRoute"), observed.installed("AuthPolicy"), observed.installed("Secret")) == (
        True,
        None,
        True,
    )


def test_items_of_a_scope_nobody_listed_raise():
    with pytest.raises(NotObservedError, match="Gateway in namespace openshift-ingress was not listed"):
        snapshot().items("Gateway", "openshift-ingress")
    with pytest.raises(NotObservedError, match="LLMInferenceService in all namespaces was not listed"):
        snapshot().items("LLMInferenceService")


def test_nothing_observed_answers_unknown_to_everything():
    nothing = Observed.nothing()
    assert nothing.lookup("Gateway", "openshift-ingress", "maas-default-gateway") == Lookup("unknown")
    assert nothing.installed("LLMInferenceService") is None


def test_objects_are_read_only():
    answer = snapshot().lookup("LLMInferenceService", "llm", "granite-7b-instruct")
    with pytest.raises(TypeError):
        answer.object["status"]["url"] = "https://elsewhere"  # type: ignore[index]
    assert isinstance(answer.object["status"]["addresses"], tuple)


def test_the_snapshot_keeps_its_own_copy():
    source = llm_inference_service("llm", "granite-7b-instruct", ready=True)
    observed = Observed.of([source], listed=[Scope("LLMInferenceService", "llm")])
    source["status"]["url"] = "https://changed"
    assert observed.get("LLMInferenceService", "llm", "granite-7b-instruct")["status"]["url"].startswith("https://maas")


def test_managed_fields_are_dropped_and_nothing_else():
    kept = thawed(snapshot().get("LLMInferenceService", "llm", "granite-7b-instruct"))
    expected = json.loads(json.dumps(GRANITE))
    del expected["metadata"]["managedFields"]
    assert kept == expected


def test_a_secret_keeps_only_its_metadata_without_the_last_applied_copy_of_its_data():
    kept = thawed(snapshot().get("Secret", "odh-ai-gateway-infra", "maas-db-config"))
    assert kept == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": "maas-db-config",
            "namespace": "odh-ai-gateway-infra",
            "uid": "uid-db",
            "annotations": {"team": "dba"},
        },
    }
    assert "cG9zdGdyZXM" not in json.dumps(kept) and "s3cr3t" not in json.dumps(kept)


def test_a_crd_keeps_what_it_serves_and_not_its_schemas():
    observed = Observed.of([crd(LLMISVC_API_VERSION, "LLMInferenceService", "llminferenceservices")])
    kept = thawed(
        observed.objects[ObjectRef("CustomResourceDefinition", None, "llminferenceservices.serving.kserve.io")]
    )
    assert kept["metadata"] == {"name": "llminferenceservices.serving.kserve.io"}
    assert kept["spec"]["versions"] == [{"name": "v1alpha2", "served": True, "storage": True}]
    assert "status" not in kept


def test_a_crd_serves_a_kind_only_at_the_version_the_program_reads():
    kind = KINDS["LLMInferenceService"]
    assert serves(crd(LLMISVC_API_VERSION, "LLMInferenceService", "llminferenceservices"), kind) is True
    assert serves(crd("serving.kserve.io/v1alpha1", "LLMInferenceService", "llminferenceservices"), kind) is False
    assert serves(None, kind) is False


def test_an_object_at_another_api_version_is_refused_with_the_command_that_gets_the_right_one():
    old = {**GRANITE, "apiVersion": "serving.kserve.io/v1alpha1"}
    with pytest.raises(ValueError, match=r"reads serving.kserve.io/v1alpha2 \(e.g. kubectl get llminferenceservices"):
        Observed.of([old])


def test_a_namespaced_object_without_a_namespace_is_refused():
    with pytest.raises(ValueError, match=r"HTTPRoute r: HTTPRoute is namespaced; give metadata\.namespace"):
        Observed.of([{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": {"name": "r"}}])


def test_questions_about_kinds_the_snapshot_does_not_know_are_errors():
    with pytest.raises(ValueError, match="'Pod' is not a kind the snapshot knows"):
        snapshot().lookup("Pod", "llm", "x")
