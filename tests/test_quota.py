"""Issue 10, the quota-continuity report: which live Limitador counters an update resets, on scripted pairs.

Each "before" configuration is rendered with nothing observed and its TokenRateLimitPolicies (and its subscriptions,
stamped with their identities) become the live cluster of the "after" configuration: exactly an upgrade.
"""

from __future__ import annotations

import pulumi
import pytest

from maas.config import ConfigError, load_config
from maas.observe import Observed, Scope
from maas.plan.build import build_plan
from maas.plan.checks.quota import Clause, parse_predicate, quota_issues
from maas.plan.checks.unmetered import is_report_line
from maas.plan.desired import Plan
from maas.tools.render import RecordingMonitor, render

NS = "models-as-a-service"
MODEL = {
    "name": "granite",
    "namespace": "llm",
    "modelRef": {"kind": "LLMInferenceService", "name": "granite"},
    "endpointOverride": "https://granite.example.com",
}
POLICY = {"name": "ap", "modelRefs": [{"name": "granite", "namespace": "llm"}], "subjects": {"users": ["a"]}}
LISTED = [Scope("MaaSSubscription", NS), Scope("TokenRateLimitPolicy", "llm")]
ACCEPT = (
    "their in-window usage starts again at zero. To accept a reset, add its subscription to maas:acceptQuotaResets "
    "(with maas:platform.quotaResets: error an unaccepted reset stops the update)"
)


def subscription(name: str, limit: int = 100, **extra) -> dict:
    refs = [{"name": "granite", "namespace": "llm", "tokenRateLimits": [{"limit": limit, "window": "1m"}]}]
    return {"name": name, "owner": {"users": ["a"]}, "modelRefs": refs, **extra}


def raw(*subscriptions: dict, **extra) -> dict:
    return {"models": [MODEL], "authPolicies": [POLICY], "subscriptions": list(subscriptions), **extra}


def live_subscription(name: str, stamp: str | None) -> dict:
    body = {"apiVersion": "maas.opendatahub.io/v1alpha1", "kind": "MaaSSubscription"}
    body["metadata"] = {"name": name, "namespace": NS}
    return {**body, "status": {"rateLimitIdentity": stamp}} if stamp else body


def trlps(plan: Plan) -> list[dict]:
    return [o.body for o in plan.objects() if o.kind == "TokenRateLimitPolicy" and o.name.startswith("maas-trlp-")]


def upgraded_from(before: dict, edit=None) -> Observed:
    """The cluster `before` built: its policies (optionally edited) and its subscriptions, stamped."""
    plan = build_plan(load_config(before), Observed.nothing())
    policies = [edit(p) for p in trlps(plan)] if edit else trlps(plan)
    stamps = {key: out["rateLimitIdentity"] for key, out in plan.outputs["subscriptions"].items()}
    live = [live_subscription(key.split("/")[1], stamp) for key, stamp in stamps.items()]
    return Observed.of(policies + live, listed=LISTED)


def warnings(after: dict, observed: Observed) -> list[str]:
    """The plan's warnings but the ambiguous-selection one: every subscription here is owned by user `a`."""
    plan = build_plan(load_config(after), observed)
    return [w for w in plan.warnings if "multiple_subscriptions" not in w and not is_report_line(w)]


def line(name: str, old: str, new: str, reason: str) -> str:
    return f"quota reset: subscription {NS}/{name} on model llm/granite: limit {old} -> {new} ({reason})"


def summary(*names: str) -> str:
    shown = ", ".join(f"{NS}/{name} on llm/granite" for name in names)
    counters = "counter would" if len(names) == 1 else "counters would"
    return f"{len(names)} token-rate {counters} reset: {shown}; {ACCEPT}"


# ------------------------------------------------------------------------------------------------- the parser


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        ('auth.identity.selected_subscription_id == "e0b080a72144d7c5"', [("short", "e0b080a72144d7c5")]),
        (
            'auth.identity.selected_subscription_key == "ns/a@llm/granite" && !request.path.endsWith("/v1/models")',
            [("legacy", "ns/a@llm/granite")],
        ),
        (
            '(auth.identity.selected_subscription_id == "11da65b5a1ccaa3f" || '
            'auth.identity.selected_subscription_key == "ns/b@llm/granite") && '
            '!request.url_path.endsWith("/v1/models")',
            [("short", "11da65b5a1ccaa3f"), ("legacy", "ns/b@llm/granite")],
        ),
    ],
    ids=["bare-short", "legacy-upstream-exemption", "parenthesised-mixed-url-path"],
)
def test_one_parser_reads_both_clause_forms_and_both_exemption_spellings(predicate, expected):
    assert parse_predicate(predicate) == tuple(Clause(identity, value) for identity, value in expected)


@pytest.mark.parametrize(
    "predicate",
    [
        'auth.identity.selected_subscription_id == "e0b080a72144d7c5" || '
        'auth.identity.selected_subscription_id == "be9f74e5073ace26"',
        'auth.identity.selected_subscription_id == "ns/a@llm/granite"',
        'auth.identity.selected_subscription_key == "not-a-key"',
        'auth.identity.selected_subscription_key.startsWith("ns/")',
        'auth.identity.userid == "alice"',
        "",
    ],
    ids=[
        "or-without-parentheses",
        "key-on-the-id-attribute",
        "malformed-key",
        "other-test",
        "other-attribute",
        "empty",
    ],
)
def test_any_other_predicate_is_not_read(predicate):
    assert parse_predicate(predicate) is None


# ---------------------------------------------------------------------------------------------- the resets


def test_a_rate_change_resets_that_subscription_alone():
    before = raw(subscription("gold"), subscription("silver"))
    after = raw(subscription("gold", 200), subscription("silver"))
    assert warnings(after, upgraded_from(before)) == [
        summary("gold"),
        line("gold", "tokens-100-per-1m", "tokens-200-per-1m", "its rates changed"),
    ]


@pytest.mark.parametrize(
    ("stamp", "explicit", "old", "new"),
    [
        ("legacy", "short", "legacy (selected_subscription_key)", "short (selected_subscription_id)"),
        ("short", "legacy", "short (selected_subscription_id)", "legacy (selected_subscription_key)"),
    ],
)
def test_an_explicit_identity_differing_from_the_live_stamp_resets_its_counter(stamp, explicit, old, new):
    observed = upgraded_from(raw(subscription("gold", rateLimitIdentity=stamp)))
    assert warnings(raw(subscription("gold", rateLimitIdentity=explicit)), observed) == [
        f"subscription {NS}/gold: rateLimitIdentity {explicit} replaces its live identity {stamp}, which resets its "
        "in-window token counter on each of its models; remove the field to keep the live identity",
        summary("gold"),
        line("gold", "tokens-100-per-1m", "tokens-100-per-1m", f"its identity changed from {old} to {new}"),
    ]


def test_a_legacy_subscription_joining_a_short_group_splits_it_and_resets_the_short_members_collaterally():
    before = raw(subscription("a"), subscription("b"))
    after = raw(subscription("a"), subscription("b"), subscription("old", rateLimitIdentity="legacy"))
    cause = f"collateral: legacy subscription {NS}/old joined its rate group"
    assert warnings(after, upgraded_from(before)) == [
        summary("a", "b"),
        line("a", "tokens-100-per-1m", "tokens-100-per-1m-id", cause),
        line("b", "tokens-100-per-1m", "tokens-100-per-1m-id", cause),
    ]


def test_removing_the_legacy_member_of_a_mixed_group_names_the_short_members_that_lose_the_id_suffix():
    """Done when (issue 10). The removed subscription itself is no reset: its counter simply goes."""
    before = raw(subscription("a"), subscription("b"), subscription("old", rateLimitIdentity="legacy"))
    after = raw(subscription("a"), subscription("b"))
    cause = f"collateral: legacy subscription {NS}/old left its rate group"
    assert warnings(after, upgraded_from(before)) == [
        summary("a", "b"),
        line("a", "tokens-100-per-1m-id", "tokens-100-per-1m", cause),
        line("b", "tokens-100-per-1m-id", "tokens-100-per-1m", cause),
    ]


def test_a_legacy_member_switching_to_short_merges_its_group_and_says_so():
    before = raw(subscription("a"), subscription("old", rateLimitIdentity="legacy"))
    after = raw(subscription("a"), subscription("old", rateLimitIdentity="short"))
    assert warnings(after, upgraded_from(before))[1:] == [
        summary("a", "old"),
        line("a", "tokens-100-per-1m-id", "tokens-100-per-1m", f"collateral: subscription {NS}/old switched to short"),
        line(
            "old",
            "tokens-100-per-1m",
            "tokens-100-per-1m",
            "its identity changed from legacy (selected_subscription_key) to short (selected_subscription_id)",
        ),
    ]


def pre_grouping_limit(name: str, limit: int) -> dict:
    """Upstream section 1.1: one limit per subscription, keyed by name, counted per user."""
    predicate = (
        f'auth.identity.selected_subscription_key == "{NS}/{name}@llm/granite" && !request.path.endsWith("/v1/models")'
    )
    return {
        "rates": [{"limit": limit, "window": "1m"}],
        "when": [{"predicate": predicate}],
        "counters": [{"expression": "auth.identity.userid"}],
    }


def pre_grouping_cluster() -> Observed:
    """A controller-built pre-3.6 cluster: per-subscription limits, subscriptions without a stamp."""
    policy = {
        "apiVersion": "kuadrant.io/v1alpha1",
        "kind": "TokenRateLimitPolicy",
        "metadata": {"name": "maas-trlp-granite", "namespace": "llm"},
        "spec": {
            "targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "granite-kserve-route"},
            "limits": {
                f"{NS}-gold-granite-tokens": pre_grouping_limit("gold", 100),
                f"{NS}-silver-granite-tokens": pre_grouping_limit("silver", 100),
            },
        },
    }
    return Observed.of([policy, live_subscription("gold", None), live_subscription("silver", None)], listed=LISTED)


def test_the_rename_from_pre_grouping_per_subscription_limits_resets_every_member():
    """Seed 002: that rename is independent of short IDs; the sticky legacy identity cannot avoid it."""
    after = raw(subscription("gold"), subscription("silver", 200))
    renamed = "its limit is renamed from the pre-grouping per-subscription format"
    assert warnings(after, pre_grouping_cluster()) == [
        summary("gold", "silver"),
        line("gold", f"{NS}-gold-granite-tokens", "tokens-100-per-1m", renamed),
        line("silver", f"{NS}-silver-granite-tokens", "tokens-200-per-1m", f"its rates changed and {renamed}"),
    ]


def counted_per_user_only(policy: dict) -> dict:
    limits = {
        name: {**limit, "counters": [{"expression": "auth.identity.userid"}]}
        for name, limit in policy["spec"]["limits"].items()
    }
    return {**policy, "spec": {**policy["spec"], "limits": limits}}


def test_changed_counters_reset_although_the_limit_keeps_its_name():
    config = raw(subscription("gold"))
    assert warnings(config, upgraded_from(config, counted_per_user_only)) == [
        summary("gold"),
        line("gold", "tokens-100-per-1m", "tokens-100-per-1m", "its limit's counters changed"),
    ]


def renamed_to(name: str):
    def edit(policy: dict) -> dict:
        [limit] = policy["spec"]["limits"].values()
        return {**policy, "spec": {**policy["spec"], "limits": {name: limit}}}

    return edit


@pytest.mark.parametrize(
    ("live_name", "reason"),
    [
        ("tokens-100-per-1m-id", "collateral: its own rates and identity did not change"),
        ("hand-made", "its limit is renamed"),
    ],
    ids=["id-suffix-without-a-cause", "another-name"],
)
def test_a_renamed_limit_resets_even_when_no_member_changed(live_name, reason):
    """A short-only group that another build named `-id`, or a limit named by hand: the name is the counter."""
    config = raw(subscription("gold"), subscription("silver"))
    assert warnings(config, upgraded_from(config, renamed_to(live_name))) == [
        summary("gold", "silver"),
        line("gold", live_name, "tokens-100-per-1m", reason),
        line("silver", live_name, "tokens-100-per-1m", reason),
    ]


def unreadable(policy: dict) -> dict:
    limit = {
        **policy["spec"]["limits"]["tokens-100-per-1m"],
        "when": [{"predicate": 'auth.identity.selected_subscription_key.startsWith("models-as-a-service/")'}],
    }
    return {**policy, "spec": {**policy["spec"], "limits": {"tokens-100-per-1m": limit}}}


def test_an_unreadable_live_predicate_is_reported_never_guessed():
    before = raw(subscription("gold"))
    assert warnings(raw(subscription("gold", 200)), upgraded_from(before, unreadable)) == [
        "TokenRateLimitPolicy llm/maas-trlp-granite: limit 'tokens-100-per-1m' has a predicate this program cannot "
        "attribute to subscriptions ('auth.identity.selected_subscription_key.startsWith(\"models-as-a-service/\")'), "
        "so whether its counters reset is not reported; compare it with the planned policy by hand before applying"
    ]


@pytest.mark.parametrize(
    "observed",
    [Observed.of([live_subscription("gold", "short")], listed=LISTED), Observed.nothing()],
    ids=["absent", "unknown"],
)
def test_a_model_without_a_live_policy_resets_nothing(observed):
    plan = build_plan(load_config(raw(subscription("gold", 200))), observed)
    assert not [w for w in plan.warnings if "reset" in w] and plan.outputs["quotaResets"] == []


def test_a_new_subscription_and_a_gone_one_reset_nothing():
    before = raw(subscription("gold"), subscription("bronze", 10))
    assert warnings(raw(subscription("gold"), subscription("new", 5)), upgraded_from(before)) == []


def test_moving_into_or_out_of_unlimited_loses_no_usage():
    """`tokens-unlimited` holds no quota: there is no in-window usage to lose on either side."""
    limited = raw(subscription("gold"))
    unlimited = raw({**subscription("gold"), "modelRefs": [{"name": "granite", "namespace": "llm", "unlimited": True}]})
    assert warnings(unlimited, upgraded_from(limited)) == []
    assert warnings(limited, upgraded_from(unlimited)) == []


def test_a_policy_pulumi_leaves_alone_resets_nothing():
    before = raw(subscription("gold"))
    unmanaged = [{"kind": "TokenRateLimitPolicy", "namespace": "llm", "name": "maas-trlp-granite"}]
    after = raw(subscription("gold", 200), unmanaged=unmanaged)
    assert not [w for w in warnings(after, upgraded_from(before)) if "reset" in w]


def test_a_sticky_legacy_subscription_renders_on_its_key_and_reports_no_reset():
    """Done when (issue 10): `render --observed`, live `old` stamped legacy, configuration silent."""
    rendering = render(
        raw(subscription("old")), observed=upgraded_from(raw(subscription("old", rateLimitIdentity="legacy")))
    )
    [trlp] = [o for o in rendering.objects() if o["metadata"]["name"] == "maas-trlp-granite"]
    assert trlp["spec"]["limits"]["tokens-100-per-1m"]["when"][0]["predicate"].startswith(
        f'auth.identity.selected_subscription_key == "{NS}/old@llm/granite"'
    )
    assert not [w for w in rendering.warnings if "reset" in w]
    assert rendering.plan.outputs["quotaResets"] == []


# ------------------------------------------------------------------------------ blocking, accepting, outputs


def test_quota_resets_error_blocks_an_unaccepted_reset_before_anything_is_registered():
    before = raw(subscription("gold"), subscription("silver"))
    after = raw(subscription("gold", 200), subscription("silver"), platform={"quotaResets": "error"})
    monitor = RecordingMonitor()
    with pytest.raises(ConfigError) as caught:
        render(after, monitor=monitor, observed=upgraded_from(before))
    assert [str(issue) for issue in caught.value.issues] == [
        f"maas:subscriptions ({NS}/gold): this update resets its token-rate counter on model llm/granite (limit "
        "tokens-100-per-1m -> tokens-200-per-1m, its rates changed) and maas:platform.quotaResets is error; add "
        f"'{NS}/gold' to maas:acceptQuotaResets to accept the reset"
    ]
    assert monitor.registrations == []


def test_an_accepted_reset_goes_ahead_and_is_still_shown_marked_accepted():
    before = raw(subscription("gold"))
    after = raw(subscription("gold", 200), platform={"quotaResets": "error"}, acceptQuotaResets=[f"{NS}/gold"])
    rendering = render(after, observed=upgraded_from(before))
    reset = line("gold", "tokens-100-per-1m", "tokens-200-per-1m", "its rates changed")
    assert [w for w in rendering.warnings if "reset" in w] == [
        summary("gold"),
        f"{reset}; accepted in maas:acceptQuotaResets",
    ]
    assert pulumi.runtime.settings.get_root_resource().outputs["quotaResets"] == [
        {
            "subscription": f"{NS}/gold",
            "model": "llm/granite",
            "oldLimit": "tokens-100-per-1m",
            "newLimit": "tokens-200-per-1m",
            "reason": "its rates changed",
            "collateral": False,
            "accepted": True,
        }
    ]


def test_the_stack_output_marks_collateral_resets():
    before = raw(subscription("a"), subscription("old", rateLimitIdentity="legacy"))
    plan = build_plan(load_config(raw(subscription("a"))), upgraded_from(before))
    assert plan.outputs["quotaResets"] == [
        {
            "subscription": f"{NS}/a",
            "model": "llm/granite",
            "oldLimit": "tokens-100-per-1m-id",
            "newLimit": "tokens-100-per-1m",
            "reason": f"collateral: legacy subscription {NS}/old left its rate group",
            "collateral": True,
            "accepted": False,
        }
    ]


def test_with_quota_resets_warn_nothing_blocks():
    record = {"subscription": f"{NS}/gold", "model": "llm/granite", "oldLimit": "x", "newLimit": "y"}
    record |= {"reason": "its rates changed", "accepted": False}
    assert quota_issues(load_config(raw(subscription("gold"))), [record]) == []


# ------------------------------------------------------------------------------- review: moves and stale answers


def test_a_new_route_for_the_model_resets_every_member():
    """Kuadrant puts a policy's limits in the Limitador namespace of its target route."""
    before = raw(subscription("gold"), subscription("silver"))
    after = raw(subscription("gold"), subscription("silver"))
    after["models"] = [{**MODEL, "route": {"name": "granite-v2-route"}}]
    reason = "its model's route changes from granite-kserve-route to granite-v2-route"
    assert [w for w in warnings(after, upgraded_from(before)) if w.startswith("quota reset:")] == [
        line("gold", "tokens-100-per-1m", "tokens-100-per-1m", reason),
        line("silver", "tokens-100-per-1m", "tokens-100-per-1m", reason),
    ]


def test_a_policy_that_moves_to_another_namespace_resets_every_member():
    before = raw(subscription("gold"))
    after = raw(subscription("gold"))
    after["models"] = [{**MODEL, "route": {"name": "granite-kserve-route", "namespace": "serving"}}]
    observed = upgraded_from(before)
    observed = Observed.of(
        [dict(o) for o in observed.objects.values()], [*LISTED, Scope("TokenRateLimitPolicy", "serving")]
    )
    assert [w for w in warnings(after, observed) if w.startswith("quota reset:")] == [
        line("gold", "tokens-100-per-1m", "tokens-100-per-1m", "its policy moves from llm/maas-trlp-granite")
    ]


def test_live_limits_of_any_shape_are_read_without_crashing():
    def broken(policy):
        limit = next(iter(policy["spec"]["limits"].values()))
        limit["rates"] = [{"limit": {"a": 1}, "window": 5}, "x"]
        limit["counters"] = 7
        return policy

    assert build_plan(load_config(raw(subscription("gold"))), upgraded_from(raw(subscription("gold")), broken))


def test_an_acceptance_with_nothing_to_accept_is_pointed_out():
    after = raw(subscription("gold"), acceptQuotaResets=[f"{NS}/gold"])
    assert (
        f"maas:acceptQuotaResets lists {NS}/gold, but this update resets none of its counters; remove it so that a "
        "later reset is not accepted unseen"
    ) in warnings(after, upgraded_from(raw(subscription("gold"))))


def test_a_snapshot_that_did_not_see_the_policies_says_continuity_was_not_checked():
    observed = Observed.of([live_subscription("gold", "short")], listed=[Scope("MaaSSubscription", NS)])
    assert (
        "quota continuity not checked for 1 model(s) (llm/granite): their live TokenRateLimitPolicies were not "
        "observed, so a reset there would not be reported"
    ) in warnings(raw(subscription("gold")), observed)


# ---------------------------------------------------------------------- issue 17: OIDC callers counted anew

GATEWAY_NS = "openshift-ingress"
ISSUER = {"issuerUrl": "https://keycloak.example.com/realms/maas", "clientId": "maas-client"}
# What upstream (and this program before issue 17) renders: `preferred_username`, unprefixed.
AS_UPSTREAM = {**ISSUER, "usernameClaim": "preferred_username", "usernamePrefix": ""}
RENAMED = (
    "its OIDC callers' auth.identity.userid changes: tenant models-as-a-service names them by "
    'oidc.usernamePrefix "oidc:" and oidc.usernameClaim sub'
)


def oidc(*subscriptions: dict, issuer: dict | None = ISSUER, **extra) -> dict:
    tenant = {"name": NS, **({"oidc": issuer} if issuer else {})}
    return raw(*subscriptions, tenants=[tenant], **extra)


def upgraded_with_gateway_policy(before: dict) -> Observed:
    """`upgraded_from`, with the live gateway AuthPolicy that `before` rendered."""
    plan = build_plan(load_config(before), Observed.nothing())
    gateway = [o.body for o in plan.objects() if o.kind == "AuthPolicy" and o.namespace == GATEWAY_NS]
    live = [*upgraded_from(before).objects.values(), *gateway]
    return Observed.of(live, listed=[*LISTED, Scope("AuthPolicy", GATEWAY_NS)])


def resets(after: dict, observed: Observed) -> list[str]:
    return [w for w in warnings(after, observed) if "reset" in w]


def test_prefixing_oidc_usernames_reports_a_reset_for_every_subscription_of_the_tenant():
    """The live policy names OIDC callers `alice`, the planned one `oidc:<sub>`: their counters start again."""
    observed = upgraded_with_gateway_policy(oidc(subscription("gold"), subscription("silver"), issuer=AS_UPSTREAM))
    assert resets(oidc(subscription("gold"), subscription("silver")), observed) == [
        summary("gold", "silver"),
        line("gold", "tokens-100-per-1m", "tokens-100-per-1m", RENAMED),
        line("silver", "tokens-100-per-1m", "tokens-100-per-1m", RENAMED),
    ]


@pytest.mark.parametrize(
    ("before", "after"),
    [(ISSUER, ISSUER), (AS_UPSTREAM, AS_UPSTREAM), (None, ISSUER), (None, None)],
    ids=["same-prefix", "same-upstream-form", "oidc-added", "no-oidc"],
)
def test_an_unchanged_derivation_or_no_live_oidc_callers_resets_nothing(before, after):
    observed = upgraded_with_gateway_policy(oidc(subscription("gold"), issuer=before))
    assert resets(oidc(subscription("gold"), issuer=after), observed) == []


def test_a_rate_change_and_the_rename_are_one_reset_with_both_reasons():
    observed = upgraded_with_gateway_policy(oidc(subscription("gold"), issuer=AS_UPSTREAM))
    assert resets(oidc(subscription("gold", 200)), observed) == [
        summary("gold"),
        line("gold", "tokens-100-per-1m", "tokens-200-per-1m", f"its rates changed; {RENAMED}"),
    ]


def test_an_unmanaged_gateway_policy_renames_nobody():
    observed = upgraded_with_gateway_policy(oidc(subscription("gold"), issuer=AS_UPSTREAM))
    unmanaged = [{"kind": "AuthPolicy", "namespace": GATEWAY_NS, "name": "maas-gateway-auth"}]
    assert resets(oidc(subscription("gold"), unmanaged=unmanaged), observed) == []


def test_the_rename_blocks_with_quota_resets_error_until_accepted():
    observed = upgraded_with_gateway_policy(oidc(subscription("gold"), issuer=AS_UPSTREAM))
    blocked = oidc(subscription("gold"), platform={"quotaResets": "error"})
    outputs = build_plan(load_config(blocked), observed).outputs["quotaResets"]
    assert [str(issue) for issue in quota_issues(load_config(blocked), outputs)] == [
        f"maas:subscriptions ({NS}/gold): this update resets its token-rate counter on model llm/granite (limit "
        f"tokens-100-per-1m -> tokens-100-per-1m, {RENAMED}) and maas:platform.quotaResets is error; add "
        f"'{NS}/gold' to maas:acceptQuotaResets to accept the reset"
    ]
    accepted = {**blocked, "acceptQuotaResets": [f"{NS}/gold"]}
    [record] = build_plan(load_config(accepted), observed).outputs["quotaResets"]
    assert (record["reason"], record["accepted"], record["collateral"]) == (RENAMED, True, False)
