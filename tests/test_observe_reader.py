"""The cluster reader against a local fake API server: what it reads, how, and every way a cluster can fail it."""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import threading
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
import yaml

from maas.crdschema import validate_all
from maas.observe import (
    Cluster,
    ObjectRef,
    ObservationError,
    ObservationRequest,
    Scope,
    kubeconfig,
    reader,
    what_to_observe,
)
from maas.observe.reader import METADATA_ONLY, connect, read_cluster
from maas.observe.snapshot import thawed
from tests.fake_kube import FakeKube, all_crds, crd, dev_cluster_objects, kserve_route

SECRET = ObjectRef("Secret", "odh-ai-gateway-infra", "maas-db-config")
ONE_GET = ObservationRequest(lists=(), gets=(SECRET,))  # the smallest request that reaches the API server


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with FakeKube(dev_cluster_objects() + all_crds()) as server:
        yield server


def read(kube: FakeKube, request: ObservationRequest, **options):
    return read_cluster(request, kubeconfig=kube.kubeconfig(), context="maas-dev", **options)


def test_the_fixture_cluster_objects_pass_the_real_crds():
    assert validate_all(dev_cluster_objects()) == []


def test_the_dev_stack_is_read_from_the_cluster(kube, dev_config):
    observed = read(kube, what_to_observe(dev_config))
    granite = observed.get("LLMInferenceService", "llm", "granite-7b-instruct")
    assert granite["status"]["addresses"][0]["models"][0]["name"] == "publishers/llm/models/granite-7b-instruct"
    llama = observed.get("LLMInferenceService", "llm", "llama-3-8b-instruct")
    assert llama["status"]["conditions"][0]["reason"] == "MinimumReplicasUnavailable"
    route = observed.get("HTTPRoute", "llm", "granite-7b-instruct-kserve-route")
    assert route["status"]["parents"][0]["conditions"][0]["type"] == "Accepted"
    gateway = observed.get("Gateway", "openshift-ingress", "maas-default-gateway")
    assert gateway["status"]["addresses"] == ({"type": "Hostname", "value": "a1b2c3.elb.us-east-1.amazonaws.com"},)
    trlp = observed.get("TokenRateLimitPolicy", "llm", "maas-trlp-granite-7b")
    assert trlp["metadata"]["annotations"]["opendatahub.io/managed"] == "false"
    assert observed.get("Deployment", "odh-ai-gateway-infra", "maas-api")["status"]["availableReplicas"] == 1
    assert observed.get("ConfigMap", "openshift-ingress", "payload-processing-plugins") is not None
    assert observed.cluster == Cluster(kube.url, "maas-dev")


def test_list_items_get_their_api_version_and_kind_back(kube):
    """A built-in list's items come without apiVersion and kind; the snapshot has them."""
    observed = read(kube, ObservationRequest(lists=(Scope("ConfigMap", "openshift-ingress"),), gets=()))
    [plugins] = observed.items("ConfigMap", "openshift-ingress")
    assert (plugins["apiVersion"], plugins["kind"]) == ("v1", "ConfigMap")


def test_what_was_looked_at_and_not_found_is_absent_and_the_rest_unknown(kube, dev_config):
    observed = read(kube, what_to_observe(dev_config))
    assert observed.lookup("LLMInferenceService", "redteam-models", "qwen-coder").state == "absent"
    assert observed.lookup("Deployment", "odh-ai-gateway-infra", "maas-api-redteam").state == "absent"
    assert observed.lookup("ConfigMap", "openshift-ingress", "payload-processing-plugins-redteam").state == "absent"
    assert observed.lookup("LLMInferenceService", "external-models", "gpt-4o").state == "unknown"
    assert observed.lookup("Deployment", "odh-ai-gateway-infra", "payload-processing").state == "unknown"


def test_every_request_is_a_get_with_the_contexts_credentials(kube, dev_config):
    request = what_to_observe(dev_config)
    read(kube, request)
    assert {(r.method, r.authorization) for r in kube.requests} == {("GET", "Bearer good-token")}
    assert len(kube.requests) == len(request.lists) + len(request.gets)


def test_a_kind_whose_crd_is_not_installed_is_an_observation_and_is_never_listed(dev_config):
    with FakeKube(dev_cluster_objects() + all_crds("LLMInferenceService", "TelemetryPolicy")) as kube:
        observed = read(kube, what_to_observe(dev_config))
    assert (observed.installed("LLMInferenceService"), observed.installed("TelemetryPolicy")) == (False, False)
    assert observed.installed("HTTPRoute") is True
    assert observed.lookup("LLMInferenceService", "llm", "granite-7b-instruct").state == "absent"
    assert observed.items("LLMInferenceService", "llm") == ()
    assert not [r for r in kube.requests if r.path.startswith("/apis/serving.kserve.io/")]


def test_a_crd_that_does_not_serve_the_version_the_program_reads_counts_as_not_installed(dev_config):
    old_kserve = crd("serving.kserve.io/v1alpha1", "LLMInferenceService", "llminferenceservices")
    with FakeKube(dev_cluster_objects() + all_crds("LLMInferenceService") + [old_kserve]) as kube:
        observed = read(kube, what_to_observe(dev_config))
    assert observed.installed("LLMInferenceService") is False
    served = observed.get("CustomResourceDefinition", None, "llminferenceservices.serving.kserve.io")
    assert served["spec"]["versions"] == ({"name": "v1alpha1", "served": True, "storage": True},)


def test_a_list_the_server_answers_with_404_means_the_kind_is_not_installed():
    """Without a CRD in the request, the LIST's 404 itself says the kind is not served."""
    request = ObservationRequest(lists=(Scope("HTTPRoute", "llm"), Scope("Gateway", "openshift-ingress")), gets=())
    with FakeKube(dev_cluster_objects() + all_crds("HTTPRoute")) as kube:
        observed = read(kube, request)
    assert (observed.installed("HTTPRoute"), observed.installed("Gateway")) == (False, True)
    assert observed.lookup("HTTPRoute", "llm", "granite-7b-instruct-kserve-route").state == "absent"


def test_the_secret_is_fetched_as_metadata_only(kube):
    observed = read(kube, ONE_GET)
    [request] = kube.requests
    assert request.accept == METADATA_ONLY == "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    secret = observed.get("Secret", SECRET.namespace, SECRET.name)
    assert (secret["apiVersion"], secret["kind"], secret["metadata"]["uid"]) == ("v1", "Secret", "uid-db")


def test_a_secret_sent_whole_by_the_server_keeps_no_data_in_the_snapshot(kube):
    kube.honour_metadata_accept = False
    observed = read(kube, ONE_GET)
    secret = thawed(observed.get("Secret", SECRET.namespace, SECRET.name))
    assert set(secret) == {"apiVersion", "kind", "metadata"}
    assert secret["metadata"]["annotations"] == {"team": "dba"}
    assert "cG9zdGdyZXM" not in json.dumps(secret) and "s3cr3t" not in json.dumps(secret)


def test_lists_follow_continue_tokens(kube):
    kube.page_size = 1
    kube.objects.append(kserve_route("llm", "third-model"))
    observed = read(kube, ObservationRequest(lists=(Scope("HTTPRoute", "llm"),), gets=()))
    assert len(observed.items("HTTPRoute", "llm")) == 3
    assert [r.query.get("continue") for r in kube.requests] == [None, "1", "2"]


def test_a_stalled_server_times_out_with_an_error_naming_it(kube):
    kube.stall = 5
    started = time.monotonic()
    with pytest.raises(ObservationError) as caught:
        read(kube, ObservationRequest(lists=(Scope("Gateway", "openshift-ingress"),), gets=()), timeout=0.3)
    assert time.monotonic() - started < 2
    assert str(caught.value).startswith(
        f"cannot observe the cluster {kube.url} (context maas-dev): no complete answer within 0.3 s "
        "(reading /apis/gateway.networking.k8s.io/v1/namespaces/openshift-ingress/gateways); check "
        "platform.kubernetes.kubeconfig and platform.kubernetes.context"
    )
    assert "platform.observe: false" in str(caught.value)


def test_the_deadline_bounds_the_whole_read_not_only_each_request(kube):
    kube.stall = 0.15
    gets = tuple(ObjectRef("ConfigMap", "openshift-ingress", f"cm-{i}") for i in range(10))
    started = time.monotonic()
    with pytest.raises(ObservationError, match=r"no complete answer within 0.4 s"):
        read(kube, ObservationRequest(lists=(), gets=gets), timeout=0.4)
    assert time.monotonic() - started < 1.5


def test_rejected_credentials_are_an_error_naming_the_cluster_and_the_fix(kube):
    with pytest.raises(ObservationError) as caught:
        read_cluster(ONE_GET, kubeconfig=kube.kubeconfig(token="expired"), context="maas-dev")
    assert str(caught.value).startswith(
        f"cannot observe the cluster {kube.url} (context maas-dev): HTTP 401 Unauthorized reading /version: "
        "Unauthorized; the API server rejected the credentials: log in again"
    )
    assert kube.requests == []  # the first request, the API server check, already failed


def test_a_forbidden_read_says_what_to_grant(kube):
    kube.forbidden = {"secrets"}
    with pytest.raises(
        ObservationError,
        match=r"HTTP 403 Forbidden .*; the identity may not read this: grant it get and list on secrets;",
    ):
        read(kube, ONE_GET)


def test_an_unreachable_cluster_is_an_error_naming_it(kube):
    with pytest.raises(
        ObservationError,
        match=r"^cannot observe the cluster http://127.0.0.1:9 \(context elsewhere\): API server unreachable",
    ):
        read_cluster(ONE_GET, kubeconfig=kube.kubeconfig())  # current context: elsewhere


def test_a_credential_plugin_that_never_answers_is_bounded_by_the_deadline(kube):
    """The client waits on an exec plugin without a bound; the observation does not."""
    kubeconfig = yaml.safe_load(kube.kubeconfig(current="maas-dev"))
    plugin = {"apiVersion": "client.authentication.k8s.io/v1", "command": "sleep", "args": ["30"]}
    kubeconfig["users"] = [{"name": "me", "user": {"exec": plugin}}]
    started = time.monotonic()
    with pytest.raises(
        ObservationError, match=r"loading the kubeconfig's credentials \(an exec plugin\?\) took longer than 0.5 s"
    ):
        read_cluster(ONE_GET, kubeconfig=yaml.safe_dump(kubeconfig), timeout=0.5)
    assert time.monotonic() - started < 5


def test_the_context_picks_one_cluster_of_a_kubeconfig_file_with_two(kube, tmp_path):
    path = tmp_path / "config"
    path.write_text(kube.kubeconfig(current="elsewhere"))
    observed = read_cluster(ONE_GET, kubeconfig=str(path), context="maas-dev")
    assert observed.cluster == Cluster(kube.url, "maas-dev")
    assert observed.get("Secret", SECRET.namespace, SECRET.name) is not None


def test_without_a_context_the_current_one_of_kubeconfig_from_the_environment_is_used(kube, tmp_path, monkeypatch):
    path = tmp_path / "config"
    path.write_text(kube.kubeconfig(current="maas-dev"))
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'missing'}:{path}")
    observed = read_cluster(ONE_GET)
    assert observed.cluster == Cluster(kube.url, "maas-dev")


def test_a_kubeconfig_given_as_contents_works_like_a_file(kube):
    assert "\n" in kube.kubeconfig()
    observed = read_cluster(ONE_GET, kubeconfig=kube.kubeconfig(current="maas-dev"))
    assert observed.cluster == Cluster(kube.url, "maas-dev")


def test_a_context_the_kubeconfig_lacks_is_an_error_listing_the_contexts_it_has(kube):
    """Issue 20: the client only said "Expected object with name prod in kube-config/contexts list"."""
    with pytest.raises(ObservationError) as caught:
        read_cluster(ONE_GET, kubeconfig=kube.kubeconfig(), context="prod")
    assert str(caught.value).startswith(
        "cannot observe the cluster: invalid kubeconfig: the kubeconfig has no context 'prod'; its contexts are "
        "'maas-dev', 'elsewhere' (current-context 'elsewhere'); check platform.kubernetes.kubeconfig and "
        "platform.kubernetes.context"
    )
    assert "kube-config/contexts" not in str(caught.value)


def test_a_context_missing_from_merged_kubeconfig_files_lists_the_contexts_of_all_of_them(kube, tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.write_text(kube.kubeconfig(current="maas-dev"))
    other = yaml.safe_load(kube.kubeconfig())
    other["contexts"] = [{"name": "staging", "context": {"cluster": "local", "user": "me"}}]
    second.write_text(yaml.safe_dump(other))
    with pytest.raises(
        ObservationError, match=r"no context 'prod'; its contexts are 'maas-dev', 'elsewhere', 'staging' "
    ):
        monkeypatch.setenv("KUBECONFIG", f"{first}:{second}")
        read_cluster(ONE_GET, context="prod")


@pytest.mark.parametrize(
    ("current", "problem"),
    [
        (None, "the kubeconfig sets no current-context and no context was given; its contexts are 'maas-dev', "),
        ("gone", "the kubeconfig's current-context 'gone' is none of its contexts; its contexts are 'maas-dev', "),
    ],
)
def test_without_a_context_a_current_context_that_is_no_context_lists_the_contexts(kube, current, problem):
    kubeconfig = yaml.safe_load(kube.kubeconfig())
    kubeconfig.pop("current-context")
    if current is not None:
        kubeconfig["current-context"] = current
    with pytest.raises(ObservationError, match=f"^cannot observe the cluster: invalid kubeconfig: {problem}"):
        read_cluster(ONE_GET, kubeconfig=yaml.safe_dump(kubeconfig))


# ------------------------------------------------------------------ is it a Kubernetes API server at all?


@contextmanager
def web_server(handler: type[BaseHTTPRequestHandler], **options: Any) -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server that is no API server; yields its URL and the paths it was asked for."""
    paths: list[str] = []

    class Recording(handler):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any) -> None:
            super().__init__(*args, **options)

        def log_request(self, *args: object) -> None:  # once per answer
            paths.append(self.path)

        def log_message(self, *args: object) -> None:
            pass

    with ThreadingHTTPServer(("127.0.0.1", 0), Recording) as httpd:
        threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True).start()
        try:
            yield f"http://127.0.0.1:{httpd.server_address[1]}", paths
        finally:
            httpd.shutdown()


CONSOLE_PAGE = b"<html><body>OpenShift console</body></html>"


class ConsolePage(BaseHTTPRequestHandler):
    """A web console behind the URL: 200 and an HTML page for every path."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(CONSOLE_PAGE)))
        self.end_headers()
        self.wfile.write(CONSOLE_PAGE)


def kubeconfig_for(server: str, **cluster: object) -> str:
    cluster_entry = {"server": server, **cluster}
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "current-context": "web",
            "clusters": [{"name": "web", "cluster": cluster_entry}],
            "users": [{"name": "me", "user": {"token": "good-token"}}],
            "contexts": [{"name": "web", "context": {"cluster": "web", "user": "me"}}],
        }
    )


def test_a_web_server_answering_404_to_everything_is_not_a_cluster_with_nothing_installed(dev_config, tmp_path):
    """Issue 20: `python -m http.server` in an empty folder was observed as a cluster without any CRD (exit 0)."""
    with (
        web_server(SimpleHTTPRequestHandler, directory=str(tmp_path)) as (url, paths),
        pytest.raises(ObservationError) as caught,
    ):
        read_cluster(what_to_observe(dev_config), kubeconfig=kubeconfig_for(url))
    assert str(caught.value).startswith(
        f"cannot observe the cluster {url} (context web): the endpoint does not answer as a Kubernetes API server "
        "(GET /version: HTTP 404 File not found; GET /api: HTTP 404 File not found), so nothing can be read from it: "
        "check that the kubeconfig's cluster server is the API server's URL (`kubectl cluster-info` prints it)"
    )
    assert paths == ["/version", "/api"]  # asked before anything else, and nothing else


def test_a_web_page_answering_200_to_everything_is_not_an_api_server_either(dev_config):
    with web_server(ConsolePage) as (url, paths), pytest.raises(ObservationError) as caught:
        read_cluster(what_to_observe(dev_config), kubeconfig=kubeconfig_for(url))
    assert (
        f"(GET /version: HTTP 200 OK with {len(CONSOLE_PAGE)} bytes that are not JSON; GET /api: HTTP 200 OK with "
        f"{len(CONSOLE_PAGE)} bytes that are not JSON)"
    ) in str(caught.value)
    assert paths == ["/version", "/api"]


def test_the_api_server_is_recognised_by_version_and_else_by_discovery(kube):
    read(kube, ONE_GET)
    assert [r.path for r in kube.discovery_requests] == ["/version"]
    kube.discovery_requests.clear()
    kube.version = None  # /version not open to this identity: the discovery document says it is an API server
    assert read(kube, ONE_GET).get("Secret", SECRET.namespace, SECRET.name) is not None
    assert [r.path for r in kube.discovery_requests] == ["/version", "/api"]
    assert {r.authorization for r in kube.discovery_requests} == {"Bearer good-token"}


def test_the_in_cluster_paths_are_the_clients(tmp_path):
    from kubernetes.config import incluster_config

    assert reader.SERVICE_TOKEN_FILENAME == incluster_config.SERVICE_TOKEN_FILENAME
    assert reader.SERVICE_CERT_FILENAME == incluster_config.SERVICE_CERT_FILENAME
    assert kubeconfig.SERVICE_HOST_ENV_NAME == incluster_config.SERVICE_HOST_ENV_NAME


# ---------------------------------------------------------------------------- insecure-skip-tls-verify


@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1, made with openssl."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
            *("-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1"),
            *("-addext", "subjectAltName=IP:127.0.0.1"),
        ],
        check=True,
        capture_output=True,
    )
    return str(cert), str(key)


def insecure_kubeconfig(kube: FakeKube) -> str:
    contents = yaml.safe_load(kube.kubeconfig(current="maas-dev"))
    contents["clusters"][0]["cluster"]["insecure-skip-tls-verify"] = True
    return yaml.safe_dump(contents)


def test_an_insecure_connection_is_one_warning_not_one_per_request(certificate, dev_config, capsys):
    """Issue 20: urllib3 warned on each of the 23 requests of the dev stack's observation."""
    kube = FakeKube(dev_cluster_objects() + all_crds()).serve_tls(*certificate)
    with kube, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_cluster(what_to_observe(dev_config), kubeconfig=insecure_kubeconfig(kube))
        read_cluster(ONE_GET, kubeconfig=insecure_kubeconfig(kube))  # a second read, as `import` makes
    assert kube.url.startswith("https://") and len(kube.requests) > 20
    assert [str(w.message) for w in caught] == []
    assert capsys.readouterr().err == (
        f"warning: the connection to {kube.url} does not verify the API server's certificate "
        "(insecure-skip-tls-verify in the kubeconfig): anyone on the path could answer in its place; give the "
        "cluster's CA (certificate-authority-data) instead\n"
    )


def test_a_verified_connection_warns_nothing(certificate, capsys):
    with FakeKube(dev_cluster_objects()).serve_tls(*certificate) as kube:
        contents = yaml.safe_load(kube.kubeconfig(current="maas-dev"))
        contents["clusters"][0]["cluster"]["certificate-authority-data"] = base64.b64encode(
            open(certificate[0], "rb").read()  # noqa: SIM115
        ).decode()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            observed = read_cluster(ONE_GET, kubeconfig=yaml.safe_dump(contents))
    assert observed.get("Secret", SECRET.namespace, SECRET.name) is not None
    assert caught == [] and capsys.readouterr().err == ""


def kubeconfig_error(value: str) -> str:
    with pytest.raises(ObservationError) as caught:
        connect(value)
    return str(caught.value)


NOT_SHOWN = "not shown, it may hold credentials); give the path of a kubeconfig file"


@pytest.mark.parametrize("path", ["/no/such/kubeconfig", "~/.kube/no-such-config", "/root/kubeconfig"])
def test_a_missing_kubeconfig_file_is_named_in_the_error(path):
    """A path is not a secret. `/root/kubeconfig` is in the base64 alphabet, but decodes to no text."""
    assert kubeconfig_error(path).startswith(
        f"cannot observe the cluster: invalid kubeconfig: no kubeconfig file at '{path}'; give the path of a "
        "kubeconfig file (./NAME for one in the working directory) or the kubeconfig's YAML; check "
        "platform.kubernetes.kubeconfig"
    )


@pytest.mark.parametrize(
    ("token", "kind"),
    [
        ("sha256~Xk3pL9qR2mN8vB4cT7wY1zA6dF0gH5jK", "one line that is not a path"),
        ("eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJl", "one line that is not a path"),
        ("q3J8/aZ+0Lr9Xw2/kM1nPq7Tz4Vb8Ye6Hs5Gd3Fc1A==", "base64 text"),  # a random key, with '/' in it
        ("ZXlKaGJHY2lPaUpTVXpJMU5pSjkuZXlKemRXSWlPaUo0SW4wLnNpZw==", "base64 text"),  # a base64-encoded token
        ("s" * 300, "one line that is not a path"),  # longer than a file name: the OS would quote it in its error
        ("s" * 5000, "a line longer than any path"),
        ("token: s3cr3t-value-xyz\nuser: admin", "YAML without clusters"),
    ],
)
def test_a_token_given_as_kubeconfig_is_never_echoed(token, kind):
    message = kubeconfig_error(token)
    assert message.startswith(
        f"cannot observe the cluster: invalid kubeconfig: the value is neither a readable file path nor kubeconfig "
        f"YAML ({kind}, {len(token)} characters; {NOT_SHOWN}"
    )
    assert token[:12] not in message and token[-12:] not in message


def test_a_base64_encoded_kubeconfig_is_recognised_and_never_echoed(kube):
    contents = kube.kubeconfig(current="maas-dev", token="s3cr3t-token")
    for encoded in (base64.b64encode(contents.encode()).decode(), base64.encodebytes(contents.encode()).decode()):
        message = kubeconfig_error(encoded)
        assert message.startswith(
            f"cannot observe the cluster: invalid kubeconfig: the value looks like a base64-encoded kubeconfig "
            f"({len(encoded)} characters; not shown, it may hold credentials); decode it (base64 -d) and give the "
            "YAML, or a file path"
        )
        assert not any(encoded[i : i + 8] in message for i in range(0, len(encoded) - 8, 4))


def test_a_kubeconfig_the_client_chokes_on_is_an_error_that_quotes_none_of_its_values(kube):
    """A bad `certificate-authority-data` used to end in a traceback (binascii.Error in the loading thread)."""
    contents = yaml.safe_load(kube.kubeconfig(current="maas-dev", token="s3cr3t-token"))
    contents["clusters"][0]["cluster"] |= {"server": "https://127.0.0.1:9", "certificate-authority-data": "s3cr3t="}
    message = kubeconfig_error(yaml.safe_dump(contents))
    assert message.startswith(
        "cannot observe the cluster: invalid kubeconfig: the kubernetes client cannot use it (binascii.Error; the "
        "details are not shown, it may hold credentials); compare its fields with `kubectl config view`"
    )
    assert "s3cr3t" not in message


def test_a_kubeconfig_file_that_is_not_yaml_is_named_with_the_line(tmp_path):
    path = tmp_path / "config"
    path.write_text("apiVersion: v1\nusers: [token: s3cr3t: x\n")
    message = kubeconfig_error(str(path))
    assert message.startswith(
        f"cannot observe the cluster: invalid kubeconfig: the kubeconfig file '{path}' is not YAML at line 2, column 22"
    )
    assert "s3cr3t" not in message


def test_without_any_kubeconfig_the_in_cluster_service_account_is_used(tmp_path, monkeypatch):
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token")
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setattr("maas.observe.reader.SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr("maas.observe.reader.SERVICE_CERT_FILENAME", str(ca))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    connection = connect()
    assert connection.cluster == Cluster("https://10.0.0.1:443", None)
    assert connection.client.configuration.api_key["BearerToken"] == "bearer sa-token"


def test_no_kubeconfig_outside_a_cluster_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ObservationError, match=r"no kubeconfig at ~/.kube/config and not running in a cluster"):
        connect()


def test_kubeconfig_paths_are_never_rewritten(kube, tmp_path):
    """The reader does not persist refreshed credentials: it only reads."""
    path = tmp_path / "config"
    path.write_text(kube.kubeconfig(current="maas-dev"))
    before = path.read_text()
    read_cluster(ONE_GET, kubeconfig=str(path))
    assert path.read_text() == before
