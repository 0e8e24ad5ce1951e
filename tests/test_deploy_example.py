"""The Pulumi Kubernetes Operator example under deploy/: valid against the operator's CRDs, and its ClusterRole grants
exactly what the program observes, writes and needs to run in the operator's workspace pod.

The permissions are recomputed from the program itself (the observation request and the offline render of every
test stack), so a kind added to the program fails here until deploy/pulumi-operator/clusterrole.yaml grants it.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from maas.config import MaasConfig, load_config, raw_from_stack_file
from maas.crdschema import default_registry, validate_all
from maas.observe import KINDS, what_to_observe
from maas.tools.render import Rendering, render
from tests.conftest import DEV_STACK, ROOT

EXAMPLE = ROOT / "deploy" / "pulumi-operator"
KUSTOMIZATION = "kustomization.yaml"  # kustomize's own file, not a Kubernetes object: checked by its own test
STACKS = [DEV_STACK, *sorted((ROOT / "tests" / "stacks").glob("Pulumi.*.yaml"))]

RBAC = "rbac.authorization.k8s.io"
WRITE = ("get", "list", "watch", "create", "update", "patch", "delete")
OBSERVE = ("get", "list")
# Always registered with retain_on_delete (asserted below), so never deleted: a deleted namespace takes its contents.
NEVER_DELETED = {"Namespace"}
# pulumi-kubernetes awaits these kinds with list+watch informers on their dependents (provider/pkg/await).
AWAIT_DEPENDENTS = {
    "Deployment": [("apps", "replicasets"), ("", "pods"), ("", "persistentvolumeclaims")],
    "Service": [("", "endpoints")],
}
AWAIT_VERBS = ("list", "watch")
# Seed 000: the MaasTenantConfig status is written at `up`, after the maas-api Deployment is awaited.
STATUS_WRITTEN_AT_UP = {("maas.opendatahub.io", "MaasTenantConfig")}

Grant = tuple[str, str, str, str | None]  # (apiGroup, resource, verb, resourceName or None for every name)


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


def manifests() -> list[dict[str, Any]]:
    """Every document of every YAML file under deploy/ but kustomize's own files."""
    paths = sorted(p for p in (ROOT / "deploy").rglob("*.yaml") if p.name != KUSTOMIZATION)
    return [doc for path in paths for doc in documents(path)]


def one(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [d for d in manifests() if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    assert len(found) == 1, f"expected one {kind} {name or ''} under deploy/, found {len(found)}"
    return found[0]


def program_role() -> dict[str, Any]:
    return one("ClusterRole", "maas-pulumi-program")


def grants(rules: list[dict[str, Any]]) -> set[Grant]:
    return {
        (group, resource, verb, name)
        for rule in rules
        for group in rule.get("apiGroups", [])
        for resource in rule.get("resources", [])
        for verb in rule["verbs"]
        for name in rule.get("resourceNames") or [None]
    }


def allows(granted: set[Grant], group: str, resource: str, verb: str, name: str | None = None) -> bool:
    return (group, resource, verb, None) in granted or (name is not None and (group, resource, verb, name) in granted)


def covers(granted: set[Grant], rules: list[dict[str, Any]]) -> bool:
    """Whether `granted` holds every permission of `rules` (the API server's RBAC escalation check)."""
    return all(allows(granted, *wanted) for wanted in grants(rules))


def group_of(api_version: str) -> str:
    return api_version.rpartition("/")[0]


@functools.cache
def crds_of(group: str) -> dict[str, dict[str, Any]]:
    """The CRDs of one API group by kind, from the folder the validator uses (`<group>_<plural>.yaml`)."""
    found = {}
    for path in sorted(default_registry().directory.glob(f"{group}_*.yaml")):
        for doc in documents(path):
            if doc.get("kind") == "CustomResourceDefinition":
                found[doc["spec"]["names"]["kind"]] = doc
    return found


def plural(group: str, kind: str) -> str:
    """The resource of a kind: its CRD's plural, else the API server's rule for built-in kinds."""
    crd = crds_of(group).get(kind)
    if crd is not None:
        return crd["spec"]["names"]["plural"]
    lower = kind.lower()
    if lower.endswith("s"):
        return lower + "es"
    return lower[:-1] + "ies" if lower.endswith("y") else lower + "s"


@pytest.fixture(scope="module")
def programs() -> dict[str, tuple[MaasConfig, Rendering]]:
    """Every test stack's validated configuration and offline rendering."""
    loaded = {}
    for stack in STACKS:
        raw, _ = raw_from_stack_file(stack)
        loaded[stack.name] = (load_config(raw), render(raw))
    return loaded


def observed_kinds(config: MaasConfig) -> set[str]:
    request = what_to_observe(config)
    return {scope.kind for scope in request.lists} | {ref.kind for ref in request.gets}


def written(rendering: Rendering) -> set[tuple[str, str]]:
    return {(group_of(body["apiVersion"]), body["kind"]) for body in rendering.objects()}


def statuses(rendering: Rendering) -> set[tuple[str, str]]:
    return {(group_of(body["apiVersion"]), body["kind"].removesuffix("Status")) for body in rendering.statuses()}


def needed_for_rbac(rendering: Rendering) -> set[Grant]:
    """`escalate` on each ClusterRole the program writes and `bind` on each one it binds, by name."""
    bodies = rendering.objects()
    roles = {(RBAC, "clusterroles", "escalate", b["metadata"]["name"]) for b in bodies if b["kind"] == "ClusterRole"}
    bound = {
        (RBAC, "clusterroles", "bind", b["roleRef"]["name"])
        for b in bodies
        if b["kind"] == "ClusterRoleBinding" or (b["kind"] == "RoleBinding" and b["roleRef"]["kind"] == "ClusterRole")
    }
    return roles | bound


# --- the manifests are valid


def test_every_deploy_document_validates_against_its_schema():
    docs = manifests()
    assert {d["kind"] for d in docs} == {"Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Stack"}
    assert validate_all(docs) == []


def test_the_workspace_template_is_a_valid_workspace():
    """The operator merges workspaceTemplate into the Workspace it generates: check it against the Workspace CRD."""
    stack = one("Stack")
    workspace = {
        "apiVersion": "auto.pulumi.com/v1alpha1",
        "kind": "Workspace",
        "metadata": {"name": stack["metadata"]["name"], "namespace": stack["metadata"]["namespace"]},
        "spec": {
            **stack["spec"]["workspaceTemplate"]["spec"],
            "serviceAccountName": stack["spec"]["serviceAccountName"],
        },
    }
    assert validate_all([workspace]) == []


def test_the_validator_rejects_a_misspelt_stack_field():
    stack = one("Stack")
    misspelt = {**stack, "spec": {**stack["spec"], "resyncFrequency": 300}}
    assert validate_all([misspelt]) == [
        "Stack maas-pulumi/maas: spec.resyncFrequency: unknown field (the API server would silently prune it)"
    ]


def test_kustomization_lists_every_manifest_of_its_folder():
    found = sorted((ROOT / "deploy").rglob(KUSTOMIZATION))
    assert EXAMPLE / KUSTOMIZATION in found
    for kustomization in found:
        (doc,) = documents(kustomization)
        assert (doc["apiVersion"], doc["kind"]) == ("kustomize.config.k8s.io/v1beta1", "Kustomization")
        siblings = sorted(p.name for p in kustomization.parent.glob("*.yaml") if p.name != KUSTOMIZATION)
        assert sorted(doc["resources"]) == siblings
        assert len(doc["resources"]) == len(set(doc["resources"]))


# --- the ClusterRole grants what the program does


@pytest.mark.parametrize("stack", [s.name for s in STACKS])
def test_role_allows_every_read_of_the_observation(programs, stack):
    granted = grants(program_role()["rules"])
    request = what_to_observe(programs[stack][0])
    for scope in request.lists:
        kind = KINDS[scope.kind]
        assert allows(granted, kind.group, kind.plural, "list"), f"list {kind.plural}"
    for ref in request.gets:
        kind = KINDS[ref.kind]
        assert allows(granted, kind.group, kind.plural, "get", ref.name), f"get {kind.plural} {ref.name}"


@pytest.mark.parametrize("stack", [s.name for s in STACKS])
def test_role_allows_writing_every_kind_the_program_renders(programs, stack):
    granted = grants(program_role()["rules"])
    for group, kind in written(programs[stack][1]):
        verbs = [v for v in WRITE if not (kind in NEVER_DELETED and v == "delete")]
        missing = [v for v in verbs if not allows(granted, group, plural(group, kind), v)]
        assert missing == [], f"{kind}: {missing}"


@pytest.mark.parametrize("stack", [s.name for s in STACKS])
def test_namespaces_are_never_deleted_so_the_role_does_not_allow_it(programs, stack):
    namespaces = [
        r for r in programs[stack][1].registrations if r.is_kubernetes_object and r.inputs["kind"] == "Namespace"
    ]
    assert namespaces and all(r.retain_on_delete for r in namespaces)
    assert not allows(grants(program_role()["rules"]), "", "namespaces", "delete")


@pytest.mark.parametrize("stack", [s.name for s in STACKS])
def test_role_allows_patching_every_status_the_program_writes(programs, stack):
    granted = grants(program_role()["rules"])
    for group, kind in statuses(programs[stack][1]) | STATUS_WRITTEN_AT_UP:
        assert allows(granted, group, f"{plural(group, kind)}/status", "patch"), kind


@pytest.mark.parametrize("stack", [s.name for s in STACKS])
def test_role_allows_the_provider_to_await_deployments_and_services(programs, stack):
    granted = grants(program_role()["rules"])
    for _, kind in written(programs[stack][1]):
        for group, resource in AWAIT_DEPENDENTS.get(kind, []):
            assert all(allows(granted, group, resource, verb) for verb in AWAIT_VERBS), f"{kind}: {resource}"


@pytest.mark.parametrize("stack", [s.name for s in STACKS])
def test_role_may_create_and_bind_the_rbac_the_program_renders(programs, stack):
    """The API server refuses a Role or ClusterRole granting more than the writer holds, unless it may `escalate`,
    and a binding to one, unless it may `bind` it."""
    granted = grants(program_role()["rules"])
    bodies = programs[stack][1].objects()
    rendered_roles = {b["metadata"]["name"]: b["rules"] for b in bodies if b["kind"] == "ClusterRole"}
    for body in bodies:
        name = body["metadata"]["name"]
        if body["kind"] in ("ClusterRole", "Role"):
            resource = f"{body['kind'].lower()}s"
            assert covers(granted, body["rules"]) or allows(granted, RBAC, resource, "escalate", name), name
        if body["kind"] == "ClusterRoleBinding":
            role = body["roleRef"]["name"]
            bindable = allows(granted, RBAC, "clusterroles", "bind", role)
            assert bindable or (role in rendered_roles and covers(granted, rendered_roles[role])), name


def provider_request(rendering: Rendering, registration) -> tuple[str, str | None]:
    """How pulumi-kubernetes creates an object: the verb and the object name the request's URL carries.

    pulumi/pulumi-kubernetes @ 94977969 provider/pkg/await/await.go 190-252: with server-side apply and
    `upsertExistingObjects` a create is an apply PATCH to `.../NAME`; otherwise (since 4.29.0) a client-side POST to
    the collection, whose URL names no object."""
    providers = {r.urn: r.inputs for r in rendering.registrations if r.type == "pulumi:providers:kubernetes"}
    inputs = providers[registration.provider.rpartition("::")[0]]
    server_side = inputs.get("enableServerSideApply", "true") == "true"
    if server_side and inputs.get("upsertExistingObjects") == "true":
        return "patch", registration.inputs["metadata"]["name"]
    return "create", None


@pytest.mark.parametrize("stack", [s.name for s in STACKS])
def test_role_may_create_each_cluster_role_that_needs_escalate_as_the_provider_sends_it(programs, stack):
    """The API server authorises `escalate` on the request's name (kubernetes pkg/registry/rbac/escalation_check.go
    `RoleEscalationAuthorized`: `Name: requestInfo.Name`, for Create and Update of clusterroles alike), which a POST
    to the collection does not have: a grant limited by `resourceNames` matches only a named PATCH."""
    granted = grants(program_role()["rules"])
    rendering = programs[stack][1]
    roles = [r for r in rendering.registrations if r.is_kubernetes_object and r.inputs["kind"] == "ClusterRole"]
    needing = [r for r in roles if not covers(granted, r.inputs["rules"])]
    assert needing, "the program writes ClusterRoles granting more than the Operator's identity holds"
    for registration in needing:
        verb, name = provider_request(rendering, registration)
        assert allows(granted, RBAC, "clusterroles", verb, name), (registration.name, verb)
        assert allows(granted, RBAC, "clusterroles", "escalate", name), (registration.name, verb, name)


def test_role_grants_nothing_the_program_does_not_need(programs):
    """Exactly: every permission is justified by an observation, a write, a status write, an await or RBAC."""
    needed: set[Grant] = set()
    for config, rendering in programs.values():
        for kind in map(KINDS.__getitem__, observed_kinds(config)):
            if kind.metadata_only:  # only the named objects, never the kind as a whole
                refs = [r for r in what_to_observe(config).gets if r.kind == kind.kind]
                needed |= {(kind.group, kind.plural, "get", ref.name) for ref in refs}
            else:
                needed |= {(kind.group, kind.plural, verb, None) for verb in OBSERVE}
        for group, kind in written(rendering):
            needed |= {(group, plural(group, kind), verb, None) for verb in WRITE}
            needed |= {(g, r, verb, None) for g, r in AWAIT_DEPENDENTS.get(kind, []) for verb in AWAIT_VERBS}
        for group, kind in statuses(rendering) | STATUS_WRITTEN_AT_UP:
            needed.add((group, f"{plural(group, kind)}/status", "patch", None))
        needed |= needed_for_rbac(rendering)
    assert grants(program_role()["rules"]) - needed == set()


def test_role_has_no_wildcards_and_no_non_resource_urls():
    for rule in program_role()["rules"]:
        assert "nonResourceURLs" not in rule
        for field in ("apiGroups", "resources", "verbs", "resourceNames"):
            assert not any("*" in value for value in rule.get(field, [])), rule


# --- the operator runs the program continuously, under that role


def test_workspace_runs_as_the_service_account_bound_to_the_role():
    stack, account = one("Stack"), one("ServiceAccount")
    namespace = one("Namespace")["metadata"]["name"]
    assert stack["metadata"]["namespace"] == account["metadata"]["namespace"] == namespace
    assert stack["spec"]["serviceAccountName"] == account["metadata"]["name"]
    subject = {"kind": "ServiceAccount", "name": account["metadata"]["name"], "namespace": namespace}
    bound = {
        b["roleRef"]["name"] for b in manifests() if b["kind"] == "ClusterRoleBinding" and subject in b["subjects"]
    }
    # system:auth-delegator: PKO v2's agent authenticates the operator with TokenReview/SubjectAccessReview.
    assert bound == {program_role()["metadata"]["name"], "system:auth-delegator"}


def test_stack_reruns_the_program_from_git_on_a_schedule():
    spec = one("Stack")["spec"]
    assert spec["refresh"] is True
    assert spec["continueResyncOnCommitMatch"] is True  # re-run although the commit did not change
    assert spec["resyncFrequencySeconds"] >= 60  # the operator treats anything lower as 60
    assert spec["destroyOnFinalize"] is False
    assert spec["workspaceReclaimPolicy"] == "Retain"
    assert spec["projectRepo"].endswith(".git") and spec["branch"]
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))["name"]
    assert re.fullmatch(rf"[\w.-]+/{project}/[\w.-]+", spec["stack"])


def test_stack_reads_the_backend_token_from_a_secret():
    token = one("Stack")["spec"]["envRefs"]["PULUMI_ACCESS_TOKEN"]
    assert token["type"] == "Secret" and set(token["secret"]) == {"name", "key"}


def test_workspace_image_is_the_pinned_pulumi_cli_with_python_as_non_root():
    pin = re.search(r"^pulumi==(\S+)$", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.MULTILINE)
    workspace = one("Stack")["spec"]["workspaceTemplate"]["spec"]
    assert workspace["image"] == f"pulumi/pulumi:{pin.group(1)}-nonroot"
    assert workspace["securityProfile"] == "restricted"
