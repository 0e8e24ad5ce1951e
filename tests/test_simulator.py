"""The request simulator's stages, each on a concrete request (maas/tools/simulator)."""

from __future__ import annotations

import pytest
from enforcement import STACK_FILES, network

from maas.config import raw_from_stack_file
from maas.tools.explaining.maasapi import ModelIndex
from maas.tools.explaining.request import objects_for, trace
from maas.tools.simulator import Caller, Request, normalised, simulate
from maas.tools.simulator.invariant import granted, violations
from maas.tools.simulator.routing import covers

ENFORCEMENT = "Pulumi.enforcement.yaml"
DANA = Caller("dana", ("engineers", "analysts"))


def outcome_of(path: str, caller: Caller = DANA, **request):
    return simulate(network(ENFORCEMENT), Request(path, caller, **request))


# ------------------------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("sent", "merge", "seen"),
    [
        ("//ext-a/cheap/v1/x", False, "//ext-a/cheap/v1/x"),
        ("//ext-a/cheap/v1/x", True, "/ext-a/cheap/v1/x"),
        ("/x/../ext-a/cheap", False, "/ext-a/cheap"),
        ("/ext-a/./cheap/", False, "/ext-a/cheap/"),
        ("/ext-%61/cheap", False, "/ext-a/cheap"),
        ("/ext-a%2fcheap", False, "/ext-a%2Fcheap"),
        ("/a/b?x=/../y", False, "/a/b?x=/../y"),
        ("/a/..", False, "/"),
    ],
)
def test_paths_are_normalised_as_istios_gateway_does(sent, merge, seen):
    assert normalised(sent, merge) == seen


@pytest.mark.parametrize(
    ("pattern", "host", "covered"),
    [
        ("*", "any.example.com", True),
        ("*.example.com", "a.example.com", True),
        ("*.example.com", "example.com", False),
        ("a.example.com", "A.example.com", True),
        ("a.example.com", "b.example.com", False),
    ],
)
def test_hostnames_cover_hosts_as_gateway_api_says(pattern, host, covered):
    assert covers(pattern, host) is covered


# ------------------------------------------------------------------------------------------------ routing


def test_a_path_prefix_matches_whole_segments_in_envoy():
    """`/ext-a/cheapest` is not under `/ext-a/cheap`: with the routing header, ext-b/gpt's header rule takes it."""
    outcome = outcome_of("/ext-a/cheapest/v1/chat/completions", model="gpt-4o")
    assert outcome.route is not None and outcome.route.route.key == "ext-b/maas-gpt"


def test_the_wasm_shim_matches_a_path_prefix_as_a_string_and_may_run_another_rules_policies():
    """Kuadrant writes `startsWith('/ext-a/cheap')`: the wasm-shim runs ext-a/cheap's ActionSet for the request
    Envoy routes to ext-b/gpt; the model identity (`ext-a/cheapest`) then resolves to no model: denied."""
    outcome = outcome_of("/ext-a/cheapest/v1/chat/completions", model="gpt-4o")
    assert outcome.action_set is not None and outcome.action_set.route.key == "ext-a/maas-cheap"
    assert outcome.status == 403


def test_a_route_with_its_own_hostname_is_not_reached_on_the_gateways_host():
    assert outcome_of("/ext-c/hosted/v1/chat/completions").route is None
    hosted = outcome_of("/ext-c/hosted/v1/chat/completions", host="hosted.apps.example.com")
    assert (hosted.backend, hosted.status) == ("ext-c/hosted", 200)


def test_a_kserve_model_is_routed_on_its_backends_path_and_resolved_to_its_model_ref():
    outcome = outcome_of("/llm/granite/v1/chat/completions", Caller("carol"))
    assert (outcome.backend, outcome.status, outcome.selected) == ("llm/granite", 200, "models-as-a-service/gpt")
    assert outcome.selection.answer["resolvedModel"] == "llm/granite"
    assert [(c.name, c.matched) for c in outcome.matched] == [("tokens-unlimited", True)]


# ----------------------------------------------------------------------------------------- authentication


def test_a_caller_whose_credential_no_source_accepts_gets_401():
    """The tenant has no OIDC: a JWT of some issuer is accepted by no identity source."""
    outcome = outcome_of("/ext-a/cheap/v1/chat/completions", Caller("dana", ("engineers",), token="oidc"))
    assert (outcome.status, outcome.auth.source) == (401, None)


def test_an_api_key_caller_is_named_by_maas_apis_validation_and_selects_its_keys_subscription():
    key = Caller("dana", ("engineers",), token="api-key", key_subscription="models-as-a-service/cheap")
    outcome = outcome_of("/ext-a/cheap/v1/chat/completions", key)
    assert (outcome.auth.source, outcome.status, outcome.selected) == ("api-keys", 200, "models-as-a-service/cheap")
    assert outcome.auth.select_request["requestedSubscription"] == "models-as-a-service/cheap"


def test_a_client_sent_identity_header_is_refused():
    outcome = outcome_of("/ext-a/cheap/v1/chat/completions", headers=(("X-MaaS-Group", "premium"),))
    assert outcome.status == 403
    assert "deny-client-identity-headers" in [r.name for r in outcome.auth.rules if r.passed is False]


# ------------------------------------------------------------------------------------------- maas-api select


@pytest.mark.parametrize(
    ("requested", "resolved"),
    [
        ("llm/granite", "llm/granite"),  # the MaaSModelRef
        ("llm/granite-backend", "llm/granite"),  # the backend it references
        ("gpt", "ext-b/gpt"),  # a published alias
        ("shared", None),  # the alias of two: maas-api cannot choose
        ("publishers/llm/models/x", None),  # nothing
    ],
)
def test_maas_api_resolves_the_requested_model_to_one_model_ref(requested, resolved):
    index = ModelIndex(
        frozenset({"llm/granite", "ext-b/gpt", "ns/a", "ns/b"}),
        {"llm/granite-backend": ("llm/granite",)},
        {"gpt": ("ext-b/gpt",), "shared": ("ns/a", "ns/b")},
    )
    assert index.resolve(requested)[0] == resolved


def test_a_model_resolved_through_an_assumed_status_says_so():
    """An alias read off an assumed MaaSModelRef status, or a name that may be the live alias an assumed status
    lacks, rests on that assumption; a MaaSModelRef or backend name does not."""
    index = ModelIndex(
        frozenset({"ext/gpt", "llm/granite"}),
        {"llm/granite-backend": ("llm/granite",), "ext/gpt": ("ext/gpt",)},
        {"gpt": ("ext/gpt",)},
        {"ext/gpt": "not observed", "llm/granite": "not observed"},
    )
    assert (
        index.assumption("gpt") == "the resolvedModelAlias 'gpt' of ext/gpt comes from an assumed status (not observed)"
    )
    assert index.assumption("served-name") == (
        "'served-name' may be the live resolvedModelAlias of llm/granite, whose assumed status names none "
        "(not observed)"
    )
    assert [index.assumption(name) for name in ("llm/granite", "llm/granite-backend")] == ["", ""]
    assert ModelIndex(frozenset({"ext/gpt"}), {}, {"gpt": ("ext/gpt",)}).assumption("gpt") == ""


# ------------------------------------------------------------------------------- stacks whose status is assumed

COEXIST = [
    path.name
    for path in STACK_FILES
    if raw_from_stack_file(path)[0].get("platform", {}).get("controllerMode") == "coexist"
]


@pytest.mark.parametrize("name", COEXIST)
def test_on_a_coexist_stack_the_invariant_is_checked_on_admitted_requests_not_only_on_denials(name):
    """The property test renders coexist stacks without observation: no phase is known. Read as unreconciled,
    every request was a 403 and the invariant held vacuously; on the assumed phase, every owner is admitted to
    each model it is granted, counted as the invariant says, and the outcome says what it assumed."""
    world = network(name).world
    admitted = 0
    for subscription in world.config.subscriptions:
        groups = tuple(g.name for g in subscription.owner.groups)
        callers = [*((user, ()) for user in subscription.owner.users), *((f"<{g}>", (g,)) for g in groups)]
        for ref in subscription.modelRefs:
            if ref.key not in world.outputs["models"]:
                continue  # not in maas:models
            for user, caller_groups in callers:
                if not granted(world, ref.key, user, caller_groups):
                    continue
                result = trace(world, objects_for(world, world.model(ref.key)), user, caller_groups, subscription.key)
                assert violations(world, result.outcome) == []
                assert (result.outcome.status, result.outcome.selected) == (200, subscription.key), (ref.key, user)
                assert result.assumed == [
                    f"{subscription.key} is Active: the maas-controller owns it in coexist; not observed"
                ]
                admitted += 1
    assert admitted >= 3


def test_the_property_test_has_a_coexist_stack():
    """Else the test above would be parametrized over nothing and pass without a check."""
    assert "Pulumi.xks-coexist.yaml" in COEXIST
