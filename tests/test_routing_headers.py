"""Two models whose routes claim one body-routing header on one Gateway, seen only in the live objects."""

from __future__ import annotations

from maas.config import load_config
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.gateway.routes import kserve_route

RAW = {
    "models": [
        {"name": "a", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "a"}},
        {"name": "b", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "b"}},
    ]
}


def llmis(name: str, served: str) -> dict:
    return {
        "apiVersion": "serving.kserve.io/v1alpha2",
        "kind": "LLMInferenceService",
        "metadata": {"name": name, "namespace": "llm"},
        "spec": {"model": {"name": served}},
    }


def issues(*live: dict) -> list[str]:
    return [str(issue) for issue in build_plan(load_config(RAW), Observed.of(live)).issues]


def test_two_live_services_serving_one_model_name_on_one_gateway_are_refused_at_the_later_model():
    """Configuration alone sees `a` and `b`; the live `spec.model.name` makes both KServe routes claim one header."""
    assert issues(llmis("a", "granite"), llmis("b", "granite")) == [
        "maas:models[1] (llm/b): its route on Gateway openshift-ingress/maas-default-gateway matches "
        "X-Gateway-Model-Name: publishers/llm/models/granite, as model llm/a's does (the live LLMInferenceService's "
        "spec.model.name decides KServe's header); Gateway API sends every body-routed request to the older route, "
        "so serve another model name or move one model to another tenant's Gateway"
    ]


def test_distinct_live_model_names_are_no_clash():
    assert issues(llmis("a", "granite"), llmis("b", "llama")) == []


def test_a_model_alias_in_kserves_publisher_form_is_served_under_its_last_part():
    """`modelAlias: publishers/llm/models/granite-7b` is the status alias; KServe's header names `granite-7b`, not
    `publishers/llm/models/publishers/llm/models/granite-7b`."""
    raw = {"models": [{**RAW["models"][0], "modelAlias": "publishers/llm/models/granite-7b"}]}
    route = kserve_route(load_config(raw), load_config(raw).models[0], Observed.nothing())
    headers = {h["value"] for rule in route["spec"]["rules"] for m in rule["matches"] for h in m.get("headers", [])}
    assert headers == {"publishers/llm/models/granite-7b"}
