"""Rendering against an observed cluster: truthful statuses, preflight, the live opt-out, and the offline render of
a snapshot equal to what the program plans after reading the same cluster."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

from maas.config import ConfigError, load_config, raw_from_stack_file
from maas.deploy.program import observe
from maas.observe import Observed, dump_snapshot, parse_snapshot, what_to_observe
from maas.observe.snapshot import thawed
from maas.tools.render import RecordingMonitor, render
from tests.conftest import DEV_STACK, ROOT
from tests.fake_kube import FakeKube, all_crds, dev_cluster_objects, platform_gateway


def redteam_gateway() -> dict:
    gateway = platform_gateway()
    gateway["metadata"] = {"name": "redteam", "namespace": "openshift-ingress"}
    return gateway


def cluster_objects(*leave_out: tuple[str, str]) -> list[dict]:
    """The dev cluster: granite ready, llama deploying, qwen-coder missing, both tenant Gateways, every CRD."""
    objects = [*dev_cluster_objects(), redteam_gateway(), *all_crds()]
    return [o for o in objects if (o["kind"], o["metadata"]["name"]) not in leave_out]


def snapshot(*leave_out: tuple[str, str], crds: dict | None = None) -> Observed:
    """What `python -m maas observe` reads from that cluster for the dev stack: listed and fetched, so what is
    missing is absent."""
    config = load_config(raw_from_stack_file(DEV_STACK)[0])
    request = what_to_observe(config)
    objects = [o for o in cluster_objects(*leave_out) if o["kind"] != "CustomResourceDefinition"]
    return Observed.of(objects, request.lists, request.gets, crds if crds is not None else {})


def statuses(rendering) -> dict[str, dict]:
    return {
        f"{s['kind']} {s['metadata']['namespace']}/{s['metadata']['name']}": s["status"] for s in rendering.statuses()
    }


@pytest.fixture(scope="module")
def dev_raw_module():
    return raw_from_stack_file(DEV_STACK)[0]


def test_missing_deploying_and_ready_backends_publish_failed_pending_and_ready(dev_raw_module):
    published = statuses(render(dev_raw_module, observed=snapshot()))
    granite = published["MaaSModelRefStatus llm/granite-7b"]
    llama = published["MaaSModelRefStatus llm/llama-3-8b"]
    qwen = published["MaaSModelRefStatus redteam-models/qwen-coder"]
    assert (granite["phase"], granite["endpoint"]) == ("Ready", "https://maas.apps.example.com/llm/granite-7b-instruct")
    assert (llama["phase"], llama["endpoint"]) == ("Pending", "")
    assert (qwen["phase"], qwen["endpoint"]) == ("Failed", "")


def test_a_model_failing_in_the_cluster_degrades_the_subscriptions_that_use_it(dev_raw_module):
    published = statuses(render(dev_raw_module, observed=snapshot()))
    redteam = [s for key, s in published.items() if key.startswith("MaaSSubscriptionStatus ai-tenant-redteam/")]
    assert redteam and all(s["phase"] in ("Degraded", "Failed") for s in redteam)


def test_tenant_status_follows_the_maas_api_deployment(dev_raw_module):
    """The default tenant's maas-api is available in the fixture cluster; redteam's does not exist yet."""
    published = statuses(render(dev_raw_module, observed=snapshot()))
    default = published["MaasTenantConfigStatus models-as-a-service/default-tenant"]
    redteam = published["MaasTenantConfigStatus ai-tenant-redteam/default-tenant"]
    assert default["phase"] in ("Active", "Degraded")
    assert {c["type"]: c["status"] for c in default["conditions"]}["DeploymentsAvailable"] == "True"
    assert redteam["phase"] == "Pending"


# ---------------------------------------------------------------------------------------------- preflight


@pytest.mark.parametrize(
    ("leave_out", "crds", "expected"),
    [
        (
            [("Secret", "maas-db-config")],
            None,
            "cluster: Secret odh-ai-gateway-infra/maas-db-config (maas-api's database connection) does not exist",
        ),
        (
            [("Gateway", "redteam")],
            None,
            "cluster: Gateway openshift-ingress/redteam of tenant 'redteam' does not exist; create it",
        ),
        (
            [],
            {"TokenRateLimitPolicy": False},
            "cluster: the CRD tokenratelimitpolicies.kuadrant.io (TokenRateLimitPolicy kuadrant.io/v1alpha1) is not installed",
        ),
        (
            [],
            {"LLMInferenceService": False},
            "cluster: the CRD llminferenceservices.serving.kserve.io (LLMInferenceService serving.kserve.io/v1alpha2) is not installed",
        ),
    ],
)
def test_missing_prerequisites_stop_before_anything_is_registered(dev_raw_module, leave_out, crds, expected):
    monitor = RecordingMonitor()
    with pytest.raises(ConfigError) as caught:
        render(dev_raw_module, monitor=monitor, observed=snapshot(*leave_out, crds=crds))
    assert any(str(issue).startswith(expected) for issue in caught.value.issues), caught.value.issues
    assert monitor.registrations == []


def test_nothing_observed_runs_no_preflight(dev_raw_module):
    assert render(dev_raw_module, observed=Observed.nothing()).objects()


# ---------------------------------------------------------------------------------------- live opt-out


def test_a_policy_opted_out_in_the_cluster_is_left_alone_with_a_warning(dev_raw_module):
    rendering = render(dev_raw_module, observed=snapshot())
    [trlp] = [r for r in rendering.registrations if r.name == "llm/maas-trlp-granite-7b" and r.is_kubernetes_object]
    assert trlp.retain_on_delete and "spec" in trlp.ignore_changes
    assert any(
        w.startswith('TokenRateLimitPolicy llm/maas-trlp-granite-7b carries opendatahub.io/managed: "false"')
        for w in rendering.warnings
    )
    others = [r for r in rendering.registrations if r.name == "llm/maas-trlp-llama-3-8b" and r.is_kubernetes_object]
    assert others and not others[0].ignore_changes


def test_this_programs_own_coexist_annotation_is_not_an_operator_opt_out(dev_raw_module):
    """Objects handed to a controller in `coexist` carry the annotation too; moving to `absent` manages them."""
    handed = snapshot()
    objects = [dict(o) for o in handed.objects.values()]
    trlp = next(o for o in objects if o["kind"] == "TokenRateLimitPolicy")
    trlp["metadata"] = {
        **trlp["metadata"],
        "annotations": {"opendatahub.io/managed": "false", "maas.opendatahub.io/handed-over-by-pulumi": "true"},
    }
    observed = Observed.of(objects, handed.listed, handed.got, handed.crds)
    rendering = render(dev_raw_module, observed=observed)
    [registered] = [
        r for r in rendering.registrations if r.name == "llm/maas-trlp-granite-7b" and r.is_kubernetes_object
    ]
    assert not registered.ignore_changes


# ----------------------------------------------------------------------------- the program reads the same


def test_the_program_reads_the_cluster_once_and_plans_what_the_snapshot_renders(dev_raw_module, tmp_path):
    config = load_config(dev_raw_module)
    request = what_to_observe(config)
    with FakeKube(cluster_objects()) as kube:
        raw = {
            **dev_raw_module,
            "platform": {**dev_raw_module["platform"], "kubernetes": {"kubeconfig": kube.kubeconfig("maas-dev")}},
        }
        read, notes = observe(load_config(raw))
        assert len(kube.requests) == len(request.lists) + len(request.gets) and notes == []
    from_file = parse_snapshot(dump_snapshot(read))
    live = render(dev_raw_module, observed=read)
    offline = render(dev_raw_module, observed=from_file)
    assert json.dumps(live.objects() + live.statuses()) == json.dumps(offline.objects() + offline.statuses())


def test_platform_observe_false_reads_nothing_and_says_so(dev_raw_module):
    raw = {**dev_raw_module, "platform": {**dev_raw_module["platform"], "observe": False}}
    observed, notes = observe(load_config(raw))
    assert observed == Observed.nothing() and notes and "intended" in notes[0]


# --------------------------------------------------------------------------------------------------- CLI


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "maas", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )


def test_render_observed_with_status_through_the_cli(tmp_path):
    path = tmp_path / "snapshot.yaml"
    path.write_text(dump_snapshot(snapshot()))
    result = cli("render", "--observed", str(path), "--status", "--format", "json")
    assert result.returncode == 0, result.stderr
    phases = {
        f"{o['metadata']['namespace']}/{o['metadata']['name']}": o["status"]["phase"]
        for o in json.loads(result.stdout)
        if o["kind"] == "MaaSModelRefStatus"
    }
    assert (phases["llm/granite-7b"], phases["llm/llama-3-8b"], phases["redteam-models/qwen-coder"]) == (
        "Ready",
        "Pending",
        "Failed",
    )
    assert "note: nothing was observed" not in result.stderr


def test_render_prints_only_kubernetes_objects_unless_asked_for_statuses():
    result = cli("render", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert not [o for o in json.loads(result.stdout) if o["kind"].endswith("Status")]
    assert "note: nothing was observed (no --observed SNAPSHOT)" in result.stderr


def test_a_malformed_snapshot_exits_2_with_one_message(tmp_path):
    path = tmp_path / "snapshot.yaml"
    path.write_text("kind: List\nitems: 3\n")
    result = cli("render", "--observed", str(path))
    assert result.returncode == 2 and result.stdout == "" and result.stderr.startswith("error: ")
    assert "Traceback" not in result.stderr


# ----------------------------------------------------------------------------------------- hostile snapshots


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (("apiVersion: v1\nkind: List\nitems: []\n" + BOMB).encode(), "alias"),
        (b"apiVersion: v1\nkind: List\nitems:\n- &s {a: *s}\n", "alias"),
        (b"apiVersion: v1\nkind: List\nitems: []\nx: \xff\n", "not UTF-8"),
    ],
    ids=["alias-bomb", "recursive-alias", "not-utf8"],
)
def test_a_hostile_snapshot_file_is_refused_fast_with_one_message(tmp_path, content, expected):
    path = tmp_path / "snapshot.yaml"
    path.write_bytes(content)
    result = cli("render", "--observed", str(path))
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert expected in result.stderr and "Traceback" not in result.stderr


def confused(obj: dict, *path: str, value) -> dict:
    target = obj
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return obj


@pytest.mark.parametrize(
    "edit",
    [
        lambda o: confused(o, "spec", "parentRefs", value="oops") if o["kind"] == "HTTPRoute" else o,
        lambda o: confused(o, "status", "parents", value={}) if o["kind"] == "HTTPRoute" else o,
        lambda o: confused(o, "spec", "hostnames", value=[5]) if o["kind"] == "HTTPRoute" else o,
        lambda o: (
            confused(o, "status", "addresses", value=["x", {"name": "gateway-external", "url": "https://[::1"}])
            if o["kind"] == "LLMInferenceService" and o["status"].get("addresses")
            else o
        ),
        lambda o: confused(o, "spec", "replicas", value="1") if o["kind"] == "Deployment" else o,
        lambda o: confused(o, "metadata", "annotations", value=["a"]) if o["kind"] == "TokenRateLimitPolicy" else o,
        lambda o: confused(o, "status", value="broken") if o["kind"] in ("LLMInferenceService", "Deployment") else o,
    ],
    ids=[
        "parentRefs-string",
        "parents-mapping",
        "hostnames-ints",
        "addresses-junk",
        "replicas-string",
        "annotations-list",
        "status-string",
    ],
)
def test_observed_objects_of_the_wrong_shape_read_as_absent_never_crash(dev_raw_module, edit):
    objects = [edit(copy.deepcopy(dict(thawed(o)))) for o in snapshot().objects.values()]
    base = snapshot()
    observed = Observed.of(objects, base.listed, base.got, base.crds)
    published = statuses(render(dev_raw_module, observed=observed))
    assert {s["phase"] for key, s in published.items() if key.startswith("MaaSModelRefStatus")} <= {
        "Ready",
        "Pending",
        "Failed",
    }


def test_an_opted_out_policy_whose_last_source_goes_stays_registered_unchanged_and_retained(dev_raw_module):
    """Upstream leaves an opted-out policy in place; Pulumi would delete it with its last subscription."""
    raw = copy.deepcopy(dev_raw_module)
    raw["subscriptions"] = [s for s in raw["subscriptions"] if all(r["name"] != "granite-7b" for r in s["modelRefs"])]
    base = snapshot()
    objects = [dict(thawed(o)) for o in base.objects.values()]
    trlp = next(o for o in objects if o["kind"] == "TokenRateLimitPolicy")
    trlp["metadata"]["labels"] = {
        "app.kubernetes.io/managed-by": "pulumi",
        "maas.opendatahub.io/model": "granite-7b",
        "maas.opendatahub.io/model-namespace": "llm",
    }
    rendering = render(raw, observed=Observed.of(objects, base.listed, base.got, base.crds))
    [kept] = [r for r in rendering.registrations if r.name == "llm/maas-trlp-granite-7b" and r.is_kubernetes_object]
    assert kept.retain_on_delete and set(kept.ignore_changes) >= {"spec", "metadata"}
    assert kept.parent.endswith("maas:index:Model::llm/granite-7b")
    assert kept.inputs["spec"] == trlp["spec"]
    assert any(
        w.startswith(
            'TokenRateLimitPolicy llm/maas-trlp-granite-7b (opendatahub.io/managed: "false") has no source left'
        )
        for w in rendering.warnings
    )


def test_an_orphaned_opt_out_this_program_did_not_create_is_only_reported(dev_raw_module):
    raw = copy.deepcopy(dev_raw_module)
    raw["subscriptions"] = [s for s in raw["subscriptions"] if all(r["name"] != "granite-7b" for r in s["modelRefs"])]
    rendering = render(raw, observed=snapshot())
    assert not [r for r in rendering.registrations if r.name == "llm/maas-trlp-granite-7b"]
    assert any(
        'llm/maas-trlp-granite-7b (opendatahub.io/managed: "false") has no source left' in w for w in rendering.warnings
    )


def test_a_tenant_scoped_stack_is_not_stopped_by_another_tenants_missing_gateway(dev_raw_module):
    """Another tenant's Gateway is that tenant's stack's prerequisite; the whole stack still needs every one."""
    observed = snapshot(("Gateway", "redteam"))
    scoped = copy.deepcopy(dev_raw_module)
    scoped["platform"] = {**scoped.get("platform", {}), "scope": "tenant:models-as-a-service"}
    assert render(scoped, observed=observed).objects()
    scoped["platform"]["scope"] = "tenant:redteam"
    with pytest.raises(ConfigError, match="Gateway openshift-ingress/redteam of tenant 'redteam' does not exist"):
        render(scoped, observed=observed)


def test_a_stack_without_kserve_models_does_not_need_the_kserve_crd(dev_raw_module):
    observed = snapshot(crds={"LLMInferenceService": False})
    scoped = copy.deepcopy(dev_raw_module)
    scoped["platform"] = {**scoped.get("platform", {}), "scope": "platform"}
    assert render(scoped, observed=observed).objects()
