"""Issue 22 part 2: subscription `inferencePriority` for llm-d flow control.

InferenceObjective names, bodies and owners; the per-model `flowControlStatuses` states upstream publishes on
observed pools; the four scheduling headers of the gateway AuthPolicy, evaluated with a real CEL engine on the
inputs upstream's `maasauthpolicy_flowcontrol_headers_test.go` uses; validation against the vendored llm-d CRD.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib

import pytest

from maas import naming
from maas.config import ConfigError, load_config
from maas.crdschema import validate_all
from maas.observe import Observed, Scope
from maas.observe.views import LiveInferenceService, PoolRef, parse
from maas.plan.build import build_plan
from maas.plan.checks.selfcheck import check_plan
from maas.plan.gateway.budget import gateway_budgets
from maas.plan.policies import gateway_auth
from maas.plan.readiness import NOT_AWAITED
from maas.tools import cel
from tests.fake_kube import kserve_route, llm_inference_service, platform_gateway
from tests.test_config import EXTERNAL_GPT as EXTERNAL

LISTED = [Scope("LLMInferenceService", "llm"), Scope("HTTPRoute", "llm"), Scope("Gateway", "openshift-ingress")]


# ------------------------------------------------------------------------- upstream's naming rule, independently


def kmeta_child_name(parent: str, suffix: str) -> str:
    """knative.dev/pkg `kmeta.ChildName` (kmeta/names.go), transcribed branch for branch."""
    longest, head = 63, 63 - 32
    n = parent
    if len(parent) > longest - len(suffix):
        if head - len(suffix) <= 0:
            digest = hashlib.md5((parent + suffix).encode()).hexdigest()
            ret = parent[:head] + digest
            if longest - len(ret) > 0:
                ret += suffix[: longest - len(ret)]
            while not ret[-1].isalnum():  # makeValidName
                ret = ret[:-1]
            return ret
        n = parent[: head - len(suffix)] + hashlib.md5(parent.encode()).hexdigest()
    return n + suffix


def upstream_objective_name(tenant: str, sub_ns: str, sub: str, pool_ns: str, pool: str) -> str:
    """maas-controller `inferenceObjectiveName` at 1cd64555: identity joined with NUL, sha256 hex cut to 10."""
    identity = "\x00".join([tenant, sub_ns, sub, pool_ns, pool])
    digest = hashlib.sha256(identity.encode()).hexdigest()[:10]
    return kmeta_child_name("-".join(["maas", tenant, sub, pool]), "-" + digest)


# ---------------------------------------------------------------------------------------------------- fixtures


def service(name: str, pool: str | None = "pool-a", ready: bool = True, **router) -> dict:
    """A ready LLMInferenceService in `llm` whose scheduler reports `pool` (KServe leaves the namespace out)."""
    body = llm_inference_service("llm", name, ready=ready)
    if pool is not None:
        router["scheduler"] = {
            "inferencePool": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": pool}
        }
    if router:
        body["status"]["router"] = router
    return body


def model(name: str, backend: str | None = None) -> dict:
    return {"name": name, "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": backend or name}}


def stack(priority: int | None = 10, refs=("granite", "llama"), models=None, **subscription) -> dict:
    entry = {
        "name": "gold",
        "owner": {"groups": [{"name": "gold-users"}]},
        "modelRefs": [{"name": r, "namespace": "ext" if r == "gpt" else "llm", "unlimited": True} for r in refs],
        **subscription,
    }
    if priority is not None:
        entry["inferencePriority"] = priority
    return {
        "models": models if models is not None else [model("granite"), model("llama"), EXTERNAL],
        "subscriptions": [entry],
    }


def cluster(*objects, **crds) -> Observed:
    routes = [kserve_route("llm", obj["metadata"]["name"]) for obj in objects if obj["kind"] == "LLMInferenceService"]
    return Observed.of([*objects, *routes, platform_gateway()], listed=LISTED, crds=crds)


def render(raw: dict, observed: Observed):
    plan = build_plan(load_config(raw), observed)
    objectives = [o for o in plan.objects() if o.kind == "InferenceObjective"]
    return plan, objectives


def flow_statuses(plan) -> dict[str, dict]:
    [write] = [o for o in plan.objects() if o.kind == "MaaSSubscription" and o.subresource == "status"]
    return {entry["name"]: entry for entry in write.body["status"].get("flowControlStatuses", [])}


# ---------------------------------------------------------------------------------------------------- naming


@pytest.mark.parametrize(
    ("tenant", "sub_ns", "sub", "pool"),
    [
        ("models-as-a-service", "models-as-a-service", "gold", "pool-a"),
        ("acme", "ai-tenant-acme", "premium", "granite-inference-pool"),
        ("a" * 41, "ai-tenant-" + "a" * 41, "s" * 63, "p" * 63),  # truncated: ChildName's md5 branch
        ("t", "ai-tenant-t", "x" * 30, "y" * 17),  # parent of exactly 52 characters: still unhashed
        ("t", "ai-tenant-t", "x" * 30, "y" * 18),  # 53: hashed
    ],
)
def test_objective_names_follow_upstreams_naming_function(tenant, sub_ns, sub, pool):
    expected = upstream_objective_name(tenant, sub_ns, sub, "llm", pool)
    assert naming.inference_objective_name(tenant, (sub_ns, sub), ("llm", pool)) == expected
    assert len(expected) <= 63 and expected.startswith("maas-") and expected[-11] == "-"


def test_rendered_objectives_carry_upstreams_names():
    plan, objectives = render(stack(), cluster(service("granite"), service("llama", pool="pool-b")))
    names = sorted(o.name for o in objectives)
    expected = sorted(
        upstream_objective_name("models-as-a-service", "models-as-a-service", "gold", "llm", pool)
        for pool in ("pool-a", "pool-b")
    )
    assert names == expected
    assert {e["objectiveName"] for e in flow_statuses(plan).values() if "objectiveName" in e} == set(expected)


def test_the_name_separates_identities_upstream_separates():
    """Tenant `a-b` + subscription `c` and tenant `a` + subscription `b-c` share a readable part, not a name."""
    first = naming.inference_objective_name("a-b", ("ai-tenant-a-b", "c"), ("llm", "p"))
    second = naming.inference_objective_name("a", ("ai-tenant-a", "b-c"), ("llm", "p"))
    assert first[:-10] == second[:-10] and first != second


# ---------------------------------------------------------------------------------------------------- objectives


def test_one_objective_per_distinct_pool_owned_by_the_first_model():
    plan, objectives = render(stack(priority=7), cluster(service("granite"), service("llama")))
    [objective] = objectives
    assert objective.body == {
        "apiVersion": "llm-d.ai/v1alpha2",
        "kind": "InferenceObjective",
        "metadata": {
            "name": upstream_objective_name("models-as-a-service", "models-as-a-service", "gold", "llm", "pool-a"),
            "namespace": "llm",
            "labels": {
                "app.kubernetes.io/managed-by": "pulumi",
                "app.kubernetes.io/part-of": "maas-subscription",
                "app.kubernetes.io/component": "inference-objective",
                "maas.opendatahub.io/subscription-namespace": "models-as-a-service",
                "maas.opendatahub.io/tenant-name": "models-as-a-service",
                "maas.opendatahub.io/tenant-namespace": "models-as-a-service",
            },
            "annotations": {
                "maas.opendatahub.io/subscription-name": "gold",
                "maas.opendatahub.io/tenant-name": "models-as-a-service",
                "pulumi.com/skipAwait": "true",
            },
        },
        "spec": {
            "priority": 7,
            "poolRef": {"group": "inference.networking.k8s.io", "kind": "InferencePool", "name": "pool-a"},
        },
    }
    owner = next(o for o in plan.owners if any(obj is objective for obj in o.objects))
    assert (owner.kind, owner.name) == ("Model", "llm/granite")
    statuses = flow_statuses(plan)
    assert statuses["granite"]["objectiveName"] == statuses["llama"]["objectiveName"] == objective.name


@pytest.mark.parametrize("priority", [0, -10, 2**31 - 1, -(2**31)])
def test_an_explicit_priority_including_zero_creates_the_objective(priority):
    plan, [objective] = render(stack(priority=priority, refs=("granite",)), cluster(service("granite")))
    assert objective.body["spec"]["priority"] == priority
    assert flow_statuses(plan)["granite"]["state"] == "Pending"


def test_unset_priority_publishes_nothing_and_creates_no_objective():
    """Upstream would publish NotRequired entries; without a priority this program publishes none (docs)."""
    plan, objectives = render(stack(priority=None, refs=("granite",)), cluster(service("granite")))
    assert objectives == []
    assert flow_statuses(plan) == {}


def test_a_pool_without_group_and_kind_gets_upstreams_defaults():
    live = service("granite", pool=None)
    live["status"]["router"] = {"scheduler": {"inferencePool": {"name": "bare", "group": ""}}}
    _, [objective] = render(stack(refs=("granite",)), cluster(live))
    assert objective.body["spec"]["poolRef"] == {
        "group": "inference.networking.k8s.io",
        "kind": "InferencePool",
        "name": "bare",
    }


def test_the_subscription_status_waits_for_its_objectives():
    plan, [objective] = render(stack(refs=("granite",)), cluster(service("granite")))
    [write] = [o for o in plan.objects() if o.kind == "MaaSSubscription" and o.subresource == "status"]
    assert objective.identity in write.depends_on


def test_objectives_validate_against_the_vendored_crd_and_skip_await():
    plan, objectives = render(stack(priority=-3), cluster(service("granite"), service("llama", pool="pool-b")))
    assert len(objectives) == 2
    assert validate_all([o.body for o in objectives]) == []
    assert check_plan(plan) == []
    assert "InferenceObjective" in NOT_AWAITED


def test_the_crd_rejects_a_priority_that_is_not_an_integer():
    _, [objective] = render(stack(refs=("granite",)), cluster(service("granite")))
    broken = copy.deepcopy(objective.body)
    broken["spec"]["priority"] = "high"
    assert validate_all([broken]) != []


def test_output_does_not_depend_on_configuration_order():
    observed = cluster(service("granite"), service("llama", pool="pool-b"))
    raw = stack(refs=("llama", "gpt", "granite"))
    reordered = stack(refs=("granite", "llama", "gpt"), models=[EXTERNAL, model("llama"), model("granite")])
    one, two = (build_plan(load_config(r), observed) for r in (raw, reordered))
    assert [o.body for o in one.objects()] == [o.body for o in two.objects()]


# ------------------------------------------------------------------------------------- states on observed pools


def split_group(stopped: bool) -> dict:
    members = [{"name": "granite", "weight": 90}, {"name": "granite-canary", "weight": 10, "stopped": stopped}]
    return {"group": {"name": "canary", "members": members}}


@pytest.mark.parametrize(
    ("live", "state", "message"),
    [
        (service("granite", pool=None), "NotApplicable", "LLMInferenceService llm/granite is not served through an"),
        (service("granite", pool=None, ready=False), "Pending", "waiting for LLMInferenceService llm/granite to"),
        (
            service("granite", pool="pool-a", **split_group(stopped=False)),
            "Unsupported",
            "LLMInferenceService llm/granite splits traffic",
        ),
        (None, "Pending", "LLMInferenceService llm/granite not found"),
    ],
)
def test_models_without_a_single_pool_report_why_and_carry_no_objective(live, state, message):
    plan, objectives = render(stack(refs=("granite",)), cluster(*([live] if live else [])))
    entry = flow_statuses(plan)["granite"]
    assert (entry["state"], entry["message"].startswith(message)) == (state, True)
    assert "objectiveName" not in entry and "inferencePool" not in entry and objectives == []


def test_a_stopped_group_member_leaves_a_single_pool():
    _, [objective] = render(stack(refs=("granite",)), cluster(service("granite", **split_group(stopped=True))))
    assert objective.body["spec"]["poolRef"]["name"] == "pool-a"


def test_an_external_model_is_not_applicable():
    plan, objectives = render(stack(refs=("gpt",)), cluster())
    entry = flow_statuses(plan)["gpt"]
    assert (entry["state"], entry["message"]) == (
        "NotApplicable",
        "model kind ExternalModel is not served through an inference scheduler",
    )
    assert objectives == []


def test_a_pool_in_another_namespace_is_unsupported_with_a_warning_and_the_subscription_stays_active():
    live = service("granite")
    live["status"]["router"]["scheduler"]["inferencePool"]["namespace"] = "shared-pools"
    plan, objectives = render(stack(refs=("granite", "llama")), cluster(live, service("llama")))
    entry = flow_statuses(plan)["granite"]
    assert entry["state"] == "Unsupported"
    assert entry["message"] == "InferencePool shared-pools/pool-a is not in the LLMInferenceService namespace llm"
    assert [o.name for o in objectives] == [flow_statuses(plan)["llama"]["objectiveName"]]
    warning = [w for w in plan.warnings if "inferencePriority is not applied to model llm/granite" in w]
    assert len(warning) == 1
    [write] = [o for o in plan.objects() if o.kind == "MaaSSubscription" and o.subresource == "status"]
    assert write.body["status"]["phase"] == "Active"


def test_a_route_off_the_tenants_gateway_is_unsupported():
    live = service("granite")
    route = kserve_route("llm", "granite")
    route["spec"]["parentRefs"] = [{"name": "other-gateway", "namespace": "openshift-ingress"}]
    observed = Observed.of([live, route, platform_gateway()], listed=LISTED)
    plan, objectives = render(stack(refs=("granite",)), observed)
    entry = flow_statuses(plan)["granite"]
    assert entry["state"] == "Unsupported" and "does not reference the tenant's Gateway" in entry["message"]
    assert objectives == []


def test_an_unsupported_pool_without_priority_is_neither_published_nor_warned():
    live = service("granite", **split_group(stopped=False))
    plan, _ = render(stack(priority=None, refs=("granite",)), cluster(live))
    assert flow_statuses(plan) == {}
    assert not [w for w in plan.warnings if "inferencePriority" in w]


def test_an_observation_free_render_is_pending_and_renders_no_objective():
    plan, objectives = render(stack(refs=("granite", "gpt")), Observed.nothing())
    statuses = flow_statuses(plan)
    assert (statuses["granite"]["state"], statuses["granite"]["message"]) == (
        "Pending",
        "LLMInferenceService llm/granite was not observed",
    )
    assert statuses["gpt"]["state"] == "NotApplicable"
    assert objectives == []


def test_without_the_inference_objective_api_models_fail_and_nothing_is_created():
    plan, objectives = render(stack(refs=("granite",)), cluster(service("granite"), InferenceObjective=False))
    entry = flow_statuses(plan)["granite"]
    assert entry["state"] == "Failed" and "inferenceobjectives.llm-d.ai" in entry["message"]
    assert "objectiveName" in entry and objectives == []
    assert [w for w in plan.warnings if "does not serve llm-d.ai/v1alpha2 InferenceObjective" in w]


def test_a_subscription_whose_model_shares_nothing_keeps_statuses_in_model_order():
    plan, _ = render(stack(refs=("llama", "granite", "gpt")), cluster(service("granite"), service("llama")))
    [write] = [o for o in plan.objects() if o.kind == "MaaSSubscription" and o.subresource == "status"]
    order = [(e["namespace"], e["name"]) for e in write.body["status"]["flowControlStatuses"]]
    assert order == [("ext", "gpt"), ("llm", "granite"), ("llm", "llama")]


# ------------------------------------------------------------------------------------------ the observed view


def test_the_view_reads_the_scheduler_pool_and_the_active_group_members():
    view = parse("LLMInferenceService", service("granite", **split_group(stopped=True))).view
    assert isinstance(view, LiveInferenceService)
    assert view.pool == PoolRef("inference.networking.k8s.io", "InferencePool", "pool-a", None)
    assert (view.group, view.active_members) == ("canary", 1)


def test_a_pool_of_the_wrong_shape_reads_as_absent_and_is_reported():
    live = service("granite", pool=None)
    live["status"]["router"] = {"scheduler": {"inferencePool": {"name": 7}}, "group": "canary"}
    parsed = parse("LLMInferenceService", live)
    assert parsed.view.pool is None and parsed.view.group is None
    assert set(parsed.problems) == {
        "status.router.scheduler.inferencePool.name is not a string",
        "status.router.group is not a mapping",
    }


# ------------------------------------------------------------------------------------------------- headers


def headers(raw: dict | None = None, tenant: int = 0) -> dict:
    config = load_config(raw or {})
    body = gateway_auth.tenant_gateway_objects(config, config.tenants[tenant])[0]
    return body["spec"]["defaults"]["rules"]["response"]["success"]["headers"]


@pytest.mark.parametrize(
    ("auth", "want"),
    [  # upstream's TestSubscriptionInfoFieldExpr cases, then shapes upstream does not try
        (
            {"metadata": {"subscription-info": {"objective": "maas-acme-gold-pool-0123456789"}}},
            "maas-acme-gold-pool-0123456789",
        ),
        ({"metadata": {"subscription-info": {"name": "gold"}}}, ""),
        ({"metadata": {"subscription-info": {"error": "not_found"}}}, ""),
        ({"metadata": {"apiKeyValidation": {"valid": True}}}, ""),
        ({"identity": {}}, ""),
        ({"metadata": {"subscription-info": {"objective": 42}}}, ""),
        ({"metadata": {"subscription-info": "upstream error page"}}, ""),
        ({"metadata": "not a map"}, ""),
    ],
)
def test_the_objective_header_never_fails(auth, want):
    for name in naming.OBJECTIVE_HEADERS:
        expression = headers()[name]["plain"]["expression"]
        assert cel.evaluate(expression, {"auth": auth}) == want


def test_four_headers_on_every_authorized_request_in_their_own_group():
    found = headers({"tenants": [{"name": "models-as-a-service"}, {"name": "acme"}]}, tenant=1)
    flow = {name: found[name] for name in (*naming.FAIRNESS_HEADERS, *naming.OBJECTIVE_HEADERS)}
    assert sorted(flow) == [
        "x-gateway-inference-fairness-id",
        "x-gateway-inference-objective",
        "x-llm-d-inference-fairness-id",
        "x-llm-d-inference-objective",
    ]
    assert all("when" not in h and h["priority"] == 2 and h["metrics"] is False for h in flow.values())
    assert all(h["priority"] != 2 for name, h in found.items() if name not in flow)
    assert found["x-llm-d-inference-fairness-id"]["plain"] == {"value": "acme"}
    assert found["x-gateway-inference-fairness-id"] == found["x-llm-d-inference-fairness-id"]
    assert found["x-gateway-inference-objective"] == found["x-llm-d-inference-objective"]


def test_header_names_are_lowercase_so_the_wasm_shim_replaces_client_copies():
    """wasm-shim v0.14.1 `Headers::set` drops entries of the exact same key; Envoy's keys are lowercase."""
    assert all(name == name.lower() for name in (*naming.FAIRNESS_HEADERS, *naming.OBJECTIVE_HEADERS))


# --------------------------------------------------------------------------------------------- configuration


def test_inference_priority_is_optional_and_independent_of_selection_priority():
    config = load_config(stack(priority=5))
    [subscription] = config.subscriptions
    assert (subscription.inferencePriority, subscription.priority) == (5, 0)
    assert load_config(stack(priority=None)).subscriptions[0].inferencePriority is None


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1, "10", 1.5, True])
def test_an_inference_priority_outside_int32_is_refused_with_its_path(value):
    with pytest.raises(ConfigError) as raised:
        load_config(stack(priority=value))
    assert "subscriptions[0] (models-as-a-service/gold).inferencePriority" in str(raised.value)


def _without_flow_headers(obj):
    if obj.kind != "AuthPolicy" or obj.subresource:
        return obj
    body = copy.deepcopy(obj.body)
    success = body["spec"].get("defaults", {}).get("rules", {}).get("response", {}).get("success", {})
    for name in (*naming.FAIRNESS_HEADERS, *naming.OBJECTIVE_HEADERS):
        success.get("headers", {}).pop(name, None)
    return dataclasses.replace(obj, body=body)


def test_the_headers_leave_the_gateway_wasm_configuration_unchanged():
    """They are AuthConfig rules; the wasm config holds one auth action per ActionSet (scope, predicates, sources)."""
    config, observed = load_config(stack(refs=("granite",))), cluster(service("granite"))
    plan = build_plan(config, observed)
    before = [(b.key, b.bytes, b.action_sets) for b in gateway_budgets(config, plan, observed)]
    stripped = 0
    for owner in plan.owners:
        kept = [_without_flow_headers(obj) for obj in owner.objects]
        stripped += sum(new is not old for new, old in zip(kept, owner.objects, strict=True))
        owner.objects = kept
    assert (
        stripped
        and before
        and [(b.key, b.bytes, b.action_sets) for b in gateway_budgets(config, plan, observed)] == before
    )
