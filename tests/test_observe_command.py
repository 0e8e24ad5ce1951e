"""`python -m maas observe`: a stack's observation request, read from the cluster, printed as a snapshot file."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler

import pytest
import yaml

from maas.observe import Cluster, parse_snapshot
from maas.tools.cli import main
from tests.conftest import DEV_STACK
from tests.fake_kube import FakeKube, all_crds, dev_cluster_objects
from tests.test_observe_reader import certificate, insecure_kubeconfig, kubeconfig_for, web_server

__all__ = ["certificate"]  # a fixture of the reader's tests, used here too


def observe(*argv: str) -> int:
    return main(["observe", *argv])


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with FakeKube(dev_cluster_objects() + all_crds()) as server:
        yield server


@pytest.fixture
def kubeconfig(kube, tmp_path) -> str:
    path = tmp_path / "kubeconfig"
    path.write_text(kube.kubeconfig(current="elsewhere"))
    return str(path)


def stack_with(tmp_path, **kubernetes) -> str:
    """A copy of the dev stack whose platform.kubernetes is `kubernetes`."""
    document = yaml.safe_load(DEV_STACK.read_text())
    document["config"]["maas:platform"]["kubernetes"] = kubernetes
    path = tmp_path / "Pulumi.observed.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


def test_observe_prints_the_snapshot_of_the_dev_stack(kube, kubeconfig, capsys):
    assert observe("--stack", "dev", "--kubeconfig", kubeconfig) == 0  # the dev stack's context is maas-dev
    out, err = capsys.readouterr()
    observed = parse_snapshot(out)
    assert observed.cluster == Cluster(kube.url, "maas-dev")
    assert observed.lookup("LLMInferenceService", "llm", "granite-7b-instruct").state == "present"
    assert observed.lookup("LLMInferenceService", "redteam-models", "qwen-coder").state == "absent"
    assert err == f"observed {len(observed.objects)} objects from {kube.url}\n"


def test_the_stacks_kubeconfig_is_used_when_none_is_given(kube, kubeconfig, tmp_path, capsys):
    stack = stack_with(tmp_path, kubeconfig=kubeconfig, context="maas-dev")
    assert observe("--config-file", stack) == 0
    assert parse_snapshot(capsys.readouterr().out).cluster == Cluster(kube.url, "maas-dev")


def test_context_overrides_the_stacks_and_an_unreachable_cluster_is_one_error(kubeconfig, capsys):
    assert observe("--kubeconfig", kubeconfig, "--context", "elsewhere") == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(
        "error: cannot observe the cluster http://127.0.0.1:9 (context elsewhere): API server unreachable"
    )
    assert err.count("\n") == 1 and "Traceback" not in err


def test_an_encrypted_kubeconfig_cannot_be_used_offline(tmp_path, capsys):
    stack = stack_with(tmp_path, kubeconfig={"secure": "AAABAKx0"})
    assert observe("--config-file", stack) == 2
    assert capsys.readouterr().err.startswith(
        "error: cannot observe the cluster: invalid kubeconfig: it is an encrypted stack value, which an offline run "
        "cannot decrypt; pass --kubeconfig PATH; check platform.kubernetes.kubeconfig"
    )


def test_a_token_in_the_stacks_kubeconfig_is_never_printed(tmp_path, capsys):
    """Issue 17: a bare token where the kubeconfig belongs is described, never repeated."""
    token = "sha256~Xk3pL9qR2mN8vB4cT7wY1zA6dF0gH5jKs3cr3t"
    assert observe("--config-file", stack_with(tmp_path, kubeconfig=token)) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(
        "error: cannot observe the cluster: invalid kubeconfig: the value is neither a readable file path nor "
        f"kubeconfig YAML (one line that is not a path, {len(token)} characters; not shown, it may hold credentials)"
    )
    assert "s3cr3t" not in err and "sha256~" not in err and err.count("\n") == 1


def test_invalid_configuration_exits_2_with_its_errors(tmp_path, capsys):
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_text("config:\n  maas:tenants: {name: x}\n")
    assert observe("--config-file", str(path)) == 2
    assert capsys.readouterr().err.startswith("error: ")


def test_a_missing_stack_file_exits_2(capsys):
    assert observe("--stack", "no-such-stack") == 2
    assert "Pulumi.no-such-stack.yaml not found; pass --stack NAME or --config-file PATH" in capsys.readouterr().err


# ------------------------------------------------------------------------------------ issue 20, as a user meets it


def test_observe_of_a_web_server_answering_404_to_everything_exits_2_instead_of_an_empty_cluster(tmp_path, capsys):
    """`python -m http.server` in an empty folder, given as the cluster: the old run printed a snapshot in which
    nothing is installed, `observed 0 objects`, exit 0."""
    with web_server(SimpleHTTPRequestHandler, directory=str(tmp_path)) as (url, paths):
        code = observe("--stack", "dev", "--kubeconfig", kubeconfig_for(url), "--context", "web")
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.startswith(
        f"error: cannot observe the cluster {url} (context web): the endpoint does not answer as a Kubernetes API "
        "server (GET /version: HTTP 404 File not found; GET /api: HTTP 404 File not found)"
    )
    assert err.count("\n") == 1 and paths == ["/version", "/api"]


def test_observe_over_insecure_skip_tls_verify_prints_one_warning(certificate, capsys):
    """The old run printed urllib3's InsecureRequestWarning once per request (23 in the issue, 40 here)."""
    kube = FakeKube(dev_cluster_objects() + all_crds()).serve_tls(*certificate)
    with kube, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert observe("--stack", "dev", "--kubeconfig", insecure_kubeconfig(kube)) == 0
    out, err = capsys.readouterr()
    assert parse_snapshot(out).cluster == Cluster(kube.url, "maas-dev") and len(kube.requests) > 20
    assert caught == []
    assert err.splitlines() == [
        f"warning: the connection to {kube.url} does not verify the API server's certificate "
        "(insecure-skip-tls-verify in the kubeconfig): anyone on the path could answer in its place; give the "
        "cluster's CA (certificate-authority-data) instead",
        f"observed {len(parse_snapshot(out).objects)} objects from {kube.url}",
    ]


def test_observe_with_an_unknown_context_lists_the_contexts_there_are(kubeconfig, capsys):
    assert observe("--kubeconfig", kubeconfig, "--context", "prod") == 2
    assert capsys.readouterr().err == (
        "error: cannot observe the cluster: invalid kubeconfig: the kubeconfig has no context 'prod'; its contexts "
        "are 'maas-dev', 'elsewhere' (current-context 'elsewhere'); check platform.kubernetes.kubeconfig and "
        "platform.kubernetes.context (--kubeconfig/--context for `python -m maas observe`), or set platform.observe: "
        "false to plan from the configuration alone\n"
    )


def test_observe_with_a_kubeconfig_list_reads_the_cluster_the_provider_and_the_status_writer_read(
    kube, tmp_path, monkeypatch, capsys
):
    """`KUBECONFIG=a:b` and no context configured: kubectl and the provider take the first file's current-context,
    the Python client the last one's. `observe` used to read the last one's (here a cluster where nothing listens);
    it now uses `config.kubernetes.reader_connection`, as `pulumi up`'s observation and the status writer do."""
    first, last = tmp_path / "a", tmp_path / "b"
    first.write_text(kube.kubeconfig(current="maas-dev"))
    last.write_text(kube.kubeconfig(current="elsewhere"))
    monkeypatch.setenv("KUBECONFIG", f"{first}:{last}")
    assert observe("--config-file", stack_with(tmp_path), "--timeout", "5") == 0, capsys.readouterr().err
    assert parse_snapshot(capsys.readouterr().out).cluster.context == "maas-dev"
