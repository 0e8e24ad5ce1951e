"""Resource options and annotations that only the real engine and provider act on, checked where the mock engine
can see them: the registration (the `import` option, annotations in the body) and the rules they trigger.

Each rule is written down as data with the source it was read from, so a provider upgrade is re-read here:

- PK = pulumi/pulumi-kubernetes @ 94977969d64112b04e19945818a7d5d5f38f631d (v4.32.0 + 27 commits; the 4.34.2 that
  requirements.txt pins has no tag in the mirror, its Go sources were not read);
- PP = pulumi/pulumi @ 1b5949891b3cefcb9974752b24a5ecef0acc86c8 (the engine).
"""

from __future__ import annotations

import copy
import functools
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from maas.config import load_config, raw_from_stack_file
from maas.observe import Observed, Scope, what_to_observe
from maas.plan.adoption import PATCH_FORCE_ANNOTATION
from maas.plan.build import build_plan
from maas.plan.desired import Desired
from maas.plan.readiness import NOT_AWAITED, WAIT_FOR, WAIT_FOR_ANNOTATION, is_custom_resource
from maas.tools.render import RecordingMonitor, render
from tests.conftest import DEV_STACK, ROOT
from tests.fake_kube import dev_cluster_objects, platform_gateway

STACKS = [DEV_STACK, *sorted((ROOT / "tests" / "stacks").glob("Pulumi.*.yaml"))]
SKIP_AWAIT = "pulumi.com/skipAwait"
CRDS = ROOT / "crds"


def annotations(body: dict[str, Any]) -> dict[str, str]:
    return body["metadata"].get("annotations") or {}


@functools.cache
def stack_raw(stack: Path) -> dict[str, Any]:
    return raw_from_stack_file(stack)[0]


def raw_of(stack: Path, **platform: Any) -> dict[str, Any]:
    raw = copy.deepcopy(stack_raw(stack))
    raw.setdefault("platform", {}).update(platform)
    return raw


# ------------------------------------------------------------------------------------------- dev cluster snapshot


def redteam_gateway() -> dict[str, Any]:
    gateway = platform_gateway()
    gateway["metadata"] = {"name": "redteam", "namespace": "openshift-ingress"}
    return gateway


def dev_snapshot(raw: dict[str, Any], *extra: dict[str, Any]) -> Observed:
    """What the program reads from the dev cluster (tests/fake_kube.py), plus `extra` live objects: listed and
    fetched, so what is missing is absent (CRDs left unknown, as tests/test_observed_render.py does)."""
    request = what_to_observe(load_config(raw))
    return Observed.of([*dev_cluster_objects(), redteam_gateway(), *extra], request.lists, request.gets, {})


# ============================================================================ waitFor (awaitCustomResources: true)
#
# PK provider/pkg/metadata/overrides.go 100-160 `ReadyCondition`: skipAwait (read from the inputs) -> immediate; no
# `pulumi.com/waitFor` -> immediate unless PULUMI_K8S_AWAIT_ALL=true (112-118); a value is one expression or a JSON
# array of them, each `jsonpath=` or `condition=` (131-153). `condition=X[=S]` waits for .status.conditions[type=X]
# with status S (default True) at observedGeneration >= generation (await/condition/custom.go, kubectl.go 29-76).
# `jsonpath={...}[=V]`: RFC 9535 path in braces, `==` kept inside, at most one `=` outside (jsonpath/jsonpath.go).


def parse_wait_for(value: str) -> list[tuple[str, str, str | None]]:
    """PK's parse of a waitFor value: (form, path or condition type, expected value)."""
    try:
        expressions = json.loads(value)
    except json.JSONDecodeError:
        expressions = [value]
    parsed = []
    for expr in expressions:
        if expr.startswith("condition="):
            kind, _, status = expr.removeprefix("condition=").partition("=")
            parsed.append(("condition", kind, status or "True"))
        elif expr.startswith("jsonpath="):
            parts = expr.removeprefix("jsonpath=").replace("==", "\0").split("=")
            assert len(parts) <= 2, f"format should be {{.path}}=value or {{.path}}, got {expr!r}"
            path = parts[0].replace("\0", "==")
            assert re.fullmatch(r"\{\s*(.*?)\s*\}", path), f"{path} should be wrapped in brackets"
            parsed.append(("jsonpath", path, parts[1].replace("\0", "==") if len(parts) == 2 else None))
        else:
            raise AssertionError(f'expected a "jsonpath=" or "condition=" prefix, got {expr!r}')
    return parsed


@functools.cache
def crd_of(kind: str) -> dict[str, Any] | None:
    for path in sorted(CRDS.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            if doc and doc.get("kind") == "CustomResourceDefinition" and doc["spec"]["names"]["kind"] == kind:
                return doc
    return None


def reported_condition_types(crd: dict[str, Any]) -> set[str]:
    """The condition types a CRD says its controller reports: its printer columns and 'Known .status.conditions.type
    are' in the status schema's description."""
    text = yaml.safe_dump(crd)
    found = set(re.findall(r"""conditions\[\?\(@\.type==["'](\w+)["']\)\]""", text))
    for known in re.findall(r"Known \.status\.conditions\.type are: ([^\n]*)", text):
        found |= set(re.findall(r'"(\w+)"', known))
    return found


@pytest.fixture(scope="module")
def awaiting() -> dict[str, list[dict[str, Any]]]:
    """Every test stack rendered with `awaitCustomResources: true`, its objects by stack."""
    return {stack.name: render(raw_of(stack, awaitCustomResources=True)).objects() for stack in STACKS}


def test_every_custom_kind_the_program_writes_has_a_readiness_decision(awaiting):
    kinds = {o["kind"] for objects in awaiting.values() for o in objects if is_custom_resource(o["apiVersion"])}
    assert kinds - set(WAIT_FOR) - set(NOT_AWAITED) == set()
    assert set(WAIT_FOR).isdisjoint(NOT_AWAITED)


@pytest.mark.parametrize("stack", [s.name for s in STACKS])
def test_await_custom_resources_puts_wait_for_on_every_awaited_kind_and_skip_await_on_the_rest(awaiting, stack):
    for body in awaiting[stack]:
        if not is_custom_resource(body["apiVersion"]):
            assert WAIT_FOR_ANNOTATION not in annotations(body)
            continue
        found = annotations(body)
        if body["kind"] in WAIT_FOR:
            assert found.get(WAIT_FOR_ANNOTATION) == WAIT_FOR[body["kind"]], body["metadata"]
            assert SKIP_AWAIT not in found, body["metadata"]  # skipAwait wins over waitFor (overrides.go 108)
        else:
            assert found.get(SKIP_AWAIT) == "true" and WAIT_FOR_ANNOTATION not in found, body["metadata"]


def test_by_default_nothing_waits_for_a_condition(dev_rendering):
    assert not [o for o in dev_rendering.objects() if WAIT_FOR_ANNOTATION in annotations(o)]


@pytest.mark.parametrize("kind", sorted(WAIT_FOR))
def test_each_wait_for_parses_as_the_provider_parses_it_and_names_a_condition_the_crd_reports(kind):
    [(form, what, expected)] = parse_wait_for(WAIT_FOR[kind])
    crd = crd_of(kind)
    if crd is None:  # cert-manager's Certificate: its CRD is not vendored; Ready is cert-manager's documented type
        assert (kind, form, what) == ("Certificate", "condition", "Ready")
        return
    if form == "condition":
        assert expected == "True" and what in reported_condition_types(crd), (kind, what)
    else:  # HTTPRoute: no top-level conditions; each parent reports its own (Gateway API status.parents[])
        served = next(v for v in crd["spec"]["versions"] if v.get("storage"))
        status = served["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"]
        assert "conditions" not in status and "conditions" in status["parents"]["items"]["properties"]
        assert what == '{.status.parents[*].conditions[?(@.type=="Accepted")].status}' and expected == "True"


def test_the_kinds_never_awaited_would_otherwise_wait_on_a_status_nobody_writes_first():
    """MaaS CRs get their status from this program's status writer, registered after them: awaiting them (or
    PULUMI_K8S_AWAIT_ALL without skipAwait) would hold every create until the provider's 10-minute timeout."""
    assert {"MaaSModelRef", "MaaSSubscription", "MaaSAuthPolicy", "MaasTenantConfig"} <= set(NOT_AWAITED)


# ================================================================== the import option (objects left alone, live)
#
# PP pkg/resource/deploy/step_generator.go 1104-1113: `isImport := goal.Custom && goal.ID != "" && (old == nil ||
# old.External || oldImportID != goal.ID)` with oldImportID = old.ID (or old.ImportID): a resource the state holds
# under the same id is not imported again. 1265-1268: ignore_changes is applied only `if old != nil`, so without
# the option a resource absent from the state is a create. After an import step, `old` is the resource read
# (step.go 2019-2140), and processIgnoreChanges (step_generator.go 3074-3095; sdk/go/common/resource/
# properties_path.go `reset` 505-541: a key the old inputs lack is deleted from the new ones) puts every ignored key
# back to what was read. PK ids are fqName: `namespace/name`, or `name` cluster-scoped (provider/util.go 97-118).


def engine_imports(goal_id: str, old: dict[str, Any] | None) -> bool:
    """PP step_generator.go 1113."""
    if not goal_id:
        return False
    old_import_id = None if old is None else (old.get("import_id") or old["id"])
    return old is None or old.get("external", False) or old_import_id != goal_id


def ignore_changes(inputs: dict[str, Any], old_inputs: dict[str, Any], paths: tuple[str, ...]) -> dict[str, Any]:
    """PP processIgnoreChanges for top-level paths: each takes the old value, or goes when the old inputs lack it."""
    result = dict(inputs)
    for path in paths:
        if path in old_inputs:
            result[path] = old_inputs[path]
        else:
            result.pop(path, None)
    return result


class ImportRecorder(RecordingMonitor):
    """Also keeps the `importId` each registration sends, and what the mocks were handed as `resource_id`."""

    def __init__(self) -> None:
        super().__init__()
        self.import_ids: dict[tuple[str, str], str] = {}
        self.mock_ids: dict[tuple[str, str], str] = {}
        new_resource = self.mocks.new_resource

        def recording(args):
            if args.resource_id:
                self.mock_ids[(args.typ, args.name)] = args.resource_id
            return new_resource(args)

        self.mocks.new_resource = recording

    def RegisterResource(self, request):  # noqa: N802 (gRPC method name)
        if request.importId:
            self.import_ids[(request.type, request.name)] = request.importId
        return super().RegisterResource(request)


OPTED_OUT = ("kubernetes:kuadrant.io/v1alpha1:TokenRateLimitPolicy", "llm/maas-trlp-granite-7b")


def test_a_live_opt_out_is_registered_with_the_import_option_so_no_create_writes_over_it():
    raw = raw_of(DEV_STACK)
    monitor = ImportRecorder()
    rendering = render(raw, monitor=monitor, observed=dev_snapshot(raw))
    assert monitor.import_ids[OPTED_OUT] == "llm/maas-trlp-granite-7b"
    assert monitor.mock_ids[OPTED_OUT] == "llm/maas-trlp-granite-7b"  # what the mock engine is handed, too
    [trlp] = [r for r in rendering.registrations if (r.type, r.name) == OPTED_OUT]
    assert trlp.retain_on_delete and set(trlp.inputs) <= set(trlp.ignore_changes)
    # Only objects Pulumi leaves alone are imported: the other policies of the same model namespace are not.
    assert set(monitor.import_ids) == {OPTED_OUT}


def test_nothing_observed_means_nothing_imported():
    raw = raw_of(DEV_STACK)
    raw["unmanaged"] = [{"kind": "TokenRateLimitPolicy", "namespace": "llm", "name": "maas-trlp-granite-7b"}]
    monitor = ImportRecorder()
    render(raw, monitor=monitor)
    assert monitor.import_ids == {}


def test_an_absent_object_left_alone_is_not_imported():
    """The llama TRLP is listed (its namespace is observed) and absent: it is created, not imported."""
    raw = raw_of(DEV_STACK)
    raw["unmanaged"] = [{"kind": "TokenRateLimitPolicy", "namespace": "llm", "name": "maas-trlp-llama-3-8b"}]
    monitor = ImportRecorder()
    rendering = render(raw, monitor=monitor, observed=dev_snapshot(raw))
    llama = ("kubernetes:kuadrant.io/v1alpha1:TokenRateLimitPolicy", "llm/maas-trlp-llama-3-8b")
    assert any((r.type, r.name) == llama and r.retain_on_delete for r in rendering.registrations)
    assert llama not in monitor.import_ids


def test_an_unmanaged_tenants_live_objects_are_imported_and_the_unobserved_are_said_when_upserting():
    raw = raw_of(DEV_STACK, kubernetes={"upsertExistingObjects": True})
    raw["tenants"][0]["managementState"] = "Unmanaged"  # models-as-a-service: its maas-api Deployment is live
    monitor = ImportRecorder()
    rendering = render(raw, monitor=monitor, observed=dev_snapshot(raw))
    deployment = ("kubernetes:apps/v1:Deployment", "odh-ai-gateway-infra/maas-api")
    assert monitor.import_ids[deployment] == "odh-ai-gateway-infra/maas-api"
    [warning] = [w for w in rendering.warnings if "were not observed" in w]
    assert "Namespace models-as-a-service" in warning and "python -m maas import" in warning


def test_import_ids_are_the_ids_pulumi_kubernetes_gives():
    namespaced = Desired({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": "n"}})
    cluster = Desired({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}})
    assert (namespaced.kubernetes_id, cluster.kubernetes_id) == ("n/a", "n")


def test_the_import_option_is_a_no_op_for_a_resource_the_state_holds_and_adopts_one_it_does_not():
    assert engine_imports("llm/p", None)  # not in the state: imported, never created
    assert not engine_imports("llm/p", {"id": "llm/p"})  # created by Pulumi earlier: same id, nothing happens
    assert not engine_imports("llm/p", {"id": "llm/p", "import_id": "llm/p"})  # imported by `pulumi import`
    assert engine_imports("", None) is False  # absent objects carry no id: a create


def test_with_every_key_ignored_the_registered_inputs_are_what_the_import_read():
    """A custom resource imports as identity only (PK provider.go 2085-2101: its type is not in the schema), a
    built-in kind with its live top-level inputs: either way the diff after the import compares equal inputs."""
    body = {
        "apiVersion": "kuadrant.io/v1alpha1",
        "kind": "TokenRateLimitPolicy",
        "metadata": {"name": "p", "namespace": "llm", "labels": {"app.kubernetes.io/managed-by": "pulumi"}},
        "spec": {"limits": {"x": {"rates": [{"limit": 1, "window": "1m"}]}}},
    }
    left_alone = Desired(body).unmanaged()
    read_cr = {"apiVersion": body["apiVersion"], "kind": body["kind"], "metadata": {"name": "p", "namespace": "llm"}}
    assert ignore_changes(body, read_cr, left_alone.ignore_changes) == read_cr
    read_builtin = {**read_cr, "metadata": {**read_cr["metadata"], "labels": {"a": "b"}}, "spec": {"live": True}}
    assert ignore_changes(body, read_builtin, left_alone.ignore_changes) == read_builtin


# ============================================================================================ patchForce
#
# PK provider/pkg/await/await.go 1031-1064 `patchForce`: forced for the `pulumi.com/patchForce: "true"` annotation
# (metadata/annotations.go 38), for enablePatchForce (provider.go 667-681: the provider input, else the env var
# PULUMI_K8S_ENABLE_PATCH_FORCE; the Python SDK copies the env var into the input), in a preview for a create
# (no live object) or a live object with a pulumi-kubernetes client-side manager, or for a live object without
# managedFields. Creates through an upserting provider call it with live=nil (await.go 190-191), updates with the
# live object (662). provider.go 2455-2458: a preview update tolerates only Forbidden, so a conflict fails it.

PULUMI_CSA_MANAGERS = {"pulumi-resource-kubernetes", "pulumi-kubernetes", "pulumi-kubernetes.exe"}


def patch_force(inputs: dict[str, Any], live: dict[str, Any] | None, enable_patch_force: bool, preview: bool) -> bool:
    """PK await.go 1031."""
    if annotations(inputs).get(PATCH_FORCE_ANNOTATION) == "true" or enable_patch_force:
        return True
    managed = (live or {}).get("metadata", {}).get("managedFields", [])
    if preview and (
        live is None or any(m["operation"] == "Update" and m["manager"] in PULUMI_CSA_MANAGERS for m in managed)
    ):
        return True
    return live is not None and not managed


CONTROLLER_OWNED = {"metadata": {"managedFields": [{"manager": "manager", "operation": "Update"}]}}


def kubernetes_objects(rendering) -> list:
    return [r for r in rendering.registrations if r.is_kubernetes_object]


def test_the_migration_forces_every_apply_in_preview_and_up_alike():
    """controllerMode: coexist (what `python -m maas import` writes) is the migration: the controller's managers
    own the live fields, and the import put every object in the state. Every object that Pulumi writes is forced,
    in the preview's dry run and in the update, with no environment variable."""
    rendering = render(raw_of(DEV_STACK, controllerMode="coexist"))
    for registration in kubernetes_objects(rendering):
        if set(registration.inputs) <= set(registration.ignore_changes):
            continue  # left alone: its inputs are the imported ones, nothing is applied
        for preview in (True, False):
            assert patch_force(registration.inputs, CONTROLLER_OWNED, False, preview), registration.name


def test_without_the_annotation_the_imported_objects_preview_conflicts():
    """The reason for the rule above: an imported object the controller owns is not forced in a preview."""
    assert not patch_force({"metadata": {}}, CONTROLLER_OWNED, enable_patch_force=False, preview=True)


def test_objects_that_may_exist_before_the_first_up_are_forced_in_the_update_too():
    """An upserting create is forced in a preview (no live object), not in the update: the annotation makes both
    alike. With controllerMode: absent exactly the objects written through the upserting provider carry it."""
    rendering = render(raw_of(DEV_STACK))
    forced = {r.name for r in kubernetes_objects(rendering) if annotations(r.inputs).get(PATCH_FORCE_ANNOTATION)}
    upserted = {r.name for r in kubernetes_objects(rendering) if r.provider.split("::")[-2].endswith("-adopt")}
    assert forced == upserted and forced
    assert {r.inputs["kind"] for r in kubernetes_objects(rendering) if r.name in forced} >= {"Namespace"}
    assert not patch_force({"metadata": {}}, None, enable_patch_force=False, preview=False)


def test_objects_left_alone_are_not_forced():
    raw = raw_of(DEV_STACK, controllerMode="coexist")
    raw["tenants"][1]["managementState"] = "Unmanaged"
    rendering = render(raw)
    alone = [r for r in kubernetes_objects(rendering) if r.retain_on_delete and set(r.inputs) <= set(r.ignore_changes)]
    assert {r.inputs["kind"] for r in alone} >= {"Namespace", "Deployment", "AuthPolicy"}
    assert not [r.name for r in alone if PATCH_FORCE_ANNOTATION in annotations(r.inputs)]


# ========================================================================== finalizers left by the controller
#
# PK metadata/overrides.go 168-209: on delete skipAwait counts only for Namespace, Pod, ReplicationController,
# DaemonSet, Deployment, StatefulSet and Job, so a custom resource is awaited until it is gone; await.go 933-1024:
# foreground delete, 10 minutes unless pulumi.com/timeoutSeconds, then the delete fails (condition/deleted.go logs
# "finalizers might be preventing deletion"). The maas-controller's finalizers (opendatahub-io/models-as-a-service
# @ c0639b1b maas-controller/pkg/controller/maas: maassubscription_controller.go 86, maasauthpolicy_controller.go
# 468, maasmodelref_controller.go 95, tenant_reconcile.go 51) are all `maas.opendatahub.io/...`.


def with_controller_finalizer(raw: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """A live MaaSSubscription of the plan that still carries the controller's finalizer."""
    subscription = next(o for o in render(raw).objects() if o["kind"] == "MaaSSubscription")
    live = copy.deepcopy(subscription)
    live["metadata"]["finalizers"] = ["maas.opendatahub.io/subscription-cleanup"]
    return live, f"{live['metadata']['namespace']}/{live['metadata']['name']}"


def test_with_the_controller_gone_a_leftover_finalizer_is_a_warning_with_the_command_that_clears_it():
    raw = raw_of(DEV_STACK)
    live, where = with_controller_finalizer(raw)
    rendering = render(raw, observed=dev_snapshot(raw, live))
    namespace, name = where.split("/")
    [warning] = [w for w in rendering.warnings if "finalizer" in w]
    assert warning.startswith(f"MaaSSubscription {where} still carries the maas-controller's finalizer ")
    assert warning.endswith(
        f"""kubectl patch maassubscriptions.maas.opendatahub.io {name} -n {namespace} --type=merge -p '{{"metadata":{{"finalizers":null}}}}'"""
    )


def test_a_subscription_leaving_the_configuration_is_warned_about_too():
    """Not registered any more, so this very `up` deletes it: the live label says it is this program's."""
    raw = raw_of(DEV_STACK)
    live, where = with_controller_finalizer(raw)
    name = live["metadata"]["name"]
    raw["subscriptions"] = [s for s in raw["subscriptions"] if s["name"] != name]
    plan = build_plan(load_config(raw), dev_snapshot(raw, live))
    assert not [o for o in plan.objects() if o.kind == "MaaSSubscription" and o.name == name]
    assert [w for w in plan.warnings if w.startswith(f"MaaSSubscription {where} still carries")]


def test_while_the_controller_runs_its_finalizers_are_its_own():
    raw = raw_of(DEV_STACK, controllerMode="coexist")
    live, _ = with_controller_finalizer(raw_of(DEV_STACK))
    rendering = render(raw, observed=dev_snapshot(raw, live))
    assert not [w for w in rendering.warnings if "finalizer" in w]


def test_other_finalizers_and_foreign_objects_are_not_reported():
    raw = raw_of(DEV_STACK)
    live, _ = with_controller_finalizer(raw)
    live["metadata"]["finalizers"] = ["kuadrant.io/finalizer"]
    foreign = copy.deepcopy(live)
    foreign["metadata"] = {
        "name": "hand-made",
        "namespace": live["metadata"]["namespace"],
        "finalizers": ["maas.opendatahub.io/subscription-cleanup"],
    }
    plan = build_plan(load_config(raw), dev_snapshot(raw, live, foreign))
    assert not [w for w in plan.warnings if "finalizer" in w]
    assert Scope("MaaSSubscription", live["metadata"]["namespace"]) in what_to_observe(load_config(raw)).lists
