"""`platform.predicateFormat: compact`: one CEL `in` list per limit instead of one `==` clause per member.

The compact form must be a pure re-spelling: the same limits, names, rates and counters, and (evaluated with a real
CEL engine) exactly the same callers matched, on every test stack and on generated configurations. The
quota-continuity parser reads both forms, so switching the format resets no Limitador counter.
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from maas import crdschema
from maas.config import load_config, raw_from_stack_file
from maas.observe import Observed, Scope
from maas.plan.build import build_plan
from maas.plan.checks.quota import Clause, parse_predicate
from maas.plan.policies.ratelimit import (
    DISCOVERY_EXEMPTION,
    Member,
    caller_identity,
    compact_predicate,
    limits,
    matching_limits,
    plan_rate_limits,
)
from maas.tools import cel
from tests.conftest import DEV_STACK, ROOT, identities
from tests.test_ratelimit_cel import configurations

STACKS = [
    path
    for path in [*sorted((ROOT / "tests" / "stacks").glob("Pulumi.*.yaml")), DEV_STACK]
    if raw_from_stack_file(path)[0].get("subscriptions")  # a stack without subscriptions has no limit to compare
]
INFERENCE = "/llm/m/v1/chat/completions"
ID, KEY = "auth.identity.selected_subscription_id", "auth.identity.selected_subscription_key"
EXEMPT = f" && {DISCOVERY_EXEMPTION}"


def with_format(raw: dict, predicate_format: str) -> dict:
    raw = copy.deepcopy(raw)
    raw["platform"] = {**(raw.get("platform") or {}), "predicateFormat": predicate_format}
    return raw


def both_plans(raw: dict):
    """The rate-limit plans of one configuration in the default and in the compact format."""
    default, compact = (load_config(with_format(raw, f)) for f in ("default", "compact"))
    return plan_rate_limits(default, identities(default)), plan_rate_limits(compact, identities(compact))


def callers(plan) -> list[tuple[str, dict]]:
    """Every configured subscription's caller on every model it names (a member on its own model, a stranger
    on every other), plus callers no subscription has: an unknown ID, an unknown key, nothing selected."""
    found = []
    for output in plan.subscriptions.values():
        for entry in output["models"].values():
            found.append((entry["key"], caller_identity(output["rateLimitIdentity"], entry["key"])))
    stranger = "models-as-a-service/nobody@llm/m"
    found += [
        ("unknown id", caller_identity("short", stranger)),
        ("unknown key", caller_identity("legacy", stranger)),
        ("nothing selected", cel.subscription_identity()),
    ]
    return found


def assert_same_callers(raw: dict) -> int:
    """Both formats: identical policies but for the predicate text, and the same limits for every caller."""
    default, compact = both_plans(raw)
    assert default.subscriptions == compact.subscriptions
    checked = 0
    for model, policy in default.policies.items():
        other = compact.policies[model]
        assert without_predicates(other) == without_predicates(policy)
        for who, identity in callers(default):
            for path in (INFERENCE, "/llm/m/v1/models"):
                context = cel.request(path, identity)
                assert matching_limits(other, context) == matching_limits(policy, context), (model, who, path)
                checked += 1
    return checked


def without_predicates(policy: dict) -> dict:
    policy = copy.deepcopy(policy)
    for limit in policy["spec"]["limits"].values():
        del limit["when"]
    return policy


# ------------------------------------------------------------------------------------------------ the text


def member(name: str, identity: str = "short", rates=((1, "1m"),)) -> Member:
    return Member(f"tenant-a/{name}", identity, f"tenant-a/{name}@models/llm", rates)


def test_short_members_are_one_sorted_list_with_the_exemption():
    text = limits([member("silver"), member("gold")], True, compact=True)["tokens-1-per-1m"]["when"][0]["predicate"]
    assert (member("gold").rate_limit_id, member("silver").rate_limit_id) == ("cc05b3560574a41d", "2f0ce730ddf99408")
    assert text == f'{ID} in ["2f0ce730ddf99408", "cc05b3560574a41d"]' + EXEMPT


def test_a_single_member_is_a_list_of_one():
    assert compact_predicate([member("gold")], False) == f'{ID} in ["cc05b3560574a41d"]'


def test_legacy_members_are_listed_by_key():
    group = [member("b", "legacy"), member("a", "legacy")]
    assert compact_predicate(group, True) == f'{KEY} in ["tenant-a/a@models/llm", "tenant-a/b@models/llm"]' + EXEMPT


def test_unlimited_with_both_generations_holds_two_lists_in_the_default_clause_order():
    group = [member("b", "legacy", None), member("gold", "short", None), member("a", "legacy", None)]
    text = limits(group, True, compact=True)["tokens-unlimited"]["when"][0]["predicate"]
    keys = '["tenant-a/a@models/llm", "tenant-a/b@models/llm"]'
    assert text == f'({ID} in ["cc05b3560574a41d"] || {KEY} in {keys})' + EXEMPT


def test_the_default_stays_one_clause_per_member(dev_raw):
    plan = plan_rate_limits(load_config(dev_raw), identities(load_config(dev_raw)))
    predicates = [
        limit["when"][0]["predicate"] for p in plan.policies.values() for limit in p["spec"]["limits"].values()
    ]
    assert predicates and all(" in [" not in text and "==" in text for text in predicates)


def test_the_split_twin_limits_keep_their_names_and_counters():
    """A rate set with both generations stays two limits (`tokens-…` legacy, `tokens-…-id` short): one counter
    set per limit; only the predicate text changes."""
    raw = {
        "models": [{"name": "m", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "m"}}],
        "subscriptions": [
            {
                "name": name,
                "owner": {"users": ["u"]},
                "rateLimitIdentity": identity,
                "modelRefs": [{"name": "m", "namespace": "llm", "tokenRateLimits": [{"limit": 5, "window": "1s"}]}],
            }
            for name, identity in (("a", "legacy"), ("b", "short"), ("c", "short"))
        ],
    }
    _, compact = both_plans(raw)
    spec = compact.policies["llm/m"]["spec"]["limits"]
    assert list(spec) == ["tokens-5-per-1s", "tokens-5-per-1s-id"]
    assert spec["tokens-5-per-1s"]["when"][0]["predicate"] == f'{KEY} in ["models-as-a-service/a@llm/m"]' + EXEMPT
    assert spec["tokens-5-per-1s-id"]["when"][0]["predicate"].startswith(f"{ID} in [")
    assert spec["tokens-5-per-1s-id"]["counters"][0] == {"expression": ID}


def test_compact_policies_of_the_dev_stack_pass_the_crd_schema(dev_raw):
    compact = load_config(with_format(dev_raw, "compact"))
    for policy in plan_rate_limits(compact, identities(compact)).policies.values():
        assert crdschema.validate(policy) == []


# ------------------------------------------------------------------------------------ same callers, real CEL


@pytest.mark.parametrize("stack", STACKS, ids=lambda path: Path(path).name)
def test_every_caller_of_every_test_stack_matches_the_same_limits_in_both_formats(stack):
    raw, _ = raw_from_stack_file(stack)
    assert assert_same_callers(raw) > 0


@settings(max_examples=40, deadline=None)
@given(configurations(), st.booleans())
def test_property_both_formats_match_exactly_the_same_callers(raw, exempt):
    raw["platform"] = {"exemptModelDiscovery": exempt}
    assert assert_same_callers(raw) > 0


# ----------------------------------------------------------------------------------------- the parser


@pytest.mark.parametrize(
    ("predicate", "expected"),
    [
        (f'{ID} in ["e0b080a72144d7c5"]', [("short", "e0b080a72144d7c5")]),
        (
            f'{ID} in ["11da65b5a1ccaa3f", "695aae76263a985a"]' + EXEMPT,
            [("short", "11da65b5a1ccaa3f"), ("short", "695aae76263a985a")],
        ),
        (
            f'({ID} in ["11da65b5a1ccaa3f"] || {KEY} in ["ns/b@llm/granite","ns/c@llm/granite"]) && '
            '!request.path.endsWith("/v1/models")',
            [("short", "11da65b5a1ccaa3f"), ("legacy", "ns/b@llm/granite"), ("legacy", "ns/c@llm/granite")],
        ),
        (f"{ID} in []", []),
    ],
    ids=["one", "several-with-exemption", "both-lists-upstream-exemption", "empty"],
)
def test_the_parser_reads_the_compact_form(predicate, expected):
    assert parse_predicate(predicate) == tuple(Clause(identity, value) for identity, value in expected)


@pytest.mark.parametrize(
    "predicate",
    [
        f'{ID} in ["e0b080a72144d7c5"',
        f"{ID} in [e0b080a72144d7c5]",
        f'{ID} in ["e0b080a72144d7c5",]',
        f'{ID} in ["ns/a@llm/granite"]',
        f'{KEY} in ["e0b080a72144d7c5", "not-a-key"]',
        f'{ID}in["e0b080a72144d7c5"]',
        f'{ID} in ["e0b080a72144d7c5"] || {KEY} in ["ns/a@llm/granite"]',
    ],
    ids=["unclosed", "unquoted", "trailing-comma", "key-on-the-id-attribute", "malformed-key", "no-space", "no-parens"],
)
def test_a_malformed_list_is_not_read(predicate):
    assert parse_predicate(predicate) is None


@settings(max_examples=60, deadline=None)
@given(configurations(), st.booleans())
def test_property_the_parser_reads_the_same_members_from_both_formats(raw, exempt):
    raw["platform"] = {"exemptModelDiscovery": exempt}
    default, compact = both_plans(raw)
    for model, policy in default.policies.items():
        for name, limit in policy["spec"]["limits"].items():
            other = compact.policies[model]["spec"]["limits"][name]
            members = parse_predicate(limit["when"][0]["predicate"])
            assert members is not None
            assert set(parse_predicate(other["when"][0]["predicate"])) == set(members)


# ----------------------------------------------------------------------------------- quota continuity


def live_cluster(raw: dict) -> Observed:
    """What `raw` applied: its TokenRateLimitPolicies and its MaaSSubscriptions, stamped with their identities."""
    plan = build_plan(load_config(raw), Observed.nothing())
    objects = [o.body for o in plan.objects() if o.kind in ("TokenRateLimitPolicy", "MaaSSubscription")]
    objects = [o for o in objects if o["kind"] == "MaaSSubscription" or o["metadata"]["name"].startswith("maas-trlp-")]
    scopes = {Scope(o["kind"], o["metadata"]["namespace"]) for o in objects}
    return Observed.of(objects, listed=scopes)


@pytest.mark.parametrize(("live", "planned"), [("default", "compact"), ("compact", "default")])
def test_switching_the_format_resets_no_counter(dev_raw, live, planned):
    observed = live_cluster(with_format(dev_raw, live))
    plan = build_plan(load_config(with_format(dev_raw, planned)), observed)
    assert plan.outputs["quotaResets"] == []
    assert not [w for w in plan.warnings if "quota" in w or "cannot attribute" in w]


def test_a_rate_change_under_the_compact_form_is_still_reported(dev_raw):
    """The parser attributes compact members, so a real reset is not hidden by the format switch."""
    observed = live_cluster(with_format(dev_raw, "default"))
    after = with_format(dev_raw, "compact")
    premium = next(s for s in after["subscriptions"] if s["name"] == "premium")
    next(r for r in premium["modelRefs"] if r["name"] == "granite-7b")["tokenRateLimits"] = [
        {"limit": 7, "window": "7s"}
    ]
    resets = build_plan(load_config(after), observed).outputs["quotaResets"]
    assert [(r["subscription"], r["model"], r["newLimit"], r["reason"]) for r in resets] == [
        ("models-as-a-service/premium", "llm/granite-7b", "tokens-7-per-7s", "its rates changed")
    ]


@pytest.mark.parametrize(
    "text",
    [
        f"{ID}" + " " * 1_000_000,
        f"{ID} in [" + " " * 1_000_000,
        "x" + " " * 1_000_000 + '&& !request.url_path.endsWith("/v1/models") y',
    ],
    ids=["attribute-then-spaces", "open-list-then-spaces", "spaces-before-a-non-final-exemption"],
)
def test_a_megabyte_of_whitespace_in_a_live_predicate_is_read_as_no_known_form(text):
    """A live policy is anyone's text: these took minutes with overlapping whitespace runs in the parser."""
    assert parse_predicate(text) is None
