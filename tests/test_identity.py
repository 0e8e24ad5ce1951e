"""Seed 002 "Existing subscriptions keep their live quotas": the sticky rate-limit identity, one test per rule."""

from __future__ import annotations

import pytest

from maas.config import ConfigError, load_config
from maas.observe import Observed, Scope
from maas.plan.policies.identity import effective_identities
from maas.tools.render import render

NS = "models-as-a-service"
MODEL = {"name": "granite", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "granite"}}
POLICY = {"name": "ap", "modelRefs": [{"name": "granite", "namespace": "llm"}], "subjects": {"users": ["a"]}}


def subscription(name: str, **extra) -> dict:
    refs = [{"name": "granite", "namespace": "llm", "tokenRateLimits": [{"limit": 100, "window": "1m"}]}]
    return {"name": name, "owner": {"users": ["a"]}, "modelRefs": refs, **extra}


def raw(*subscriptions: dict) -> dict:
    return {"models": [MODEL], "authPolicies": [POLICY], "subscriptions": list(subscriptions)}


def live(name: str, status_stamp: str | None = None, annotation: str | None = None) -> dict:
    """A MaaSSubscription as the cluster holds it: a pre-3.6 one has no stamp at all."""
    metadata: dict = {"name": name, "namespace": NS}
    if annotation is not None:
        metadata["annotations"] = {"maas.opendatahub.io/rate-limit-identity": annotation}
    body = {"apiVersion": "maas.opendatahub.io/v1alpha1", "kind": "MaaSSubscription", "metadata": metadata}
    body["spec"] = {"owner": {"groups": [], "users": ["a"]}, "modelRefs": []}
    if status_stamp is not None:
        body["status"] = {"phase": "Active", "rateLimitIdentity": status_stamp}
    return body


def cluster(*subscriptions: dict) -> Observed:
    """The tenant namespace was listed: a subscription not in it is certainly new."""
    return Observed.of(subscriptions, listed=[Scope("MaaSSubscription", NS)])


def chosen(raw_config: dict, observed: Observed) -> tuple[dict, list[str]]:
    result = effective_identities(load_config(raw_config), observed)
    return dict(result.of), result.warnings


@pytest.mark.parametrize(
    ("live_object", "expected"),
    [
        (live("old", status_stamp="legacy"), "legacy"),
        (live("old", status_stamp="short"), "short"),
        (live("old", annotation="legacy"), "legacy"),
        (live("old"), "legacy"),
    ],
    ids=["status-stamp-legacy", "status-stamp-short", "annotation-stamp", "pre-3.6-without-stamp"],
)
def test_an_existing_subscription_keeps_its_live_identity(live_object, expected):
    assert chosen(raw(subscription("old")), cluster(live_object)) == ({f"{NS}/old": expected}, [])


def test_this_programs_annotation_wins_over_a_stale_status_stamp():
    """In `coexist` the controller's old `status.rateLimitIdentity: legacy` stays while the program rendered short
    (an explicit value, since cleared): clearing keeps the sticky value, the one the policy counts on."""
    assert chosen(raw(subscription("old")), cluster(live("old", "legacy", "short")))[0] == {f"{NS}/old": "short"}


def test_a_subscription_the_cluster_does_not_have_is_new_and_short():
    """Delete-and-recreate is a new CR too: the recreated subscription is absent from the snapshot."""
    assert chosen(raw(subscription("new")), cluster()) == ({f"{NS}/new": "short"}, [])


@pytest.mark.parametrize(("stamp", "explicit"), [("legacy", "short"), ("short", "legacy")])
def test_an_explicit_identity_is_the_escape_hatch_and_warns_that_it_resets_counters(stamp, explicit):
    identities, warnings = chosen(raw(subscription("old", rateLimitIdentity=explicit)), cluster(live("old", stamp)))
    assert identities == {f"{NS}/old": explicit}
    assert warnings == [
        f"subscription {NS}/old: rateLimitIdentity {explicit} replaces its live identity {stamp}, which resets its "
        "in-window token counter on each of its models; remove the field to keep the live identity"
    ]


def test_an_explicit_identity_equal_to_the_live_one_says_nothing():
    assert chosen(raw(subscription("old", rateLimitIdentity="legacy")), cluster(live("old", "legacy")))[1] == []


def test_clearing_the_field_keeps_the_sticky_value():
    """The stamp this program wrote when `short` was explicit stays the subscription's identity."""
    assert chosen(raw(subscription("old")), cluster(live("old", annotation="short")))[0] == {f"{NS}/old": "short"}


def test_an_unknown_value_is_rejected_in_configuration():
    with pytest.raises(ConfigError, match=r"rateLimitIdentity: 'long' is not allowed; use 'short' or 'legacy'"):
        load_config(raw(subscription("old", rateLimitIdentity="long")))


def test_an_unknown_live_stamp_keeps_key_based_counters_with_a_warning():
    identities, warnings = chosen(raw(subscription("old")), cluster(live("old", "medium")))
    assert identities == {f"{NS}/old": "legacy"}
    assert warnings and "'medium', which is neither short nor legacy" in warnings[0]


def test_without_observation_unset_subscriptions_are_short_and_the_preview_says_so():
    identities, warnings = chosen(raw(subscription("a"), subscription("b")), Observed.nothing())
    assert identities == {f"{NS}/a": "short", f"{NS}/b": "short"}
    assert warnings == [
        f"rateLimitIdentity is not set for 2 subscription(s) ({NS}/a, {NS}/b) and the cluster was not observed: "
        "they use short; any that exists live on legacy counters would start them afresh, so observe the cluster or "
        "set rateLimitIdentity"
    ]


def test_the_rendered_policy_status_and_stamp_carry_the_effective_identity():
    """Done when (issue 10): live `old` stamped legacy, configuration silent: `old` renders on its key."""
    rendering = render(raw(subscription("old")), observed=cluster(live("old", "legacy")))
    [trlp] = [o for o in rendering.objects() if o["metadata"]["name"] == "maas-trlp-granite"]
    [limit] = trlp["spec"]["limits"].values()
    assert limit["when"][0]["predicate"].startswith(
        'auth.identity.selected_subscription_key == "models-as-a-service/old@llm/granite"'
    )
    assert limit["counters"][0] == {"expression": "auth.identity.selected_subscription_key"}
    [body] = [o for o in rendering.objects() if o["kind"] == "MaaSSubscription"]
    assert body["metadata"]["annotations"]["maas.opendatahub.io/rate-limit-identity"] == "legacy"
    [status] = [s for s in rendering.statuses() if s["kind"] == "MaaSSubscriptionStatus"]
    assert status["status"]["rateLimitIdentity"] == "legacy"
    assert not [w for w in rendering.warnings if "rateLimitIdentity" in w]
