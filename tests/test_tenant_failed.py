"""Issue 18, rows 2 and 3: a failed preflight publishes the `Failed` status of the tenants it concerns.

Seed 000: "Failed — blocking prerequisites missing, gateway invalid, or platform apply failed." Preflight stops
`pulumi up` before any object is registered, so without this the live MaasTenantConfig kept its last phase. The
program under the mock engine, in both phases of a `pulumi up` (preview, then update), and the status writer's
`writeOnly` against a local API server.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

import pulumi
import pytest

from maas import naming
from maas.config import ConfigError, ConfigIssue, load_config, raw_from_stack_file
from maas.deploy import batches, program
from maas.deploy.status_writer import (
    StatusBatchProvider,
    batch_targets,
    decode_status,
    encode_json,
    encode_status,
    status_digest,
    target_key,
)
from maas.plan.build import build_plan
from maas.plan.checks.preflight import concerned_tenants, preflight
from maas.plan.desired import k8s_object
from maas.plan.status.failed import failed_tenant_writes, failure_issues
from maas.plan.status.tenant import TenantFacts
from maas.plan.status.writes import unstamped
from maas.tools.render import DYNAMIC_TYPE, PROJECT, RecordingMonitor, Registration, render
from tests.conftest import DEV_STACK
from tests.fake_kube import FakeKube, all_crds, condition, db_secret, maas_api_deployment, platform_gateway
from tests.test_observed_render import redteam_gateway, snapshot

DEFAULT_TENANT = "MaasTenantConfig/models-as-a-service/default-tenant"
REDTEAM_TENANT = "MaasTenantConfig/ai-tenant-redteam/default-tenant"
NO_SECRET = ("Secret", "maas-db-config")
SECRET_ISSUE = "cluster: Secret odh-ai-gateway-infra/maas-db-config (maas-api's database connection) does not exist"


@dataclass
class Run:
    registrations: list[Registration]
    error: Exception | None
    warnings: list[str] = field(default_factory=list)

    def writer(self, name: str) -> Registration:
        return next(r for r in self.registrations if r.type == DYNAMIC_TYPE and r.name == f"statuses/{name}")

    def urns(self) -> set[str]:
        return {r.urn for r in self.registrations}


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def run_program(raw: dict, observed, preview: bool) -> Run:
    """What `pulumi up` runs (`publish_failed=True`), in its preview or its update, under the mock engine."""
    monitor, collector = RecordingMonitor(), _Warnings()
    logger = logging.getLogger(f"maas.test.failed.{id(monitor)}")
    logger.propagate = False
    logger.addHandler(collector)
    pulumi.runtime.set_all_config({f"{PROJECT}:{key}": json.dumps(value) for key, value in raw.items()})
    pulumi.runtime.settings.set_root_resource(None)
    pulumi.runtime.set_mocks(
        monitor.mocks, project=PROJECT, stack="dev", preview=preview, monitor=monitor, logger=logger
    )
    error = None
    try:
        pulumi.runtime.test(lambda: program.run(observed, publish_failed=True))()
    except Exception as raised:  # the test asserts on it
        error = raised
    return Run(monitor.registrations, error, collector.lines)


@pytest.fixture(scope="module")
def raw() -> dict:
    return raw_from_stack_file(DEV_STACK)[0]


def refused_redteam_gateway() -> dict:
    gateway = redteam_gateway()
    gateway["status"]["conditions"] = [
        condition("Accepted", "False", "InvalidParameters", "gatewayClass openshift-default not found"),
        condition("Programmed", "False", "Invalid"),
    ]
    return gateway


def with_refused_redteam_gateway():
    observed = snapshot(("Gateway", "redteam"))
    objects = [*observed.objects.values(), refused_redteam_gateway()]
    return type(observed).of(objects, observed.listed, observed.got, dict(observed.crds))


def target_status(run: Run, tenant: str, key: str) -> dict:
    return decode_status(batch_targets(run.writer(tenant).inputs)[key]["status"])


def kinds(status: dict) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


# ------------------------------------------------------------------------------------------- row 2: preflight


def test_seed_000_preflight_refuses_a_gateway_neither_accepted_nor_programmed(raw):
    """Seed 000: "Failed — blocking prerequisites missing, gateway invalid, or platform apply failed." The
    Gateway's own conditions are read, not only whether it exists."""
    config, observed = load_config(raw), with_refused_redteam_gateway()
    plan = build_plan(config, observed)
    assert [str(issue) for issue in preflight(config, plan, observed)] == [
        "cluster: Gateway openshift-ingress/redteam of tenant 'redteam' is neither Accepted nor Programmed "
        "(Accepted=False InvalidParameters: 'gatewayClass openshift-default not found'; Programmed=False Invalid); "
        "fix it (`kubectl describe gateway` shows why its controller refuses it) or set the tenant's gateway.name"
    ]
    assert concerned_tenants(config, plan, observed) == ("redteam",)


def test_the_missing_secret_concerns_every_tenant_whose_maas_api_needs_it(raw):
    config, observed = load_config(raw), snapshot(NO_SECRET)
    plan = build_plan(config, observed)
    assert concerned_tenants(config, plan, observed) == ("models-as-a-service", "redteam")
    failed = failed_tenant_writes(config, plan, observed)
    assert {name: write.body["status"]["phase"] for name, write in failed.items()} == {
        "models-as-a-service": "Failed",
        "redteam": "Failed",
    }
    assert failure_issues(failed) == []  # every write passes the MaasTenantConfig status schema
    assert all(write.depends_on == () for write in failed.values())


# ------------------------------------------------------------------------------------ row 3: at `pulumi up`


def test_seed_000_a_failed_preflight_publishes_failed_at_pulumi_up_and_registers_nothing_else(raw):
    """Seed 000: "Failed — blocking prerequisites missing, gateway invalid, or platform apply failed." Issue 18
    row 3: a missing `maas-db-config` stopped preflight and no status was written, so the live MaasTenantConfig
    stayed `Active`. The update registers the two tenants' status resources only (no provider, no object: a run
    that fails makes the engine delete nothing), then fails with every problem."""
    update = run_program(raw, snapshot(NO_SECRET), preview=False)
    assert sorted((r.type, r.name) for r in update.registrations) == [
        ("maas:index:Tenant", "models-as-a-service"),
        ("maas:index:Tenant", "redteam"),
        (DYNAMIC_TYPE, "statuses/models-as-a-service"),
        (DYNAMIC_TYPE, "statuses/redteam"),
    ]
    assert isinstance(update.error, pulumi.RunError)
    assert str(update.error).splitlines() == [
        "preflight failed (1 problem(s)): published the MaasTenantConfig status of models-as-a-service (Failed), "
        "redteam (Failed) (where an earlier `pulumi up` wrote one) and changed nothing else; fix these and run "
        "`pulumi up` again:",
        f"  - {SECRET_ISSUE}; create it before `pulumi up` (kubectl create secret generic maas-db-config -n "
        "odh-ai-gateway-infra --from-literal=DB_CONNECTION_URL=postgres://...)",
    ]
    writer = update.writer("models-as-a-service")
    assert writer.inputs["writeOnly"] == [DEFAULT_TENANT] and writer.dependencies == ()
    status = target_status(update, "models-as-a-service", DEFAULT_TENANT)
    assert status["phase"] == "Failed"
    assert kinds(status)["MaaSPrerequisitesAvailable"] == ("False", "PrerequisitesMissing")
    facts = batch_targets(writer.inputs)[DEFAULT_TENANT]["facts"]
    assert (facts["gateway_namespace"], facts["gateway_name"]) == ("openshift-ingress", "maas-default-gateway")


def test_the_preview_of_that_update_registers_what_a_full_run_does_so_it_shows_no_deletion(raw):
    """`pulumi up` runs a preview first and stops when it fails; a preview that registered less would show the
    rest deleted. So the preview registers every resource a full run does, warns, and writes nothing."""
    preview = run_program(raw, snapshot(NO_SECRET), preview=True)
    full = run_program(raw, snapshot(), preview=True)
    assert preview.error is None and full.error is None
    assert preview.urns() == full.urns()
    assert preview.warnings[0].startswith(
        "preflight failed: `pulumi up` will publish the MaasTenantConfig status of models-as-a-service (Failed), "
        "redteam (Failed) and stop before changing anything else"
    )
    assert SECRET_ISSUE in preview.warnings[0]
    assert preview.writer("redteam").inputs["writeOnly"] == [REDTEAM_TENANT]
    tenant = preview.writer("models-as-a-service").inputs
    assert "MaaSModelRef/llm/granite-7b" in batch_targets(tenant) and tenant["writeOnly"] == [DEFAULT_TENANT]
    assert "writeOnly" not in full.writer("redteam").inputs


def test_a_tenant_whose_statuses_split_registers_every_batch_in_that_preview_and_only_one_writes(raw, monkeypatch):
    """Issue 21: a tenant's statuses in several batches. The stopped update's preview registers each batch a full
    run registers (else the preview shows the others deleted); the batch holding the MaasTenantConfig writes it
    alone, every other batch writes nothing."""
    monkeypatch.setattr(batches, "MAX_STATUSES", 3)
    preview = run_program(raw, snapshot(NO_SECRET), preview=True)
    full = run_program(raw, snapshot(), preview=True)
    assert preview.urns() == full.urns()
    split = [r for r in preview.registrations if r.type == DYNAMIC_TYPE and "/models-as-a-service/" in r.name]
    assert len(split) > 1
    assert sorted(tuple(r.inputs["writeOnly"]) for r in split) == [()] * (len(split) - 1) + [(DEFAULT_TENANT,)]
    held = [r for r in split if DEFAULT_TENANT in batch_targets(r.inputs)]
    assert [r.inputs["writeOnly"] for r in held] == [[DEFAULT_TENANT]]


def test_a_stopped_update_publishes_failed_beside_a_kept_orphan_of_a_model_no_longer_configured(raw):
    """An opted-out TokenRateLimitPolicy of a removed model is kept under a `Model` owner the configuration no
    longer has (`unmanaged.py`); the stopped update must still publish the Failed status, not fail on that owner."""
    annotations = {
        naming.CONTROLLER_MANAGED_ANNOTATION: "false",
        naming.SUBSCRIPTIONS_ANNOTATION: "models-as-a-service/old",
    }
    labels = {naming.MANAGED_BY: naming.MANAGER, naming.MODEL_LABEL: "gone", naming.MODEL_NAMESPACE_LABEL: "llm"}
    orphan = k8s_object(
        naming.TRLP_API_VERSION, "TokenRateLimitPolicy", "maas-trlp-gone", "llm", {"limits": {}}, labels, annotations
    )
    observed = snapshot(NO_SECRET)
    observed = type(observed).of(
        [*observed.objects.values(), orphan], observed.listed, observed.got, dict(observed.crds)
    )
    assert ("Model", "llm/gone") in {(o.kind, o.name) for o in build_plan(load_config(raw), observed).owners}
    update = run_program(raw, observed, preview=False)
    assert isinstance(update.error, pulumi.RunError) and "preflight failed" in str(update.error)
    assert target_status(update, "models-as-a-service", DEFAULT_TENANT)["phase"] == "Failed"


def test_seed_000_an_invalid_gateway_publishes_that_tenant_failed_and_no_other(raw):
    """Seed 000: "Failed — blocking prerequisites missing, gateway invalid, or platform apply failed." """
    update = run_program(raw, with_refused_redteam_gateway(), preview=False)
    assert [r.name for r in update.registrations if r.type == DYNAMIC_TYPE] == ["statuses/redteam"]
    status = target_status(update, "redteam", REDTEAM_TENANT)
    assert (status["phase"], kinds(status)["Ready"]) == ("Failed", ("False", "InvalidGateway"))
    assert "Gateway openshift-ingress/redteam is neither Accepted nor Programmed" in status["conditions"][0]["message"]


def test_other_configuration_problems_still_stop_the_preview_before_anything_is_registered(raw, monkeypatch):
    """Objects of a configuration with problems besides preflight must not be previewed as if they could be
    applied; an update without a preview (`--skip-preview`, the automation API) still publishes the statuses."""
    plan_issues = program.plan_issues
    extra = ConfigIssue("maas:models[0] (llm/granite-7b)", "a problem of the configuration itself")
    monkeypatch.setattr(program, "plan_issues", lambda *args: [*plan_issues(*args), extra])
    preview = run_program(raw, snapshot(NO_SECRET), preview=True)
    assert isinstance(preview.error, ConfigError) and preview.registrations == []
    update = run_program(raw, snapshot(NO_SECRET), preview=False)
    assert sorted(r.name for r in update.registrations if r.type == DYNAMIC_TYPE) == [
        "statuses/models-as-a-service",
        "statuses/redteam",
    ]
    assert f"  - {extra}" in str(update.error).splitlines()


@pytest.mark.parametrize("preview", [True, False])
def test_a_failed_preflight_that_concerns_no_tenant_stops_before_anything_is_registered(raw, preview):
    """A missing KServe CRD concerns models, not a tenant's status: nothing to publish, so nothing is registered."""
    run = run_program(raw, snapshot(crds={"LLMInferenceService": False}), preview=preview)
    assert isinstance(run.error, ConfigError) and run.registrations == []


def test_the_offline_render_still_refuses_a_failed_preflight_with_nothing_registered(raw):
    """`render` and `validate` exit 2 on it (README): only what `pulumi up` runs publishes."""
    monitor = RecordingMonitor()
    with pytest.raises(ConfigError):
        render(raw, monitor=monitor, observed=snapshot(NO_SECRET))
    assert monitor.registrations == []


# ------------------------------------------------------------------------------- the writer's `writeOnly`


def tenant_config(namespace: str = "models-as-a-service") -> dict:
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaasTenantConfig",
        "metadata": {"name": "default-tenant", "namespace": namespace, "uid": f"uid-{namespace}"},
        "spec": {},
    }


def subscription() -> dict:
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSSubscription",
        "metadata": {"name": "premium", "namespace": "models-as-a-service", "uid": "uid-premium"},
        "spec": {},
    }


def target(obj: dict, phase: str) -> dict:
    resource = {"MaasTenantConfig": "maastenantconfigs", "MaaSSubscription": "maassubscriptions"}[obj["kind"]]
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "resource": resource,
        "namespace": obj["metadata"]["namespace"],
        "name": obj["metadata"]["name"],
        "status": encode_status({"phase": phase, "conditions": [_ready(phase)]}),
    }


def _ready(phase: str) -> dict:
    return {"type": "Ready", "status": str(phase in ("Active", "Ready")), "reason": phase, "message": phase}


@pytest.fixture
def kube() -> Iterator[FakeKube]:
    with FakeKube([tenant_config(), subscription(), *all_crds()]) as server:
        yield server


def inputs(kube: FakeKube, *targets: dict, write_only: list[str] | None = None) -> dict:
    props = {
        "connection": {"kubeconfig": kube.kubeconfig(), "context": "maas-dev"},
        "targets": encode_json({target_key(t): t for t in targets}),
    }
    return props if write_only is None else {**props, "writeOnly": write_only}


def patched(kube: FakeKube) -> list[str]:
    """`{resource}/{name}` of each status patch sent."""
    return ["/".join(r.path.split("/")[-3:-1]) for r in kube.requests if r.method == "PATCH"]


SUBSCRIPTION = "MaaSSubscription/models-as-a-service/premium"


def test_write_only_writes_the_tenant_status_alone_and_every_other_target_keeps_its_record(kube):
    """What a stopped update does to a tenant's status resource: the Failed MaasTenantConfig status is written; the
    subscription, whose planned status changed too but whose object that update does not register, is not."""
    provider = StatusBatchProvider()
    created = provider.create(inputs(kube, target(tenant_config(), "Active"), target(subscription(), "Active")))
    before = len(patched(kube))
    stopped = inputs(
        kube,
        target(tenant_config(), "Failed"),
        target(subscription(), "Degraded"),
        write_only=[DEFAULT_TENANT],
    )
    assert provider.diff("id", created.outs, stopped).changes is True
    updated = provider.update("id", created.outs, stopped)
    assert patched(kube)[before:] == ["maastenantconfigs/default-tenant"]
    assert batch_targets(updated.outs)[SUBSCRIPTION] == batch_targets(created.outs)[SUBSCRIPTION]
    written = next(o for o in kube.objects if o["kind"] == "MaasTenantConfig")["status"]
    assert written["phase"] == "Failed"
    assert batch_targets(updated.outs)[DEFAULT_TENANT]["digest"] == status_digest(encode_status(unstamped(written)))
    assert "writeOnly" not in updated.outs
    # the next full update compares every target with what the cluster really holds
    full = inputs(kube, target(tenant_config(), "Active"), target(subscription(), "Active"))
    assert provider.diff("id", updated.outs, full).changes is True
    provider.update("id", updated.outs, full)
    assert patched(kube)[before:] == ["maastenantconfigs/default-tenant"] * 2


def test_write_only_ignores_other_targets_and_a_status_already_published(kube):
    provider = StatusBatchProvider()
    created = provider.create(inputs(kube, target(tenant_config(), "Failed"), target(subscription(), "Active")))
    again = inputs(
        kube,
        target(tenant_config(), "Failed"),
        target(subscription(), "Degraded"),
        write_only=[DEFAULT_TENANT],
    )
    assert provider.diff("id", created.outs, again).changes is False


def test_write_only_never_writes_a_target_no_earlier_up_recorded(kube):
    """A tenant whose MaasTenantConfig no update created yet has no object to write to: nothing is sent, and its
    first full update writes every status."""
    provider = StatusBatchProvider()
    created = provider.create(inputs(kube, target(tenant_config(), "Failed"), write_only=[DEFAULT_TENANT]))
    assert kube.requests == [] and batch_targets(created.outs) == {}
    full = inputs(kube, target(tenant_config(), "Active"))
    assert provider.diff("id", created.outs, full).changes is True
    provider.update("id", created.outs, full)
    assert patched(kube) == ["maastenantconfigs/default-tenant"]


def test_the_writer_judges_the_tenant_gateway_again_just_before_it_writes():
    """A Gateway that its controller refuses between planning and writing: the status written is `Failed`."""
    refused = platform_gateway()
    refused["status"]["conditions"] = [
        condition("Accepted", "False", "Invalid"),
        condition("Programmed", "False", "Invalid"),
    ]
    objects = [tenant_config(), db_secret(), maas_api_deployment("maas-api", available=True), refused, *all_crds()]
    facts = TenantFacts(
        tenant="models-as-a-service",
        infra_namespace="odh-ai-gateway-infra",
        deployment="maas-api",
        gateway_namespace="openshift-ingress",
        gateway_name="maas-default-gateway",
    ).to_inputs()
    with FakeKube(objects) as server:
        written = StatusBatchProvider().create(inputs(server, {**target(tenant_config(), "Active"), "facts": facts}))
    status = unstamped(next(o for o in server.objects if o["kind"] == "MaasTenantConfig")["status"])
    assert (status["phase"], kinds(status)["Ready"]) == ("Failed", ("False", "InvalidGateway"))
    assert batch_targets(written.outs)[DEFAULT_TENANT]["digest"] == status_digest(encode_status(status))
