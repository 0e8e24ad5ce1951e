"""The first `pulumi up` after `pulumi import`, as pulumi-kubernetes computes it (`tests/provider_fidelity.py`): the
round trip of the controller-built cluster replaces nothing and deletes no object, because the program ignores the
fields the cluster fills in that the provider replaces an object for (`maas/plan/server_fields.py`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from maas.config import raw_from_stack_file
from maas.plan import build
from maas.plan.desired import Desired
from maas.plan.server_fields import SERVER_POPULATED, server_populated_paths, with_server_fields_ignored
from maas.tools.importer import import_cluster
from maas.tools.render import Rendering, render
from tests.controller_cluster import controller_cluster, controller_objects
from tests.provider_fidelity import (
    FORCE_NEW,
    PK,
    PP,
    RULES,
    Adopted,
    FirstDiff,
    first_diff,
    first_up,
    force_new_paths,
    group_version,
    imported_inputs,
    merge_patch,
    path_string,
    property_path,
    reset_ignored,
)

SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "maas-api", "namespace": "infra", "uid": "u1", "resourceVersion": "7"},
    "spec": {
        "clusterIP": "172.30.0.9",
        "clusterIPs": ["172.30.0.9"],
        "ports": [{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": "https"}],
        "selector": {"app": "maas-api"},
        "sessionAffinity": "None",
        "type": "ClusterIP",
    },
    "status": {"loadBalancer": {}},
}
PROGRAM_SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "maas-api", "namespace": "infra", "labels": {"app.kubernetes.io/managed-by": "pulumi"}},
    "spec": {
        "ports": [{"name": "https", "port": 8443, "protocol": "TCP", "targetPort": "https"}],
        "selector": {"app": "maas-api"},
        "type": "ClusterIP",
    },
}


def diff_of(live: dict, body: dict, ignore: tuple[str, ...] = ()) -> FirstDiff:
    return first_diff(live, imported_inputs(live), body, ignore)


# ------------------------------------------------------------------------------------------- the rules as data


def test_every_rule_names_the_commit_file_and_lines_it_was_read_from():
    pinned = re.compile(r"^[\w./-]+\.go:\d+(-\d+)?(,\d+(-\d+)?)*@pulumi/pulumi(-kubernetes)?@[0-9a-f]{40}$")
    for rule in RULES:
        for where in rule.where.split("; "):
            assert pinned.match(where), (rule.what, where)
    assert {PK.rpartition("@")[2][:9], PP.rpartition("@")[2][:9]} == {"94977969d", "1b5949891"}


def test_force_new_paths_are_identity_plus_the_kinds_own():
    assert force_new_paths(SERVICE) == (".metadata.name", ".metadata.namespace", ".spec.clusterIP")
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment"}
    assert ".spec.selector.matchLabels" in force_new_paths(deployment)
    assert force_new_paths({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding"})[2:] == (
        ".roleRef",
    )
    assert force_new_paths({"apiVersion": "kuadrant.io/v1", "kind": "AuthPolicy"}) == (
        ".metadata.name",
        ".metadata.namespace",
    )


def test_config_maps_and_secrets_replace_on_their_content_unless_mutable_is_enabled():
    config_map = {"apiVersion": "v1", "kind": "ConfigMap"}
    assert force_new_paths(config_map)[2:] == (".binaryData", ".data")
    assert force_new_paths(config_map, config_map_mutable=True)[2:] == ()
    assert force_new_paths({**config_map, "immutable": True}, config_map_mutable=True)[2:] == (".binaryData", ".data")
    secret = {"apiVersion": "v1", "kind": "Secret"}
    assert force_new_paths(secret)[2:] == (".type", ".stringData", ".data")
    assert force_new_paths(secret, secret_mutable=True)[2:] == (".type",)


BUILT_IN_KINDS_WITHOUT_FORCE_NEW = {  # diff.go:45-162 lists none for these: only identity replaces them
    ("", "v1", "Namespace"),
    ("", "v1", "ServiceAccount"),
    ("", "v1", "ConfigMap"),  # its content, by the mutable rule above
    ("rbac.authorization.k8s.io", "v1", "Role"),
    ("rbac.authorization.k8s.io", "v1", "ClusterRole"),
    ("networking.k8s.io", "v1", "NetworkPolicy"),
    ("batch", "v1", "CronJob"),
    ("autoscaling", "v2", "HorizontalPodAutoscaler"),
}


def test_every_built_in_kind_the_program_registers_has_its_force_new_paths_known(dev_rendering):
    """A new built-in kind in a rendering must be checked against diff.go before it is added here."""
    stacks = sorted((Path(__file__).parent / "stacks").glob("Pulumi.*.yaml"))
    objects = [*dev_rendering.objects(), *(o for s in stacks for o in render(raw_from_stack_file(s)[0]).objects())]
    built_in = {(*group_version(o["apiVersion"]), o["kind"]) for o in objects if imported_inputs(o) != _identity(o)}
    assert built_in - BUILT_IN_KINDS_WITHOUT_FORCE_NEW <= set(FORCE_NEW)
    assert {k for k in built_in if k in FORCE_NEW} == {
        ("", "v1", "Service"),
        ("apps", "v1", "Deployment"),
        ("rbac.authorization.k8s.io", "v1", "RoleBinding"),
        ("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding"),
    }


def _identity(body: dict) -> dict:
    metadata = {k: body["metadata"][k] for k in ("name", "namespace") if k in body["metadata"]}
    return {"apiVersion": body["apiVersion"], "kind": body["kind"], "metadata": metadata}


# ------------------------------------------------------------------------------------------- import and diff


def test_import_keeps_a_built_in_kinds_live_fields_without_status_and_server_metadata():
    inputs = imported_inputs(SERVICE)
    assert inputs["spec"]["clusterIP"] == "172.30.0.9" and "status" not in inputs
    assert inputs["metadata"] == {"name": "maas-api", "namespace": "infra"}


def test_import_keeps_only_a_custom_resources_identity_so_its_whole_spec_shows_added():
    policy = {
        "apiVersion": "kuadrant.io/v1",
        "kind": "AuthPolicy",
        "metadata": {"name": "p", "namespace": "llm", "labels": {"a": "b"}, "uid": "u"},
        "spec": {"rules": {}},
        "status": {},
    }
    assert imported_inputs(policy) == {
        "apiVersion": "kuadrant.io/v1",
        "kind": "AuthPolicy",
        "metadata": {"name": "p", "namespace": "llm"},
    }
    body = {key: value for key, value in policy.items() if key != "status"}
    assert diff_of(policy, body) == FirstDiff((), (), ("metadata.labels", "spec"), ())


def test_an_imported_service_is_replaced_on_its_cluster_ip_unless_the_ip_is_ignored():
    replaced = diff_of(SERVICE, PROGRAM_SERVICE)
    assert replaced.replaces == ("spec.clusterIP",)
    assert replaced.deleted == ("spec.clusterIP", "spec.clusterIPs", "spec.sessionAffinity")
    kept = diff_of(SERVICE, PROGRAM_SERVICE, ("spec.clusterIP", "spec.clusterIPs"))
    assert kept == FirstDiff((), ("spec.sessionAffinity",), ("metadata.labels",), ())


def test_a_server_default_the_program_omits_shows_deleted_and_replaces_nothing():
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}, "spec": {"finalizers": ["k"]}}
    assert diff_of(namespace, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "t"}}) == FirstDiff(
        (), ("spec",), (), ()
    )


def test_a_deployment_is_replaced_only_when_its_selector_changes():
    live = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"spec": {"containers": [{"name": "c", "image": "a", "terminationMessagePath": "/dev/x"}]}},
        },
    }
    new_image = {**live, "spec": {**live["spec"], "template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}}}
    changed = diff_of(live, new_image)
    assert changed.replaces == () and changed.updated == ("spec.template.spec.containers[0].image",)
    assert changed.deleted == ("spec.template.spec.containers[0].terminationMessagePath",)
    new_selector = {**live, "spec": {**live["spec"], "selector": {"matchLabels": {"app": "e"}}}}
    assert diff_of(live, new_selector).replaces == ("spec.selector.matchLabels.app",)


def test_a_role_binding_is_replaced_when_its_role_ref_changes():
    live = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "b", "namespace": "n"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
    }
    assert diff_of(live, live).replaces == ()
    assert diff_of(live, {**live, "roleRef": {**live["roleRef"], "name": "s"}}).replaces == ("roleRef.name",)


def test_the_engine_resets_an_ignored_path_to_the_old_value_or_removes_it():
    old = {"spec": {"clusterIP": "1.2.3.4"}}
    assert reset_ignored({"spec": {"type": "ClusterIP"}}, old, ["spec.clusterIP"]) == {
        "spec": {"type": "ClusterIP", "clusterIP": "1.2.3.4"}
    }
    assert reset_ignored({"spec": {"clusterIP": "None"}}, {"spec": {}}, ["spec.clusterIP"]) == {"spec": {}}
    assert reset_ignored({"metadata": {}}, old, ["spec.clusterIP"]) == {"metadata": {}}  # creates no intermediate


def test_paths_are_spelled_and_parsed_as_pulumi_does():
    assert path_string(["metadata", "labels", "app.kubernetes.io/name"]) == 'metadata.labels["app.kubernetes.io/name"]'
    assert path_string(["spec", "ports", 0, "protocol"]) == "spec.ports[0].protocol"
    assert property_path('metadata.labels["a.b"]') == ["metadata", "labels", "a.b"]
    assert property_path("spec.ports[0].name") == ["spec", "ports", 0, "name"]
    assert merge_patch({"a": 1, "b": {"c": 1}}, {"b": {"c": 2}, "d": [1]}) == {"a": None, "b": {"c": 2}, "d": [1]}


# --------------------------------------------------------------------------------------- the program's options


def service(**spec) -> Desired:
    return Desired({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"}, "spec": spec})


def test_a_service_the_program_leaves_its_ip_to_the_cluster_ignores_the_allocated_ips():
    assert with_server_fields_ignored(service(type="ClusterIP")).ignore_changes == SERVER_POPULATED[("v1", "Service")]


def test_a_service_that_sets_its_cluster_ip_or_has_none_keeps_its_options():
    headless = service(clusterIP="None", type="ClusterIP")
    assert with_server_fields_ignored(headless).ignore_changes == ("spec.clusterIPs",)
    external = service(type="ExternalName", externalName="api.example.com")
    assert with_server_fields_ignored(external) is external


def test_a_config_map_without_content_ignores_the_content_others_write_and_one_with_content_does_not():
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "openshift-service-ca.crt"}}
    assert server_populated_paths(body) == ("data", "binaryData")
    plugins = Desired({**body, "data": {"a": "b"}}, ignore_changes=("data",))
    assert with_server_fields_ignored(plugins) is plugins


def test_an_object_whose_top_level_keys_are_all_ignored_keeps_its_options():
    unmanaged = service(type="ClusterIP").unmanaged()
    assert with_server_fields_ignored(unmanaged) is unmanaged


def test_registered_services_of_the_dev_stack_ignore_their_allocated_ips(dev_rendering):
    services = [r for r in dev_rendering.registrations if r.is_kubernetes_object and r.inputs["kind"] == "Service"]
    cluster_ip = [r for r in services if r.inputs["spec"].get("type") != "ExternalName"]
    assert cluster_ip and all({"spec.clusterIP", "spec.clusterIPs"} <= set(r.ignore_changes) for r in cluster_ip)
    external = [r for r in services if r.inputs["spec"].get("type") == "ExternalName"]
    assert external and all("spec.clusterIP" not in r.ignore_changes for r in external)


# ------------------------------------------------------------------------------------------------ the round trip


def adopted(import_file: dict, rendering: Rendering, live: list[dict]) -> list[Adopted]:
    """Each object of the import file with its live copy and the first up's registration of the same URN (type,
    logical name, parent: the import file's handles are `{type}::{logical name}`)."""
    by_urn = {r.urn: r for r in rendering.registrations}
    registered = {
        (f"{r.type}::{r.name}", _handle(by_urn.get(r.parent))): r for r in rendering.registrations if r.custom
    }
    by_id = {_id(o): o for o in live}
    result = []
    for entry in import_file["resources"]:
        if entry.get("component"):
            continue
        registration = registered.get((entry["name"], entry.get("parent")))
        body = None if registration is None else registration.inputs
        ignore = () if registration is None else registration.ignore_changes
        live_object = by_id[(entry["type"].rpartition(":")[2], entry["id"])]
        result.append(Adopted(entry["name"], entry.get("parent"), live_object, body, ignore))
    return result


def _handle(registration) -> str | None:
    return None if registration is None else f"{registration.type}::{registration.name}"


def _id(body: dict) -> tuple[str, str]:
    metadata = body["metadata"]
    key = f"{metadata['namespace']}/{metadata['name']}" if metadata.get("namespace") else metadata["name"]
    return body["kind"], key


def round_trip() -> dict[str, FirstDiff | None]:
    """Import the controller-built cluster, render the first up against it, and model the provider's diff."""
    imported = import_cluster(controller_cluster())
    rendering = render(imported.config, observed=controller_cluster())
    return first_up(adopted(imported.import_file, rendering, controller_objects()))


@pytest.fixture(scope="module")
def first_up_after_import():
    return round_trip()


def test_the_first_up_after_the_import_replaces_nothing_and_deletes_no_object(first_up_after_import):
    diffs = first_up_after_import
    assert diffs and [handle for handle, diff in diffs.items() if diff is None] == []  # every adopted object registered
    assert {handle: diff.replaces for handle, diff in diffs.items() if diff.replaced} == {}
    kinds = {handle.split("::")[0].rpartition(":")[2] for handle in diffs}
    assert {"Service", "Deployment", "ConfigMap", "ClusterRoleBinding", "Namespace", "TokenRateLimitPolicy"} <= kinds


def test_the_first_up_registers_every_component_the_import_created():
    imported = import_cluster(controller_cluster())
    rendering = render(imported.config, observed=controller_cluster())
    registered = {f"{r.type}::{r.name}" for r in rendering.registrations if not r.custom}
    components = {e["name"] for e in imported.import_file["resources"] if e.get("component")}
    assert components and components <= registered


def test_without_the_server_field_ignores_the_first_up_replaces_the_services_and_the_service_ca(monkeypatch):
    monkeypatch.setattr(build, "ignore_server_populated_fields", lambda plan: None)
    diffs = round_trip()
    assert {handle: diff.replaces for handle, diff in diffs.items() if diff is not None and diff.replaced} == {
        "kubernetes:core/v1:Service::odh-ai-gateway-infra/maas-api": ("spec.clusterIP",),
        "kubernetes:core/v1:Service::openshift-ingress/payload-processing": ("spec.clusterIP",),
        "kubernetes:core/v1:ConfigMap::odh-ai-gateway-infra/openshift-service-ca.crt": ("data",),
    }


def test_the_first_diff_of_the_maas_api_service_shows_only_defaults_deleted(first_up_after_import):
    """What a reviewer sees for an adopted Service: the server's defaults and the controller's owner deleted from
    the inputs (server-side apply keeps them: Pulumi owns none of them), the program's labels and annotations."""
    diff = first_up_after_import["kubernetes:core/v1:Service::odh-ai-gateway-infra/maas-api"]
    assert diff.replaces == ()
    assert set(diff.deleted) == {
        "metadata.ownerReferences",
        "spec.internalTrafficPolicy",
        "spec.ipFamilies",
        "spec.ipFamilyPolicy",
        "spec.sessionAffinity",
    }
