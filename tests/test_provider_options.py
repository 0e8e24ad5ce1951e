"""`platform.kubernetes` against what pulumi-kubernetes does with it, and secret configuration.

Rules read in pulumi-kubernetes at 94977969 (v4.32.0 and 27 commits; the pinned 4.34.2 is not in the stored
repository), `provider/pkg/provider/provider.go`: CheckConfig 402-424 (renderYamlToDirectory excludes cluster,
context, kubeconfig), DiffConfig 490-499 and 531-534 (a new render directory replaces everything; an unchanged
clusterIdentifier replaces nothing), 872-900 (an empty kubeconfig: client-go's own loading of $KUBECONFIG);
`provider/pkg/await/await.go` 190 (upsert only with server-side apply); `provider/pkg/provider/util.go` 135-169
(kubeconfig: a path if os.Stat finds it, else contents). Python SDK pulumi-kubernetes 4.34.2 `provider.py` 590-591
(kubeconfig defaults to $KUBECONFIG). pulumi/pulumi at 1b594989: `pulumi-language-python-exec` 109-110 (config and
secret keys), 181 and 234-242 (RunError: exit 1; BaseException not caught), `pulumi-language-python/main.go` 97 and
1184-1185 (exit 32: bail, nothing more printed), `pkg/resource/deploy/program_source.go` 150-152 (otherwise "an
unhandled error occurred"). client-go v0.36.2 `tools/clientcmd/loader.go` 160-180, 256-261 ($KUBECONFIG list, the
first file's current-context wins).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pulumi
import pytest
import yaml
from google.protobuf import struct_pb2
from pulumi.runtime import rpc

from maas.config import ConfigError, load_config, raw_from_stack_file
from maas.config.kubernetes import provider_connection, reader_connection
from maas.config.secrets import Secrets, identity_warning, secret_values
from maas.observe.reader import connect
from maas.tools.cli import main as cli
from maas.tools.render import DYNAMIC_TYPE, RecordingMonitor, render
from tests.conftest import DEV_STACK, ROOT

PROVIDER = "pulumi:providers:kubernetes"
SIG = rpc._special_sig_key


def providers(rendering) -> dict:
    return {r.name: r for r in rendering.registrations if r.type == PROVIDER}


def kubeconfig_file(path: Path, context: str, server: str) -> Path:
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": context,
                "clusters": [{"name": context, "cluster": {"server": server}}],
                "users": [{"name": context, "user": {"token": "t"}}],
                "contexts": [{"name": context, "context": {"cluster": context, "user": context}}],
            }
        )
    )
    return path


@pytest.fixture
def no_secret_keys():
    """The SDK keeps secret keys across `set_all_config` calls that give none (`render` gives none)."""
    yield
    pulumi.runtime.set_all_config({}, [])


# --------------------------------------------------------------------------------------- renderYamlToDirectory


def test_rendering_with_every_cluster_name_reports_each_at_once_with_its_fix():
    with pytest.raises(ConfigError) as caught:
        load_config(
            {
                "platform": {
                    "kubernetes": {
                        "renderYamlToDirectory": "out",
                        "kubeconfig": "./kubeconfig",
                        "context": "prod",
                        "clusterIdentifier": "prod",
                    }
                }
            }
        )
    issues = caught.value.issues
    assert [issue.path for issue in issues] == [
        "maas:platform.kubernetes.clusterIdentifier",
        "maas:platform.kubernetes.context",
        "maas:platform.kubernetes.kubeconfig",
    ]
    for issue in issues:
        key = issue.path.rpartition(".")[2]
        assert f"render on a stack of its own without {key}" in issue.message
        assert "or remove renderYamlToDirectory; `python -m maas render --stack <stack>`" in issue.message


def test_a_stack_file_that_renders_and_names_its_cluster_exits_2_in_validate(tmp_path, capsys):
    stack = tmp_path / "Pulumi.render.yaml"
    text = DEV_STACK.read_text().replace(
        "      context: maas-dev\n", "      context: maas-dev\n      renderYamlToDirectory: out\n"
    )
    stack.write_text(text)
    assert cli(["validate", "--config-file", str(stack)]) == 2
    err = capsys.readouterr().err
    assert (
        "maas:platform.kubernetes.context: is not compatible with maas:platform.kubernetes.renderYamlToDirectory" in err
    )
    assert "maas:platform.kubernetes.clusterIdentifier: is not compatible with" in err


def test_a_rendering_stack_keeps_the_ambient_kubeconfig_the_provider_accepts(dev_raw, monkeypatch, tmp_path):
    """CheckConfig accepts the SDK's $KUBECONFIG default in render mode; the program adds no connection."""
    path = kubeconfig_file(tmp_path / "config", "a", "https://a.example:6443")
    monkeypatch.setenv("KUBECONFIG", str(path))
    dev_raw["platform"]["kubernetes"] = {"renderYamlToDirectory": "out"}
    for provider in providers(render(dev_raw)).values():
        assert provider.inputs["kubeconfig"] == str(path) and "context" not in provider.inputs


# ------------------------------------------------------------------------------------- enableServerSideApply


def test_server_side_apply_off_while_objects_are_adopted_is_refused_naming_them(dev_raw):
    dev_raw["platform"]["kubernetes"]["enableServerSideApply"] = False
    monitor = RecordingMonitor()
    with pytest.raises(ConfigError) as caught:
        render(dev_raw, monitor=monitor)
    [issue] = [i for i in caught.value.issues if i.path == "maas:platform.kubernetes.enableServerSideApply"]
    assert issue.message.startswith("is false, but ")
    assert "ConfigMap odh-ai-gateway-infra/openshift-service-ca.crt" in issue.message
    assert "Namespace ai-tenant-redteam, models-as-a-service, odh-ai-gateway-infra" in issue.message
    assert issue.message.endswith(
        "fails with AlreadyExists (on OpenShift always, for openshift-service-ca.crt); remove enableServerSideApply: false"
    )
    assert monitor.registrations == []


def test_server_side_apply_off_while_objects_are_adopted_is_a_plan_problem_in_validate(tmp_path, capsys):
    """A plan check, as the gateway budget: `validate` exits 1 (invalid plan) and names it."""
    stack = tmp_path / "Pulumi.nossa.yaml"
    text = DEV_STACK.read_text().replace(
        "      context: maas-dev\n", "      context: maas-dev\n      enableServerSideApply: false\n"
    )
    stack.write_text(text)
    code = cli(["validate", "--config-file", str(stack)])
    out = capsys.readouterr().out
    assert code == 1 and "maas:platform.kubernetes.enableServerSideApply: is false, but " in out


def test_server_side_apply_off_is_accepted_when_rendering(dev_raw):
    dev_raw["platform"]["kubernetes"] = {"renderYamlToDirectory": "out", "enableServerSideApply": False}
    for provider in providers(render(dev_raw)).values():
        assert provider.inputs["enableServerSideApply"] == "false"


# ------------------------------------------------------------------------------------------ a KUBECONFIG list


@pytest.fixture
def kubeconfig_list(tmp_path, monkeypatch) -> tuple[Path, Path]:
    first = kubeconfig_file(tmp_path / "first", "first", "https://first.example:6443")
    second = kubeconfig_file(tmp_path / "second", "second", "https://second.example:6443")
    monkeypatch.setenv("KUBECONFIG", f"{first}{os.pathsep}{second}")
    return first, second


def test_a_kubeconfig_list_reaches_the_provider_as_its_own_loading_with_kubectls_context(dev_raw, kubeconfig_list):
    """The SDK would copy `first:second` into `kubeconfig`, which the provider reads as (broken) contents; ""
    makes it load $KUBECONFIG as kubectl does, and the context is the one kubectl picks (the first file's)."""
    del dev_raw["platform"]["kubernetes"]["context"]
    for provider in providers(render(dev_raw)).values():
        assert provider.inputs["kubeconfig"] == "" and provider.inputs["context"] == "first"


def test_the_reader_and_the_status_writer_see_the_cluster_the_provider_sees(dev_raw, kubeconfig_list):
    """The reader's merge (kubernetes-client's KubeConfigMerger) lets the last file's current-context win, client-go
    the first: given the context, both connect to the first file's cluster."""
    del dev_raw["platform"]["kubernetes"]["context"]
    options = load_config(dev_raw).platform.kubernetes
    assert connect(None, None).cluster.server == "https://second.example:6443"  # what the reader alone would use
    connection = reader_connection(options)
    assert (connection.kubeconfig, connection.context) == (None, "first")
    assert connect(connection.kubeconfig, connection.context).cluster.server == "https://first.example:6443"
    writes = [r for r in render(dev_raw).registrations if r.type == DYNAMIC_TYPE]
    assert writes and all(rpc.unwrap_rpc_secret(w.inputs["connection"]) == {"context": "first"} for w in writes)


def test_the_program_observes_with_the_providers_connection(dev_raw, kubeconfig_list, monkeypatch):
    from maas.deploy import program

    del dev_raw["platform"]["kubernetes"]["context"]
    seen = []
    monkeypatch.setattr(
        program, "read_cluster", lambda request, kubeconfig, context: seen.append((kubeconfig, context))
    )
    program.observe(load_config(dev_raw))
    assert seen == [(None, "first")]


def test_a_configured_context_is_kept_with_a_kubeconfig_list(dev_raw, kubeconfig_list):
    options = load_config(dev_raw).platform.kubernetes
    assert provider_connection(options).context == reader_connection(options).context == "maas-dev"
    for provider in providers(render(dev_raw)).values():
        assert provider.inputs["kubeconfig"] == "" and provider.inputs["context"] == "maas-dev"


def test_a_single_kubeconfig_path_is_left_to_the_sdk_default(dev_raw, tmp_path, monkeypatch):
    path = kubeconfig_file(tmp_path / "config", "a", "https://a.example:6443")
    monkeypatch.setenv("KUBECONFIG", str(path))
    for provider in providers(render(dev_raw)).values():
        assert provider.inputs["kubeconfig"] == str(path)


# ------------------------------------------------------------------------------------------------- secrets


def test_a_configured_kubeconfig_is_always_a_secret_provider_input(dev_raw):
    """A path or the credentials themselves: the provider's schema types it a plain string, so it would be
    stored and shown in plaintext."""
    dev_raw["platform"]["kubernetes"]["kubeconfig"] = (
        "apiVersion: v1\nkind: Config\nusers: [{name: me, user: {token: s3cr3t}}]\n"
    )
    rendering = render(dev_raw)
    for provider in providers(rendering).values():
        assert rpc.is_rpc_secret(provider.inputs["kubeconfig"])
        assert provider.inputs["context"] == "maas-dev"  # not a secure value: plain


def secure_stack(tmp_path: Path, replacements: dict[str, str]) -> Path:
    """The dev stack file as the Pulumi CLI keeps it after `pulumi config set --secret --path ...`: `{secure: ...}`."""
    text = DEV_STACK.read_text()
    for old, new in replacements.items():
        assert old in text
        text = text.replace(old, new)
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(text)
    return path


def test_a_secure_kubeconfig_under_secret_keys_stays_secret_and_nothing_else_is(
    dev_raw, tmp_path, monkeypatch, no_secret_keys
):
    secure_stack(
        tmp_path, {"      context: maas-dev\n": "      context: maas-dev\n      kubeconfig: {secure: v1:AAAA}\n"}
    )
    monkeypatch.chdir(tmp_path)
    dev_raw["platform"]["kubernetes"]["kubeconfig"] = "apiVersion: v1\nkind: Config\n# token: s3cr3t\n"
    pulumi.runtime.set_all_config({}, secret_keys=["maas:platform"])  # what the language host passes
    rendering = render(dev_raw)
    for provider in providers(rendering).values():
        assert rpc.is_rpc_secret(provider.inputs["kubeconfig"])
        assert provider.inputs["context"] == "maas-dev" and provider.inputs["clusterIdentifier"] == "maas-dev-cluster"
    assert "s3cr3t" not in json.dumps(rendering.objects())
    assert not any("is a secret, but" in w for w in rendering.warnings)


class WireMonitor(RecordingMonitor):
    """Also keeps what the engine would receive: the mock monitor's own decoding marks a whole top-level property
    secret when anything inside it is (`rpc.deserialize_properties`), the wire keeps each secret where it is."""

    def __init__(self) -> None:
        super().__init__()
        self.wire: dict[str, struct_pb2.Struct] = {}

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        self.wire[f"{request.type}::{request.name}"] = request.object
        return super().RegisterResource(request)

    def RegisterResourceOutputs(self, request):  # noqa: N802 (gRPC method name)
        self.wire[request.urn] = request.outputs
        return super().RegisterResourceOutputs(request)


def wire_secret(value) -> bool:
    return isinstance(value, struct_pb2.Struct) and SIG in value and value[SIG] == rpc._special_secret_sig


def test_a_secure_annotation_reaches_its_object_and_the_outputs_as_a_secret(
    dev_raw, tmp_path, monkeypatch, no_secret_keys
):
    secure_stack(
        tmp_path, {"openshift.io/display-name: Granite 7B Instruct": "openshift.io/display-name: {secure: v1:BBBB}"}
    )
    monkeypatch.chdir(tmp_path)
    pulumi.runtime.set_all_config({}, secret_keys=["maas:models"])
    monitor = WireMonitor()
    rendering = render(dev_raw, monitor=monitor)
    metadata = monitor.wire["kubernetes:maas.opendatahub.io/v1alpha1:MaaSModelRef::llm/granite-7b"]["metadata"]
    display = metadata["annotations"]["openshift.io/display-name"]
    assert wire_secret(display) and display["value"] == "Granite 7B Instruct"
    assert metadata["annotations"]["opendatahub.io/genai-use-case"] == "chat"  # the other values stay plain
    assert metadata["name"] == "granite-7b" and not wire_secret(metadata["annotations"])
    model = next(r for r in rendering.registrations if r.type == "maas:index:Model" and r.name == "llm/granite-7b")
    assert wire_secret(monitor.wire[model.urn]["modelDetails"]["displayName"])
    other = monitor.wire["kubernetes:maas.opendatahub.io/v1alpha1:MaaSModelRef::llm/llama-3-8b"]
    assert not any(wire_secret(v) for v in other["metadata"].values())


def test_a_secret_key_the_stack_file_does_not_locate_keeps_all_its_texts_secret_with_a_warning(
    dev_raw, tmp_path, monkeypatch, no_secret_keys
):
    monkeypatch.chdir(tmp_path)  # no Pulumi.dev.yaml here: values from an ESC environment look the same
    pulumi.runtime.set_all_config({}, secret_keys=["maas:platform"])
    rendering = render(dev_raw)
    for provider in providers(rendering).values():
        assert rpc.is_rpc_secret(provider.inputs["context"]) and rpc.is_rpc_secret(provider.inputs["clusterIdentifier"])
    assert any(
        w.startswith("maas:platform is a secret, but Pulumi.dev.yaml shows no `secure:` value")
        for w in rendering.warnings
    )


def test_secret_values_are_located_where_the_stack_file_wrote_secure():
    stack = {"models": [{"name": "m", "annotations": {"a": "<secret: not decrypted offline>", "b": "plain"}}]}
    values = {"models": [{"name": "m", "annotations": {"a": "hidden-value", "b": "plain"}}]}
    secrets = secret_values(values, None, stack)
    assert secrets.values == {"hidden-value"} and secrets.warnings == ()
    assert secrets.covers("x == 'hidden-value'") and not secrets.covers("plain")
    raw, _ = raw_from_stack_file(DEV_STACK)
    fallback = secret_values({"platform": raw["platform"]}, None, raw)  # the dev stack file has no `secure:` value
    assert "maas-dev" in fallback.values and fallback.warnings[0].startswith("maas:platform is a secret, but")


def test_an_object_named_by_a_secret_value_keeps_its_name_and_a_secret_key_hides_its_mapping():
    secrets = Secrets(frozenset({"granite-7b"}))
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "granite-7b", "namespace": "llm", "labels": {"model": "granite-7b"}},
        "data": {"granite-7b": "x", "other": "y"},
        "spec": {"rule": "model == 'maas-trlp-granite-7b'", "plain": "z"},
    }
    protected, named = secrets.protect_body(body, lambda value: ("secret", value))
    assert named and protected["metadata"]["name"] == "granite-7b" and protected["kind"] == "ConfigMap"
    assert protected["metadata"]["labels"] == {"model": ("secret", "granite-7b")}
    assert protected["data"] == ("secret", {"granite-7b": "x", "other": "y"})
    assert protected["spec"] == {"rule": ("secret", "model == 'maas-trlp-granite-7b'"), "plain": "z"}
    assert body["metadata"]["labels"] == {"model": "granite-7b"}  # copied, never changed in place
    assert identity_warning(["ConfigMap:llm/granite-7b"]).startswith(
        "a secret configuration value names 1 object(s) (ConfigMap:llm/granite-7b): names are part of Pulumi URNs"
    )


# --------------------------------------------------------------------------------------------- the RunError


def test_a_configuration_error_exits_32_through_the_sdks_stack_runner_with_the_list_once(tmp_path):
    """The program as the language host runs it (`run_in_stack` of `runpy.run_path("__main__.py")`), under mocks:
    the SDK re-raises what the program raised after its RPCs finish (`run_pulumi_func`), and SystemExit is neither a
    RunError nor an Exception to the host, so the process exits 32: the host's bail."""
    script = tmp_path / "host.py"
    script.write_text(
        "import asyncio, runpy, pulumi\n"
        "class Mocks(pulumi.runtime.Mocks):\n"
        "    def new_resource(self, args):\n"
        "        return args.name + '-id', args.inputs\n"
        "    def call(self, args):\n"
        "        return {}\n"
        "loop = asyncio.new_event_loop()\n"
        "asyncio.set_event_loop(loop)\n"
        "pulumi.runtime.set_mocks(Mocks(), project='maas', stack='dev', preview=True)\n"
        "pulumi.runtime.settings.set_root_resource(None)  # run_in_stack makes the root stack, as under the host\n"
        "loop.run_until_complete(pulumi.runtime.run_in_stack(lambda: runpy.run_path('__main__.py', run_name='__main__')))\n"
    )
    config = {
        "maas:platform": json.dumps({"flavor": "aws", "kubernetes": {"renderYamlToDirectory": "out", "context": "c"}})
    }
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "PULUMI_CONFIG": json.dumps(config), "PYTHONPATH": str(ROOT)},  # this checkout's maas
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 32, result.stderr
    assert result.stderr.count("invalid MaaS configuration (2 problem(s)); nothing was registered:") == 1
    assert "maas:platform.kubernetes.context: is not compatible with" in result.stderr
    assert "Traceback" not in result.stderr and "RunError" not in result.stderr
