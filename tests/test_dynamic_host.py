"""The status writer (and, in one test, an object batch) in the real dynamic-provider host: `python -u -m
pulumi.dynamic` from the pinned SDK, started in a subprocess from the project root as the engine starts it, driven
over gRPC as the engine drives it, against a local API server (tests/fake_kube.py). No CLI, no cluster.

Facts this module relies on, read in the sources (line numbers at those versions):

SDK = the pinned Python SDK, pulumi==3.272.0 (requirements.txt; .venv/lib/python3.11/site-packages/pulumi/...):
- dynamic/__main__.py:267-283 `main()`: a gRPC server on `futures.ThreadPoolExecutor(max_workers=4)` (270), bound
  to "127.0.0.1:0" (274, so the port is free by construction), which writes "{port}\\n" to stdout (276) without a
  flush, hence `-u`; it never reads argv, so the engine's arguments are only passed, as the engine passes them.
- dynamic/__main__.py:34 `PROVIDER_KEY = "__provider"`; 46-78 `get_provider`: base64, then `dill.loads` (70) of
  that property, once per distinct string per process (76).
- dynamic/__main__.py:81-86 `_abort_with_traceback`: any exception aborts the call with `StatusCode.UNKNOWN` and
  `traceback.format_exc()` as details, whose last line is `module.Class: message`.
- dynamic/__main__.py:114-117 Diff and 182-185 Check deserialize with keep_unknowns=True: the unknown sentinel
  becomes a `pulumi.output.Unknown` (runtime/rpc.py:1140-1141), re-serialized by Check as `rpc.UNKNOWN`
  (rpc.py:469-470); Create (167-178) and Update (137-146) deserialize without it and echo `__provider` into the
  outputs (146, 172); Delete returns Empty (156-161); Read (229-252) sends inputs only when the provider returns
  some (248).
- dynamic/__main__.py:207-215 Configure answers `{"acceptSecrets": False}` (214) and nothing else: supportsPreview,
  acceptResources and acceptOutputs are False. There is no Handshake: the generated base servicer answers
  UNIMPLEMENTED (runtime/proto/provider_pb2_grpc.py:137-146).
- runtime/rpc.py:62 `UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"`; 892-894: a key whose value deserializes to
  None is dropped (so `facts` keys that are None never reach the provider, in olds or news alike).
- runtime/rpc.py:688-701 a secret Output is sent marked (`{sig: secret, value}`) only when the monitor supports
  secrets; this module turns that feature on while serializing, as a real monitor does, then strips the marks as
  the engine does for a provider that does not accept secrets.
- dynamic/dynamic.py:279-321 `serialize_provider` (318 `dill.dumps(provider, protocol=pickle.DEFAULT_PROTOCOL,
  recurse=True)`, 319 base64); 360-375 `Resource.__init__` stores it under `__provider`, a secret unless
  `serialize_as_secret_always` is False (208, 369-373); 337/377 the type is `pulumi-python:dynamic:Resource`.

ENGINE = pulumi/pulumi @ 1b5949891b3cefcb9974752b24a5ecef0acc86c8 (v3.259.0+14, the newest stored snapshot; the
engine's side of the protocol, which a 3.272.0 SDK is driven by):
- sdk/python/dist/pulumi-resource-pulumi-python:20,33 `"$PULUMI_RUNTIME_VIRTUALENV/bin/python" -u -m pulumi.dynamic
  $@`, a relative virtualenv (Pulumi.yaml `virtualenv: .venv`) made absolute with `$PWD`.
- sdk/go/common/resource/plugin/provider_plugin.go:247-249 runtime options become `PULUMI_RUNTIME_*`, 257
  `PULUMI_PROJECT`; 287-288 `newPlugin(ctx, ctx.Pwd, ..., []string{host.ServerAddr()}, ...)`: started in the
  project root with the engine's address as its one argument; plugin.go:599 `cmd.Dir = pwd`, 728-744
  `buildPluginArguments` (only `--logtostderr`, `-v=`, `--tracing` when logging flows or tracing is on).
- plugin.go:375-422 the engine reads stdout a byte at a time up to the first newline, 424-431/448-473 parses the
  trimmed line as a port in 1..65535, then dials 127.0.0.1:port (189).
- provider_plugin.go:385-391 "If the provider doesn't implement Handshake, that's fine"; 1092-1096 Configure args
  keep secrets; 1122-1133 ConfigureRequest{AcceptSecrets, AcceptResources, SendsOldInputs, SendsOldInputsToDelete:
  true, Variables, Args}; 1141-1149 the protocol then comes from Configure's answer (`supportsPreview:
  resp.GetSupportsPreview()`).
- provider_plugin.go:1187-1208 Check marshals with `KeepSecrets: protocol.acceptSecrets` and `KeepUnknowns:
  req.AllowUnknowns`, 1230-1237 `Olds` = old inputs, `News` = new inputs; 1312-1359 Diff: `OldInputs`, `Olds` =
  old outputs, `News` = new inputs, same options; 1437-1439 a preview Create without supportsPreview returns the
  inputs without calling the provider (Update: 1713-1715); 1445-1452, 1601-1602, 1775-1780, 1895-1897 Create,
  Read (`Properties` = state, `Inputs`), Update (`Olds` = old outputs, `OldInputs`), Delete (`Properties` =
  outputs, `OldInputs`) all with `KeepSecrets: protocol.acceptSecrets`; 1503-1507 `annotateSecrets`: an output
  with the name of a secret input is made secret again.
- sdk/go/common/resource/plugin/rpc.go:73 `UnknownStringValue = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"`, 190-201
  and 297 an unknown string is sent as that sentinel; 233-237 with KeepSecrets false a secret is sent as its value.
- pkg/resource/deploy/step.go:1616 "If the ID is blank treat this as a delete" (a Read answering id "").
"""

from __future__ import annotations

import asyncio
import base64
import os
import pickletools
import queue
import re
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import pulumi
import pytest
import yaml
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.dynamic.dynamic import PROVIDER_KEY, serialize_provider
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import provider_pb2, provider_pb2_grpc, resource_pb2

from maas.deploy.object_batch import MARKER_ANNOTATION, ObjectBatchProvider, batch_inputs
from maas.deploy.status_writer import (
    FIELD_MANAGER,
    MERGE_PATCH,
    StatusBatchProvider,
    StatusProvider,
    batch_targets,
    encode_status,
    recorded_transitions,
    status_digest,
    status_inputs,
    status_target,
)
from maas.naming import STATUS_RESOURCES
from maas.observe import ObservationRequest, read_cluster
from maas.plan.status import needed
from maas.plan.status.model import ModelFacts, model_status
from tests.fake_kube import FakeKube, Request, all_crds, kserve_route, llm_inference_service, platform_gateway
from tests.test_model_status import GRANITE

ROOT = Path(__file__).resolve().parent.parent
VIRTUALENV = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["runtime"]["options"]["virtualenv"]
PYTHON = ROOT / VIRTUALENV / "bin" / "python"  # the shim's "$PWD/$PULUMI_RUNTIME_VIRTUALENV/bin/python"
ENGINE_ADDRESS = "127.0.0.1:1"  # the host never dials it (it has no Handshake, and the SDK does not read argv)
START_SECONDS = 60.0  # the host's first line; a cold venv imports grpc and pulumi in a few seconds
RPC_SECONDS = 30.0  # every call; each takes milliseconds here
TYPE = "pulumi-python:dynamic:Resource"  # dynamic.py:337,377 for StatusWrites (no module, name "Resource")
PROVIDER = serialize_provider(StatusBatchProvider())  # what StatusWrites stores under __provider
STUB_PROVIDER = serialize_provider(StatusProvider())  # what states of the per-object status resources hold
BATCH_PROVIDER = serialize_provider(ObjectBatchProvider())  # what an ObjectBatch stores under __provider
API_VERSION = "maas.opendatahub.io/v1alpha1"
RESOURCE = STATUS_RESOURCES["MaaSModelRef"]
FACTS = GRANITE.to_inputs()
READY = {
    "phase": "Ready",
    "endpoint": "https://maas.example.com/llm/llama-3-8b",
    "conditions": [{"type": "Ready", "status": "True", "reason": "Reconciled", "message": "ok"}],
}
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


# ----------------------------------------------------------------------------------------------- the host


@dataclass
class Host:
    process: subprocess.Popen[bytes]
    port_line: bytes
    stub: provider_pb2_grpc.ResourceProviderStub
    configured: provider_pb2.ConfigureResponse
    output: list[str] = field(default_factory=list)  # what it wrote after the port, and to stderr

    def log(self) -> str:
        return "".join(self.output)[-4000:]


def engine_environment(kubeconfig: Path) -> dict[str, str]:
    """The CLI's environment plus what the engine adds for this plugin (runtime options, project), and what the
    shim changes; KUBECONFIG points at nothing, so only the connection input can name a cluster."""
    options = yaml.safe_load((ROOT / "Pulumi.yaml").read_text())["runtime"]["options"]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONHOME"}
    env |= {f"PULUMI_RUNTIME_{key.upper()}": str(value) for key, value in options.items()}
    env |= {"PULUMI_PROJECT": "maas", "KUBECONFIG": str(kubeconfig)}
    env["PATH"] = f"{PYTHON.parent}:{env.get('PATH', '')}"
    return env


def _drain(stream: Any, output: list[str], port: queue.Queue[bytes | None] | None) -> None:
    """Read like the engine: a byte at a time up to the first newline (the port), then trace the rest."""
    if port is not None:
        line = b""
        while (byte := stream.read(1)) not in (b"", b"\n"):
            line += byte
        port.put(line if byte == b"\n" else None)
    for chunk in iter(lambda: stream.read1(4096), b""):
        output.append(chunk.decode(errors="replace"))


@pytest.fixture(scope="module")
def host(tmp_path_factory) -> Iterator[Host]:
    assert PYTHON.exists(), f"{PYTHON} is missing: `make install` creates the virtualenv Pulumi.yaml names"
    env = engine_environment(tmp_path_factory.mktemp("host") / "no-kubeconfig")
    process = subprocess.Popen(
        [str(PYTHON), "-u", "-m", "pulumi.dynamic", ENGINE_ADDRESS],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    output: list[str] = []
    channel = None
    try:
        port: queue.Queue[bytes | None] = queue.Queue()
        for stream, line in ((process.stdout, port), (process.stderr, None)):
            threading.Thread(target=_drain, args=(stream, output, line), daemon=True).start()
        try:
            port_line = port.get(timeout=START_SECONDS)
        except queue.Empty:
            pytest.fail(f"the host wrote no port within {START_SECONDS:g} s: {''.join(output)[-4000:]}")
        if port_line is None:
            pytest.fail(f"the host exited before writing its port ({process.wait(5)}): {''.join(output)[-4000:]}")
        channel = grpc.insecure_channel(f"127.0.0.1:{int(port_line.strip())}", options=[("grpc.enable_http_proxy", 0)])
        grpc.channel_ready_future(channel).result(timeout=RPC_SECONDS)
        stub = provider_pb2_grpc.ResourceProviderStub(channel)
        configured = stub.Configure(
            provider_pb2.ConfigureRequest(
                variables={},
                args=struct_pb2.Struct(),
                acceptSecrets=True,
                acceptResources=True,
                sends_old_inputs=True,
                sends_old_inputs_to_delete=True,
                urn="urn:pulumi:dev::maas::pulumi:providers:pulumi-python::default",
                name="default",
                type="pulumi:providers:pulumi-python",
            ),
            timeout=RPC_SECONDS,
        )
        yield Host(process, port_line, stub, configured, output)
    finally:
        if channel is not None:
            channel.close()
        process.kill()
        process.wait(timeout=10)


# -------------------------------------------------------------------------------------- what the engine sends


@dataclass(frozen=True)
class Model:
    """One MaaSModelRef status the program plans: its body as a status Desired carries it, and its facts."""

    name: str
    status: dict[str, Any]
    facts: dict[str, Any] | None = None

    def body(self) -> dict[str, Any]:
        metadata = {"name": self.name, "namespace": "llm"}
        return {"apiVersion": API_VERSION, "kind": "MaaSModelRef", "metadata": metadata, "status": self.status}

    @property
    def key(self) -> str:
        return f"MaaSModelRef/llm/{self.name}"


def digest_of(status: dict[str, Any]) -> str:
    """How a record names the status it wrote."""
    return status_digest(encode_status(status))


def program_sends(models: list[Model], connection: dict[str, str], provider: str = PROVIDER) -> struct_pb2.Struct:
    """The inputs of one StatusWrites as the SDK sends them to the engine: built by the program's own helpers,
    `connection` and `__provider` secret (a real monitor supports secrets)."""

    def props() -> dict[str, Any]:
        targets = [status_target(m.body(), RESOURCE, m.facts) for m in models]
        return {**status_inputs(targets, connection), PROVIDER_KEY: pulumi.Output.secret(provider)}

    return sdk_sends(props)


def sdk_sends(props: Callable[[], dict[str, Any]]) -> struct_pb2.Struct:
    """The properties `props` builds (in the SDK's loop, as Outputs need), serialized as the SDK sends them."""

    async def serialize() -> struct_pb2.Struct:
        # set in this task's context only: the test process's settings stay as they were
        settings.SETTINGS.monitor_features = {resource_pb2.RESOURCE_MONITOR_FEATURE_SECRETS}
        settings.SETTINGS.outputs = set()
        return await rpc.serialize_properties(props(), {})

    loop = asyncio.new_event_loop()  # private, as the host's own (never the thread's current loop)
    try:
        return loop.run_until_complete(serialize())
    finally:
        loop.close()


def _plain(value: Any) -> Any:
    if isinstance(value, dict) and value.get(rpc._special_sig_key) == rpc._special_secret_sig:
        return _plain(value["value"])
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def engine_sends(props: struct_pb2.Struct) -> struct_pb2.Struct:
    """What the engine forwards to a provider that does not accept secrets: every secret as its plain value."""
    return json_format.ParseDict(_plain(json_format.MessageToDict(props)), struct_pb2.Struct())


def inputs(models: list[Model], connection: dict[str, str], provider: str = PROVIDER) -> struct_pb2.Struct:
    return engine_sends(program_sends(models, connection, provider))


def as_dict(props: struct_pb2.Struct) -> dict[str, Any]:
    return json_format.MessageToDict(props)


def urn(name: str) -> str:
    return f"urn:pulumi:dev::maas::maas:index:Model$pulumi-python:dynamic:Resource::statuses/{name}"


def check(host: Host, name: str, olds: struct_pb2.Struct, news: struct_pb2.Struct) -> provider_pb2.CheckResponse:
    request = provider_pb2.CheckRequest(urn=urn(name), name=f"statuses/{name}", type=TYPE, olds=olds, news=news)
    return host.stub.Check(request, timeout=RPC_SECONDS)


def diff(host: Host, name: str, old_inputs, olds, news) -> provider_pb2.DiffResponse:
    request = provider_pb2.DiffRequest(
        id="statuses", urn=urn(name), name=f"statuses/{name}", type=TYPE, old_inputs=old_inputs, olds=olds, news=news
    )
    return host.stub.Diff(request, timeout=RPC_SECONDS)


def create_request(name: str, properties: struct_pb2.Struct) -> provider_pb2.CreateRequest:
    return provider_pb2.CreateRequest(urn=urn(name), name=f"statuses/{name}", type=TYPE, properties=properties)


def create(host: Host, name: str, properties: struct_pb2.Struct) -> provider_pb2.CreateResponse:
    return host.stub.Create(create_request(name, properties), timeout=RPC_SECONDS)


def update(host: Host, name: str, old_inputs, olds, news) -> provider_pb2.UpdateResponse:
    request = provider_pb2.UpdateRequest(
        id="statuses", urn=urn(name), name=f"statuses/{name}", type=TYPE, olds=olds, news=news, old_inputs=old_inputs
    )
    return host.stub.Update(request, timeout=RPC_SECONDS)


def read(host: Host, name: str, state, old_inputs, id_: str = "statuses") -> provider_pb2.ReadResponse:
    request = provider_pb2.ReadRequest(
        id=id_, urn=urn(name), name=f"statuses/{name}", type=TYPE, properties=state, inputs=old_inputs
    )
    return host.stub.Read(request, timeout=RPC_SECONDS)


def delete(host: Host, name: str, outputs, old_inputs, id_: str = "statuses") -> empty_pb2.Empty:
    request = provider_pb2.DeleteRequest(
        id=id_, urn=urn(name), name=f"statuses/{name}", type=TYPE, properties=outputs, old_inputs=old_inputs
    )
    return host.stub.Delete(request, timeout=RPC_SECONDS)


def failure(call) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value


# ----------------------------------------------------------------------------------------------- the cluster


def model_ref(name: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "MaaSModelRef",
        "metadata": {"name": name, "namespace": "llm", "uid": f"uid-{name}"},
        "spec": {"modelRef": {"kind": "LLMInferenceService", "name": f"{name}-instruct"}},
    }


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    """Two MaaSModelRefs; granite's backend is ready, its route accepted by the Gateway."""
    cluster = [
        model_ref("granite-7b"),
        model_ref("llama-3-8b"),
        llm_inference_service("llm", "granite-7b-instruct", ready=True),
        kserve_route("llm", "granite-7b-instruct"),
        platform_gateway(),
    ]
    with FakeKube(cluster + all_crds()) as server:
        yield server


def connection(kube: FakeKube) -> dict[str, str]:
    return {"kubeconfig": kube.kubeconfig(), "context": "maas-dev"}


def patches(kube: FakeKube) -> list[Request]:
    return [r for r in kube.requests if r.method == "PATCH"]


def stored(kube: FakeKube, name: str) -> dict[str, Any]:
    return next(o for o in kube.objects if o["kind"] == "MaaSModelRef" and o["metadata"]["name"] == name)["status"]


def status_path(name: str) -> str:
    return f"/apis/{API_VERSION}/namespaces/llm/maasmodelrefs/{name}/status"


def planned(kube: FakeKube) -> dict[str, Any]:
    """granite's status as the program plans it from a snapshot of the cluster as it is now."""
    request = ObservationRequest((), needed("MaaSModelRef", FACTS))
    return model_status(ModelFacts.from_inputs(FACTS), read_cluster(request, kube.kubeconfig(), "maas-dev"))


# ----------------------------------------------------------------------------------------------- the tests


def test_the_host_prints_its_port_and_configures_without_secrets_nor_previews(host):
    assert re.fullmatch(rb"[1-9][0-9]{0,4}", host.port_line), host.port_line  # alone on the first line
    assert 0 < int(host.port_line) <= 65535
    assert host.process.poll() is None, host.log()
    handshake = failure(lambda: host.stub.Handshake(provider_pb2.ProviderHandshakeRequest(), timeout=RPC_SECONDS))
    assert handshake.code() == grpc.StatusCode.UNIMPLEMENTED  # the engine then takes the protocol from Configure
    configured = json_format.MessageToDict(host.configured, preserving_proto_field_name=True)
    assert host.configured.acceptSecrets is False  # so the engine sends every secret input as its plain value
    assert host.configured.supportsPreview is False  # so a preview's Create/Update never reach the writer
    assert (host.configured.acceptResources, host.configured.acceptOutputs) == (False, False)
    assert configured == {}  # nothing else is set
    info = host.stub.GetPluginInfo(empty_pb2.Empty(), timeout=RPC_SECONDS)
    assert info.version == "0.1.0"


def test_the_provider_is_pickled_by_reference_to_an_importable_class():
    """2a: the pickle holds only the class path; the host imports the module from the project root (`python -m`
    puts its working directory first on sys.path; the venv's `-e .` points there too)."""
    ops = [(op.name, arg) for op, arg, _ in pickletools.genops(base64.b64decode(PROVIDER))]
    strings = [arg for name, arg in ops if name == "SHORT_BINUNICODE"]
    assert strings == ["maas.deploy.status_writer", "StatusBatchProvider"]
    assert ("STACK_GLOBAL", None) in ops and ("NEWOBJ", None) in ops
    assert len(base64.b64decode(PROVIDER)) < 100


def test_a_class_the_venv_does_not_have_fails_in_the_host(host, kube):
    """The same layout fails where a state names a class the code no longer has (why the class paths stay)."""
    moved = base64.b64encode(b"\x80\x02cmaas.deploy.status_writer\nMovedProvider\n)\x81.").decode()
    news = inputs([Model("granite-7b", READY)], connection(kube), provider=moved)
    error = failure(lambda: check(host, "granite-7b", struct_pb2.Struct(), news))
    assert error.code() == grpc.StatusCode.UNKNOWN
    assert error.details().rstrip().splitlines()[-1] == (
        "AttributeError: Can't get attribute 'MovedProvider' on <module 'maas.deploy.status_writer' from "
        f"'{ROOT / 'maas' / 'deploy' / 'status_writer.py'}'>"
    )
    assert kube.requests == []


def test_the_engine_sends_the_secret_inputs_plain_and_gets_them_back_under_the_same_names(host, kube):
    """2b: the SDK marks `connection` and `__provider` secret; the engine strips the marks (acceptSecrets False) and
    makes each output secret again when an input of the same name was: the outputs keep both names."""
    models = [Model("llama-3-8b", READY)]
    sent = as_dict(program_sends(models, connection(kube)))
    secret = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
    marked = {key for key, value in sent.items() if isinstance(value, dict) and secret.items() <= value.items()}
    assert marked == {"connection", PROVIDER_KEY}
    plain = inputs(models, connection(kube))
    assert as_dict(plain)["connection"] == connection(kube) and as_dict(plain)[PROVIDER_KEY] == PROVIDER
    outs = as_dict(create(host, "llama-3-8b", plain).properties)
    assert outs["connection"] == connection(kube) and outs[PROVIDER_KEY] == PROVIDER


def test_check_and_diff_of_a_preview_read_no_cluster_and_a_changed_status_is_a_change(host, kube):
    """2c, 2g: Check and Diff only unpickle the provider; a changed status is a change; the same inputs against
    their own outputs are no change."""
    status = planned(kube)
    known = [Model("granite-7b", status, facts=FACTS), Model("llama-3-8b", READY)]
    preview = [Model("granite-7b", {**status, "phase": "Pending"}, facts=FACTS), Model("llama-3-8b", READY)]
    news = inputs(preview, connection(kube))
    before = len(kube.requests)

    checked = check(host, "granite-7b", struct_pb2.Struct(), news)
    assert list(checked.failures) == []
    assert as_dict(checked.inputs) == as_dict(news)  # the sentinel comes back as sent

    created = create(host, "granite-7b", inputs(known, connection(kube)))
    after_create = len(kube.requests)
    assert after_create > before
    old_inputs, olds = inputs(known, connection(kube)), created.properties
    changed = diff(host, "granite-7b", old_inputs, olds, news)
    assert changed.changes == provider_pb2.DiffResponse.DIFF_SOME
    assert (list(changed.replaces), changed.deleteBeforeReplace) == ([], False)
    same = diff(host, "granite-7b", old_inputs, olds, inputs(known, connection(kube)))
    assert same.changes == provider_pb2.DiffResponse.DIFF_NONE
    moved = diff(host, "granite-7b", old_inputs, olds, inputs(known, {**connection(kube), "context": "elsewhere"}))
    assert moved.changes == provider_pb2.DiffResponse.DIFF_SOME and list(moved.replaces) == []
    assert len(kube.requests) == after_create  # neither Check nor Diff reached the cluster


def test_create_writes_each_status_and_judges_the_one_with_facts_in_the_host(host, kube):
    """The merge patch with the field manager to each status subresource; granite's facts are judged again in
    the host's worker thread (the reader's threads), on a fresh read that finds the route accepted since the plan."""
    stale = {"phase": "Pending", "endpoint": "", "conditions": []}  # planned before the route was accepted
    models = [Model("granite-7b", stale, facts=FACTS), Model("llama-3-8b", READY)]
    created = create(host, "component", inputs(models, connection(kube)))
    assert created.id == "statuses"
    by_path = {r.path: r for r in patches(kube)}
    assert sorted(by_path) == [status_path("granite-7b"), status_path("llama-3-8b")]
    for request in by_path.values():
        assert request.query == {"fieldManager": FIELD_MANAGER} and request.content_type == MERGE_PATCH
        assert request.authorization == "Bearer good-token" and list(request.body) == ["status"]
    judged = planned(kube)
    assert judged["phase"] == "Ready" and judged["endpoint"] == "https://maas.apps.example.com/llm/granite-7b-instruct"
    route = "/apis/gateway.networking.k8s.io/v1/namespaces/llm/httproutes/granite-7b-instruct-kserve-route"
    assert route in [r.path for r in kube.requests if r.method == "GET"]

    outs = as_dict(created.properties)
    assert set(outs) == {"connection", "targets", PROVIDER_KEY}
    assert list(batch_targets(outs)) == ["MaaSModelRef/llm/granite-7b", "MaaSModelRef/llm/llama-3-8b"]
    for model, status in ((models[0], judged), (models[1], READY)):
        record = batch_targets(outs)[model.key]
        assert record["digest"] == digest_of(status) and "status" not in record  # the inputs hold it
        assert "targetUid" not in record  # a replaced object replaces the batch instead (`replace_with`)
        transitions = recorded_transitions(record)
        assert sorted(transitions) == sorted(c["type"] for c in status["conditions"])
        assert all(RFC3339.fullmatch(at) for at in transitions.values())
        live = stored(kube, model.name)
        assert {c["type"]: c["lastTransitionTime"] for c in live["conditions"]} == transitions
        assert {**live, "conditions": [{**c, "lastTransitionTime": None} for c in live["conditions"]]} == {
            **status,
            "conditions": [{**c, "lastTransitionTime": None} for c in status["conditions"]],
        }
    assert batch_targets(outs)[models[0].key]["facts"] == FACTS


def test_update_gets_the_previous_outputs_and_writes_only_what_changed(host, kube):
    """olds = the outputs of the Create: the unchanged target is not written again, the changed one is patched
    from the status last written (a dropped field set to null, an unchanged condition keeps its time)."""
    first = [Model("granite-7b", {"phase": "Ready", "conditions": []}), Model("llama-3-8b", READY)]
    created = create(host, "component", inputs(first, connection(kube)))
    written_at = recorded_transitions(batch_targets(as_dict(created.properties))["MaaSModelRef/llm/llama-3-8b"])[
        "Ready"
    ]
    kube.requests.clear()
    second = [
        first[0],
        Model("llama-3-8b", {"phase": "Ready", "conditions": [{**READY["conditions"][0], "message": "still ok"}]}),
    ]
    old_inputs, news = inputs(first, connection(kube)), inputs(second, connection(kube))
    assert diff(host, "component", old_inputs, created.properties, news).changes == provider_pb2.DiffResponse.DIFF_SOME
    assert kube.requests == []

    updated = update(host, "component", old_inputs, created.properties, news)
    [request] = kube.requests
    assert (request.method, request.path) == ("PATCH", status_path("llama-3-8b"))
    condition = {**READY["conditions"][0], "message": "still ok", "lastTransitionTime": written_at}
    assert request.body == {"status": {"endpoint": None, "phase": "Ready", "conditions": [condition]}}
    assert stored(kube, "llama-3-8b") == {"phase": "Ready", "conditions": [condition]}
    outs = as_dict(updated.properties)
    assert outs[PROVIDER_KEY] == PROVIDER and outs["connection"] == connection(kube)
    assert (
        batch_targets(outs)["MaaSModelRef/llm/granite-7b"] == batch_targets(as_dict(created.properties))[first[0].key]
    )
    assert batch_targets(outs)["MaaSModelRef/llm/llama-3-8b"]["digest"] == digest_of(second[1].status)
    assert diff(host, "component", news, updated.properties, news).changes == provider_pb2.DiffResponse.DIFF_NONE


def test_read_shows_drift_drops_gone_objects_and_returns_an_empty_id_once_all_are_gone(host, kube):
    """2d: `pulumi refresh` sends the state; a live status that drifted comes back, a target whose object is gone
    is dropped, and with none left the id is empty (the engine deletes the resource from the state)."""
    models = [Model("granite-7b", {"phase": "Ready"}), Model("llama-3-8b", READY)]
    old_inputs = inputs(models, connection(kube))
    state = create(host, "component", old_inputs).properties
    same = read(host, "component", state, old_inputs)
    assert same.id == "statuses" and as_dict(same.properties) == as_dict(state)
    assert not same.HasField("inputs")  # the engine keeps the old inputs

    stored(kube, "granite-7b")["phase"] = "Failed"  # someone edited the status
    kube.objects.remove(next(o for o in kube.objects if o["metadata"]["name"] == "llama-3-8b"))
    drifted = read(host, "component", state, old_inputs)
    assert drifted.id == "statuses"
    targets = batch_targets(as_dict(drifted.properties))
    assert list(targets) == ["MaaSModelRef/llm/granite-7b"]
    assert targets["MaaSModelRef/llm/granite-7b"]["digest"] == digest_of({"phase": "Failed"})
    assert diff(host, "component", old_inputs, drifted.properties, old_inputs).changes == (
        provider_pb2.DiffResponse.DIFF_SOME
    )

    kube.objects.remove(next(o for o in kube.objects if o["metadata"]["name"] == "granite-7b"))
    gone = read(host, "component", drifted.properties, old_inputs)
    assert gone.id == ""
    assert as_dict(gone.properties) == {PROVIDER_KEY: PROVIDER}
    assert [r.method for r in kube.requests].count("GET") == 2 + 2 + 1  # one per recorded target per read


def test_delete_sends_nothing_nor_do_the_old_per_object_status_resources(host, kube):
    """A batch's delete leaves the statuses; 3b: states of the per-object resources unpickle the StatusProvider
    stub, whose read keeps them as recorded and whose delete sends nothing."""
    models = [Model("granite-7b", READY)]
    old_inputs = inputs(models, connection(kube))
    outputs = create(host, "component", old_inputs).properties
    kube.requests.clear()
    assert delete(host, "component", outputs, old_inputs) == empty_pb2.Empty()

    stub_inputs = inputs(models, connection(kube), provider=STUB_PROVIDER)
    old = {**as_dict(stub_inputs), "status": encode_status(READY)}
    state = json_format.ParseDict(old, struct_pb2.Struct())
    kept = read(host, "MaaSModelRef/status/llm/granite-7b", state, stub_inputs, id_="llm/granite-7b")
    assert kept.id == "llm/granite-7b" and as_dict(kept.properties) == old
    assert delete(host, "MaaSModelRef/status/llm/granite-7b", state, stub_inputs, id_="llm/granite-7b") == (
        empty_pb2.Empty()
    )
    assert kube.requests == []


FORBIDDEN = 'could not write the status of MaaSModelRef llm/granite-7b: HTTP 403 Forbidden: maasmodelrefs.maas.opendatahub.io is forbidden: User "me" cannot patch resource "maasmodelrefs/status"; grant the identity of the kubeconfig `patch` on maasmodelrefs/status'
INVALID = 'MaaSModelRef.maas.opendatahub.io "granite-7b" is invalid: status.phase: Unsupported value: "Readyish"'
REFUSED = f"could not write the status of MaaSModelRef llm/granite-7b: HTTP 422 Unprocessable Entity: {INVALID}; the installed CRD refuses this status: install the MaaS CRDs of the release this program writes for"


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (lambda kube: setattr(kube, "forbidden", {"maasmodelrefs"}), FORBIDDEN),
        (
            lambda kube: setattr(kube, "patch_reply", (422, {"kind": "Status", "message": INVALID, "code": 422})),
            REFUSED,
        ),
    ],
    ids=["403", "422"],
)
def test_a_refused_write_fails_the_call_with_the_status_write_error_last(host, kube, setup, expected):
    """2f: the engine shows the details, a Python traceback whose last line is the StatusWriteError."""
    setup(kube)
    error = failure(lambda: create(host, "granite-7b", inputs([Model("granite-7b", READY)], connection(kube))))
    assert error.code() == grpc.StatusCode.UNKNOWN
    details = error.details()
    assert details.startswith("Traceback (most recent call last):\n")
    assert details.endswith(f"\nmaas.deploy.status_writer.StatusWriteError: {expected}\n")
    assert len(patches(kube)) == 1


def test_one_failing_target_fails_the_batch_listing_it_after_writing_the_others(host, kube):
    kube.objects.remove(next(o for o in kube.objects if o["metadata"]["name"] == "llama-3-8b"))
    models = [Model("granite-7b", {"phase": "Ready"}), Model("llama-3-8b", READY)]
    error = failure(lambda: create(host, "component", inputs(models, connection(kube))))
    missing = 'could not write the status of MaaSModelRef llm/llama-3-8b: HTTP 404 Not Found: maasmodelrefs "llama-3-8b" not found; the object (or its CRD) does not exist; it is applied before its status, so check that it was created'
    assert error.details().endswith(f"StatusWriteError: 1 of 2 statuses failed:\n  {missing}\n")
    assert stored(kube, "granite-7b") == {"phase": "Ready"}  # attempted and written all the same


def test_a_concurrent_batch_lands_every_write_four_calls_at_a_time(host, kube):
    """2e: one host serves every dynamic resource, four calls at a time; the others queue, none is lost."""
    names = [f"model-{index}" for index in range(8)]
    kube.objects.extend(model_ref(name) for name in names)
    kube.stall = 0.5  # every answer: so the calls in flight overlap
    requests = [create_request(name, inputs([Model(name, {"phase": name})], connection(kube))) for name in names]
    started = time.monotonic()
    calls = [host.stub.Create.future(request, timeout=RPC_SECONDS) for request in requests]
    answers = [call.result() for call in calls]
    elapsed = time.monotonic() - started
    assert kube.peak_in_flight == 4, host.log()
    assert elapsed >= 2 * kube.stall  # two waves of four
    assert sorted(r.path for r in patches(kube)) == sorted(status_path(name) for name in names)
    for name, answer in zip(names, answers, strict=True):
        assert stored(kube, name) == {"phase": name}
        [record] = batch_targets(as_dict(answer.properties)).values()
        assert (answer.id, record["name"], record["digest"]) == ("statuses", name, digest_of({"phase": name}))


MARKER = "maas/dev:subscriptions/llm"


def test_an_object_batch_is_created_and_diffed_in_the_host(host, kube):
    """ObjectBatchProvider, pickled by reference as the status writer is, loads in the host; its one JSON string of
    objects and its secret connection reach it as the program built them, and come back as its outputs."""
    ops = [(op.name, arg) for op, arg, _ in pickletools.genops(base64.b64decode(BATCH_PROVIDER))]
    assert [arg for name, arg in ops if name == "SHORT_BINUNICODE"] == [
        "maas.deploy.object_batch",
        "ObjectBatchProvider",
    ]
    metadata = {"name": "team-a", "namespace": "llm"}
    body = {"apiVersion": API_VERSION, "kind": "MaaSSubscription", "metadata": metadata, "spec": {"priority": 1}}

    def sends(spec: dict[str, Any]) -> struct_pb2.Struct:
        def props() -> dict[str, Any]:
            inputs = batch_inputs([("maassubscriptions", {**body, "spec": spec})], connection(kube), MARKER)
            return {**inputs, PROVIDER_KEY: pulumi.Output.secret(BATCH_PROVIDER)}

        return engine_sends(sdk_sends(props))

    news = sends({"priority": 1})
    created = host.stub.Create(
        provider_pb2.CreateRequest(urn=urn("batch"), name="batch", type=TYPE, properties=news), timeout=RPC_SECONDS
    )
    assert created.id == "objects"
    assert as_dict(created.properties) == as_dict(news)
    [read, apply] = kube.requests
    path = f"/apis/{API_VERSION}/namespaces/llm/maassubscriptions/team-a"
    assert [(read.method, read.path), (apply.method, apply.path)] == [("GET", path), ("PATCH", path)]
    assert apply.query == {"fieldManager": "maas-pulumi"}
    assert apply.body["metadata"]["annotations"] == {MARKER_ANNOTATION: MARKER}

    def diff_of(new: struct_pb2.Struct) -> provider_pb2.DiffResponse:
        request = provider_pb2.DiffRequest(
            id="objects", urn=urn("batch"), name="batch", type=TYPE, old_inputs=news, olds=created.properties, news=new
        )
        return host.stub.Diff(request, timeout=RPC_SECONDS)

    assert diff_of(news).changes == provider_pb2.DiffResponse.DIFF_NONE
    changed = diff_of(sends({"priority": 2}))
    assert changed.changes == provider_pb2.DiffResponse.DIFF_SOME
    assert (list(changed.replaces), changed.deleteBeforeReplace) == ([], False)
    assert len(kube.requests) == 2  # a diff sends nothing


def test_the_host_survived_every_call(host):
    """Failures abort the call (their traceback goes to the engine, not to the host's output), never the process."""
    assert host.process.poll() is None, host.log()
    assert "Traceback" not in host.log()
