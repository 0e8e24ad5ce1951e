"""The payload processor's read access to credential Secrets (issue 17): a RoleBinding to one shared Secret-reading
ClusterRole in each namespace that holds the tenant's ExternalModels, under the tenant, following the models and
the tenant's management state."""

from __future__ import annotations

import copy

from maas.config import load_config
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.tenants.platform import tenant_platform
from maas.plan.tenants.shared import shared_platform
from maas.tools.render import render
from tests.conftest import owned

GW_NS = "openshift-ingress"
CREDENTIALS = "payload-processing-credentials"
LABELS = {
    "app.kubernetes.io/component": "api",
    "app.kubernetes.io/managed-by": "pulumi",
    "app.kubernetes.io/name": "maas-api",
    "app.kubernetes.io/part-of": "models-as-a-service",
    "app.opendatahub.io/modelsasservice": "true",
    "maas.opendatahub.io/tenant-name": "x",
    "maas.opendatahub.io/tenant-namespace": "ai-tenant-x",
}


def external(name: str, namespace: str, tenant: str) -> dict:
    return {
        "name": name,
        "namespace": namespace,
        "tenant": tenant,
        "modelRef": {"kind": "ExternalModel", "name": name},
        "external": {
            "provider": "openai",
            "targetModel": name,
            "endpoint": "api.openai.com",
            "credentialRef": {"name": f"{name}-key"},
        },
    }


INTERNAL = {
    "name": "granite",
    "namespace": "x-internal",
    "tenant": "x",
    "modelRef": {"kind": "LLMInferenceService", "name": "granite"},
}
RAW = {
    "tenants": [{"name": "models-as-a-service"}, {"name": "x"}],
    "models": [
        external("gpt-4o", "shared-models", "x"),
        external("gpt-4o-mini", "shared-models", "x"),
        external("o3", "x-models", "x"),
        external("gpt-5", "shared-models", "models-as-a-service"),
        INTERNAL,
    ],
}


def bindings(raw: dict) -> dict[tuple[str, str], dict]:
    """(namespace, name) of every rendered credential RoleBinding, with its body."""
    plan = build_plan(load_config(copy.deepcopy(raw)), Observed.nothing())
    return {(o.namespace, o.name): o.body for o in plan.objects() if o.kind == "RoleBinding"}


def test_each_namespace_with_a_tenants_external_models_gets_one_binding_per_tenant():
    assert sorted(bindings(RAW)) == [
        ("shared-models", "payload-processing-credentials"),
        ("shared-models", "payload-processing-credentials-x"),
        ("x-models", "payload-processing-credentials-x"),
    ]


def test_the_binding_grants_the_secret_reader_to_the_tenants_payload_processor_in_its_namespace_only():
    assert bindings(RAW)[("x-models", "payload-processing-credentials-x")] == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": "payload-processing-credentials-x", "namespace": "x-models", "labels": LABELS},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": CREDENTIALS},
        "subjects": [{"kind": "ServiceAccount", "name": "payload-processing-x", "namespace": GW_NS}],
    }


def test_the_shared_secret_reader_reads_secrets_with_list_and_watch_and_no_resource_names():
    config = load_config({})
    reader = next(o.body for o in shared_platform(config.platform) if o.name == CREDENTIALS)
    assert (reader["kind"], reader["rules"]) == (
        "ClusterRole",
        [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get", "list", "watch"]}],
    )
    assert not [o for o in shared_platform(config.platform) if o.kind == "ClusterRoleBinding" and o.name == CREDENTIALS]


def test_a_namespace_with_only_internal_models_or_no_models_gets_nothing():
    assert not [key for key in bindings(RAW) if key[0] == "x-internal"]
    assert bindings({"tenants": [{"name": "x"}], "models": [INTERNAL]}) == {}


def test_the_binding_of_a_namespace_goes_when_its_last_external_model_leaves():
    raw = copy.deepcopy(RAW)
    raw["models"] = [m for m in raw["models"] if m["name"] != "o3"]
    assert not [key for key in bindings(raw) if key[0] == "x-models"]
    raw["models"] = [m for m in raw["models"] if m["name"] != "gpt-4o"]  # gpt-4o-mini still needs shared-models
    assert ("shared-models", "payload-processing-credentials-x") in bindings(raw)


def test_the_order_of_models_changes_nothing():
    backward = {**RAW, "models": RAW["models"][::-1]}
    assert list(bindings(RAW).items()) == list(bindings(backward).items())


def test_the_bindings_belong_to_the_tenant_and_the_cluster_role_to_the_platform():
    rendering = render(copy.deepcopy(RAW))
    tenant = owned(rendering, "Tenant", "x")
    assert ("RoleBinding", "x-models/payload-processing-credentials-x") in tenant
    assert ("RoleBinding", "shared-models/payload-processing-credentials-x") in tenant
    default = owned(rendering, "Tenant", "models-as-a-service")
    assert ("RoleBinding", "shared-models/payload-processing-credentials") in default
    assert ("ClusterRole", CREDENTIALS) in owned(rendering, "Platform", "platform")


def test_a_removed_tenant_gets_no_credential_bindings():
    raw = copy.deepcopy(RAW)
    raw["tenants"][1]["managementState"] = "Removed"
    assert sorted(bindings(raw)) == [("shared-models", "payload-processing-credentials")]


def test_an_unmanaged_tenant_keeps_its_bindings_as_it_keeps_its_payload_processor():
    raw = copy.deepcopy(RAW)
    raw["tenants"][1]["managementState"] = "Unmanaged"
    registration = owned(render(raw), "Tenant", "x")[("RoleBinding", "x-models/payload-processing-credentials-x")]
    assert registration.retain_on_delete is True


def test_bindings_are_part_of_the_tenants_payload_processing_objects():
    """So that whatever drops the payload processor (a Praxis cleanup, see test_migration) drops them too."""
    config = load_config(copy.deepcopy(RAW))
    tenant = next(t for t in config.tenants if t.name == "x")
    objects = tenant_platform(config, tenant, Observed.nothing()).objects
    assert ("RoleBinding", "x-models") in [(o.kind, o.namespace) for o in objects]


def test_the_reader_cluster_role_keeps_its_other_rules_and_its_secrets_rule_for_the_cluster_wide_cache():
    """The processor's Secret informer lists cluster-wide (rbac.py); the RoleBindings alone leave it unsynced."""
    config = load_config({})
    reader = next(o.body for o in shared_platform(config.platform) if o.name == "payload-processing-reader")
    assert [(r["apiGroups"], r["resources"]) for r in reader["rules"]] == [
        ([""], ["configmaps"]),
        ([""], ["secrets"]),
        (["maas.opendatahub.io"], ["externalmodels"]),
        (["maas.opendatahub.io"], ["externalmodels/finalizers"]),
        (["inference.opendatahub.io"], ["externalproviders", "externalmodels"]),
        (["inference.opendatahub.io"], ["externalproviders/status", "externalmodels/status"]),
        (["inference.opendatahub.io"], ["externalproviders/finalizers", "externalmodels/finalizers"]),
        ([""], ["services"]),
        (["gateway.networking.k8s.io"], ["httproutes"]),
        (["networking.istio.io"], ["serviceentries", "destinationrules"]),
    ]
