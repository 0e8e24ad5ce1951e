"""The status writer against a local API server: method, path, content type and body of every PATCH, and errors."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml

from maas.status_provider import (
    MERGE_PATCH,
    StatusProvider,
    StatusWriteError,
    load_cluster,
    merge_patch,
    stamp_conditions,
)

PATH = "/apis/maas.opendatahub.io/v1alpha1/namespaces/llm/maasmodelrefs/granite-7b/status"


class FakeApiServer:
    """Records every request; answers with `self.reply` (status code, JSON body)."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.reply: tuple[int, dict] = (200, {})
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_PATCH(self) -> None:
                length = int(self.headers["Content-Length"])
                server.requests.append(
                    {
                        "method": "PATCH",
                        "path": self.path,
                        "content_type": self.headers["Content-Type"],
                        "authorization": self.headers.get("Authorization"),
                        "body": json.loads(self.rfile.read(length)),
                    }
                )
                code, body = server.reply
                payload = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def kubeconfig(self, token: str = "secret-token") -> str:
        return yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "other",
                "clusters": [{"name": "local", "cluster": {"server": self.url}}],
                "users": [{"name": "me", "user": {"token": token}}],
                "contexts": [
                    {"name": "maas-dev", "context": {"cluster": "local", "user": "me"}},
                    {"name": "other", "context": {"cluster": "missing"}},
                ],
            }
        )


@pytest.fixture
def api() -> Iterator[FakeApiServer]:
    server = FakeApiServer()
    thread = threading.Thread(target=server.httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def props(api: FakeApiServer, **status) -> dict:
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSModelRef",
        "resource": "maasmodelrefs",
        "namespace": "llm",
        "name": "granite-7b",
        "status": status
        or {
            "phase": "Ready",
            "endpoint": "https://maas.example.com/granite-7b",
            "conditions": [{"type": "Ready", "status": "True", "reason": "Reconciled", "message": "ok"}],
        },
        "connection": {"kubeconfig": api.kubeconfig(), "context": "maas-dev"},
    }


def test_create_patches_the_status_subresource_with_a_merge_patch(api):
    result = StatusProvider().create(props(api))
    [request] = api.requests
    assert request["method"] == "PATCH"
    assert request["path"] == PATH + "?fieldManager=maas-pulumi-status"
    assert request["content_type"] == MERGE_PATCH == "application/merge-patch+json"
    assert request["authorization"] == "Bearer secret-token"
    status = request["body"]["status"]
    assert set(request["body"]) == {"status"}
    assert (status["phase"], status["endpoint"]) == ("Ready", "https://maas.example.com/granite-7b")
    [condition] = status["conditions"]
    assert condition["lastTransitionTime"].endswith("Z") and condition["reason"] == "Reconciled"
    assert result.id == "MaaSModelRef/llm/granite-7b/status"
    assert "connection" not in result.outs  # credentials never reach the state
    assert result.outs["appliedStatus"] == status


def test_update_nulls_dropped_fields_and_keeps_unchanged_transition_times(api):
    provider = StatusProvider()
    created = provider.create(
        props(
            api,
            phase="Ready",
            endpoint="https://x",
            resolvedModelAlias="gpt-4o",
            conditions=[
                {"type": "Ready", "status": "True", "reason": "R", "message": ""},
                {"type": "GovernanceAttached", "status": "True", "reason": "G", "message": ""},
            ],
        )
    )
    first = {c["type"]: c["lastTransitionTime"] for c in created.outs["appliedStatus"]["conditions"]}
    news = props(
        api,
        phase="Pending",
        endpoint="",
        conditions=[
            {"type": "Ready", "status": "False", "reason": "B", "message": ""},
            {"type": "GovernanceAttached", "status": "True", "reason": "G", "message": ""},
        ],
    )
    updated = provider.update("id", created.outs, news)
    body = api.requests[-1]["body"]["status"]
    assert api.requests[-1]["path"].startswith(PATH) and api.requests[-1]["content_type"] == MERGE_PATCH
    assert body["resolvedModelAlias"] is None  # dropped since the last write: removed by the merge patch
    assert (body["phase"], body["endpoint"]) == ("Pending", "")
    times = {c["type"]: c["lastTransitionTime"] for c in body["conditions"]}
    assert times["GovernanceAttached"] == first["GovernanceAttached"]
    assert updated.outs["appliedStatus"]["phase"] == "Pending"
    assert "resolvedModelAlias" not in updated.outs["appliedStatus"]


def test_delete_sends_nothing(api):
    StatusProvider().delete("id", {k: v for k, v in props(api).items() if k != "connection"})
    assert api.requests == []


def test_diff_detects_status_changes_and_replaces_on_identity_changes(api):
    provider = StatusProvider()
    olds = {**props(api), "appliedStatus": {}}
    assert provider.diff("id", olds, props(api)).changes is False
    changed = provider.diff("id", olds, props(api, phase="Pending"))
    assert changed.changes is True and changed.replaces == []
    moved = provider.diff("id", olds, {**props(api), "name": "other"})
    assert moved.changes is True and moved.replaces == ["name"]
    recreated = provider.diff("id", {**olds, "targetUid": "a"}, {**props(api), "targetUid": "b"})
    assert recreated.changes is True and recreated.replaces == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (404, r"HTTP 404 Not Found: maasmodelrefs.maas.opendatahub.io \"granite-7b\" not found; the object"),
        (409, r"HTTP 409 Conflict: .*; the object changed while its status was written; run `pulumi up` again"),
        (500, r"HTTP 500 Internal Server Error: .*; the API server failed; run `pulumi up` again"),
        (503, r"HTTP 503 Service Unavailable: .*; the API server failed"),
        (403, r"HTTP 403 Forbidden: .*; grant the identity of the kubeconfig `patch` on maasmodelrefs/status"),
    ],
)
def test_api_errors_raise_a_clear_error(api, code, expected):
    message = 'maasmodelrefs.maas.opendatahub.io "granite-7b" not found' if code == 404 else "boom"
    api.reply = (code, {"kind": "Status", "status": "Failure", "message": message, "code": code})
    with pytest.raises(StatusWriteError, match=expected) as error:
        StatusProvider().create(props(api))
    assert "status of MaaSModelRef llm/granite-7b" in str(error.value)
    assert len(api.requests) == 1


def test_update_errors_are_not_silent_either(api):
    provider = StatusProvider()
    created = provider.create(props(api))
    api.reply = (409, {"message": "conflict"})
    with pytest.raises(StatusWriteError, match="HTTP 409"):
        provider.update("id", created.outs, props(api, phase="Pending"))


def test_unreachable_api_server_is_a_clear_error(api):
    config = props(api)
    api.httpd.server_close()
    api.httpd.shutdown()
    with pytest.raises(StatusWriteError, match=r"API server http://127\.0\.0\.1:\d+ unreachable"):
        StatusProvider().create(config)


def test_kubeconfig_context_selects_cluster_and_user(api, tmp_path):
    path = tmp_path / "config"
    path.write_text(api.kubeconfig(token="t2"))
    cluster = load_cluster(str(path), "maas-dev")
    assert (cluster.server, cluster.headers) == (api.url, {"Authorization": "Bearer t2"})
    assert load_cluster(api.kubeconfig(), "maas-dev").server == api.url  # contents instead of a path


def test_kubeconfig_without_the_named_context_is_a_clear_error(api):
    with pytest.raises(StatusWriteError, match="kubeconfig has no context named 'nope'"):
        load_cluster(api.kubeconfig(), "nope")
    with pytest.raises(StatusWriteError, match="kubeconfig has no cluster named 'missing'"):
        load_cluster(api.kubeconfig(), None)  # current-context "other" points at a missing cluster


def test_kubeconfig_from_the_environment(api, tmp_path, monkeypatch):
    path = tmp_path / "kubeconfig"
    path.write_text(api.kubeconfig())
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'absent'}:{path}")
    assert load_cluster(None, "maas-dev").server == api.url


def test_stamp_conditions_keeps_time_while_status_is_unchanged():
    previous = {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    same = stamp_conditions({"conditions": [{"type": "Ready", "status": "True"}]}, previous, "NOW")
    flipped = stamp_conditions({"conditions": [{"type": "Ready", "status": "False"}]}, previous, "NOW")
    assert same["conditions"][0]["lastTransitionTime"] == "2026-01-01T00:00:00Z"
    assert flipped["conditions"][0]["lastTransitionTime"] == "NOW"
    assert stamp_conditions({"phase": "Active"}, None, "NOW") == {"phase": "Active"}


def test_merge_patch_nulls_only_dropped_keys():
    assert merge_patch({"phase": "Pending"}, {"phase": "Ready", "endpoint": "x"}) == {
        "endpoint": None,
        "phase": "Pending",
    }
    assert merge_patch({"phase": "Ready"}, None) == {"phase": "Ready"}


def test_provider_deserializes_in_a_process_that_did_not_run_the_program(tmp_path):
    """Pulumi pickles the provider and unpickles it in its own host process (pulumi/pulumi#7453): `maas` must be
    importable there, which the editable install in requirements.txt guarantees."""
    import subprocess
    import sys

    from pulumi.dynamic.dynamic import serialize_provider

    from maas.status_provider import StatusProvider

    serialized = serialize_provider(StatusProvider())
    script = "import base64, sys, dill; print(type(dill.loads(base64.b64decode(sys.stdin.read()))).__name__)"
    result = subprocess.run(
        [sys.executable, "-c", script], input=serialized, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "StatusProvider"


def test_kubeconfig_files_merge_like_client_go(api, tmp_path, monkeypatch):
    """The context may live in a later $KUBECONFIG file; relative file references follow their own file."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "config").write_text(yaml.safe_dump({"current-context": "elsewhere", "contexts": [], "clusters": []}))
    (second / "token").write_text("from-file\n")
    config = yaml.safe_load(api.kubeconfig())
    for user in config["users"]:
        user["user"] = {"tokenFile": "token"}
    (second / "config").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("KUBECONFIG", f"{first / 'config'}:{second / 'config'}")
    cluster = load_cluster(None, "maas-dev")
    assert (cluster.server, cluster.headers) == (api.url, {"Authorization": "Bearer from-file"})
