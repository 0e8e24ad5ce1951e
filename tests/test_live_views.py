"""Issue 18, live state read through typed views: each view on a concrete valid object, and on wrong shapes (read as
absent, reported once as an unreadable live object, never a crash)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from maas import naming
from maas.config import load_config, raw_from_stack_file
from maas.observe import Observed
from maas.observe.policy_views import (
    Limit,
    LiveAuthPolicy,
    LiveTokenRateLimitPolicy,
    TargetRef,
    predicates,
    proper_of,
)
from maas.observe.views import (
    Condition,
    Listener,
    LiveDeployment,
    LiveGateway,
    LiveInferenceService,
    LiveRoute,
    LiveSubscription,
    LiveTenantConfig,
    ParentRef,
    RouteMatch,
    ServiceAddress,
    view_of,
)
from maas.plan.build import build_plan
from tests.conftest import DEV_STACK
from tests.fake_kube import kserve_route, llm_inference_service, maas_api_deployment, platform_gateway


def subscription() -> dict[str, Any]:
    annotations = {naming.RATE_LIMIT_IDENTITY_ANNOTATION: "short"}
    return {
        "apiVersion": naming.MAAS_API_VERSION,
        "kind": "MaaSSubscription",
        "metadata": {"name": "team-a", "namespace": "models-as-a-service", "annotations": annotations},
        "status": {"rateLimitIdentity": "legacy"},
    }


def tenant_config() -> dict[str, Any]:
    return {
        "apiVersion": naming.MAAS_API_VERSION,
        "kind": "MaasTenantConfig",
        "metadata": {"name": "default-tenant", "namespace": "t", "annotations": {"a": "true"}},
        "spec": {"apiTranslation": {"enabled": True}},
    }


def observed(*objects: dict[str, Any]) -> Observed:
    return Observed.of(objects)


def where(obj: dict[str, Any]) -> tuple[str, str]:
    return obj["metadata"]["namespace"], obj["metadata"]["name"]


def test_live_gateway_view_reads_listeners_class_uid_and_conditions():
    gateway = platform_gateway()
    view = observed(gateway).view(LiveGateway, *where(gateway))
    assert view is not None and view.class_name == gateway["spec"]["gatewayClassName"]
    assert view.listeners == tuple(
        Listener(item["name"], item.get("hostname"), i) for i, item in enumerate(gateway["spec"]["listeners"])
    )
    assert [c.type for c in view.conditions] == [c["type"] for c in gateway["status"]["conditions"]]
    assert view.meta.uid == gateway["metadata"].get("uid")


def test_live_route_view_reads_hostnames_parent_refs_and_rule_matches():
    route = kserve_route("llm", "granite-7b-instruct")
    view = observed(route).view(LiveRoute, *where(route))
    assert view is not None and view.hostnames == tuple(route["spec"].get("hostnames", ()))
    assert view.parent_refs[0] == ParentRef(
        *(route["spec"]["parentRefs"][0].get(k) for k in ("group", "kind", "namespace", "name", "sectionName"))
    )
    first = route["spec"]["rules"][0]["matches"][0]
    assert view.rules[0].matches[0] == RouteMatch(
        first["path"]["type"], first["path"]["value"], first.get("method"), (), ()
    )


def test_live_inference_service_view_reads_the_served_model_name():
    service = llm_inference_service("llm", "granite-7b-instruct", ready=True)
    service["spec"]["model"] = {"name": "ibm/granite"}
    assert observed(service).view(LiveInferenceService, *where(service)).model_name == "ibm/granite"


def test_live_subscription_view_reads_the_identity_annotation_and_status():
    view = observed(subscription()).view(LiveSubscription, *where(subscription()))
    assert view.meta.annotation(naming.RATE_LIMIT_IDENTITY_ANNOTATION) == "short"
    assert view.status_identity == "legacy"


def test_live_tenant_config_view_reads_annotations_and_api_translation():
    view = observed(tenant_config()).view(LiveTenantConfig, *where(tenant_config()))
    assert view.meta.annotations == {"a": "true"} and view.api_translation is True


def test_live_deployment_view_reads_generations_and_replicas():
    deployment = maas_api_deployment("maas-api", available=True)
    view = observed(deployment).view(LiveDeployment, *where(deployment))
    assert view.available == view.wanted == deployment["spec"].get("replicas", 1)
    assert view.observed_generation >= view.generation


def test_a_view_of_another_kind_or_of_an_absent_object_is_none():
    gateway = platform_gateway()
    snapshot = observed(gateway)
    assert snapshot.view(LiveRoute, *where(gateway)) is None
    assert snapshot.view(LiveGateway, "elsewhere", "nothing") is None


def test_well_formed_objects_are_not_unreadable():
    objects = [platform_gateway(), kserve_route("llm", "granite-7b-instruct"), subscription(), tenant_config()]
    assert observed(*objects).unreadable() == []


WRONG_SHAPES = [
    ("spec.listeners", "x", "spec.listeners is not a list"),
    ("spec.listeners", ["x"], "spec.listeners[0] is not a mapping"),
    ("spec.gatewayClassName", 7, "spec.gatewayClassName is not a string"),
    ("status", "x", "status is not a mapping"),
    ("metadata.uid", ["u"], "metadata.uid is not a string"),
]


def with_field(obj: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(obj)
    *parents, last = path.split(".")
    place = changed
    for key in parents:
        place = place.setdefault(key, {})
    place[last] = value
    return changed


@pytest.mark.parametrize(("path", "value", "said"), WRONG_SHAPES)
def test_a_wrong_shape_reads_as_absent_and_is_reported_once(path, value, said):
    gateway = with_field(platform_gateway(), path, value)
    snapshot = observed(gateway)
    view = snapshot.view(LiveGateway, *where(gateway))
    assert view is not None
    assert snapshot.view(LiveGateway, *where(gateway)) is view  # parsed once
    namespace, name = where(gateway)
    assert snapshot.unreadable() == [
        f"unreadable live object: Gateway {namespace}/{name}: {said}; those fields are read as absent"
    ]


def test_a_wrong_shape_in_a_route_keeps_its_other_entries():
    route = kserve_route("llm", "granite-7b-instruct")
    route["spec"]["hostnames"] = ["a.example.com", 3]
    route["spec"]["rules"][0]["matches"] = ["x", {"path": {"type": 1, "value": "/v1"}}]
    snapshot = observed(route)
    view = snapshot.view(LiveRoute, *where(route))
    assert view.hostnames == ("a.example.com",)
    assert view.rules[0].matches == (RouteMatch(None, "/v1", None, (), ()),)
    problems = snapshot.unreadable()[0]
    assert "spec.hostnames[1] is not a string" in problems
    assert "spec.rules[0].matches[0] is not a mapping" in problems
    assert "spec.rules[0].matches[1].path.type is not a string" in problems


def test_wrong_conditions_and_counts_never_crash():
    gateway = with_field(platform_gateway(), "status.conditions", [{"type": 1, "status": ["True"]}, 5])
    deployment = with_field(maas_api_deployment("maas-api", available=True), "status.availableReplicas", "3")
    snapshot = observed(gateway, deployment)
    assert snapshot.view(LiveGateway, *where(gateway)).conditions == (Condition(None, None, None, None),)
    assert snapshot.view(LiveDeployment, *where(deployment)).available == 0
    assert len(snapshot.unreadable()) == 2


def test_the_plan_reports_each_unreadable_live_object_once():
    config = load_config(raw_from_stack_file(DEV_STACK)[0])
    gateway = with_field(platform_gateway(), "spec.listeners", "x")
    plan = build_plan(config, observed(gateway))
    assert len([w for w in plan.warnings if w.startswith("unreadable live object: Gateway")]) == 1


def test_live_inference_service_view_reads_its_status_conditions_url_and_addresses():
    service = llm_inference_service("llm", "granite-7b-instruct", ready=True)
    service["status"]["url"] = "https://u.example.com"
    service["status"]["addresses"] = ["x", {"name": "gateway-external", "url": "https://a", "models": [{"name": "m"}]}]
    view = observed(service).view(LiveInferenceService, *where(service))
    assert [c.type for c in view.conditions] == [c["type"] for c in service["status"]["conditions"]]
    assert view.url == "https://u.example.com"
    assert view.addresses == (ServiceAddress(1, "gateway-external", "https://a", "m"),)  # keeps its position


def test_live_token_rate_limit_policy_view_reads_target_and_limits_in_name_order():
    when = [{"predicate": "auth.identity.sub == 'a'"}]
    limits = {
        "b": {"when": when, "rates": [{"limit": 10, "window": "1m"}, "x"], "counters": [{"expression": "e"}]},
        "a": {"when": "nope", "rates": [{"limit": "10", "window": "1m"}]},
    }
    policy = {
        "apiVersion": naming.TRLP_API_VERSION,
        "kind": "TokenRateLimitPolicy",
        "metadata": {"name": "p", "namespace": "llm"},
        "spec": {"targetRef": {"kind": "HTTPRoute", "name": "r"}, "limits": limits},
    }
    snapshot = observed(policy)
    view = snapshot.view(LiveTokenRateLimitPolicy, "llm", "p")
    assert view.target == TargetRef("HTTPRoute", "r", None)
    assert view.limits == (
        ("a", Limit((), ((-1, "1m"),), ())),
        ("b", Limit(("auth.identity.sub == 'a'",), ((10, "1m"),), ("e",))),
    )
    assert "spec.limits.a.when is not a list" in snapshot.unreadable()[0]


def test_live_auth_policy_view_reads_authentications_and_userid_in_either_layout():
    userid = {"userid": {"expression": "auth.identity.sub"}}
    properties = {"response": {"success": {"filters": {"identity": {"json": {"properties": userid}}}}}}
    rules = {"authentication": {"oidc-identities": {}}, **properties}
    for spec in ({"defaults": {"rules": rules}}, {"rules": rules}):
        body = {"kind": "AuthPolicy", "metadata": {"name": "g", "namespace": "gw"}, "spec": spec}
        view = view_of(LiveAuthPolicy, body)
        assert (view.authentications, view.userid) == (("oidc-identities",), "auth.identity.sub")


def test_predicates_skip_entries_without_a_text_predicate():
    assert predicates([{"predicate": "a"}, "x", {"predicate": 1}, {"predicate": "b"}]) == ["a", "b"]
    assert predicates("x") == [] and predicates(None) == []


def test_proper_spec_is_defaults_else_overrides_else_the_spec_with_rules_verbatim():
    limit = {"rates": [{"limit": 1, "window": "1m"}]}
    assert proper_of({"defaults": {}, "overrides": {"limits": {"a": limit}}}).limits == {}  # empty defaults win
    overriding = proper_of({"overrides": {"limits": {"a": limit}, "strategy": "merge", "when": [{"predicate": "p"}]}})
    assert (overriding.overrides, overriding.strategy, overriding.limits) == (True, "merge", {"a": limit})
    assert overriding.when == ({"predicate": "p"},)
    auth = proper_of({"rules": {"authentication": {"k": {"x": 1}}, "response": {"unauthorized": {"code": 403}}}})
    assert auth.sections["authentication"] == {"k": {"x": 1}} and auth.denials == {"unauthorized": {"code": 403}}


@pytest.mark.parametrize("spec", ["x", ["x"], {"defaults": "x", "rules": "x", "when": "x"}, None])
def test_a_proper_spec_of_any_shape_reads_as_no_rules_never_a_crash(spec):
    proper = proper_of(spec)
    assert (proper.limits, proper.patterns, proper.when, proper.denials) == ({}, {}, (), {})
