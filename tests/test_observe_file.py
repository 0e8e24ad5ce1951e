"""The snapshot file: byte-stable round trips, plain `kubectl get -o yaml` Lists, and malformed files."""

from __future__ import annotations

import pytest
import yaml

from maas.observe import Cluster, ObjectRef, ObservationError, Observed, Scope, dump_snapshot, load_snapshot
from maas.observe.snapshot_file import parse_snapshot
from tests.fake_kube import crd, db_secret, dev_cluster_objects, kserve_route, platform_gateway

LISTED = [Scope("HTTPRoute", "llm"), Scope("LLMInferenceService", "llm"), Scope("CustomResourceDefinition")]
GOT = [ObjectRef("Secret", "odh-ai-gateway-infra", "maas-db-config"), ObjectRef("Deployment", "infra", "maas-api-x")]


def dev_snapshot(objects: list[dict]) -> Observed:
    crds = {"AuthPolicy": True, "TelemetryPolicy": False}
    return Observed.of(objects, LISTED, GOT, crds, Cluster("https://api.example.com:6443", "maas-dev"))


def test_a_snapshot_survives_a_round_trip_byte_for_byte():
    observed = dev_snapshot([*dev_cluster_objects(), crd("kuadrant.io/v1", "AuthPolicy", "authpolicies")])
    text = dump_snapshot(observed)
    again = parse_snapshot(text)
    assert again == observed
    assert dump_snapshot(again) == text


def test_the_order_objects_were_read_in_does_not_change_the_file():
    objects = dev_cluster_objects()
    assert dump_snapshot(dev_snapshot(objects)) == dump_snapshot(dev_snapshot(list(reversed(objects))))


def test_the_file_is_a_kubernetes_list_plus_what_was_observed():
    observed = Observed.of(
        [kserve_route("llm", "b"), platform_gateway(), kserve_route("llm", "a")],
        listed=[Scope("HTTPRoute", "llm"), Scope("CustomResourceDefinition")],
        got=[ObjectRef("Secret", "infra", "maas-db-config")],
        crds={"LLMInferenceService": False},
        cluster=Cluster("https://api.example.com:6443", "maas-dev"),
    )
    document = yaml.safe_load(dump_snapshot(observed))
    assert list(document) == ["apiVersion", "items", "kind", "observed"]
    assert (document["apiVersion"], document["kind"]) == ("v1", "List")
    names = [(o["kind"], o["metadata"]["name"]) for o in document["items"]]
    assert names == [
        ("Gateway", "maas-default-gateway"),
        ("HTTPRoute", "a-kserve-route"),
        ("HTTPRoute", "b-kserve-route"),
    ]
    assert document["observed"] == {
        "context": "maas-dev",
        "crds": {"LLMInferenceService": False},
        "got": [{"apiVersion": "v1", "kind": "Secret", "namespace": "infra", "name": "maas-db-config"}],
        "listed": [
            {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition"},
            {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "namespace": "llm"},
        ],
        "server": "https://api.example.com:6443",
    }


def test_nothing_observed_is_an_empty_list_that_reads_back_as_nothing():
    text = dump_snapshot(Observed.nothing())
    assert text == "apiVersion: v1\nitems: []\nkind: List\nobserved:\n  crds: {}\n  got: []\n  listed: []\n"
    assert parse_snapshot(text) == Observed.nothing()


KUBECTL_LIST = """\
apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: gateway.networking.k8s.io/v1
  kind: HTTPRoute
  metadata:
    name: granite-7b-instruct-kserve-route
    namespace: llm
    managedFields: [{manager: kserve}]
  spec: {hostnames: [maas.apps.example.com]}
- apiVersion: v1
  kind: Pod
  metadata: {name: maas-api-7d9f, namespace: odh-ai-gateway-infra}
- apiVersion: v1
  kind: Secret
  metadata: {name: maas-db-config, namespace: odh-ai-gateway-infra}
  data: {DB_CONNECTION_URL: cG9zdGdyZXM=}
- apiVersion: inference.opendatahub.io/v1alpha1
  kind: ExternalModel
  metadata: {name: gpt-4o, namespace: external-models}
"""


def test_a_plain_kubectl_list_counts_its_kinds_as_listed_everywhere_and_installed():
    observed = parse_snapshot(KUBECTL_LIST)
    assert observed.lookup("HTTPRoute", "llm", "granite-7b-instruct-kserve-route").state == "present"
    assert observed.lookup("HTTPRoute", "redteam-models", "qwen-coder-kserve-route").state == "absent"
    assert observed.installed("HTTPRoute") is True
    assert observed.lookup("LLMInferenceService", "llm", "granite-7b-instruct").state == "unknown"
    assert observed.installed("LLMInferenceService") is None
    assert observed.cluster is None


def test_a_plain_kubectl_list_is_trimmed_like_a_cluster_read():
    observed = parse_snapshot(KUBECTL_LIST)
    assert "managedFields" not in observed.get("HTTPRoute", "llm", "granite-7b-instruct-kserve-route")["metadata"]
    assert "data" not in observed.get("Secret", "odh-ai-gateway-infra", "maas-db-config")


def test_a_plain_kubectl_list_leaves_out_kinds_the_program_does_not_read():
    """A Pod, and the other group's ExternalModel (inference.opendatahub.io), are not in the snapshot."""
    observed = parse_snapshot(KUBECTL_LIST)
    assert {ref.kind for ref in observed.objects} == {"HTTPRoute", "Secret"}
    assert observed.lookup("ExternalModel", "external-models", "gpt-4o").state == "unknown"


def test_a_secret_with_data_in_a_snapshot_file_loses_it_on_reading():
    document = {"apiVersion": "v1", "kind": "List", "items": [db_secret()], "observed": {"listed": []}}
    secret = parse_snapshot(yaml.safe_dump(document)).get("Secret", "odh-ai-gateway-infra", "maas-db-config")
    assert set(secret) == {"apiVersion", "kind", "metadata"}
    assert dict(secret["metadata"]["annotations"]) == {"team": "dba"}


MALFORMED = {
    "items: [\n": "snap.yaml:2:1: invalid YAML: ",  # the problem's wording depends on libyaml
    "- a\n": "snap.yaml: not a snapshot: expected a YAML mapping with apiVersion: v1 and kind: List",
    "apiVersion: v1\nkind: List\nitems: {}\n": "snap.yaml: items: must be a list of Kubernetes objects",
    "apiVersion: v1\nkind: List\nitems: [3]\n": "snap.yaml: items[0]: must be a mapping (got int)",
    "apiVersion: v1\nkind: List\nitems: [{kind: Gateway}]\n": "snap.yaml: items[0]: apiVersion and kind must be strings",
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: serving.kserve.io/v1alpha1, kind: LLMInferenceService, metadata: {name: a, namespace: llm}}\n": "snap.yaml: items[0]: LLMInferenceService has apiVersion 'serving.kserve.io/v1alpha1'; the program reads serving.kserve.io/v1alpha2 (e.g. kubectl get llminferenceservices.v1alpha2.serving.kserve.io -o yaml)",
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n": "snap.yaml: items[0]: ConfigMap a: ConfigMap is namespaced; give metadata.namespace",
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: n}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: n}}\n": "snap.yaml: items[1]: ConfigMap n/a appears twice; keep one",
    "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Secret, metadata: {name: s, namespace: n, annotations: [a]}}\n": "snap.yaml: items[0]: Secret n/s: not a Kubernetes object of its kind (",
    "apiVersion: v1\nkind: List\nitems: []\nobserved: {when: today}\n": "snap.yaml: observed: unknown key 'when'; use context, crds, got, listed, server",
    "apiVersion: v1\nkind: List\nitems: []\nobserved: {listed: [{apiVersion: v1, kind: Pod}]}\n": "snap.yaml: observed.listed[0]: 'Pod' is not a kind the snapshot knows; use one of: AuthPolicy,",
    "apiVersion: v1\nkind: List\nitems: []\nobserved: {listed: [{apiVersion: apiextensions.k8s.io/v1, kind: CustomResourceDefinition, namespace: x}]}\n": "snap.yaml: observed.listed[0]: CustomResourceDefinition is cluster-scoped; a scope of it has no namespace",
    "apiVersion: v1\nkind: List\nitems: []\nobserved: {got: [{apiVersion: v1, kind: Secret, namespace: x}]}\n": "snap.yaml: observed.got[0]: Secret without a name: metadata.name must be a non-empty string",
    "apiVersion: v1\nkind: List\nitems: []\nobserved: {got: [{apiVersion: v1, kind: Secret, name: s, namespace: x, uid: u}]}\n": "snap.yaml: observed.got[0]: unknown key 'uid'; use apiVersion, kind, name, namespace",
    "apiVersion: v1\nkind: List\nitems: []\nobserved: {crds: {HTTPRoute: 'yes'}}\n": "snap.yaml: observed.crds.HTTPRoute: must be a kind the snapshot knows, set to true or false",
    "apiVersion: v1\nkind: List\nitems: []\nobserved: {server: 6443}\n": "snap.yaml: observed.server and observed.context must be strings",
}


@pytest.mark.parametrize("text", list(MALFORMED))
def test_a_malformed_snapshot_file_is_one_error_naming_the_file_and_the_problem(text, tmp_path):
    path = tmp_path / "snap.yaml"
    path.write_text(text)
    with pytest.raises(ObservationError) as caught:
        load_snapshot(path)
    assert str(caught.value).startswith(str(tmp_path / MALFORMED[text]))


def test_a_missing_snapshot_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(ObservationError, match=r"cannot read the snapshot .*missing.yaml: No such file or directory"):
        load_snapshot(tmp_path / "missing.yaml")
