"""`explain` on a `controllerMode: coexist` stack, as `python -m maas import` writes it (issue 20, item 1).

In `coexist` the maas-controller keeps the status of the MaaS CRs, so a stack explained without `--observed` has
no phase to read. maas-api admits a subscription only in `Active` or `Degraded`; reading "no phase" as
"unreconciled" told a reviewer that every caller is DENIED, which the cluster does not do. The phase is then the
one the program's status rules give (what it would write with `controllerMode: absent`), shown as assumed, and
each decision that depends on it says so; with the snapshot, the live phase is read and nothing is assumed.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from maas.config import raw_from_stack_file
from maas.observe import ObjectRef, Observed, dump_snapshot
from maas.tools.cli import main
from maas.tools.explaining.caller import explain_caller
from maas.tools.explaining.request import objects_for, trace
from maas.tools.explaining.world import World, load_world, world_of
from maas.tools.simulator.invariant import violations
from tests.controller_cluster import controller_cluster

NS = "models-as-a-service"
NOT_OBSERVED = "assumed: the maas-controller owns it in coexist; not observed"
MAAS_API_READS = {"MaaSModelRef", "MaaSAuthPolicy", "MaaSSubscription"}
BOB = ["--user", "bob", "--groups", "team-y", "--model", "llm/llama-3-8b"]


@pytest.fixture(scope="module")
def migration(tmp_path_factory) -> tuple[Path, Path]:
    """The migration's first step, as the README gives it: the snapshot of a controller-built cluster, and the
    stack file `python -m maas import --observed SNAPSHOT --stack prod > Pulumi.prod.yaml` writes from it."""
    folder = tmp_path_factory.mktemp("coexist")
    snapshot = folder / "cluster.yaml"
    snapshot.write_text(dump_snapshot(controller_cluster()))
    stack = folder / "Pulumi.prod.yaml"
    imported = _cli(["import", "--observed", str(snapshot), "--stack", "prod", "--import-file", str(folder / "i.json")])
    assert imported[0] == 0, imported[2]
    stack.write_text(imported[1])
    assert raw_from_stack_file(stack)[0]["platform"]["controllerMode"] == "coexist"
    return stack, snapshot


def _cli(argv: list[str]) -> tuple[int, str, str]:
    """`python -m maas ARGV`: exit status, stdout, stderr."""
    import contextlib
    import io

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def explain(*args: str) -> tuple[int, str]:
    status, out, _ = _cli(["explain", *args])
    return status, out


def lines(text: str) -> list[str]:
    return text.splitlines()


# ------------------------------------------------------------------------------------------ the issue's scenario


def test_an_allowed_caller_on_an_imported_coexist_stack_is_allowed_on_an_assumed_phase(migration):
    """The exact scenario: bob (group team-y) calls llama without a header, nothing observed."""
    stack, _ = migration
    status, out = explain("caller", *BOB, "--config-file", str(stack))
    assert status == 0
    assert "DENIED" not in out and "unreconciled" not in out
    shown = lines(out)
    assert f"    {NS}/team-y: priority 0, phase Active ({NOT_OBSERVED}), owned (user bob), includes the model" in shown
    assert f"  why: phase Active ({NOT_OBSERVED}): selected {NS}/team-y" in shown
    assert (
        "  an assumed phase is the one the program's status rules give this configuration (what it would write if "
        "it owned the status), since no live one is known; --observed SNAPSHOT reads the live ones"
    ) in shown
    decision = shown.index("  decision (on an assumed status): allowed")
    assert (
        shown[decision + 1]
        == f"    assumes: {NS}/team-y is Active: the maas-controller owns it in coexist; not observed"
    )
    assert "  limit: tokens-50000-per-1h-id (50000 per 1h)" in shown
    assert '    counter: auth.identity.selected_subscription_id = "4b7dc5b67eedbf54"' in shown


def test_the_same_caller_with_the_snapshot_reads_the_controllers_phase_and_assumes_nothing(migration):
    stack, snapshot = migration
    status, out = explain("caller", *BOB, "--config-file", str(stack), "--observed", str(snapshot))
    assert status == 0
    assert "assumed" not in out and "assumes:" not in out
    shown = lines(out)
    assert f"    {NS}/team-y: priority 0, phase Active, owned (user bob), includes the model" in shown
    assert "  decision: allowed" in shown
    assert "  limit: tokens-50000-per-1h-id (50000 per 1h)" in shown


def test_with_and_without_the_snapshot_only_the_assumption_marks_differ(migration):
    """Every subscription is Active live, as the status rules say: the two explanations agree line for line once
    the marks are taken out."""
    stack, snapshot = migration
    assumed = explain("caller", *BOB, "--config-file", str(stack))[1]
    observed = explain("caller", *BOB, "--config-file", str(stack), "--observed", str(snapshot))[1]
    unmarked = [
        line.replace(f" ({NOT_OBSERVED})", "").replace(" (on an assumed status)", "")
        for line in lines(assumed)
        if "assumes:" not in line and "an assumed phase is" not in line
    ]
    assert unmarked == lines(observed)


def test_explain_subscription_says_where_the_phase_comes_from(migration):
    stack, snapshot = migration
    status, out = explain("subscription", f"{NS}/team-y", "--config-file", str(stack))
    assert status == 0
    shown = lines(out)
    assert f"  phase: Active ({NOT_OBSERVED})" in shown
    assert (
        "      user bob: admitted (via MaaSAuthPolicy models-as-a-service/team-access), on an assumed status" in shown
    )
    assert "NOT admitted" not in out and "does not select it" not in out
    status, out = explain("subscription", f"{NS}/team-y", "--config-file", str(stack), "--observed", str(snapshot))
    assert status == 0
    assert "  phase: Active (observed: the live status)" in lines(out)
    assert "      user bob: admitted (via MaaSAuthPolicy models-as-a-service/team-access)" in lines(out)
    assert "assumed" not in out


def test_a_model_named_by_its_alias_resolves_on_an_assumed_model_status(migration):
    """Body-based routing: `gpt-4o` is the ExternalModel's `resolvedModelAlias`, which only a status carries."""
    stack, _ = migration
    args = ["request", "--path", "/v1/chat/completions", "--model", "gpt-4o", "--user", "alice"]
    status, out = explain(*args, "--groups", "premium-users", "--config-file", str(stack))
    assert status == 0
    shown = lines(out)
    assert "result (on an assumed status): 200; backend external-models/gpt-4o" in shown
    assert (
        "  assumes: the resolvedModelAlias 'gpt-4o' of external-models/gpt-4o comes from an assumed status (the "
        "maas-controller owns it in coexist; not observed)"
    ) in shown
    assert f"  assumes: {NS}/premium is Active: the maas-controller owns it in coexist; not observed" in shown


# --------------------------------------------------------------------------------- what an assumed phase is


@pytest.fixture(scope="module")
def coexist(migration) -> World:
    return load_world(migration[0], "prod", None)


@pytest.fixture(scope="module")
def absent(migration) -> World:
    """The same configuration after the controller is gone: the program writes the statuses itself."""
    raw, _ = raw_from_stack_file(migration[0])
    return world_of({**raw, "platform": {**raw["platform"], "controllerMode": "absent"}}, "prod", Observed.nothing())


def test_an_assumed_status_is_the_one_the_program_writes_when_it_owns_the_status(coexist, absent):
    """For every MaaS CR maas-api reads (the tenant's MaasTenantConfig status is nobody's input here)."""
    assert coexist.statuses == {}
    read = {key: written for key, written in absent.statuses.items() if key[0] in MAAS_API_READS}
    assert {kind for kind, _, _ in read} == MAAS_API_READS
    for key, written in read.items():
        body = coexist.objects[key]
        published = coexist.published(body)
        assert published.source == "assumed"
        assert published.status == written["status"]
    for subscription in coexist.config.subscriptions:
        body = coexist.object("MaaSSubscription", subscription.key)
        planned = coexist.plan.owners_by_key[("Subscription", subscription.key)].outputs["phase"]
        assert coexist.published(body).phase == planned  # the plan's own stack output


def test_every_owner_is_decided_on_coexist_as_on_its_absent_twin(coexist, absent):
    """Each owner of each subscription calling each of its models with the header: the same fate, limit and
    subscription as once the program owns the status, the invariant holding on both; on coexist the decision says
    it depends on the assumed phase."""
    admitted = 0
    for subscription in coexist.config.subscriptions:
        groups = [g.name for g in subscription.owner.groups]
        users = [*subscription.owner.users, *(f"<a member of {g}>" for g in groups)]
        for ref, user in ((ref, user) for ref in subscription.modelRefs for user in users):
            fates = []
            for world in (coexist, absent):
                result = trace(world, objects_for(world, world.model(ref.key)), user, groups, subscription.key)
                assert violations(world, result.outcome) == []
                matched = [(c.policy, c.name) for c in result.outcome.matched]
                fates.append((result.outcome.status, result.outcome.selected, matched, result.assumed))
            (status, selected, matched, assumed), twin = fates
            assert (status, selected, matched) == twin[:3], (subscription.key, ref.key, user)
            assert assumed == [f"{subscription.key} is Active: the maas-controller owns it in coexist; not observed"]
            assert twin[3] == []
            admitted += status == 200
    assert admitted >= 10  # the comparison is not between two denials


# ------------------------------------------------------------------------------------- with a snapshot, partly


@pytest.fixture(scope="module")
def extended(migration, tmp_path_factory) -> tuple[Path, Path]:
    """The imported stack plus a PR: model llm/mistral (whose LLMInferenceService the cluster does not have) and a
    subscription of bob's to it, new to the cluster; the snapshot also asked for mistral's LLMInferenceService."""
    stack, _ = migration
    document = yaml.safe_load(stack.read_text())
    config = document["config"]
    config["maas:models"].append(
        {"name": "mistral", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "mistral-7b"}}
    )
    mistral = {"name": "mistral", "namespace": "llm"}
    config["maas:subscriptions"].append(
        {
            "name": "mistral-trial",
            "namespace": NS,
            "owner": {"users": ["bob"]},
            "modelRefs": [{**mistral, "tokenRateLimits": [{"limit": 100, "window": "1m"}]}],
        }
    )
    team = next(policy for policy in config["maas:authPolicies"] if policy["name"] == "team-access")
    team["modelRefs"].append(mistral)
    folder = tmp_path_factory.mktemp("extended")
    changed = folder / "Pulumi.prod.yaml"
    changed.write_text(yaml.safe_dump(document, sort_keys=False))
    cluster = controller_cluster()
    asked = dataclasses.replace(cluster, got=cluster.got | {ObjectRef("LLMInferenceService", "llm", "mistral-7b")})
    snapshot = folder / "cluster.yaml"
    snapshot.write_text(dump_snapshot(asked))
    return changed, snapshot


def test_a_subscription_new_to_the_cluster_is_assumed_and_the_model_it_needs_is_not_routed(extended):
    """The status rules make mistral Failed (its LLMInferenceService is not on the cluster), so its only
    subscription is Failed, assumed since the cluster does not have it yet; and KServe serves no route for a
    backend that does not exist: 404, said as such (it used to read "decision: allowed" and a bug signal)."""
    stack, snapshot = extended
    source = ["--config-file", str(stack), "--observed", str(snapshot)]
    status, out = explain("subscription", f"{NS}/mistral-trial", *source)
    assert status == 0
    shown = lines(out)
    assert "  phase: Failed (assumed: the maas-controller owns it in coexist; not on the cluster yet)" in shown
    assert "BUG SIGNAL" not in out
    not_routed = (
        "no route rule matches: the model's HTTPRoute llm/mistral-7b-kserve-route is not among the routes its "
        "Gateway openshift-ingress/maas-default-gateway carries (not on the cluster, or not attached to it)"
    )
    assert f"    no limit is reached (404): {not_routed}" in shown
    assert f"      user bob: not routed (404): {not_routed}" in shown
    status, out = explain(
        "caller", "--user", "bob", "--model", "llm/mistral", "--subscription", "mistral-trial", *source
    )
    assert status == 0
    assert f"  decision: 404, {not_routed}" in lines(out)
    assert "  not reached: no route rule matches the request (404)" in lines(out)
    status, out = explain("caller", *BOB, *source)
    assert (status, "  decision: allowed" in lines(out)) == (0, True)  # team-y is read live: nothing assumed
    assert "assumes:" not in out


def test_a_denial_that_rests_on_an_assumed_phase_is_marked(coexist, monkeypatch):
    """Were the status rules to make team-y Failed, bob's 403 would be the assumption's, and say so."""
    intended = dict(coexist.intended_statuses)
    key = ("MaaSSubscription", NS, "team-y")
    monkeypatch.setitem(coexist.__dict__, "intended_statuses", {**intended, key: {**intended[key], "phase": "Failed"}})
    text = explain_caller(coexist, "bob", ["team-y"], "llm/llama-3-8b", None).text()
    shown = lines(text)
    assert f"    {NS}/team-y: priority 0, phase Failed ({NOT_OBSERVED}), owned (user bob), includes the model" in shown
    decision = next(i for i, line in enumerate(shown) if line.startswith("  decision"))
    assert shown[decision].startswith("  decision (on an assumed status): DENIED by ")
    assert shown[decision].endswith(
        "403 'subscription is in Failed phase (allowed: Active, Degraded)' (x-ext-auth-reason: model_unhealthy)"
    )
    assert (
        shown[decision + 1]
        == f"    assumes: {NS}/team-y is Failed: the maas-controller owns it in coexist; not observed"
    )
