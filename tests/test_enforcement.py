"""The enforcement chain end to end (issue 17): every request the simulator routes through a stack's rendered
objects either is denied or is counted by a limit of the model it reaches, for the subscription selected for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from enforcement import network, requests, stack_names
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from maas.plan.policies.gateway_auth import default_deny_predicate
from maas.tools import cel, explaining
from maas.tools.cli import main
from maas.tools.simulator import Caller, Request, simulate
from maas.tools.simulator.invariant import violations

ENGINEER_ANALYST = Caller("dana", ("engineers", "analysts"))
ENFORCEMENT = "Pulumi.enforcement.yaml"
STACK = Path(__file__).parent / "stacks" / ENFORCEMENT


@settings(max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.data())
def test_every_request_that_reaches_a_model_is_denied_or_counted_for_its_subscription(data):
    name = data.draw(st.sampled_from(stack_names()), label="stack")
    net = network(name)
    request, gateway = data.draw(requests(net.world), label="request")
    outcome = simulate(net, request, gateway)
    assert violations(net.world, outcome) == [], (name, request, outcome.backend, outcome.selected)


def outcome_of(path: str, caller: Caller = ENGINEER_ANALYST, **request):
    return simulate(network(ENFORCEMENT), Request(path, caller, **request))


def test_a_doubled_slash_does_not_spend_model_a_subscription_on_model_b():
    """`POST //ext-a/cheap/v1/chat/completions` with body model gpt-4o reaches ext-b/gpt's header rule; the
    gateway now takes the model from the routing header, never from the path's non-empty segments."""
    outcome = outcome_of("//ext-a/cheap/v1/chat/completions", model="gpt-4o")
    assert outcome.backend == "ext-b/gpt"
    assert outcome.status == 403
    assert outcome.selected is None


def test_a_request_for_model_a_on_a_host_model_a_does_not_serve_is_denied_at_model_b():
    """ext-c/hosted lives on its own hostname: on the gateway's host its path reaches ext-b/gpt's header rule,
    whose AuthPolicy admits only a subscription selected for ext-b/gpt."""
    outcome = outcome_of("/ext-c/hosted/v1/chat/completions", model="gpt-4o")
    assert outcome.backend == "ext-b/gpt"
    assert outcome.status == 403


def test_the_path_routed_request_is_counted_by_its_model_limit():
    outcome = outcome_of("/ext-a/cheap/v1/chat/completions")
    assert (outcome.status, outcome.backend, outcome.selected) == (200, "ext-a/cheap", "models-as-a-service/cheap")
    assert [(c.policy, c.name) for c in outcome.matched] == [("ext-a/maas-trlp-cheap", "tokens-1000-per-1m")]


def test_a_model_that_no_auth_policy_grants_denies_every_caller():
    """ext-d/secret has a subscription but no MaaSAuthPolicy: its own AuthPolicy admits nobody."""
    outcome = outcome_of("/ext-d/secret/v1/chat/completions", Caller("rita", ("research",)))
    assert (outcome.backend, outcome.status) == ("ext-d/secret", 403)
    assert "model-access" in [r.name for r in outcome.auth.rules if r.applies and r.passed is False]


@pytest.mark.parametrize("path", ["/v1/modelsX/steal", "/maas-apiX/steal", "/v1/api-keysX", "/v1/subscriptionsX/a"])
def test_the_default_deny_exempts_whole_segments_only(path):
    """A string prefix let `/v1/modelsX/...` escape the zero limit on every route without a policy of its own."""
    assert cel.matches(default_deny_predicate(), cel.request(path))


@pytest.mark.parametrize("path", ["/maas-api", "/maas-api/v1/tokens", "/v1/models", "/v1/models?x=1", "/v1/api-keys/k"])
def test_the_default_deny_still_exempts_the_platform_paths(path):
    assert not cel.matches(default_deny_predicate(), cel.request(path))


def test_merge_slashes_routes_the_doubled_slash_to_model_a_and_counts_it_there():
    outcome = outcome_of("//ext-a/cheap/v1/chat/completions", model="gpt-4o", merge_slashes=True)
    assert outcome.backend == "ext-a/cheap" and outcome.status == 200
    assert [(c.policy, c.name) for c in outcome.matched] == [("ext-a/maas-trlp-cheap", "tokens-1000-per-1m")]


def test_explain_request_prints_the_readme_example_denied_at_the_model_it_reaches(capsys):
    """README, "explain": the issue's example through `python -m maas explain request`."""
    args = ["--config-file", str(STACK), "--path", "//ext-a/cheap/v1/chat/completions", "--model", "gpt-4o"]
    status = main(["explain", "request", *args, "--user", "dana", "--groups", "engineers"])
    out = capsys.readouterr().out
    assert status == 0
    assert "routing (Envoy): HTTPRoute ext-b/maas-gpt rule rule-2" in out
    assert "ext-b/maas-auth-gpt subscription-for-model" in out
    assert out.rstrip().endswith(
        "result: 403 'model gpt-4o not found' (x-ext-auth-reason: not_found); backend ext-b/gpt"
    )


def test_explain_request_flags_a_request_that_reaches_a_model_uncounted(capsys, monkeypatch):
    """A bug signal, exit 1: the model's own limit no longer names the subscription selected for it."""
    net = network(ENFORCEMENT)
    (policy,) = [obj for obj in net.world.plan.objects() if obj.logical_name == "ext-a/maas-trlp-cheap"]
    monkeypatch.setitem(policy.body["spec"]["limits"]["tokens-1000-per-1m"], "when", [{"predicate": "false"}])
    monkeypatch.setattr(explaining, "load_world", lambda *_: net.world)
    args = ["--config-file", str(STACK), "--path", "/ext-a/cheap/v1/chat/completions", "--user", "dana"]
    status = main(["explain", "request", *args, "--groups", "engineers"])
    out = capsys.readouterr().out
    assert status == 1
    assert "!! BUG SIGNAL: reached ext-a/cheap with models-as-a-service/cheap: limits that count it []" in out
