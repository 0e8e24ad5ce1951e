"""`python -m maas diff BASE HEAD`: what a change does, for a pull-request review (issue 12)."""

from __future__ import annotations

import contextlib
import io
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from maas.observe import Observed
from maas.plan.policies.access import model_access_predicate
from maas.tools.cli import main
from maas.tools.diffing.access import CALLS, HEADER, NONE, access_changes, standings, subjects_of
from maas.tools.diffing.fields import clauses, field_changes
from maas.tools.diffing.formats import markdown, text
from maas.tools.diffing.limits import LimitChange, limits
from maas.tools.diffing.review import Review, review
from maas.tools.diffing.sides import Side, render_side
from maas.tools.explaining.request import objects_for, trace
from maas.tools.explaining.world import load_world
from tests.conftest import ROOT

STACKS = ROOT / "tests" / "stacks"
BASE = STACKS / "Pulumi.diff-base.yaml"
RATE = STACKS / "Pulumi.diff-rate.yaml"  # BASE with gold's rate on granite raised from 1000/1m to 2000/1m
GOLD_RESET = (
    "quota reset: subscription models-as-a-service/gold on model llm/granite: limit tokens-1000-per-1m -> "
    "tokens-2000-per-1m (its rates changed)"
)


def diff(*args: str | Path) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of `python -m maas diff ARGS`, in this process (a render takes ~0.2 s)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["diff", *map(str, args)])
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def rate_change() -> tuple[int, str, str]:
    return diff(BASE, RATE)


def variant(tmp_path: Path, name: str, edit) -> Path:
    """BASE's configuration changed by `edit` (which changes the `config:` mapping in place), as a stack file."""
    document = yaml.safe_load(BASE.read_text())
    edit(document["config"])
    path = tmp_path / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


def test_done_when_a_rate_change_prints_the_policy_and_names_the_subscription_among_quota_resets(rate_change):
    code, out, _ = rate_change
    assert code == 0
    assert "~ TokenRateLimitPolicy llm/maas-trlp-granite\n" in out
    assert "    spec.limits: tokens-1000-per-1m renamed to tokens-2000-per-1m\n" in out
    assert "    spec.limits.tokens-2000-per-1m.rates[0].limit: 1000 -> 2000\n" in out
    assert "~ MaaSSubscription models-as-a-service/gold\n" in out
    assert "  models-as-a-service/gold on llm/granite: 1000/1m -> 2000/1m\n" in out
    assert out.endswith(f"quota resets: 1 reset\n  {GOLD_RESET}\n")
    assert "maas-trlp-mistral" not in out  # gold's rate on mistral is unchanged


def test_done_when_markdown_renders_the_limits_and_the_resets_as_tables():
    code, out, _ = diff("--format", "markdown", BASE, RATE)
    assert code == 0
    assert out.startswith("## MaaS diff\n\n### Objects\n\n0 added, 0 removed, 2 changed.\n\n```diff\n")
    assert "~ TokenRateLimitPolicy llm/maas-trlp-granite\n" in out
    assert (
        "### Limits\n\n| Subscription | Model | Before | After |\n| --- | --- | --- | --- |\n"
        "| models-as-a-service/gold | llm/granite | 1000/1m | 2000/1m |\n"
    ) in out
    assert (
        "| Subscription | Model | Old limit | New limit | Reason | Accepted |\n"
        "| --- | --- | --- | --- | --- | --- |\n"
        "| models-as-a-service/gold | llm/granite | tokens-1000-per-1m | tokens-2000-per-1m | its rates changed | no |\n"
    ) in out


def test_an_added_model_and_a_removed_one_are_whole_objects(tmp_path):
    def swap_mistral_for_phi(config):
        config["maas:models"][1] = {
            "name": "phi",
            "namespace": "llm",
            "modelRef": {"kind": "LLMInferenceService", "name": "phi"},
        }
        config["maas:authPolicies"][0]["modelRefs"][1]["name"] = "phi"
        config["maas:subscriptions"][0]["modelRefs"][1]["name"] = "phi"

    code, out, _ = diff(BASE, variant(tmp_path, "swap", swap_mistral_for_phi))
    assert code == 0
    for kind in ("AuthPolicy", "MaaSModelRef", "TokenRateLimitPolicy"):
        name = {"AuthPolicy": "maas-auth-", "MaaSModelRef": "", "TokenRateLimitPolicy": "maas-trlp-"}[kind]
        assert f"\n- {kind} llm/{name}mistral\n" in out
        assert f"\n+ {kind} llm/{name}phi\n" in out
    assert "  models-as-a-service/gold on llm/mistral: 1000/1m -> none\n" in out
    assert "  models-as-a-service/gold on llm/phi: none -> 1000/1m\n" in out
    assert "  group gold-users: gains llm/phi; loses llm/mistral\n" in out


def test_access_names_each_subject_that_gains_or_loses_a_model(tmp_path):
    """Subjects an AuthPolicy admits but that own no subscription of their own gain or lose admission only (their
    callers need a subscription through another group), and the mark is explained once."""

    def alice_to_bob(config):
        config["maas:authPolicies"][0]["subjects"]["users"] = ["bob"]
        config["maas:authPolicies"][1]["subjects"]["groups"].append({"name": "interns"})

    code, out, _ = diff(BASE, variant(tmp_path, "access", alice_to_bob))
    assert code == 0
    assert (
        "access: 3 subjects\n"
        "  group interns: gains llm/granite (admission only)\n"
        "  user alice: loses llm/granite (admission only), llm/mistral (admission only)\n"
        "  user bob: gains llm/granite (admission only), llm/mistral (admission only)\n"
        "  note: (admission only) means the model's AuthPolicy admits the subject, but it owns no usable "
        "subscription to the model itself: its callers need one through another of their groups or their user "
        "name\n"
    ) in out
    # the predicate change is shown clause by clause, not as two 600-character texts
    assert (
        "~ AuthPolicy llm/maas-auth-mistral\n"
        "    spec.rules.authorization.model-access.patternMatching.patterns[0].predicate: text changed in 1 place\n"
        '      - "alice"\n'
        '      + "bob"\n'
    ) in out
    _, markdown_out, _ = diff("--format", "markdown", BASE, variant(tmp_path, "access", alice_to_bob))
    assert (
        "| Subject | Gains | Loses |\n| --- | --- | --- |\n| group interns | llm/granite (admission only) |  |\n"
    ) in markdown_out


# Issue 20: the warnings HEAD adds and resolves, and effective access (AuthPolicy, a usable subscription, a selection
# that succeeds).

NOT_IN_MODELS = (
    "subscription models-as-a-service/{}: model llm/granite is not in maas:models, so it contributes no token limit "
    "there; add the model or remove the reference"
)
NO_ENDPOINT = (
    "model llm/granite: no endpoint can be derived from configuration, so maas-api lists it without a URL; set "
    "route.hostnames, the tenant's gateway.hostname, platform.gateway.hostname or endpointOverride"
)


def render_warnings(path: Path) -> list[str]:
    """The `warning:` lines of `python -m maas render --config-file PATH`."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main(["render", "--config-file", str(path)]) == 0
    return [line.removeprefix("warning: ") for line in err.getvalue().splitlines() if line.startswith("warning: ")]


def remove_granite(config):
    """The model goes, with the auth policies' references to it; the two subscriptions still reference it."""
    config["maas:models"] = [m for m in config["maas:models"] if m["name"] != "granite"]
    config["maas:authPolicies"][0]["modelRefs"] = [{"name": "mistral", "namespace": "llm"}]
    del config["maas:authPolicies"][1]  # silver-access admitted granite alone


def test_20_a_removed_model_shows_the_warnings_head_adds_and_the_one_it_resolves(tmp_path):
    """Issue 20, broken item 2: removing a model left two subscriptions referencing it; only `render` said so."""
    head = variant(tmp_path, "nogranite", remove_granite)
    new = [NOT_IN_MODELS.format("gold"), NOT_IN_MODELS.format("silver")]
    assert set(new) <= set(render_warnings(head)) and NO_ENDPOINT in render_warnings(BASE)
    code, out, _ = diff(BASE, head)
    assert code == 0
    assert (
        "\n\nwarnings: 2 new, 1 resolved (1 unchanged)\n"
        f"  new: {new[0]}\n"
        f"  new: {new[1]}\n"
        f"  resolved: {NO_ENDPOINT}\n"
        "\naccess: 3 subjects\n"
        "  group gold-users: loses llm/granite\n"
        "  group silver-users: loses llm/granite\n"  # silver is Failed: its one model is gone
        "  user alice: loses llm/granite (admission only)\n"
    ) in out
    code, out, _ = diff("--format", "markdown", BASE, head)
    assert code == 0
    assert (
        "\n\n### Warnings\n\n2 new, 1 resolved (1 unchanged).\n\n"
        f"New in HEAD:\n\n- {new[0]}\n- {new[1]}\n\n"
        f"Resolved in HEAD:\n\n- {NO_ENDPOINT}\n\n"
        "### Access\n\n"
    ) in out
    _, back, _ = diff(head, BASE)  # and back: those two are resolved, the endpoint one is new again
    assert f"warnings: 1 new, 2 resolved (1 unchanged)\n  new: {NO_ENDPOINT}\n  resolved: {new[0]}\n" in back


def test_20_a_warning_about_the_cluster_base_starts_from_is_nothing_head_resolves(rate_change):
    """Unobserved, BASE's render warns that its subscriptions' identities are guessed; HEAD is planned on the
    cluster BASE leaves, where they are known. BASE's warnings are taken on that same cluster, so the warning is
    neither new nor resolved: the change did nothing about it."""
    assert any(w.startswith("rateLimitIdentity is not set for 2 subscription(s)") for w in render_warnings(BASE))
    _, out, _ = rate_change
    assert "\n\nwarnings: none new or resolved (2 unchanged)\n\naccess: no subject gains or loses a model\n" in out
    assert "rateLimitIdentity is not set" not in out


@pytest.mark.parametrize("mode", ["absent", "coexist"])
def test_20_removing_a_subscription_lists_its_owners_as_losing_the_model(tmp_path, mode):
    """Issue 20, broken item 3: the access section read only AuthPolicies, so removing a subscription read "no
    subject gains or loses a model" while its owners got 403. `coexist` (what `import` writes, the issue's setting)
    writes no status: the phases are those the plan gives, as the controller would."""

    def platform(config):
        config["maas:platform"] = {"controllerMode": mode}

    def drop_silver(config):
        platform(config)
        config["maas:subscriptions"] = [s for s in config["maas:subscriptions"] if s["name"] != "silver"]

    base, head = variant(tmp_path, "base", platform), variant(tmp_path, "nosilver", drop_silver)
    code, out, _ = diff(base, head)
    assert code == 0
    assert "\n\naccess: 1 subject\n  group silver-users: loses llm/granite\n\nlimits: 1 change\n" in out
    _, out, _ = diff("--format", "markdown", base, head)
    assert (
        "### Access\n\n| Subject | Gains | Loses |\n| --- | --- | --- |\n| group silver-users |  | llm/granite |\n\n"
        "### Limits"
    ) in out


def test_20_a_second_subscription_for_a_group_warns_and_costs_its_calls_without_the_header(tmp_path):
    """Issue 20: nothing flagged a group owning two subscriptions for one model, where calls without
    X-MaaS-Subscription fail with multiple_subscriptions. The group keeps the model with the header."""

    def gold_users_own_silver_too(config):
        config["maas:subscriptions"][1]["owner"]["groups"].append({"name": "gold-users"})
        config["maas:subscriptions"][1]["priority"] = 10  # a priority does not choose for maas-api's select

    head = variant(tmp_path, "twosubs", gold_users_own_silver_too)
    [warning] = [w for w in render_warnings(head) if "multiple_subscriptions" in w]
    assert warning.startswith(
        "group gold-users owns 2 subscriptions that include model llm/granite: models-as-a-service/gold, "
        "models-as-a-service/silver; "
    )
    code, out, _ = diff(BASE, head)
    assert code == 0
    assert f"\n\nwarnings: 1 new (2 unchanged)\n  new: {warning}\n\naccess: 1 subject\n" in out
    assert "  group gold-users: loses llm/granite (calls without X-MaaS-Subscription)\n" in out
    assert (
        "  note: (calls without X-MaaS-Subscription) means the subject keeps the model with X-MaaS-Subscription" in out
    )
    _, out, _ = diff("--format", "markdown", BASE, head)
    assert "### Warnings\n\n1 new (2 unchanged).\n\nNew in HEAD:\n\n- group gold-users owns 2 subscriptions" in out
    assert "| group gold-users |  | llm/granite (calls without X-MaaS-Subscription) |\n" in out


def test_20_a_new_group_owning_two_subscriptions_gains_the_model_with_the_header_only(tmp_path):
    def contractors(config):
        for entry in (*config["maas:subscriptions"], config["maas:authPolicies"][1]):
            (entry.get("owner") or entry["subjects"])["groups"].append({"name": "contractors"})

    _, out, _ = diff(BASE, variant(tmp_path, "contractors", contractors))
    assert (
        "  group contractors: gains llm/granite (with X-MaaS-Subscription only), llm/mistral (subscription only)\n"
        in out
    )


def test_20_a_change_of_warnings_alone_is_a_change():
    """A change of warnings alone is a change (`--exit-code`); identical plans are none."""
    quiet = Review((), (), (), (), (), (), new_warnings=("w",))
    assert quiet.changed and "warnings: 1 new\n  new: w\n" in text(quiet)
    assert not Review((), (), (), (), (), (), kept_warnings=3).changed


def test_20_warnings_are_escaped_in_markdown_and_their_further_lines_indented():
    changed = Review((), (), (), (), (), (), new_warnings=("a *b* `c` <d>\nsecond | line",), resolved_warnings=("r",))
    out = markdown(changed)
    assert (
        "New in HEAD:\n\n- a \\*b\\* \\`c\\` \\<d\\>\n  second \\| line\n\nResolved in HEAD:\n\n- r\n\n### Access"
        in out
    )
    assert "  new: a *b* `c` <d>\n    second | line\n  resolved: r\n" in text(changed)


def test_20_effective_access_agrees_with_the_request_simulator():
    """Every subject's standing on every model, as the access section reads it, is what `explain caller` finds when
    that subject alone calls (a member of the group, or the user): allowed without X-MaaS-Subscription exactly
    when it stands at CALLS, with the header of one of its subscriptions when at HEADER, never otherwise."""
    stack = STACKS / "Pulumi.explain-selection.yaml"
    world = load_world(stack, "explain-selection", None)
    side = render_side("HEAD", stack, "explain-selection", Observed.nothing())
    subs = world.config.subscriptions
    found = {}
    for model, standing in standings(side).items():
        for (kind, name), state in standing.items():
            user, groups = (f"<a member of {name}>", [name]) if kind == "group" else (name, [])
            objects = objects_for(world, world.model(model))
            owners = {s.name: [*s.owner.users] if kind == "user" else [g.name for g in s.owner.groups] for s in subs}
            owned = [subscription for subscription, names in owners.items() if name in names]
            plain = trace(world, objects, user, groups, None).allowed
            named = any(trace(world, objects, user, groups, sub).allowed for sub in owned)
            assert (plain, named) == {CALLS: (True, True), HEADER: (False, True), NONE: (False, False)}[state.level]
            found[(kind, name, model)] = state.level
    assert found == {
        ("group", "analysts", "llm/coder"): CALLS,  # partial is Degraded: its other model is not configured
        ("group", "analysts", "llm/granite"): NONE,  # admitted, but owns no subscription to granite
        ("group", "engineers", "llm/coder"): CALLS,
        ("group", "engineers", "llm/granite"): HEADER,
        ("group", "interns", "llm/granite"): NONE,  # owns a subscription, but no auth policy admits it
        ("user", "carol", "llm/coder"): NONE,  # admitted, but owns no subscription to coder
        ("user", "carol", "llm/granite"): CALLS,
    }


def test_exit_code_is_1_when_anything_changes_and_0_when_nothing_does(rate_change):
    assert diff("--exit-code", BASE, RATE)[0] == 1
    assert rate_change[0] == 0  # without --exit-code a change is no failure
    code, out, _ = diff("--exit-code", BASE, BASE)
    assert (code, out) == (0, "no changes: BASE and HEAD register the same objects and status writes\n")


def test_identical_inputs_print_a_clear_no_changes_line_in_markdown_too():
    code, out, _ = diff("--format", "markdown", BASE, BASE)
    assert (code, out) == (
        0,
        "## MaaS diff\n\nNo changes: BASE and HEAD register the same objects and status writes.\n",
    )


def test_output_is_byte_identical_across_runs(rate_change):
    assert diff(BASE, RATE)[1] == rate_change[1]


def test_an_invalid_head_exits_2_naming_head_and_prints_nothing_on_stdout(tmp_path):
    def bad_window(config):
        config["maas:subscriptions"][0]["modelRefs"][0]["tokenRateLimits"][0]["window"] = "1d"

    head = variant(tmp_path, "bad", bad_window)
    code, out, err = diff(BASE, head)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: HEAD ({head}): invalid MaaS configuration (1 problem(s))")
    assert "maas:subscriptions[0] (models-as-a-service/gold).modelRefs[0].tokenRateLimits[0].window: '1d'" in err
    assert "BASE" not in err


def test_both_sides_invalid_name_both(tmp_path):
    def bad_flavor(config):
        config["maas:platform"] = {"flavor": "aws"}

    bad = variant(tmp_path, "bad", bad_flavor)
    code, out, err = diff(bad, bad)
    assert (code, out) == (2, "")
    assert [line.split(" (")[0] for line in err.splitlines() if line.startswith("error:")] == [
        "error: BASE",
        "error: HEAD",
    ]


def test_a_missing_stack_file_exits_2(tmp_path):
    code, out, err = diff(tmp_path / "Pulumi.nope.yaml", RATE)
    assert (code, out) == (2, "")
    assert (
        err
        == f"error: BASE: stack file {tmp_path / 'Pulumi.nope.yaml'} not found; give a Pulumi.<stack>.yaml or a stack name\n"
    )


def test_an_unaccepted_reset_under_quota_resets_error_fails_head_as_pulumi_up_would(tmp_path):
    def gate(accept):
        def edit(config):
            config["maas:subscriptions"][0]["modelRefs"][0]["tokenRateLimits"][0]["limit"] = 2000
            config["maas:platform"] = {"quotaResets": "error"}
            config["maas:acceptQuotaResets"] = accept

        return edit

    code, out, err = diff(BASE, variant(tmp_path, "gate", gate([])))
    assert (code, out) == (2, "")
    assert "error: HEAD (" in err and "add 'models-as-a-service/gold' to maas:acceptQuotaResets" in err
    code, out, _ = diff("--format", "markdown", BASE, variant(tmp_path, "accept", gate(["models-as-a-service/gold"])))
    assert code == 0
    assert (
        "| models-as-a-service/gold | llm/granite | tokens-1000-per-1m | tokens-2000-per-1m | its rates changed | yes |"
        in out
    )


def test_an_unreadable_snapshot_exits_2(tmp_path):
    code, out, err = diff("--observed", tmp_path / "none.yaml", BASE, RATE)
    assert (code, out) == (2, "")
    assert err.startswith(f"error: cannot read the snapshot {tmp_path / 'none.yaml'}: ")


def test_head_keeps_the_identity_base_left_as_pulumi_up_would(tmp_path):
    """HEAD is planned on the cluster BASE leaves: clearing an explicit `legacy` keeps the live identity (sticky),
    so nothing changes; an explicit `short` is a change of identity, and a reset."""

    def pin(identity):
        return lambda config: config["maas:subscriptions"][1].update(rateLimitIdentity=identity)

    legacy = variant(tmp_path, "legacy", pin("legacy"))
    assert diff("--exit-code", legacy, BASE)[:2] == (
        0,
        "no changes: BASE and HEAD register the same objects and status writes\n",
    )
    _, out, _ = diff(legacy, variant(tmp_path, "short", pin("short")))
    assert (
        "quota reset: subscription models-as-a-service/silver on model llm/granite: limit tokens-500-per-1m -> "
        "tokens-500-per-1m (its identity changed from legacy (selected_subscription_key) to short "
        "(selected_subscription_id))\n"
    ) in out


def test_observed_plans_both_sides_against_the_snapshot(tmp_path):
    """The snapshot shows gold as a pre-3.6 subscription (no stamp: legacy); HEAD pins it to short, a reset that
    only the snapshot reveals (unobserved, gold would be short on both sides)."""
    snapshot = tmp_path / "snapshot.yaml"
    gold = {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSSubscription",
        "metadata": {"name": "gold", "namespace": "models-as-a-service"},
        "spec": {"owner": {"groups": [{"name": "gold-users"}]}, "modelRefs": []},
    }
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [gold]}))
    head = variant(tmp_path, "short", lambda config: config["maas:subscriptions"][0].update(rateLimitIdentity="short"))
    code, out, err = diff("--observed", snapshot, BASE, head)
    assert code == 0 and "nothing was observed" not in err
    assert "quota resets: 2 resets\n" in out
    assert "models-as-a-service/gold on model llm/mistral: limit tokens-1000-per-1m -> tokens-1000-per-1m" in out
    assert diff("--exit-code", BASE, head)[:2] == (
        0,
        "no changes: BASE and HEAD register the same objects and status writes\n",
    )


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository whose one commit holds BASE at `stacks/Pulumi.app.yaml`; the work tree holds RATE there."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "stacks").mkdir()
    stack = tmp_path / "stacks" / "Pulumi.app.yaml"
    stack.write_text(BASE.read_text())
    git(tmp_path, "add", "stacks/Pulumi.app.yaml")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
    stack.write_text(RATE.read_text())
    return tmp_path


def test_base_ref_reads_base_from_git(repo, rate_change):
    code, out, _ = diff("--base-ref", "main", repo / "stacks" / "Pulumi.app.yaml")
    assert code == 0
    assert out == rate_change[1]
    assert GOLD_RESET in out


def test_base_ref_errors_are_clean_exit_2(repo, tmp_path_factory):
    code, out, err = diff("--base-ref", "origin/nope", repo / "stacks" / "Pulumi.app.yaml")
    assert (code, out) == (2, "")
    assert err.startswith("error: BASE (--base-ref): git ref 'origin/nope' is not a commit of the repository at ")
    outside = tmp_path_factory.mktemp("outside") / "Pulumi.x.yaml"
    outside.write_text(BASE.read_text())
    code, out, err = diff("--base-ref", "main", outside)
    assert (code, out) == (2, "") and "is not in a git work tree" in err
    code, out, err = diff("--base-ref=--output=x", outside)  # never passed to git as an option
    assert (code, out) == (2, "") and "'--output=x' is not a git revision" in err


def test_base_ref_errors_name_the_revision_and_line(repo):
    stack = repo / "stacks" / "Pulumi.app.yaml"
    stack.write_text("config:\n  maas:models: [\n")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-am", "broken")
    stack.write_text(RATE.read_text())
    code, out, err = diff("--base-ref", "main", stack)
    assert (code, out) == (2, "")
    assert err.startswith("error: BASE (main:stacks/Pulumi.app.yaml): ")
    assert "main:stacks/Pulumi.app.yaml:3:1" in err


def test_a_stack_absent_at_the_base_ref_is_all_added(repo):
    new = repo / "stacks" / "Pulumi.new.yaml"
    new.write_text(RATE.read_text())
    code, out, err = diff("--base-ref", "main", new)
    assert code == 0
    assert "does not exist at 'main': the change adds this stack" in err
    objects = out.split("\n\n")[0].splitlines()
    assert objects[0].startswith("objects: ") and objects[0].endswith(" added, 0 removed, 0 changed")
    assert (
        all(line.startswith("+ ") for line in objects[1:]) and "+ TokenRateLimitPolicy llm/maas-trlp-granite" in objects
    )
    assert "quota resets: no token-rate counter resets" in out  # nothing was live, so no counter resets


def test_stack_names_resolve_as_renders_stack_option(tmp_path, monkeypatch, rate_change):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Pulumi.a.yaml").write_text(BASE.read_text())
    (tmp_path / "Pulumi.b.yaml").write_text(RATE.read_text())
    assert diff("a", "b")[1] == rate_change[1]


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as raised:
        main(["diff", str(BASE)])
    assert raised.value.code == 2
    assert "give BASE and HEAD, or HEAD alone with --base-ref REF" in capsys.readouterr().err


# The pieces, on plain values.


def test_lists_of_mappings_are_matched_by_name_else_by_position():
    old = {"containers": [{"name": "a", "image": "x:1"}, {"name": "b", "image": "y:1"}], "rates": [{"limit": 1}]}
    new = {"containers": [{"name": "b", "image": "y:2"}, {"name": "c", "image": "z:1"}], "rates": [{"limit": 2}]}
    assert field_changes(old, new, "spec") == [
        '- spec.containers[name=a]: {"image":"x:1","name":"a"}',
        'spec.containers[name=b].image: "y:1" -> "y:2"',
        '+ spec.containers[name=c]: {"image":"z:1","name":"c"}',
        "spec.rates[0].limit: 1 -> 2",
    ]
    assert field_changes({"users": ["a", "b"]}, {"users": ["a", "x", "b"]}) == ['+ users[1]: "x"']
    assert field_changes([{"name": "a"}, {"name": "b"}], [{"name": "b"}, {"name": "a"}], "l") == ["l: order changed"]


def test_keys_that_are_not_plain_names_are_quoted():
    old = {"metadata": {"annotations": {"maas.opendatahub.io/subscriptions": "a"}}}
    new = {"metadata": {"annotations": {"maas.opendatahub.io/subscriptions": "b"}}}
    assert field_changes(old, new) == ['metadata.annotations["maas.opendatahub.io/subscriptions"]: "a" -> "b"']


def test_a_renamed_limit_is_a_rename_and_what_changed_inside():
    when = [{"predicate": 'auth.identity.selected_subscription_id == "0123456789abcdef"'}]
    old = {"limits": {"tokens-1-per-1m": {"rates": [{"limit": 1, "window": "1m"}], "when": when, "counters": []}}}
    new = {"limits": {"tokens-2-per-1m": {"rates": [{"limit": 2, "window": "1m"}], "when": when, "counters": []}}}
    assert field_changes(old, new, "spec") == [
        "spec.limits: tokens-1-per-1m renamed to tokens-2-per-1m",
        "spec.limits.tokens-2-per-1m.rates[0].limit: 1 -> 2",
    ]
    unrelated = {"limits": {"tokens-2-per-1m": {"rates": [{"limit": 2}], "when": [], "counters": []}}}
    assert [line[:2] for line in field_changes(old, unrelated, "spec")] == ["- ", "+ "]


def test_a_long_predicate_changes_clause_by_clause():
    clause = 'auth.identity.selected_subscription_id == "{}"'.format
    old = "(" + " || ".join(clause(f"{i:016x}") for i in range(50)) + ') && !request.url_path.endsWith("/v1/models")'
    new = old.replace(f" || {clause(f'{7:016x}')}", "").replace(clause(f"{0:016x}"), clause("ffffffffffffffff"))
    assert field_changes(old, new, "p") == [
        "p: text changed in 2 places",
        f"  - {clause(f'{0:016x}')}",
        f"  + {clause('ffffffffffffffff')}",
        f"  - {clause(f'{7:016x}')}",
    ]
    assert field_changes("x" * 100 + " || a", "x" * 100 + " && a", "p") == [
        "p: text changed in 1 place",
        "  - || a",
        "  + && a",
    ]


@given(st.text(alphabet=st.sampled_from(list('ab "\\,|&()[]= \n')), max_size=40))
def test_clauses_join_back_to_the_text(text):
    assert "".join(separators + body for separators, body in clauses(text)) == text


def test_values_are_shown_on_one_line_and_cut():
    [line] = field_changes({"a": "x\ny"}, {"a": "z\u2028"})
    assert line == 'a: "x\\ny" -> "z\\u2028"'
    [added] = field_changes({}, {"big": "v" * 1000})
    assert added.startswith('+ big: "vvv') and added.endswith("... (1002 characters)")


def test_access_subjects_are_read_back_exactly_or_not_at_all():
    predicate = model_access_predicate(["g|1", 'q"x'], ["alice"])
    assert subjects_of(predicate) == [("group", "g|1"), ("group", 'q"x'), ("user", "alice")]
    assert subjects_of(model_access_predicate([], ["bob"])) == [("user", "bob")]
    assert subjects_of("false") == []
    assert subjects_of(predicate + " || true") is None
    assert subjects_of('auth.identity.username == "alice"') is None


def test_a_policy_of_another_form_is_named_not_compared():
    labels = {"maas.opendatahub.io/model": "m", "maas.opendatahub.io/model-namespace": "llm"}
    rule = {"patternMatching": {"patterns": [{"predicate": 'auth.identity.groups.exists(g, g == "x")'}]}}
    policy = {
        "kind": "AuthPolicy",
        "metadata": {"labels": labels},
        "spec": {"rules": {"authorization": {"model-access": rule}}},
    }
    live = Side({("AuthPolicy", "llm", "maas-auth-m"): policy})
    assert access_changes(live, live) == ([], [])  # unchanged, it changes nobody's access
    changes, notes = access_changes(Side(), live)
    assert changes == []
    assert notes == [
        "AuthPolicy llm/maas-auth-m (HEAD): its model-access predicate is not in the form this program writes, so "
        "whom it admits is not compared; read it in the rendered object"
    ]


def test_markdown_cells_escape_pipes_and_backticks_and_the_fence_outgrows_backticks():
    reset = {
        "subscription": "ns/a",
        "model": "ns/m",
        "oldLimit": "x|`y`",
        "newLimit": "n",
        "reason": "r",
        "accepted": True,
    }
    changed = Review(
        objects=(),
        access=(),
        access_notes=(),
        limits=(LimitChange("ns/a", "ns/m", "1/1m", "a|b"),),
        resets=(reset,),
        reset_lines=(),
    )
    out = markdown(changed)
    assert "| ns/a | ns/m | 1/1m | a\\|b |\n" in out
    assert "| ns/a | ns/m | x\\|\\`y\\` | n | r | yes |\n" in out
    base = Side({("ConfigMap", "ns", "c"): {"kind": "ConfigMap", "data": {"k": "```"}}})
    head = Side({("ConfigMap", "ns", "c"): {"kind": "ConfigMap", "data": {"k": "````"}}})
    out = markdown(review(base, head))
    assert "\n`````diff\n~ ConfigMap ns/c\n" in out and out.count("\n`````\n") == 1


def test_diffing_is_linear_enough_for_a_thousand_subscriptions():
    """The bench configuration has 1,000 subscriptions: 2,600 objects and status writes, predicates of 100
    clauses. One changed subscription must cost about as much as reading them once."""
    clause = 'auth.identity.selected_subscription_id == "{:016x}"'.format
    predicate = "(" + " || ".join(clause(i) for i in range(3000)) + ")"
    base = Side(
        {("MaaSSubscription", "ns", f"s{i}"): {"kind": "MaaSSubscription", "spec": {"i": i}} for i in range(3000)}
    )
    policy = {"spec": {"limits": {"tokens": {"when": [{"predicate": predicate}]}}}}
    base.objects[("TokenRateLimitPolicy", "llm", "p")] = policy
    head = Side(dict(base.objects))
    head.objects[("TokenRateLimitPolicy", "llm", "p")] = {
        "spec": {"limits": {"tokens": {"when": [{"predicate": predicate.replace(" || " + clause(1500), "")}]}}}
    }
    started = time.perf_counter()
    result = review(base, head)
    assert time.perf_counter() - started < 2.0  # about 0.05 s; a quadratic step would take minutes
    assert [c.title for c in result.objects] == ["~ TokenRateLimitPolicy llm/p"]
    assert result.objects[0].fields[1:] == (f"  - {clause(1500)}",)


def test_a_limit_the_policy_does_not_hold_is_shown_missing_never_unlimited():
    """An opted-out or hand-edited policy may lack the limit a subscription's output names: a reviewer must not
    read that as an unlimited subscription."""
    outputs = {
        "models": {"llm/granite": {"tokenRateLimitPolicy": "llm/maas-trlp-granite"}},
        "subscriptions": {"ns/gold": {"models": {"llm/granite": {"limit": "tokens-1000-per-1m"}}}},
    }
    policy = {"spec": {"limits": {"tokens-unlimited": {"when": [{"predicate": "true"}]}}}}
    held = Side({("TokenRateLimitPolicy", "llm", "maas-trlp-granite"): policy}, outputs)
    assert limits(held) == {("ns/gold", "llm/granite"): "missing"}
    unlimited = {"subscriptions": {"ns/gold": {"models": {"llm/granite": {"limit": "tokens-unlimited"}}}}}
    assert limits(Side(held.objects, {**outputs, **unlimited})) == {("ns/gold", "llm/granite"): "unlimited"}
