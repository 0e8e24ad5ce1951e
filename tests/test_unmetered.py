"""Issue 22: the unmetered-traffic report, one test per row, on concrete stacks (`plan/checks/unmetered.py`)."""

from __future__ import annotations

import copy

import pytest
import yaml

from maas.config import ConfigError, load_config
from maas.observe import Observed
from maas.observe.policy_views import Limit
from maas.plan.build import build_plan
from maas.plan.checks.issues import plan_issues
from maas.plan.checks.unmetered import shadowed_rates, window_ms
from maas.plan.tenants.payload import IPP_CONFIG, PLUGINS_DEFAULT
from tests.conftest import ROOT
from tests.test_diff import diff

STACK = ROOT / "tests" / "stacks" / "Pulumi.unmetered.yaml"
DONE_WHEN = {
    "external-models/claude-sonnet:*:limitador-shadow",
    "external-models/claude-sonnet:messages:no-total-tokens",
    "lab-models/gpt-lab:chat/completions:stream-usage-not-enforced",
}


def raw() -> dict:
    document = yaml.safe_load(STACK.read_text())["config"]
    return {key.removeprefix("maas:"): value for key, value in document.items()}


def keys(config: dict, observed: Observed | None = None) -> set[str]:
    plan = build_plan(load_config(config), observed or Observed.nothing())
    return set(plan.outputs["unmeteredTraffic"])


def lines(config: dict, observed: Observed | None = None) -> list[str]:
    plan = build_plan(load_config(config), observed or Observed.nothing())
    return [w for w in plan.warnings if w.startswith("unmetered traffic: ")]


def plugins(request: list[str], response: list[str], tenant: str = "") -> dict:
    """A live plugins ConfigMap with the given chains of plugin types."""
    types = sorted(set(request) | set(response))
    text = yaml.safe_dump(
        {
            "apiVersion": "llm-d.ai/v1alpha1",
            "kind": "PayloadProcessorConfig",
            "plugins": [{"type": t} for t in types],
            "profiles": [
                {
                    "name": "default",
                    "plugins": {
                        "request": [{"pluginRef": t} for t in request],
                        "response": [{"pluginRef": t} for t in response],
                    },
                }
            ],
        }
    )
    name = "payload-processing-plugins" + (f"-{tenant}" if tenant else "")
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "openshift-ingress"},
        "data": {**PLUGINS_DEFAULT, IPP_CONFIG: text},
    }


def test_done_when_the_preview_lists_each_unmetered_case_with_its_fix():
    plan = build_plan(load_config(raw()), Observed.nothing())
    assert set(plan.outputs["unmeteredTraffic"]) == DONE_WHEN
    found = [w for w in plan.warnings if w.startswith("unmetered traffic: ")]
    assert len(found) == 3 and all("; fix: " in w and "maas:acceptUnmeteredTraffic" in w for w in found)
    assert any(w.startswith("3 unmetered path families: ") for w in plan.warnings)


def test_done_when_diff_shows_a_pr_that_adds_one(tmp_path):
    head = raw()
    base = copy.deepcopy(head)
    base["subscriptions"] = [s for s in base["subscriptions"] if s["name"] != "burst"]
    base_file, head_file = tmp_path / "Pulumi.base.yaml", tmp_path / "Pulumi.head.yaml"
    for path, config in ((base_file, base), (head_file, head)):
        path.write_text(yaml.safe_dump({"config": {f"maas:{k}": v for k, v in config.items()}}))
    code, out, _ = diff("--exit-code", base_file, head_file)
    assert code == 1
    assert "unmetered traffic: 1 added, 0 removed" in out
    assert "  + external-models/claude-sonnet:*:limitador-shadow: rates of one window length" in out
    assert "new: unmetered traffic" not in out  # its own section, not among the warnings
    code, markdown, _ = diff(base_file, head_file, "--format", "markdown")
    assert "### Unmetered traffic" in markdown and "| added | external-models/claude-sonnet |" in markdown
    _, back, _ = diff(head_file, base_file)
    assert "unmetered traffic: 0 added, 1 removed" in back


def test_no_false_positive_where_the_chain_counts():
    """OpenAI chat through the product default chain (stream-usage-enforcer) is counted, streams included."""
    assert not {k for k in keys(raw()) if k.startswith("external-models/gpt-4o:")}


def test_anthropic_with_response_translation_is_counted():
    live = plugins(
        ["maas-headers-guard", "stream-usage-enforcer", "model-provider-resolver", "api-translation"],
        ["api-translation"],
    )
    assert "external-models/claude-sonnet:messages:no-total-tokens" not in keys(raw(), Observed.of([live]))


def test_anthropic_openai_chat_without_response_translation_is_unmetered():
    config = raw()
    config["models"][1]["external"]["apiFormat"] = "openai-chat"
    assert "external-models/claude-sonnet:chat/completions:no-total-tokens" in keys(config)


def test_a_live_chain_without_the_enforcer_leaves_streams_uncounted():
    live = plugins(["model-provider-resolver", "api-translation", "apikey-injection"], [])
    found = keys(raw(), Observed.of([live]))
    assert "external-models/gpt-4o:chat/completions:stream-usage-not-enforced" in found
    line = next(w for w in lines(raw(), Observed.of([live])) if "gpt-4o" in w)
    assert "add '- pluginRef: stream-usage-enforcer'" in line and "vLLM" not in line


def test_an_unreadable_live_chain_vouches_for_nothing():
    live = plugins([], [])
    live["data"][IPP_CONFIG] = "plugins: [unterminated"
    assert "external-models/gpt-4o:chat/completions:stream-usage-not-enforced" in keys(raw(), Observed.of([live]))


def test_kserve_messages_and_responses_families():
    config = raw()
    config["models"].append(
        {"name": "granite", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "granite"}}
    )
    config["subscriptions"][0]["modelRefs"].append(
        {"name": "granite", "namespace": "llm", "tokenRateLimits": [{"limit": 10, "window": "1m"}]}
    )
    found = {k for k in keys(config) if k.startswith("llm/granite:")}
    assert found == {"llm/granite:messages:no-total-tokens", "llm/granite:responses:stream-usage-unread"}


def test_a_model_without_rated_limits_reports_nothing():
    config = raw()
    for subscription in config["subscriptions"]:
        for ref in subscription["modelRefs"]:
            ref.pop("tokenRateLimits", None)
            ref["unlimited"] = True
    assert keys(config) == set()


def test_two_rates_of_different_windows_do_not_shadow():
    assert shadowed_rates(Limit((), ((1000, "1m"), (50000, "1h")), ())) == []
    assert shadowed_rates(Limit((), ((100, "1m"), (5000, "60s")), ())) == [((100, "1m"), (5000, "60s"))]
    assert shadowed_rates(Limit((), ((100, "1m"), (100, "60s")), ())) == []  # the same limit either way
    assert window_ms("1h30m") == 5_400_000 and window_ms("500ms") == 500 and window_ms("1d") is None


def own_policy(model: str, namespace: str, predicate: str, name: str) -> dict:
    return {
        "apiVersion": "kuadrant.io/v1alpha1",
        "kind": "TokenRateLimitPolicy",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": model},
            "limits": {"org": {"rates": [{"limit": 100, "window": "1m"}], "when": [{"predicate": predicate}]}},
        },
    }


def test_an_operator_policy_on_the_route_is_a_conflict_and_its_path_exemption_an_escape():
    upstream = 'auth.identity.userid != "" && !request.path.endsWith("/v1/models")'
    theirs = own_policy("maas-gpt-4o", "external-models", upstream, "org-limit")
    found = keys(raw(), Observed.of([theirs]))
    assert {"external-models/gpt-4o:*:policy-conflict", "external-models/gpt-4o:*:query-exemption"} <= found
    safe = own_policy("maas-gpt-4o", "external-models", '!request.url_path.endsWith("/v1/models")', "org-limit")
    assert "external-models/gpt-4o:*:query-exemption" not in keys(raw(), Observed.of([safe]))


def test_kserve_default_route_outside_the_target_is_untargeted():
    config = raw()
    config["models"].append(
        {
            "name": "granite",
            "namespace": "llm",
            "modelRef": {"kind": "LLMInferenceService", "name": "granite"},
            "route": {"name": "granite-custom"},
        }
    )
    config["subscriptions"][0]["modelRefs"].append(
        {"name": "granite", "namespace": "llm", "tokenRateLimits": [{"limit": 10, "window": "1m"}]}
    )
    route = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "granite-kserve-route", "namespace": "llm"},
        "spec": {"parentRefs": [{"name": "maas-default-gateway", "namespace": "openshift-ingress"}], "rules": [{}]},
    }
    assert "llm/granite:*:untargeted-route" in keys(config, Observed.of([route]))
    assert "llm/granite:*:untargeted-route" not in keys(config)


def test_acceptance_marks_the_case_and_a_stale_one_warns():
    config = raw()
    config["acceptUnmeteredTraffic"] = [
        "external-models/claude-sonnet:*:limitador-shadow",
        "external-models/gpt-4o:*:policy-conflict",
    ]
    plan = build_plan(load_config(config), Observed.nothing())
    accepted = {key for key, f in plan.outputs["unmeteredTraffic"].items() if f["accepted"]}
    assert accepted == {"external-models/claude-sonnet:*:limitador-shadow"}
    assert any(
        "lists 'external-models/gpt-4o:*:policy-conflict', but the report finds no such case" in w
        for w in plan.warnings
    )


def test_error_mode_stops_the_update_unless_accepted():
    config = raw()
    config["platform"] = {**config["platform"], "unmeteredTraffic": "error"}
    loaded = load_config(config)
    plan = build_plan(loaded, Observed.nothing())
    issues = [i for i in plan_issues(loaded, plan, Observed.nothing()) if "unmeteredTraffic is error" in str(i)]
    assert len(issues) == 3
    config["acceptUnmeteredTraffic"] = sorted(DONE_WHEN)
    loaded = load_config(config)
    plan = build_plan(loaded, Observed.nothing())
    assert not [i for i in plan_issues(loaded, plan, Observed.nothing()) if "unmeteredTraffic is error" in str(i)]


@pytest.mark.parametrize(
    "entry", ["gpt-4o:messages:no-total-tokens", "external-models/gpt-4o:v2:no-total-tokens", "a/b:*:made-up"]
)
def test_a_malformed_acceptance_is_a_config_error(entry):
    config = raw()
    config["acceptUnmeteredTraffic"] = [entry]
    with pytest.raises(ConfigError, match="acceptUnmeteredTraffic"):
        load_config(config)


def test_an_acceptance_of_an_unknown_model_is_a_config_error():
    config = raw()
    config["acceptUnmeteredTraffic"] = ["llm/nope:messages:no-total-tokens"]
    with pytest.raises(ConfigError, match="not in maas:models"):
        load_config(config)


def test_the_report_is_deterministic_whatever_the_order_of_entries():
    config = raw()
    shuffled = copy.deepcopy(config)
    shuffled["models"].reverse()
    shuffled["subscriptions"].reverse()
    first = build_plan(load_config(config), Observed.nothing())
    second = build_plan(load_config(shuffled), Observed.nothing())
    assert first.outputs["unmeteredTraffic"] == second.outputs["unmeteredTraffic"]


def two_kserve_models() -> dict:
    models = [
        {"name": name, "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": name}}
        for name in ("granite", "llama")
    ]
    refs = [
        {"name": m["name"], "namespace": "llm", "tokenRateLimits": [{"limit": 100, "window": "1m"}]} for m in models
    ]
    subscription = {"name": "team", "owner": {"groups": [{"name": "team"}]}, "modelRefs": refs}
    return {"models": models, "subscriptions": [subscription]}


def test_the_same_case_on_several_models_is_one_line_naming_them():
    found = lines(two_kserve_models())
    messages = [w for w in found if "/v1/messages" in w]
    assert len(messages) == 1
    assert messages[0].startswith("unmetered traffic: models llm/granite, llm/llama /v1/messages: ")
    assert "or '*:messages:no-total-tokens'" in messages[0]


def test_a_wildcard_accepts_that_case_on_every_model_and_goes_stale_with_it():
    config = {**two_kserve_models(), "acceptUnmeteredTraffic": ["*:messages:no-total-tokens"]}
    plan = build_plan(load_config(config), Observed.nothing())
    accepted = {key for key, f in plan.outputs["unmeteredTraffic"].items() if f["accepted"]}
    assert accepted == {"llm/granite:messages:no-total-tokens", "llm/llama:messages:no-total-tokens"}
    config["acceptUnmeteredTraffic"] = ["*:messages:policy-conflict"]
    plan = build_plan(load_config(config), Observed.nothing())
    assert any("lists '*:messages:policy-conflict', but the report finds no such case" in w for w in plan.warnings)
