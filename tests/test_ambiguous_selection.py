"""Issue 20: a subject (group or user) that owns two subscriptions to one model, where maas-api answers calls
without `X-MaaS-Subscription` with `multiple_subscriptions`, is a warning of the plan: `render` prints it, and so
`pulumi up` and the review (`diff`) do."""

from __future__ import annotations

import contextlib
import io

import pytest

from maas.config import load_config, raw_from_stack_file
from maas.observe import Observed
from maas.plan.build import build_plan
from maas.plan.checks.ambiguous_selection import ambiguous_selection_warnings
from maas.tools.cli import main
from maas.tools.explaining import maasapi
from tests.conftest import ROOT

NS = "models-as-a-service"
MODELS = [
    {"name": "granite", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "granite"}},
    {"name": "coder", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "coder"}},
]
FIX = (
    "maas-api selects none of them for a call without an X-MaaS-Subscription header (403 multiple_subscriptions), "
    "and spec.priority does not choose between them (it only decides which one an API key minted without a "
    "subscription binds to): have those callers send X-MaaS-Subscription (e.g. {example}), or keep each model in "
    "one subscription per owner"
)


def subscription(name: str, *models: str, groups: tuple[str, ...] = (), users: tuple[str, ...] = (), **extra) -> dict:
    refs = [
        {"name": model, "namespace": "llm", "tokenRateLimits": [{"limit": 100, "window": "1m"}]} for model in models
    ]
    owner = {"groups": [{"name": group} for group in groups], "users": list(users)}
    return {"name": name, "owner": owner, "modelRefs": refs, **extra}


def warnings(*subscriptions: dict) -> list[str]:
    return ambiguous_selection_warnings(load_config({"models": MODELS, "subscriptions": list(subscriptions)}))


def test_a_group_owning_two_subscriptions_for_one_model_is_named_with_both_and_the_fix():
    assert warnings(
        subscription("gold", "granite", groups=("team-y",), priority=10),
        subscription("silver", "granite", "coder", groups=("team-y",)),
    ) == [
        f"group team-y owns 2 subscriptions that include model llm/granite: {NS}/gold, {NS}/silver; "
        + FIX.format(example="gold")
    ]


def test_a_distinct_priority_does_not_make_maas_api_choose():
    """Why the warning stands whatever the priorities: maas-api's select (modelled in `explaining/maasapi.py`,
    the mirror's `selector.go`) orders by priority but answers `multiple_subscriptions` for several candidates."""

    def live(name: str, priority: int) -> maasapi.LiveSubscription:
        spec = {
            "priority": priority,
            "owner": {"groups": [{"name": "team-y"}]},
            "modelRefs": [{"name": "granite", "namespace": "llm"}],
        }
        return maasapi.LiveSubscription(
            {"metadata": {"name": name, "namespace": NS}, "spec": spec}, {"phase": "Active"}
        )

    request = {"username": "bob", "groups": ["team-y"], "requestedModel": "llm/granite"}
    models = maasapi.ModelIndex(frozenset({"llm/granite"}))
    answer = maasapi.select(request, [live("gold", 10), live("silver", 0)], [], models).answer
    assert answer["error"] == "multiple_subscriptions"


def test_subjects_sharing_the_same_subscriptions_and_models_are_one_warning():
    [warning] = warnings(
        subscription("a", "granite", "coder", groups=("g1", "g2"), users=("dana",)),
        subscription("b", "granite", "coder", groups=("g1", "g2"), users=("dana",)),
    )
    assert warning.startswith(
        f"group g1, group g2, user dana each own 2 subscriptions that include models llm/coder, llm/granite: {NS}/a, "
        f"{NS}/b; "
    )


def test_long_lists_are_cut_with_a_count():
    groups = tuple(f"g{i}" for i in range(7))
    [warning] = warnings(subscription("a", "granite", groups=groups), subscription("b", "granite", groups=groups))
    assert warning.startswith("group g0, group g1, group g2, group g3, group g4 and 2 more each own 2 subscriptions")


@pytest.mark.parametrize(
    "subscriptions",
    [
        # one subscription per subject and model
        (subscription("a", "granite", groups=("g",)), subscription("b", "coder", groups=("g",))),
        # a group and a user: whether the user is a member is not in the configuration
        (subscription("a", "granite", groups=("g",)), subscription("b", "granite", users=("dana",))),
        # a model that is not in maas:models has nothing to select for
        (subscription("a", "ghost", groups=("g",)), subscription("b", "ghost", groups=("g",))),
    ],
    ids=["different-models", "group-and-user", "unknown-model"],
)
def test_no_warning_without_a_subject_that_owns_two_subscriptions_to_one_configured_model(subscriptions):
    assert warnings(*subscriptions) == []


def test_render_and_the_plan_validate_builds_warn_for_the_explain_selection_stack():
    """`tests/stacks/Pulumi.explain-selection.yaml`: engineers own gold and silver, both with granite (`explain
    caller` shows the `multiple_subscriptions` answer); render prints the warning, and the plan `validate` and
    `pulumi up` build carries it."""
    stack = ROOT / "tests" / "stacks" / "Pulumi.explain-selection.yaml"
    expected = (
        f"group engineers owns 2 subscriptions that include model llm/granite: {NS}/gold, {NS}/silver; "
        + FIX.format(example="gold")
    )
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main(["render", "--config-file", str(stack)]) == 0
    assert f"warning: {expected}" in err.getvalue().splitlines()
    raw, _ = raw_from_stack_file(stack)
    assert expected in build_plan(load_config(raw), Observed.nothing()).warnings


def test_the_example_stack_now_warns_about_its_premium_subscriptions():
    """Pulumi.dev.yaml: premium-users own premium and premium-legacy, both with llm/llama-3-8b."""
    raw, _ = raw_from_stack_file(ROOT / "Pulumi.dev.yaml")
    [warning] = ambiguous_selection_warnings(load_config(raw))
    assert warning.startswith(
        f"group premium-users owns 2 subscriptions that include model llm/llama-3-8b: {NS}/premium, "
        f"{NS}/premium-legacy; "
    )
