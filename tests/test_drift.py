"""`python -m maas drift`: live against desired, as `kubectl diff` shows it (issue 20, item 5 and "What to build" 4).

The scenario: a cluster the maas-controller built, imported (`import --observed SNAPSHOT --stack prod`), whose live
policies carry the controller's `request.path` where the program writes `request.url_path`. `diff prod prod
--observed SNAPSHOT` compares the configuration with itself and says "no changes"; `drift` applies each object the
program registers to its live object, as a server-side apply merges it, and shows that field. Fields the program
does not set never show (status, server metadata, API server defaults, other managers' fields); objects the
snapshot did not look at are "not observed", never "would be created".

`drift` is not in `cli.COMMANDS` yet (another change owns cli.py): `COMMAND` below is the entry to add, and the
command line is tested through it.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from maas.config import raw_from_stack_file
from maas.observe import Observed, dump_snapshot, load_snapshot
from maas.plan.policies.upstream_text import REWRITES, as_written_here
from maas.tools import cli
from maas.tools.drift import drift
from maas.tools.drifting.apply import applied, same_quantity
from maas.tools.drifting.formats import markdown, text
from maas.tools.drifting.report import NOT_LISTED, NOT_READ, object_drift
from maas.tools.drifting.schemas import kind_schema
from maas.tools.render import render
from tests.controller_cluster import GATEWAYS, controller_cluster, enforced, gateway_auth_policies, obj

GATEWAY_POLICY = ("AuthPolicy", GATEWAYS, "maas-gateway-auth")
SERVER_FIELDS = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "status")
# What the fixture's live objects carry that the program never sets: the API server's defaults and allocations, and
# other managers' fields (the controller's finalizers and ownerReferences, the Deployment revision).
NOT_SET_BY_THE_PROGRAM = (
    "finalizers",
    "ownerReferences",
    "clusterIP",
    "ipFamilies",
    "sessionAffinity",
    "strategy",
    "revisionHistoryLimit",
    "progressDeadlineSeconds",
    "terminationMessagePath",
    "dnsPolicy",
    "schedulerName",
    "deployment.kubernetes.io/revision",
    "last-applied-configuration",
    "kubernetes.io/metadata.name",
)


def as_the_controller_writes_it(value: Any) -> Any:
    """This program's spellings written back as the upstream controller writes them (`upstream_text.REWRITES`)."""
    if isinstance(value, str):
        for upstream, ours in REWRITES:
            value = value.replace(ours, upstream)
        return value
    if isinstance(value, dict):
        return {key: as_the_controller_writes_it(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_the_controller_writes_it(item) for item in value]
    return value


def upstream_gateway_policy() -> dict[str, Any]:
    """The default gateway's AuthPolicy as the controller writes it: its predicates on `request.path`."""
    policy = next(p for p in gateway_auth_policies() if p["metadata"]["name"] == GATEWAY_POLICY[2])
    upstream = {**policy, "spec": as_the_controller_writes_it(policy["spec"])}
    assert "request.path" in json.dumps(upstream["spec"]) and upstream["spec"] != policy["spec"]
    assert as_written_here(upstream["spec"]) == policy["spec"]  # the importer reads it back as this program's
    return upstream


def cluster(*extra: dict[str, Any], leave_out: tuple[str, ...] = ()) -> Observed:
    """The controller-built cluster, its default gateway's AuthPolicy as the controller writes it."""
    return controller_cluster(
        upstream_gateway_policy(), *extra, leave_out=("AuthPolicy/openshift-ingress/maas-gateway-auth", *leave_out)
    )


def run(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    """`python -m maas ARGV`: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def migration(tmp_path_factory) -> tuple[Path, Path]:
    """The snapshot of the cluster and the stack `import --observed SNAPSHOT --stack prod` writes from it."""
    folder = tmp_path_factory.mktemp("drift")
    snapshot = folder / "cluster.yaml"
    snapshot.write_text(dump_snapshot(cluster()))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(
            ["import", "--observed", str(snapshot), "--stack", "prod", "--import-file", str(folder / "i.json")]
        )
    assert status == 0, err.getvalue()
    stack = folder / "Pulumi.prod.yaml"
    stack.write_text(out.getvalue())
    return stack, snapshot


def changes_of(report, key: tuple[str, str, str]) -> tuple[str, ...]:
    found = [change for change in report.objects if change.key == key]
    assert len(found) == 1, f"{key} not in the drift"
    return found[0].fields


# ------------------------------------------------------------------------------------------ the issue's scenario


def test_the_live_request_path_shows_where_the_program_writes_request_url_path(migration, monkeypatch):
    """The exact scenario, as a pull-request comment: the controller's `request.path` against `request.url_path`."""
    stack, snapshot = migration
    # what the issue ran: the configuration compared with itself has no changes, whatever the cluster holds
    status, out, _ = run(["diff", str(stack), str(stack), "--observed", str(snapshot), "--exit-code"], monkeypatch)
    assert status == 0 and "no changes" in out
    status, out, err = run(
        ["drift", "--config-file", str(stack), "--observed", str(snapshot), "--format", "markdown", "--exit-code"],
        monkeypatch,
    )
    assert status == 1, err
    assert out.startswith("## MaaS drift\n\n### Objects\n\n")
    body = out.split("```diff\n", 1)[1].split("\n```\n", 1)[0]
    policy = body.split("~ AuthPolicy openshift-ingress/maas-gateway-auth\n", 1)[1].split("\n~ ", 1)[0]
    went = [line for line in policy.splitlines() if line.startswith("      - ")]
    came = [line for line in policy.splitlines() if line.startswith("      + ")]
    assert any("request.path" in line for line in went), policy
    assert any("request.url_path" in line for line in came), policy
    assert not any("request.path" in line for line in came), policy  # the apply leaves none of the live spelling
    fields = [line for line in policy.splitlines() if line.startswith("    spec.")]
    assert (
        "    spec.defaults.rules.authorization.require-group-membership.when[0].predicate: text changed in"
        in "\n".join(fields)
    ), policy
    # the controller's token rate limits carry it too: `!request.path.endsWith("/v1/models")`
    limits = body.split("~ TokenRateLimitPolicy llm/maas-trlp-granite-7b\n", 1)[1].split("\n~ ", 1)[0]
    assert "      - !request.path.endsWith\n      + !request.url_path.endsWith" in limits


def test_the_same_view_as_text_names_the_field_and_says_what_it_counts(migration, monkeypatch):
    stack, snapshot = migration
    status, out, _ = run(["drift", "--config-file", str(stack), "--observed", str(snapshot)], monkeypatch)
    assert status == 0  # without --exit-code
    lines = out.splitlines()
    assert lines[0].startswith("objects: 1 to create, 0 to delete, ")
    assert "~ AuthPolicy openshift-ingress/maas-gateway-auth" in lines
    index = lines.index("~ AuthPolicy openshift-ingress/maas-gateway-auth")
    policy = lines[index + 1 : next(i for i in range(index + 1, len(lines)) if not lines[i].startswith("    "))]
    assert any(line.startswith("    spec.defaults.rules.") and "text changed" in line for line in policy), policy


def test_server_fields_and_other_managers_fields_never_show(migration):
    stack, snapshot = migration
    raw, _ = raw_from_stack_file(stack)
    report = drift(raw, load_snapshot(snapshot), stack="prod")
    shown = "\n".join(line for change in report.objects for line in change.fields)
    for field in (*SERVER_FIELDS, *NOT_SET_BY_THE_PROGRAM):
        assert field not in shown, field
    # the Deployment differs only where the program sets fields; its server defaults are not among them
    deployment = changes_of(report, ("Deployment", "odh-ai-gateway-infra", "maas-api"))
    assert all(not line.startswith("- ") for line in deployment), deployment
    # and a Service shows neither its allocated IP nor its defaults: only the program's labels and annotations
    service = changes_of(report, ("Service", "odh-ai-gateway-infra", "maas-api"))
    assert all(line.lstrip("+ ").startswith("metadata.") for line in service), service


def test_an_object_as_the_program_applies_it_shows_nothing(migration):
    """The granite AuthPolicy as an up leaves it: the program's fields, the server's metadata and status, and
    another manager's annotation, finalizer and owner. Nothing of it shows; it counts as unchanged."""
    stack, snapshot = migration
    raw, _ = raw_from_stack_file(stack)
    key = ("AuthPolicy", "llm", "maas-auth-granite-7b")
    body = next(b for b in render(raw, stack="prod", observed=load_snapshot(snapshot)).objects() if _key(b) == key)
    metadata = body["metadata"]
    live = obj(
        body["apiVersion"],
        body["kind"],
        metadata["name"],
        metadata["namespace"],
        labels=metadata["labels"],
        annotations={**metadata["annotations"], "example.com/noted-by": "another-operator"},
        finalizers=["example.com/cleanup"],
        ownerReferences=[{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "uid-owner"}],
        spec=body["spec"],
        status=enforced(),
    )
    applied_cluster = cluster(live, leave_out=("AuthPolicy/llm/maas-auth-granite-7b",))
    before = drift(raw, load_snapshot(snapshot), stack="prod")
    after = drift(raw, applied_cluster, stack="prod")
    assert key in {change.key for change in before.objects}
    assert key not in {change.key for change in after.objects}
    assert after.unchanged == before.unchanged + 1
    assert "maas-auth-granite-7b" not in text(after) and "maas-auth-granite-7b" not in markdown(after)


def _key(body: dict[str, Any]) -> tuple[str, str, str]:
    return (body["kind"], body["metadata"].get("namespace", ""), body["metadata"]["name"])


# ------------------------------------------------------------------------------------- present, absent, unknown


def test_an_object_the_snapshot_did_not_look_at_is_not_observed_never_created(migration):
    stack, snapshot = migration
    raw, _ = raw_from_stack_file(stack)
    report = drift(raw, load_snapshot(snapshot), stack="prod")
    created = {change.key for change in report.objects if change.mark == "+"}
    unknown = dict(report.not_observed)
    # fetched by name and absent: the first up creates it
    assert created == {("Deployment", "odh-ai-gateway-infra", "maas-api-redteam")}
    # never listed nor fetched (the import reads the controller's kinds and a few objects by name)
    assert unknown[("ClusterRole", "", "payload-processing-reader")] == NOT_LISTED
    assert unknown[("NetworkPolicy", "odh-ai-gateway-infra", "maas-api-allow-gateway")] == NOT_LISTED
    assert unknown[("PersesDatasource", "opendatahub", "maas-usage-thanos-querier")] == NOT_READ
    assert not created & set(unknown)
    said = text(report)
    assert "+ ClusterRole" not in said and "not observed: " in said
    assert "  ClusterRole (4): maas-api, " in said
    assert "PersesDatasource (1, a kind snapshots do not read): opendatahub/maas-usage-thanos-querier" in said
    assert "| ClusterRole (4) | maas-api, " in markdown(report)


def test_with_nothing_observed_nothing_is_created_or_changed(migration, monkeypatch, tmp_path):
    stack, _ = migration
    empty = tmp_path / "empty.yaml"
    empty.write_text(dump_snapshot(Observed.nothing()))
    status, out, _ = run(["drift", "--config-file", str(stack), "--observed", str(empty), "--exit-code"], monkeypatch)
    assert status == 0
    assert out.startswith("nothing compared: the snapshot shows none of the objects the program registers\n")
    assert "\n+ " not in out and "\n~ " not in out


def test_a_live_object_the_program_no_longer_registers_would_be_deleted(migration):
    """Labelled as this program labels what it applies, of a kind it writes, in a scope the snapshot listed."""
    stack, _ = migration
    raw, _ = raw_from_stack_file(stack)
    retired = obj(
        "kuadrant.io/v1alpha1",
        "TokenRateLimitPolicy",
        "maas-trlp-retired",
        "llm",
        labels={"app.kubernetes.io/managed-by": "pulumi"},
        spec={"targetRef": {"group": "gateway.networking.k8s.io", "kind": "HTTPRoute", "name": "retired"}},
    )
    foreign = obj(
        "maas.opendatahub.io/v1alpha1",
        "Tenant",
        "kept",
        "ai-tenants",
        labels={"app.kubernetes.io/managed-by": "pulumi"},
    )
    report = drift(raw, cluster(retired, foreign), stack="prod")
    deleted = {change.key for change in report.objects if change.mark == "-"}
    assert deleted == {("TokenRateLimitPolicy", "llm", "maas-trlp-retired")}  # Tenant: a kind the program never writes
    said = text(report)
    assert "- TokenRateLimitPolicy llm/maas-trlp-retired" in said
    note = next(note for note in report.notes if note.startswith("objects to delete are known only where"))
    assert "TokenRateLimitPolicy (all namespaces)" in note and "8 objects fetched by name" in note
    assert "state" in note


# ------------------------------------------------------------------------------------ the server-side apply model


def test_an_atomic_list_with_defaulted_items_shows_nothing_the_program_leaves_to_the_defaults():
    """An HTTPRoute's parentRefs (atomic) is replaced by the body's, which the API server defaults again."""
    live = {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "HTTPRoute",
        "metadata": {"name": "r", "namespace": "n", "uid": "u", "resourceVersion": "1"},
        "spec": {
            "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "g", "namespace": "x"}]
        },
        "status": {"parents": []},
    }
    body = {"apiVersion": live["apiVersion"], "kind": "HTTPRoute", "metadata": {"name": "r", "namespace": "n"}}
    assert object_drift(live, {**body, "spec": {"parentRefs": [{"name": "g", "namespace": "x"}]}}) == []
    assert object_drift(live, {**body, "spec": {"parentRefs": [{"name": "h", "namespace": "x"}]}}) == [
        '- spec.parentRefs[namespace=x,name=g]: {"group":"gateway.networking.k8s.io","kind":"Gateway","name":"g",'
        '"namespace":"x"}',
        '+ spec.parentRefs[namespace=x,name=h]: {"group":"gateway.networking.k8s.io","kind":"Gateway","name":"h",'
        '"namespace":"x"}',
    ]
    # the list is the body's: a live item the body leaves out goes
    two = {
        **live,
        "spec": {"parentRefs": [*live["spec"]["parentRefs"], {**live["spec"]["parentRefs"][0], "name": "k"}]},
    }
    assert object_drift(two, {**body, "spec": {"parentRefs": [{"name": "g", "namespace": "x"}]}}) == [
        '- spec.parentRefs[namespace=x,name=k]: {"group":"gateway.networking.k8s.io","kind":"Gateway","name":"k",'
        '"namespace":"x"}'
    ]


def test_a_keyed_list_keeps_the_items_and_fields_others_set():
    """Containers, env and ports are map lists: another manager's env var and the defaulted protocol stay."""
    container = {
        "name": "api",
        "image": "old",
        "env": [{"name": "A", "value": "1"}, {"name": "INJECTED", "value": "by-a-webhook"}],
        "ports": [{"containerPort": 8443, "name": "https", "protocol": "TCP"}],
        "terminationMessagePath": "/dev/termination-log",
    }
    live = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n", "annotations": {"deployment.kubernetes.io/revision": "3"}},
        "spec": {"replicas": 1, "template": {"spec": {"containers": [container], "dnsPolicy": "ClusterFirst"}}},
    }
    wanted = {
        "name": "api",
        "image": "new",
        "env": [{"name": "A", "value": "1"}],
        "ports": [{"containerPort": 8443, "name": "https"}],
    }
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n"},
        "spec": {"template": {"spec": {"containers": [wanted]}}},
    }
    assert object_drift(live, body) == ['spec.template.spec.containers[name=api].image: "old" -> "new"']


def test_a_set_gains_the_bodys_values_and_quantities_compare_by_value():
    schema = kind_schema("v1", "ConfigMap")
    assert applied(["a", "b"], ["b", "c"], schema.child("metadata").child("finalizers")) == ["a", "b", "c"]
    assert same_quantity("500m", "0.5") and same_quantity("1Gi", "1024Mi") and same_quantity("1e3", "1k")
    assert not same_quantity("1G", "1Gi") and not same_quantity("100m", "100")
    live = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d", "namespace": "n"},
        "spec": {
            "template": {
                "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}}}]}
            }
        },
    }
    same = {"name": "c", "resources": {"limits": {"cpu": "0.5", "memory": "1024Mi"}}}
    assert object_drift(live, {**live, "spec": {"template": {"spec": {"containers": [same]}}}}) == []


def test_a_map_the_body_sets_is_merged_key_by_key():
    live = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "labels": {"a": "1", "theirs": "x"}},
        "data": {"k": "v", "other": "w"},
    }
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "n", "labels": {"a": "2"}},
        "data": {"k": "v"},
    }
    assert object_drift(live, body) == ['metadata.labels.a: "1" -> "2"']


# ---------------------------------------------------------------------------------------------- the command line


def test_the_commands_entry_gives_help_with_a_summary_and_examples(monkeypatch, capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["drift", "--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: ") and " drift " in out.splitlines()[0]
    assert "What pulumi up would change in a snapshot's live objects (kubectl diff)." in " ".join(out.split())
    assert "\nexamples:\n  maas drift --stack prod --observed snapshot.yaml\n" in out


def test_unusable_input_exits_2_with_one_message(migration, monkeypatch, tmp_path):
    stack, snapshot = migration
    status, out, err = run(
        ["drift", "--config-file", str(tmp_path / "Pulumi.none.yaml"), "--observed", str(snapshot)], monkeypatch
    )
    assert (status, out) == (2, "") and err.startswith("error: stack file ") and "not found" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("items: 3\n")
    status, out, err = run(["drift", "--config-file", str(stack), "--observed", str(bad)], monkeypatch)
    assert (status, out) == (2, "") and err.startswith("error: ")
    invalid = tmp_path / "Pulumi.invalid.yaml"
    invalid.write_text("config:\n  maas:tenants: 3\n")
    status, out, err = run(["drift", "--config-file", str(invalid), "--observed", str(snapshot)], monkeypatch)
    assert (status, out) == (2, "") and err.startswith("error: ")
