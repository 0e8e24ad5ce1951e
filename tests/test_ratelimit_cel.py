"""Generated predicates evaluated with a real CEL engine: every subscription matches exactly its own limit."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maas.config import load_config
from maas.plan.policies.ratelimit import caller_identity, matching_limits, plan_rate_limits
from maas.tools import cel
from tests.conftest import identities

INFERENCE = "/llm/m/v1/chat/completions"


def every_member(config):
    """(policy, caller identity, expected limit) for each subscription on each model that has a policy."""
    plan = plan_rate_limits(config, identities(config))
    for output in plan.subscriptions.values():
        for model, entry in output["models"].items():
            if model in plan.policies:
                yield plan.policies[model], caller_identity(output["rateLimitIdentity"], entry["key"]), entry["limit"]


def assert_each_subscription_matches_only_its_limit(config) -> int:
    checked = 0
    for policy, identity, limit in every_member(config):
        assert matching_limits(policy, cel.request(INFERENCE, identity)) == [limit]
        assert matching_limits(policy, cel.request("/llm/m/v1/models", identity)) == []
        checked += 1
    return checked


def test_dev_stack_every_subscription_matches_exactly_its_own_limit(dev_config):
    models = {m.key for m in dev_config.models}
    expected = sum(ref.key in models for s in dev_config.subscriptions for ref in s.modelRefs)
    assert assert_each_subscription_matches_only_its_limit(dev_config) == expected >= 10


def test_strangers_match_no_limit(dev_config):
    plan = plan_rate_limits(dev_config, identities(dev_config))
    strangers = [
        caller_identity("short", "models-as-a-service/nobody@llm/granite-7b"),
        caller_identity("legacy", "models-as-a-service/nobody@llm/granite-7b"),
        cel.subscription_identity(),
    ]
    for policy in plan.policies.values():
        for identity in strangers:
            assert matching_limits(policy, cel.request(INFERENCE, identity)) == []


def test_a_short_subscription_is_not_matched_by_its_legacy_key_alone(dev_config):
    """A short-ID member must be limited by its ID: matching on its key would double count after an upgrade."""
    plan = plan_rate_limits(dev_config, identities(dev_config))
    entry = plan.subscriptions["models-as-a-service/team-x"]["models"]["llm/llama-3-8b"]
    identity = cel.subscription_identity(key=entry["key"], rate_limit_id="")
    assert matching_limits(plan.policies["llm/llama-3-8b"], cel.request(INFERENCE, identity)) == []


def test_without_the_exemption_model_listing_is_limited(dev_raw):
    dev_raw["platform"]["exemptModelDiscovery"] = False
    config = load_config(dev_raw)
    plan = plan_rate_limits(config, identities(config))
    entry = plan.subscriptions["models-as-a-service/basic"]["models"]["llm/granite-7b"]
    identity = caller_identity("short", entry["key"])
    assert matching_limits(plan.policies["llm/granite-7b"], cel.request("/v1/models", identity)) == [entry["limit"]]


# Envoy's `request.path` carries the query string; none of these may escape a token limit.
ESCAPES = [
    "/llm/m/v1/chat/completions?x=/v1/models",
    "/llm/m/v1/chat/completions?/v1/models",
    "/llm/m/v1/completions?a=b&c=/v1/models",
    "/llm/m/v1/chat/completions?q=%2Fv1%2Fmodels&/v1/models",
]
LISTINGS = ["/llm/m/v1/models", "/llm/m/v1/models?limit=10", "/v1/models", "/v1/models?x=/v1/chat/completions"]


@pytest.mark.parametrize("path", ESCAPES)
def test_a_query_string_ending_in_v1_models_does_not_escape_any_limit(dev_config, path):
    for policy, identity, limit in every_member(dev_config):
        assert matching_limits(policy, cel.request(path, identity)) == [limit]


@pytest.mark.parametrize("path", LISTINGS)
def test_model_listing_stays_exempt_with_or_without_a_query(dev_config, path):
    for policy, identity, _ in every_member(dev_config):
        assert matching_limits(policy, cel.request(path, identity)) == []


def test_the_upstream_exemption_on_request_path_would_let_the_query_string_trick_through(dev_config):
    """Why the exemption is on `request.url_path`: the upstream text, evaluated on the same request, escapes."""
    upstream = 'auth.identity.selected_subscription_id == "x" && !request.path.endsWith("/v1/models")'
    context = cel.request(ESCAPES[0], cel.subscription_identity(rate_limit_id="x"))
    assert not cel.matches(upstream, context)
    assert cel.matches(upstream.replace("request.path", "request.url_path"), context)


RATES = st.sampled_from([(100, "1m"), (20, "1m"), (1000, "1h"), (1000, "60m"), (5, "1s"), (99999, "1s")])


@st.composite
def configurations(draw):
    models = [f"m{i}" for i in range(draw(st.integers(1, 4)))]
    subscriptions = []
    for index in range(draw(st.integers(1, 8))):
        refs = []
        for name in draw(st.lists(st.sampled_from(models), min_size=1, max_size=len(models), unique=True)):
            ref = {"name": name, "namespace": "llm"}
            if draw(st.booleans()) and draw(st.booleans()):
                ref["unlimited"] = True
            else:
                ref["tokenRateLimits"] = [
                    {"limit": limit, "window": window}
                    for limit, window in draw(st.lists(RATES, min_size=1, max_size=3))
                ]
            refs.append(ref)
        subscriptions.append(
            {
                "name": f"s{index}",
                "owner": {"users": ["u"]},
                "rateLimitIdentity": draw(st.sampled_from(["short", "legacy"])),
                "modelRefs": refs,
            }
        )
    backends = [{"name": m, "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": m}} for m in models]
    return {"models": backends, "subscriptions": subscriptions}


@settings(max_examples=60, deadline=None)
@given(configurations())
def test_property_every_subscription_matches_exactly_its_own_limit(raw):
    assert assert_each_subscription_matches_only_its_limit(load_config(raw)) > 0
