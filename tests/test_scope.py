"""`platform.scope`: the shared platform and each tenant as stacks of their own, whose union is the whole stack."""

from __future__ import annotations

import copy
import json
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maas import naming
from maas.config import ConfigError, load_config, raw_from_stack_file
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.checks.issues import plan_issues
from maas.plan.checks.quota import quota_issues
from maas.plan.desired import Desired, Owner, Plan, k8s_object
from maas.plan.scope import PLATFORM, Scopes, scopes, select_scope, tenant_scope
from maas.tools.render import Rendering, render
from tests.conftest import ROOT

ORG_STACK = ROOT / "tests" / "stacks" / "scope-org.yaml"
DEFAULT = tenant_scope(naming.DEFAULT_TENANT)
RESEARCH = tenant_scope("research")
INFRA_NAMESPACE = "Namespace:odh-ai-gateway-infra"


@pytest.fixture(scope="module")
def org_raw() -> dict:
    raw, _ = raw_from_stack_file(ORG_STACK)
    return raw


def with_scope(raw: dict, scope: str) -> dict:
    raw = copy.deepcopy(raw)
    raw["platform"] = {**raw.get("platform", {}), "scope": scope}
    return raw


def plan_of(raw: dict, scope: str = "all", observed: Observed | None = None) -> Plan:
    return build_plan(load_config(with_scope(raw, scope)), observed or Observed.nothing())


def identities(plan: Plan) -> set[str]:
    return {obj.identity for obj in plan.objects()}


# --------------------------------------------------------------------------------------------- who owns what


def test_every_owner_belongs_to_the_scope_of_its_tenant(org_raw):
    config = load_config(org_raw)
    of = Scopes(config)
    found = {key: of.of_owner(owner) for key, owner in plan_of(org_raw).owners_by_key.items()}
    assert found == {
        ("Platform", "platform"): PLATFORM,
        ("Tenant", "models-as-a-service"): DEFAULT,
        ("Tenant", "research"): RESEARCH,
        ("Tenant", "retired"): "tenant:retired",
        ("Model", "llm/granite-7b"): DEFAULT,
        ("Model", "external-models/gpt-4o"): DEFAULT,
        ("Model", "research-models/qwen-coder"): RESEARCH,
        ("Model", "research-models/claude-sonnet"): RESEARCH,
        ("AuthPolicy", "models-as-a-service/everyone"): DEFAULT,
        ("AuthPolicy", "ai-tenant-research/researchers"): RESEARCH,
        ("Subscription", "models-as-a-service/staff"): DEFAULT,
        ("Subscription", "ai-tenant-research/research"): RESEARCH,
    }
    assert scopes(config) == [PLATFORM, DEFAULT, RESEARCH, "tenant:retired"]


def test_the_default_gateways_policies_belong_to_the_default_tenant_not_the_platform(org_raw):
    """The platform's default Gateway serves the default tenant alone: its AuthPolicy selects subscriptions through
    that tenant's maas-api, so it goes with the tenant's stack."""
    gateway_policies = {
        "AuthPolicy:openshift-ingress/maas-gateway-auth",
        "TokenRateLimitPolicy:openshift-ingress/gateway-default-deny",
    }
    assert gateway_policies <= identities(plan_of(org_raw, DEFAULT))
    assert not gateway_policies & identities(plan_of(org_raw, PLATFORM))
    research = identities(plan_of(org_raw, RESEARCH))
    assert {
        "AuthPolicy:openshift-ingress/research-maas-auth",
        "TokenRateLimitPolicy:openshift-ingress/gateway-default-deny-research",
    } <= research


def test_the_platform_scope_holds_the_shared_objects_and_the_dashboard_and_nothing_of_a_tenant(org_raw):
    plan = plan_of(org_raw, PLATFORM)
    assert [owner.kind for owner in plan.owners] == ["Platform"]
    kinds = {obj.kind for obj in plan.objects()}
    assert {"ClusterRole", "ServiceAccount", "NetworkPolicy", "PersesDashboard", "PodMonitor"} <= kinds
    assert INFRA_NAMESPACE in identities(plan)
    assert not {"MaaSModelRef", "Deployment", "AuthPolicy", "TokenRateLimitPolicy"} & kinds


def test_a_tenant_scope_holds_its_models_entries_platform_and_their_status_writes(org_raw):
    plan = plan_of(org_raw, RESEARCH)
    found = identities(plan)
    assert {
        "MaaSModelRef:research-models/qwen-coder",
        "MaaSModelRef:research-models/qwen-coder/status",
        "TokenRateLimitPolicy:research-models/maas-trlp-claude-sonnet",
        "AuthPolicy:research-models/maas-auth-claude-sonnet",
        "ExternalModel:research-models/claude-sonnet",
        "MaaSSubscription:ai-tenant-research/research/status",
        "MaaSAuthPolicy:ai-tenant-research/researchers",
        "Namespace:ai-tenant-research",
        "Deployment:odh-ai-gateway-infra/maas-api-research",
        "MaasTenantConfig:ai-tenant-research/default-tenant/status",
    } <= found
    assert not any("granite" in identity or "models-as-a-service" in identity for identity in found)


def test_a_removed_tenants_scope_registers_only_its_empty_component(org_raw):
    plan = plan_of(org_raw, "tenant:retired")
    assert [(owner.kind, owner.name, owner.objects) for owner in plan.owners] == [("Tenant", "retired", [])]
    assert plan.outputs["tenants"] == {"retired": {**plan.outputs["tenants"]["retired"], "phase": "Removed"}}


def orphan_snapshot(sources: str) -> Observed:
    """A live TokenRateLimitPolicy this program created for model llm/gone, opted out by an operator."""
    annotations = {naming.CONTROLLER_MANAGED_ANNOTATION: "false", naming.SUBSCRIPTIONS_ANNOTATION: sources}
    labels = {naming.MANAGED_BY: naming.MANAGER, naming.MODEL_LABEL: "gone", naming.MODEL_NAMESPACE_LABEL: "llm"}
    body = k8s_object(
        naming.TRLP_API_VERSION, "TokenRateLimitPolicy", "maas-trlp-gone", "llm", {"limits": {}}, labels, annotations
    )
    return Observed.of([body])


def test_an_orphan_of_a_model_no_longer_configured_stays_in_the_stack_of_the_tenant_it_served(org_raw):
    """That stack holds the orphan in its state: registered anywhere else, it would be deleted there."""
    observed = orphan_snapshot("ai-tenant-research/old,ai-tenant-research/older")
    assert "TokenRateLimitPolicy:llm/maas-trlp-gone" in identities(plan_of(org_raw, RESEARCH, observed))
    assert "TokenRateLimitPolicy:llm/maas-trlp-gone" not in identities(plan_of(org_raw, DEFAULT, observed))


def test_an_orphan_whose_sources_name_no_configured_tenant_belongs_to_the_platform(org_raw):
    observed = orphan_snapshot("ai-tenant-gone/old")
    assert "TokenRateLimitPolicy:llm/maas-trlp-gone" in identities(plan_of(org_raw, PLATFORM, observed))


def test_an_owner_kind_without_a_scope_rule_is_refused(org_raw):
    with pytest.raises(ValueError, match=r"owner kind 'Gateway' has no scope; add it to maas/plan/scope\.py"):
        Scopes(load_config(org_raw)).of_owner(Owner("Gateway", "openshift-ingress/x"))


# ------------------------------------------------------------------------------------------------ outputs


def test_stack_outputs_list_only_the_scopes_entries(org_raw):
    research = plan_of(org_raw, RESEARCH).outputs
    assert sorted(research["models"]) == ["research-models/claude-sonnet", "research-models/qwen-coder"]
    assert list(research["subscriptions"]) == ["ai-tenant-research/research"]
    assert list(research["tenants"]) == ["research"]
    platform = plan_of(org_raw, PLATFORM).outputs
    assert (platform["models"], platform["subscriptions"], platform["tenants"], platform["quotaResets"]) == (
        {},
        {},
        {},
        [],
    )


def reset(subscription: str) -> dict:
    return {
        "subscription": subscription,
        "model": "llm/granite-7b",
        "oldLimit": "tokens-1-per-1m",
        "newLimit": "tokens-2-per-1m",
        "reason": "rates changed",
        "collateral": False,
        "accepted": False,
    }


def test_quota_resets_are_narrowed_to_the_scope_so_only_its_own_stop_its_stack(org_raw):
    raw = copy.deepcopy(org_raw)
    raw["platform"]["quotaResets"] = "error"
    whole = plan_of(raw)
    whole.outputs["quotaResets"] = [reset("models-as-a-service/staff"), reset("ai-tenant-research/research")]
    config = load_config(with_scope(raw, RESEARCH))
    scoped = select_scope(config, whole)
    assert scoped.outputs["quotaResets"] == [reset("ai-tenant-research/research")]
    [issue] = quota_issues(config, scoped.outputs["quotaResets"])
    assert issue.path == "maas:subscriptions (ai-tenant-research/research)"


def test_gateway_outputs_go_to_the_tenant_serving_on_the_gateway_and_unknown_outputs_to_the_platform(org_raw):
    gateways = {"openshift-ingress/maas-default-gateway": {"bytes": 1}, "openshift-ingress/research": {"bytes": 2}}
    of = Scopes(load_config(org_raw))
    outputs = {"gateways": gateways, "elsewhere": [1]}
    assert of.outputs(outputs, RESEARCH) == {"gateways": {"openshift-ingress/research": {"bytes": 2}}}
    assert of.outputs(outputs, DEFAULT) == {"gateways": {"openshift-ingress/maas-default-gateway": {"bytes": 1}}}
    assert of.outputs(outputs, PLATFORM) == {"gateways": {}, "elsewhere": [1]}


def test_scope_all_is_the_whole_plan_without_a_scope_output(org_raw):
    whole = plan_of(org_raw)
    assert select_scope(load_config(org_raw), whole) is whole
    assert "scope" not in whole.outputs


# ----------------------------------------------------------------------------------- order between the stacks


def test_a_tenant_stack_names_what_it_needs_from_the_platform_stack_without_a_warning(org_raw):
    """maas-api runs in the infra namespace, which the platform stack creates: platform first."""
    plan = plan_of(org_raw, RESEARCH)
    assert plan.outputs["scope"] == {"name": RESEARCH, "dependsOn": {PLATFORM: [INFRA_NAMESPACE]}}
    assert not [w for w in plan.warnings if "maas:platform.scope" in w]
    assert plan.notes[-1] == (
        "maas:platform.scope tenant:research: this stack registers 42 of the whole configuration's 103 objects and "
        "status writes; apply it after the stack of platform (Namespace:odh-ai-gateway-infra)"
    )
    platform = plan_of(org_raw, PLATFORM)
    assert platform.outputs["scope"] == {"name": PLATFORM, "dependsOn": {}}
    assert platform.notes[-1].endswith(
        "19 of the whole configuration's 103 objects and status writes; apply it before the tenant stacks"
    )


def test_a_dependency_on_an_object_of_another_scope_is_dropped_and_named(org_raw):
    whole = plan_of(org_raw)
    tenant = whole.owner("Tenant", "research")
    service_account = "ServiceAccount:odh-ai-gateway-infra/maas-api"
    tenant.objects = [
        replace(obj, depends_on=(*obj.depends_on, service_account)) if obj.kind == "Deployment" else obj
        for obj in tenant.objects
    ]
    scoped = select_scope(load_config(with_scope(org_raw, RESEARCH)), whole)
    assert scoped.outputs["scope"]["dependsOn"] == {PLATFORM: sorted([INFRA_NAMESPACE, service_account])}
    assert not [obj for obj in scoped.objects() if service_account in obj.depends_on]


def test_a_model_in_another_tenants_namespace_warns_that_those_stacks_must_run_in_order(org_raw):
    raw = copy.deepcopy(org_raw)
    raw["models"][0]["namespace"] = "ai-tenant-research"  # granite-7b, of the default tenant
    for entry in (*raw["authPolicies"], *raw["subscriptions"]):
        for ref in entry["modelRefs"]:
            if ref["name"] == "granite-7b":
                ref["namespace"] = "ai-tenant-research"
    plan = plan_of(raw, DEFAULT)
    assert plan.outputs["scope"]["dependsOn"][RESEARCH] == ["Namespace:ai-tenant-research"]
    [warning] = [w for w in plan.warnings if w.startswith("maas:platform.scope")]
    assert warning.startswith(
        "maas:platform.scope tenant:models-as-a-service: AuthPolicy:ai-tenant-research/maas-auth-granite-7b, "
    )
    assert warning.endswith(
        "need Namespace:ai-tenant-research of scope tenant:research, so the stack of tenant:research must be up "
        "before this one and the tenant stacks cannot all run at once; apply tenant:research first, or move these "
        "objects out of that tenant's namespace"
    )


# ------------------------------------------------------------------------------- checks on the whole plan


def test_an_identity_collision_between_two_scopes_stops_every_scoped_stack(org_raw):
    """Each stack alone would register one of the two objects and see nothing wrong."""
    whole = plan_of(org_raw)
    clash = Desired(k8s_object("v1", "Service", "maas-api", "odh-ai-gateway-infra"))
    whole.add("Model", "research-models/qwen-coder", clash)
    for scope in (PLATFORM, RESEARCH, DEFAULT):
        config = load_config(with_scope(org_raw, scope))
        issues = [str(issue) for issue in plan_issues(config, select_scope(config, replace(whole)), Observed.nothing())]
        assert any(
            "maas:tenants (models-as-a-service): renders Service odh-ai-gateway-infra/maas-api, which maas:models "
            "(research-models/qwen-coder) renders too" in issue
            for issue in issues
        ), issues


# ------------------------------------------------------------------ property: the scopes partition the whole


TENANTS = [naming.DEFAULT_TENANT, "a", "b", "c"]


@st.composite
def organisations(draw) -> dict:
    names = draw(st.lists(st.sampled_from(TENANTS), min_size=2, max_size=4, unique=True))
    states = st.sampled_from(["Managed", "Managed", "Removed", "Unmanaged"])
    tenants = [{"name": name, "managementState": draw(states)} for name in names]
    namespaces = ["llm", "ext", *(naming.tenant_namespace(name) for name in names)]
    models = [draw(model(index, names, namespaces)) for index in range(draw(st.integers(1, 6)))]
    entries = {"subscriptions": [], "authPolicies": []}
    for index, name in enumerate(names):
        own = [{"name": m["name"], "namespace": m["namespace"]} for m in models if m["tenant"] == name]
        if not own or not draw(st.booleans()):
            continue
        namespace = naming.tenant_namespace(name)
        refs = draw(st.lists(st.sampled_from(own), min_size=1, unique_by=lambda ref: ref["name"]))
        limits = [{**ref, "tokenRateLimits": [{"limit": draw(st.integers(1, 3)), "window": "1m"}]} for ref in refs]
        subscription = {"name": f"s{index}", "namespace": namespace, "owner": {"groups": [{"name": "g"}]}}
        entries["subscriptions"].append({**subscription, "modelRefs": limits})
        entries["authPolicies"].append(
            {"name": f"p{index}", "namespace": namespace, "subjects": {"users": ["u"]}, "modelRefs": refs}
        )
    platform = {
        "usageMetricsDashboard": draw(st.booleans()),
        "controllerMode": draw(st.sampled_from(["absent", "coexist"])),
        "flavor": draw(st.sampled_from(["openshift", "xks"])),
    }
    return {"platform": platform, "tenants": tenants, "models": models, **entries}


@st.composite
def model(draw, index: int, tenants: list[str], namespaces: list[str]) -> dict:
    entry = {
        "name": f"m{index}",
        "namespace": draw(st.sampled_from(namespaces)),
        "tenant": draw(st.sampled_from(tenants)),
    }
    if not draw(st.booleans()):
        return {**entry, "modelRef": {"kind": "LLMInferenceService", "name": f"m{index}"}}
    external = {
        "provider": "openai",
        "targetModel": f"t{index}",
        "endpoint": "api.example.com",
        "credentialRef": {"name": "k"},
    }
    api_format = draw(st.sampled_from(["openai-chat", "messages"]))
    return {
        **entry,
        "modelRef": {"kind": "ExternalModel", "name": f"m{index}"},
        "external": {**external, "apiFormat": api_format},
    }


def text(obj: Desired) -> str:
    return json.dumps(obj.body, sort_keys=True)


def labelled_scope(obj: Desired, raw: dict) -> str | None:
    """The scope an object's own labels name: its tenant's, or that of the tenant serving its model."""
    labels = obj.body["metadata"].get("labels", {})
    if naming.TENANT_NAME_LABEL in labels:
        return tenant_scope(labels[naming.TENANT_NAME_LABEL])
    if naming.MODEL_LABEL in labels:
        key = naming.qualified(labels[naming.MODEL_NAMESPACE_LABEL], labels[naming.MODEL_LABEL])
        return tenant_scope(load_config(raw).models_by_key[key].tenant)
    return None


def assert_scopes_partition_the_whole(raw: dict) -> None:
    whole = plan_of(raw)
    whole_identities = identities(whole)
    union: dict[str, Desired] = {}
    owners: dict[tuple[str, str], Owner] = {}
    outputs: dict = {}
    needs: set[str] = set()
    for scope in scopes(load_config(raw)):
        scoped = plan_of(raw, scope)
        scoped_identities = identities(scoped)
        assert scoped.warnings[: len(whole.warnings)] == whole.warnings
        assert not set(owners) & set(scoped.owners_by_key), f"an owner in two scopes ({scope})"
        owners.update(scoped.owners_by_key)
        for obj in scoped.objects():
            assert obj.identity not in union, f"{obj.identity} in two scopes"
            assert labelled_scope(obj, raw) in (None, scope), f"{obj.identity} leaks into {scope}"
            target = obj.identity.removesuffix("/status")  # a status write goes with the object it writes
            assert target not in whole_identities or target in scoped_identities
            union[obj.identity] = obj
        assert scoped.notes[: len(whole.notes)] == whole.notes
        assert scoped.notes[len(whole.notes)].startswith(f"maas:platform.scope {scope}: this stack registers ")
        for name, value in scoped.outputs.items():
            if name != "scope":
                merged = outputs.setdefault(name, type(value)())
                merged.update(value) if isinstance(value, dict) else merged.extend(value)
        depends_on = scoped.outputs["scope"]["dependsOn"]
        needs.update(*depends_on.values())
        for other in set(depends_on) - {PLATFORM}:  # the stack order cannot serve it: said so
            assert any(f"of scope {other}, so" in warning for warning in scoped.warnings)
    assert sorted(union) == sorted(whole_identities)
    for obj in whole.objects():
        mine = union[obj.identity]
        assert text(mine) == text(obj)
        assert replace(mine, depends_on=()) == replace(obj, depends_on=())
        assert set(mine.depends_on) <= set(obj.depends_on)
        assert set(obj.depends_on) - set(mine.depends_on) <= needs
    assert {key: owner.outputs for key, owner in owners.items()} == {
        key: owner.outputs for key, owner in whole.owners_by_key.items()
    }
    assert json.dumps(outputs, sort_keys=True) == json.dumps(whole.outputs, sort_keys=True)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(organisations())
def test_property_the_scoped_plans_together_are_the_whole_plan_object_for_object(raw):
    try:
        load_config(raw)
    except ConfigError:
        return
    assert_scopes_partition_the_whole(raw)


def test_the_organisation_stack_splits_into_its_scopes(org_raw):
    assert_scopes_partition_the_whole(org_raw)


# --------------------------------------------------------------------------------- through the real render


def rendered(raw: dict, scope: str) -> tuple[Rendering, dict]:
    rendering = render(with_scope(raw, scope), stack="org")
    return rendering, rendering.stack_outputs


def test_the_scoped_renders_together_register_the_whole_render_byte_for_byte(org_raw):
    whole, whole_outputs = rendered(org_raw, "all")
    objects: list[dict] = []
    statuses: list[dict] = []
    tenants: dict = {}
    for scope in scopes(load_config(org_raw)):
        rendering, outputs = rendered(org_raw, scope)
        objects += rendering.objects()
        statuses += rendering.statuses()
        tenants.update(outputs["tenants"])
        assert outputs["scope"]["name"] == scope
    key = lambda body: json.dumps(body, sort_keys=True)  # noqa: E731
    assert sorted(map(key, objects)) == sorted(map(key, whole.objects()))
    assert sorted(map(key, statuses)) == sorted(map(key, whole.statuses()))
    assert len(set(map(key, objects))) == len(objects)
    assert tenants == whole_outputs["tenants"]
    assert "scope" not in whole_outputs
