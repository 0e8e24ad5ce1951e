"""`python -m maas explain`: subscriptions and callers explained from the rendered objects with the CEL engine."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from maas.config import raw_from_stack_file
from maas.tools import cel, explaining
from maas.tools.cli import main
from maas.tools.explaining import maasapi
from maas.tools.explaining.caller import explain_caller
from maas.tools.explaining.subscription import explain_subscription
from maas.tools.explaining.world import UnknownNameError, World, load_world

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT / "Pulumi.dev.yaml"
SELECTION = ROOT / "tests" / "stacks" / "Pulumi.explain-selection.yaml"
NS = "models-as-a-service"
IDENTITY = "maas.opendatahub.io/rate-limit-identity"


def short(subscription: str, model: str) -> str:
    """Seed 002: the first 16 hex characters of the SHA-256 of `namespace/name@modelNs/model`."""
    return hashlib.sha256(f"{NS}/{subscription}@{model}".encode()).hexdigest()[:16]


@pytest.fixture(scope="module")
def dev() -> World:
    return load_world(DEV, "dev", None)


@pytest.fixture(scope="module")
def selection() -> World:
    return load_world(SELECTION, "explain-selection", None)


def run(capsys, *args: str) -> tuple[int, str, str]:
    status = main(["explain", *args])
    out, err = capsys.readouterr()
    return status, out, err


def model_block(text: str, model: str) -> str:
    """The lines of `explain subscription` about one model."""
    return text.split(f"  model {model}\n")[1].split("\n\n")[0]


def rendered_limit(world: World, policy: str, value: str) -> str:
    """The one limit of a rendered TokenRateLimitPolicy whose predicate names `value` (read as text, not CEL)."""
    (name,) = [
        name
        for name, limit in world.object("TokenRateLimitPolicy", policy)["spec"]["limits"].items()
        if f'"{value}"' in limit["when"][0]["predicate"]
    ]
    return name


# ------------------------------------------------------------------------------------------ explain subscription


def test_short_ids_printed_per_model_are_the_sha256_of_the_model_scoped_key(capsys):
    status, out, _ = run(capsys, "subscription", f"{NS}/premium", "--config-file", str(DEV))
    assert status == 0
    for model in ("external-models/gpt-4o", "llm/granite-7b", "llm/llama-3-8b"):
        assert f"short ID: {short('premium', model)}" in model_block(out, model)
    assert "short ID: d04ed4cd04d624d0" in model_block(out, "llm/granite-7b")


def test_model_option_explains_only_that_model(dev):
    text = explain_subscription(dev, f"{NS}/premium", "llm/llama-3-8b").text()
    assert "model llm/llama-3-8b" in text and "model llm/granite-7b" not in text


def test_a_legacy_subscription_shows_the_key_predicate_and_key_counters(dev):
    text = model_block(explain_subscription(dev, f"{NS}/premium-legacy").text(), "llm/llama-3-8b")
    key = f"{NS}/premium-legacy@llm/llama-3-8b"
    assert (
        f'when: auth.identity.selected_subscription_key == "{key}" && !request.url_path.endsWith("/v1/models")' in text
    )
    assert "limit: tokens-50000-per-1h (50000 per 1h)" in text
    assert "counted per: auth.identity.selected_subscription_key, auth.identity.userid" in text


def test_an_explicit_identity_says_it_comes_from_configuration(dev):
    text = explain_subscription(dev, f"{NS}/premium-legacy").text()
    assert "rate-limit identity: legacy (set in configuration: rateLimitIdentity: legacy)" in text


def test_an_unset_identity_without_observation_is_short_and_says_why(dev):
    text = explain_subscription(dev, f"{NS}/basic").text()
    assert "rate-limit identity: short (not set and the cluster was not observed" in text


def live_subscription(name: str, annotations: dict[str, str] | None = None) -> dict:
    """A MaaSSubscription as the cluster holds it (a pre-3.6 one carries no identity stamp)."""
    metadata = {"name": name, "namespace": NS, **({"annotations": annotations} if annotations else {})}
    spec = {"owner": {"groups": [{"name": "basic-users"}]}, "modelRefs": []}
    return {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSSubscription",
        "metadata": metadata,
        "spec": spec,
    }


@pytest.fixture(scope="module")
def observed_dev(tmp_path_factory) -> World:
    """The dev stack against a `kubectl get -o yaml` List: basic exists unstamped, premium-legacy stamped short."""
    items = [live_subscription("basic"), live_subscription("premium-legacy", {IDENTITY: "short"})]
    snapshot = tmp_path_factory.mktemp("explain") / "snapshot.yaml"
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    return load_world(DEV, "dev", snapshot)


def test_an_unset_identity_is_sticky_from_the_live_subscription(observed_dev):
    text = explain_subscription(observed_dev, f"{NS}/basic").text()
    expected = "legacy (not set: sticky from the live MaaSSubscription, which has no identity stamp (pre-3.6): legacy)"
    assert f"rate-limit identity: {expected}" in text
    assert f'selected_subscription_key == "{NS}/basic@llm/granite-7b"' in text


def test_an_explicit_identity_that_differs_from_the_live_one_says_it_resets_counters(observed_dev):
    text = explain_subscription(observed_dev, f"{NS}/premium-legacy").text()
    assert (
        "rate-limit identity: legacy (set in configuration: rateLimitIdentity: legacy; it replaces the live identity "
        "short, which resets its counters)"
    ) in text


def test_a_subscription_the_cluster_does_not_have_is_new_and_short(observed_dev):
    text = explain_subscription(observed_dev, f"{NS}/team-x").text()
    assert "rate-limit identity: short (not set, and the cluster has no such MaaSSubscription: new, so short)" in text


def test_the_limit_found_by_cel_is_the_rendered_policy_entry_of_each_subscription(dev):
    """Every subscription on every model: the limit explain prints is the one whose predicate names its ID."""
    checked = 0
    for subscription in dev.config.subscriptions:
        output = dev.outputs["subscriptions"][subscription.key]
        text = explain_subscription(dev, subscription.key).text()
        assert "BUG SIGNAL" not in text
        for model, entry in output["models"].items():
            value = entry["shortId"] if output["rateLimitIdentity"] == "short" else entry["key"]
            policy = dev.outputs["models"][model]["tokenRateLimitPolicy"]
            assert f"limit: {rendered_limit(dev, policy, value)} (" in model_block(text, model)
            checked += 1
    assert checked == 11


def test_owners_are_shown_admitted_with_the_auth_policies_that_grant_them(selection):
    text = model_block(explain_subscription(selection, f"{NS}/partial").text(), "llm/coder")
    assert "access: AuthPolicy llm/maas-auth-coder, with the gateway's rules:" in text
    assert "group analysts: admitted (via MaaSAuthPolicy models-as-a-service/everyone)" in text


def test_owners_that_no_auth_policy_admits_are_shown_denied(selection):
    text = model_block(explain_subscription(selection, f"{NS}/interns").text(), "llm/granite")
    assert (
        "group interns: NOT admitted, denied by require-group-membership, model-access (no MaaSAuthPolicy grants "
        "it); its callers get 403 here"
    ) in text


# ------------------------------------------------------------------------------------------------ explain caller


def test_a_caller_in_two_subscriptions_without_a_header_gets_the_ambiguity(selection):
    report = explain_caller(selection, "erin", ["engineers"], "llm/granite", None)
    text = report.text()
    assert (
        "why: no X-MaaS-Subscription header, and the caller owns 2 subscriptions that include llm/granite: "
        f"{NS}/gold, {NS}/silver; maas-api does not choose (send X-MaaS-Subscription: one of them)"
    ) in text
    assert '"error": "multiple_subscriptions"' in text
    assert (
        "decision: DENIED by require-group-membership, subscription-valid, subscription-for-model: 403 'user has "
        "access to multiple"
    ) in text
    assert "not reached: the request is denied before rate limiting" in text
    assert report.problems == []


def test_a_caller_with_a_header_gets_that_subscription_and_its_rendered_limit(selection):
    text = explain_caller(selection, "erin", ["engineers"], "llm/granite", "gold").text()
    gold = short("gold", "llm/granite")
    assert rendered_limit(selection, "llm/maas-trlp-granite", gold) == "tokens-1000-per-1m"
    assert "tokens-1000-per-1m: MATCH (1000 per 1m)" in text
    assert "limit: tokens-1000-per-1m (1000 per 1m)" in text
    assert f'counter: auth.identity.selected_subscription_id = "{gold}"' in text
    assert 'counter: auth.identity.userid = "erin"' in text


def test_the_only_subscription_with_the_model_is_selected_without_a_header(selection):
    text = explain_caller(selection, "erin", ["engineers"], "llm/coder", None).text()
    assert "is the only subscription the caller owns (group engineers) that includes llm/coder" in text
    assert "limit: tokens-500-per-1m (500 per 1m)" in text


def test_a_legacy_caller_is_counted_on_its_key_in_the_split_limit(selection):
    text = explain_caller(selection, "carol", [], "llm/granite", None).text()
    assert "owned (user carol)" in text
    assert "tokens-500-per-1m: MATCH" in text and "tokens-500-per-1m-id: no match" in text
    assert f'counter: auth.identity.selected_subscription_key = "{NS}/legacy-team@llm/granite"' in text


def test_a_caller_outside_the_owners_is_denied(selection):
    text = explain_caller(selection, "dave", ["nobody"], "llm/granite", None).text()
    assert "llm/maas-auth-granite model-access" in text and "patternMatching  DENY" in text
    assert "decision: DENIED by require-group-membership, subscription-valid, model-access" in text
    assert "403 'no matching subscription found for user' (x-ext-auth-reason: not_found)" in text


def test_a_header_naming_a_subscription_the_caller_does_not_own_is_refused(selection):
    text = explain_caller(selection, "erin", ["engineers"], "llm/coder", "partial").text()
    assert f"why: the caller does not own {NS}/partial" in text
    assert "403 'access denied to requested subscription' (x-ext-auth-reason: access_denied)" in text


def test_a_degraded_subscription_with_a_ready_limit_status_is_selected(selection):
    text = explain_caller(selection, "ann", ["analysts"], "llm/coder", f"{NS}/partial").text()
    assert f"names {NS}/partial (qualified name)" in text
    assert "phase Degraded, and its TokenRateLimitPolicy status for llm/coder is ready" in text
    assert "decision: allowed" in text and "limit: tokens-100-per-1m (100 per 1m)" in text


def test_a_policy_that_matches_no_limit_is_a_bug_signal(selection, monkeypatch, capsys):
    tampered = load_world(SELECTION, "explain-selection", None)
    (policy,) = [obj for obj in tampered.plan.objects() if obj.logical_name == "llm/maas-trlp-granite"]
    policy.body["spec"]["limits"]["tokens-1000-per-1m"]["when"] = [{"predicate": "false"}]
    monkeypatch.setattr(explaining, "load_world", lambda *_: tampered)
    status, out, err = run(
        capsys,
        "caller",
        "--user",
        "erin",
        "--groups",
        "engineers",
        "--model",
        "llm/granite",
        "--subscription",
        "gold",
        "--config-file",
        str(SELECTION),
    )
    assert status == 1
    assert "!! BUG SIGNAL: 0 limits match (none); an admitted request must land in exactly one" in out
    assert "1 bug signal(s)" in err


def test_the_explanation_is_deterministic(selection):
    first = explain_caller(selection, "erin", ["engineers"], "llm/granite", "gold").text()
    assert explain_caller(selection, "erin", ["engineers"], "llm/granite", "gold").text() == first


# ------------------------------------------------------------------------------------------- maas-api selection


def live(
    name: str, phase: str, limits_ready: bool | None = None, identity: str = "short", assumed: str = ""
) -> maasapi.LiveSubscription:
    body = {
        "kind": "MaaSSubscription",
        "metadata": {
            "name": name,
            "namespace": NS,
            "annotations": {"maas.opendatahub.io/rate-limit-identity": identity},
        },
        "spec": {
            "owner": {"groups": [{"name": "g"}]},
            "modelRefs": [{"name": "m", "namespace": "llm", "tokenRateLimits": [{"limit": 10, "window": "1m"}]}],
        },
    }
    status = {"phase": phase}
    if limits_ready is not None:
        status["tokenRateLimitStatuses"] = [{"model": "m", "ready": limits_ready}]
    return maasapi.LiveSubscription(body, status, assumed) if assumed else maasapi.LiveSubscription(body, status)


def selection_of(*subscriptions: maasapi.LiveSubscription, requested: str = "") -> maasapi.Selection:
    request = {"groups": ["g"], "username": "u", "requestedSubscription": requested, "requestedModel": "llm/m"}
    return maasapi.select(request, subscriptions, [], maasapi.ModelIndex(frozenset({"llm/m"})))


def select(*subscriptions: maasapi.LiveSubscription, requested: str = "") -> dict:
    return selection_of(*subscriptions, requested=requested).answer


@pytest.mark.parametrize("phase", ["Pending", "Failed", ""])
def test_inference_needs_an_active_or_degraded_subscription(phase):
    answer = select(live("s", phase))
    shown = phase or "unreconciled"
    assert answer["error"] == "model_unhealthy"
    assert answer["message"] == f"subscription is in {shown} phase (allowed: Active, Degraded)"


@pytest.mark.parametrize(("ready", "usable"), [(True, True), (False, False), (None, False)])
def test_a_degraded_subscription_needs_a_ready_limit_status_for_the_model(ready, usable):
    answer = select(live("s", "Degraded", ready))
    assert ("error" not in answer) is usable


@pytest.mark.parametrize(("phase", "usable"), [("Active", True), ("Failed", False)])
def test_an_answer_that_rests_on_an_assumed_phase_names_it(phase, usable):
    """A phase nobody wrote or observed (coexist, nothing observed): maas-api's answer is the one that phase gives,
    and the selection says which assumption it rests on, whether it admits or refuses."""
    why = "the maas-controller owns it in coexist; not observed"
    selection = selection_of(live("s", phase, assumed=why))
    assert ("error" not in selection.answer) is usable
    assert selection.assumed == [f"{NS}/s is {phase}: {why}"]
    assert f"{phase} (assumed: {why})" in selection.reasons[-1]


def test_an_answer_that_does_not_read_the_phase_rests_on_no_assumption():
    """Ownership is decided before the phase is read: a caller who owns nothing is refused whatever the phase."""
    subscription = live("s", "Active", assumed="not observed")
    request = {"groups": ["other"], "username": "u", "requestedSubscription": "", "requestedModel": "llm/m"}
    selection = maasapi.select(request, [subscription], [], maasapi.ModelIndex(frozenset({"llm/m"})))
    assert (selection.answer["error"], selection.assumed) == ("not_found", [])
    assert selection_of(live("s", "Active")).assumed == []


def test_rate_limit_id_only_for_a_short_subscription():
    assert select(live("s", "Active"))["rateLimitId"] == short("s", "llm/m")
    assert "rateLimitId" not in select(live("s", "Active", identity="legacy"))


def test_an_unknown_requested_subscription_is_not_found():
    assert select(live("s", "Active"), requested=f"{NS}/other")["error"] == "not_found"


# ------------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["subscription", f"{NS}/premum"], f"unknown subscription '{NS}/premum' (closest: {NS}/premium"),
        (["caller", "--user", "u", "--model", "llm/granit"], "unknown model 'llm/granit' (closest: llm/granite-7b"),
    ],
)
def test_unknown_names_exit_2_naming_what_exists(capsys, args, message):
    status, out, err = run(capsys, *args, "--config-file", str(DEV))
    assert (status, out) == (2, "")
    assert message in err and "; known: " in err


def test_an_unknown_model_of_the_subscription_names_its_models(dev):
    with pytest.raises(UnknownNameError, match=r"unknown model of subscription .*; known: external-models/gpt-4o, "):
        explain_subscription(dev, f"{NS}/premium", "llm/granite")


def test_an_unknown_requested_subscription_names_the_stacks_subscriptions(dev):
    with pytest.raises(UnknownNameError, match="unknown subscription 'gold'; known: ai-tenant-redteam/redteam-eval, "):
        explain_caller(dev, "u", [], "llm/granite-7b", "gold")


def test_an_invalid_configuration_exits_2_as_render(tmp_path, capsys):
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text("config:\n  maas:subscriptions: [{name: Bad_Name}]\n")
    status, out, err = run(capsys, "subscription", f"{NS}/x", "--config-file", str(stack))
    assert (status, out) == (2, "")
    assert err.startswith("error: invalid MaaS configuration")


def test_a_missing_stack_file_exits_2(tmp_path, capsys):
    status, _, err = run(capsys, "subscription", f"{NS}/x", "--config-file", str(tmp_path / "Pulumi.none.yaml"))
    assert status == 2 and "not found; pass --stack NAME or --config-file PATH" in err


def test_cel_results_become_plain_json_values():
    value = cel.evaluate('{"ok": true, "n": 1, "items": ["a", 2.5], "none": null}', {})
    assert cel.plain(value) == {"ok": True, "n": 1, "items": ["a", 2.5], "none": None}
    assert type(cel.plain(value)["ok"]) is bool


def test_every_rendered_rego_rule_has_a_cel_reading_of_exactly_its_text(dev):
    """The Rego rules are read through hand-written CEL: a change to a rule's Rego must fail here, so that its
    reading is revisited instead of silently explaining the old rule."""
    from maas.tools.simulator.authorization import REGO_AS_CEL, rego_digest

    rendered = {
        (name, rego_digest(rule["opa"]["rego"]))
        for (kind, _, _), body in dev.objects.items()
        if kind == "AuthPolicy"
        for name, rule in (body["spec"].get("defaults") or body["spec"])["rules"].get("authorization", {}).items()
        if "opa" in rule
    }
    assert set(REGO_AS_CEL) <= rendered
    assert {name for name, _ in rendered - set(REGO_AS_CEL)} == {"oidc-groups-safe"}  # JWT callers only


def test_a_name_outside_the_stacks_scope_exits_2_naming_the_scope(capsys, tmp_path):
    """`platform.scope` leaves the other tenants to their own stacks: explain says so instead of guessing."""
    scoped = tmp_path / "Pulumi.research.yaml"
    text = (Path(__file__).parent / "stacks" / "scope-org.yaml").read_text()
    config = yaml.safe_load(text)
    config["config"]["maas:platform"] = {**config["config"].get("maas:platform", {}), "scope": "tenant:research"}
    scoped.write_text(yaml.safe_dump(config))
    for args in (
        ("subscription", "models-as-a-service/staff"),
        ("caller", "--user", "alice", "--model", "llm/granite-7b"),
    ):
        status, out, err = run(capsys, *args, "--config-file", str(scoped))
        assert (status, out) == (2, ""), err
        assert "outside this stack's maas:platform.scope 'tenant:research'" in err


def test_with_render_yaml_to_directory_the_phase_is_assumed_and_says_nobody_writes_it():
    """`renderYamlToDirectory` writes no status and no controller runs: the phase is assumed, and says why; an
    answer that does not read it (two owned subscriptions) is not marked."""
    from maas.observe import Observed
    from maas.tools.explaining.world import world_of

    raw, _ = raw_from_stack_file(DEV)
    platform = {**raw.get("platform", {}), "kubernetes": {"renderYamlToDirectory": "out"}}
    world = world_of({**raw, "platform": platform}, "dev", Observed.nothing())
    assert world.statuses == {}
    published = world.published(world.object("MaaSSubscription", f"{NS}/premium"))
    assert (published.phase, published.assumed) == (
        "Active",
        "the program writes no status with renderYamlToDirectory; not observed",
    )
    report = explain_caller(world, "alice", ["premium-users"], "llm/llama-3-8b", None)
    (decision,) = [line for line in report.lines if "decision" in line]
    assert decision.startswith("  decision: DENIED by ") and "multiple_subscriptions" in decision
    assert not any("assumes:" in line for line in report.lines)
