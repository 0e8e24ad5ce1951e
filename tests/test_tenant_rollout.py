"""The tenant's status around a maas-api rollout (seed 000, rows 000-15 and 000-16): `Pending` while it rolls out,
`Failed` when it fails, and the status writer doing the await pulumi-kubernetes no longer does, so both are
published by the `pulumi up` that causes them; also the writer's settling bounded per batch."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from maas.deploy import status_writer
from maas.deploy.status_writer import (
    StatusBatchProvider,
    StatusWriteError,
    batch_targets,
    encode_json,
    encode_status,
    target_key,
)
from maas.observe import Observed
from maas.plan.status.tenant import TenantFacts, tenant_status
from maas.plan.status.writes import unstamped
from maas.tools.render import render
from tests.conftest import objects_of
from tests.fake_kube import FakeKube, Request, all_crds, condition, db_secret, maas_api_deployment
from tests.test_tenant_status import FACTS, GOT, conditions, status_problems

INFRA = "odh-ai-gateway-infra"
DEPLOYMENT_PATH = f"/apis/apps/v1/namespaces/{INFRA}/deployments/maas-api"
STUCK = condition("Progressing", "False", "ProgressDeadlineExceeded", 'ReplicaSet "maas-api-7d9" has timed out')


def rolling_out() -> dict:
    """maas-api just applied: a new generation its controller has not observed yet."""
    deployment = maas_api_deployment("maas-api", available=True)
    deployment["metadata"]["generation"] = 2
    return deployment


def failed_rollout() -> dict:
    deployment = maas_api_deployment("maas-api", available=False)
    deployment["status"]["conditions"].append(STUCK)
    return deployment


def observed(*objects) -> Observed:
    return Observed.of(objects, got=GOT, crds={"AuthPolicy": True, "TokenRateLimitPolicy": True})


# ----------------------------------------------------------------------------------------------- the judgement


def test_000_a_failed_maas_api_rollout_makes_the_tenant_failed():
    """Seed 000: "Failed — blocking prerequisites missing, gateway invalid, or platform apply failed."

    maas-api's Deployment reports `Progressing=False ProgressDeadlineExceeded`: before, `Pending` for ever; now
    `Failed`, reason `DeploymentFailed`, naming the Deployment and what its controller said."""
    status = tenant_status(FACTS, observed(db_secret(), failed_rollout()))
    assert status["phase"] == "Failed"
    assert conditions(status)["Ready"] == ("False", "DeploymentFailed")
    assert conditions(status)["DeploymentsAvailable"] == ("False", "DeploymentFailed")
    assert conditions(status)["Degraded"] == ("True", "DeploymentFailed")
    assert status["conditions"][0]["message"] == (
        f"Deployment {INFRA}/maas-api failed to roll out: Progressing=False ProgressDeadlineExceeded: "
        "'ReplicaSet \"maas-api-7d9\" has timed out'"
    )
    assert status_problems(status) == []


def test_pods_that_cannot_be_created_are_a_failed_rollout_too():
    deployment = maas_api_deployment("maas-api", available=False)
    deployment["status"]["conditions"].append(condition("ReplicaFailure", "True", "FailedCreate", "quota exceeded"))
    assert tenant_status(FACTS, observed(db_secret(), deployment))["phase"] == "Failed"


def test_a_rollout_in_progress_is_pending_not_failed():
    deployment = rolling_out()
    deployment["status"]["conditions"].append(condition("Progressing", "True", "ReplicaSetUpdated"))
    status = tenant_status(FACTS, observed(db_secret(), deployment))
    assert (status["phase"], conditions(status)["Ready"]) == ("Pending", ("False", "DeploymentsNotReady"))


# ----------------------------------------------------------------------------------------------- the plan


def maas_api_annotations(config: dict) -> dict[str, dict]:
    deployments = objects_of(render(config), "Deployment")
    return {key: o["metadata"].get("annotations", {}) for key, o in deployments.items() if "maas-api" in key}


def test_with_observation_the_status_writer_awaits_maas_api_instead_of_pulumi_kubernetes():
    """pulumi-kubernetes stops the update at a failed Deployment await, and the engine then runs nothing that
    depends on it: the tenant's status could never say `Failed`. So the Deployment skips the provider's await and
    the writer waits; without observation the writer judges nothing, and the provider awaits as before."""
    observing = maas_api_annotations({"platform": {"observe": True}})
    assert observing and all(a.get("pulumi.com/skipAwait") == "true" for a in observing.values())
    blind = maas_api_annotations({"platform": {"observe": False}})
    assert blind and all("pulumi.com/skipAwait" not in a for a in blind.values())


# ----------------------------------------------------------------------------------------------- the writer


def tenant_config() -> dict:
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaasTenantConfig",
        "metadata": {"name": "default-tenant", "namespace": "models-as-a-service", "uid": "uid-tenant"},
        "spec": {},
    }


def tenant_target(facts: TenantFacts = FACTS) -> dict:
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaasTenantConfig",
        "resource": "maastenantconfigs",
        "namespace": "models-as-a-service",
        "name": "default-tenant",
        "status": encode_status(tenant_status(facts, Observed.nothing())),
        "targetUid": "uid-tenant",
        "facts": facts.to_inputs(),
    }


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with FakeKube([tenant_config(), db_secret(), rolling_out(), *all_crds()]) as server:
        yield server


@pytest.fixture(autouse=True)
def fast_polls(monkeypatch) -> None:
    monkeypatch.setattr(status_writer, "POLL_SECONDS", 0.01)


def props(kube: FakeKube, *targets: dict) -> dict:
    return {
        "connection": {"kubeconfig": kube.kubeconfig(), "context": "maas-dev"},
        "targets": encode_json({target_key(t): t for t in targets}),
    }


def written_phases(kube: FakeKube) -> list[tuple[str, str]]:
    """Each status patch of the MaasTenantConfig: its phase and Ready reason."""
    return [
        (r.body["status"]["phase"], next(c["reason"] for c in r.body["status"]["conditions"] if c["type"] == "Ready"))
        for r in kube.requests
        if r.method == "PATCH" and "maastenantconfigs" in r.path
    ]


def after_reads(kube: FakeKube, reads: int, deployment: dict) -> None:
    """The Deployment controller's answer changes to `deployment` at the `reads`-th read of maas-api."""

    def change(server: FakeKube, request: Request) -> None:
        if request.path == DEPLOYMENT_PATH and sum(r.path == DEPLOYMENT_PATH for r in server.requests) == reads:
            server.objects[2] = deployment

    kube.on_request = change


def test_000_pending_is_written_while_maas_api_rolls_out_and_the_final_phase_after_it(kube):
    """Seed 000: "Pending — manifests applied but maas-api not ready yet."

    The writer runs once the tenant's objects are applied: it publishes `Pending` while maas-api rolls out, then
    `Active` once the rollout is done. Before, nothing was written until the provider's await ended."""
    after_reads(kube, 3, maas_api_deployment("maas-api", available=True))
    outs = StatusBatchProvider().create(props(kube, tenant_target()))
    assert written_phases(kube) == [("Pending", "DeploymentsNotReady"), ("Active", "Reconciled")]
    last = [r for r in kube.requests if r.method == "PATCH"][-1].body["status"]
    recorded = batch_targets(outs.outs)[target_key(tenant_target())]["digest"]
    assert last["phase"] == "Active"
    assert recorded == status_writer.status_digest(status_writer.encode_status(unstamped(last)))


def test_000_a_rollout_that_fails_is_published_failed_and_fails_the_update(kube):
    """Seed 000: "Failed — ... platform apply failed". The tenant says `Failed` before `pulumi up` fails, as the
    provider's Deployment await would have failed it."""
    after_reads(kube, 2, failed_rollout())
    with pytest.raises(StatusWriteError) as caught:
        StatusBatchProvider().create(props(kube, tenant_target()))
    assert written_phases(kube) == [("Pending", "DeploymentsNotReady"), ("Failed", "DeploymentFailed")]
    assert str(caught.value).startswith(
        "status of MaasTenantConfig models-as-a-service/default-tenant is written Failed: Deployment "
        f"{INFRA}/maas-api failed to roll out: Progressing=False ProgressDeadlineExceeded"
    )


def test_a_rollout_that_outlasts_its_progress_deadline_fails_the_update_and_stays_pending(kube, monkeypatch):
    """The wait is the Deployment's own `progressDeadlineSeconds` plus the time its controller takes to say so."""
    monkeypatch.setattr("maas.plan.status.tenant.ROLLOUT_REPORT_SECONDS", 0.0)
    kube.objects[2]["spec"]["progressDeadlineSeconds"] = 0
    with pytest.raises(StatusWriteError) as caught:
        StatusBatchProvider().create(props(kube, tenant_target()))
    assert str(caught.value).endswith("is written Pending: maas-api did not become available within 0 s")
    assert written_phases(kube)[-1] == ("Pending", "DeploymentsNotReady")


def test_a_tenant_already_available_is_written_once(kube):
    kube.objects[2] = maas_api_deployment("maas-api", available=True)
    StatusBatchProvider().create(props(kube, tenant_target()))
    assert written_phases(kube) == [("Active", "Reconciled")]


def test_settling_targets_of_one_batch_wait_together_not_one_after_the_other(kube):
    """Settling is bounded per batch: three tenants rolling out are looked at in turn, so each one's `Pending` is
    written before any final write, and the batch waits as long as its slowest rollout, not the sum of them (the
    status writer's host serves only four resources at a time). maas-api becomes available once every tenant was
    looked at once; waiting per target, the first tenant would have been written twice before the others."""
    names = ("a", "b", "c")
    kube.objects += [{**tenant_config(), "metadata": {**tenant_config()["metadata"], "namespace": n}} for n in names]
    after_reads(kube, 4, maas_api_deployment("maas-api", available=True))  # from the first second look on
    StatusBatchProvider().create(props(kube, *({**tenant_target(), "namespace": n} for n in names)))
    writes = [(r.path.split("/")[5], r.body["status"]["phase"]) for r in kube.requests if r.method == "PATCH"]
    assert writes == [(n, "Pending") for n in names] + [(n, "Active") for n in names]
