"""Issue 20, item 4: a failed `python -m maas import` leaves something useful, never an empty stack file.

The scenario replayed: a cluster the maas-controller built, without the `maas-db-config` Secret maas-api needs, so
the imported configuration fails preflight. Before, `import` wrote neither the configuration nor the
`--save-snapshot` file, and with the README's `python -m maas import ... > Pulumi.prod.yaml` the stack file was
left empty (which rendered the default platform with exit 0 and no warning: tests/test_stackfile.py).
"""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from maas.config import ConfigError, load_config, raw_from_stack_file
from maas.observe import Observed, dump_snapshot, parse_snapshot
from maas.observe.scope import what_to_import
from maas.tools.cli import main
from maas.tools.importer import DOES_NOT_RENDER, IMAGES_NOT_READ, NOTHING, DoesNotRenderError, import_cluster
from maas.tools.render import render
from tests.controller_cluster import DB_SECRET, controller_cluster_without_db_secret, controller_objects
from tests.fake_kube import FakeKube, all_crds, db_secret, platform_gateway
from tests.test_import import EXPECTED

MISSING_SECRET = (
    "cluster: Secret odh-ai-gateway-infra/maas-db-config (maas-api's database connection) does not exist; create it "
    "before `pulumi up` (kubectl create secret generic maas-db-config -n odh-ai-gateway-infra "
    "--from-literal=DB_CONNECTION_URL=postgres://...)"
)
# What the import reads before it fails: everything but the images, which only a rendering compares.
READ = {**EXPECTED, "platform": {k: v for k, v in EXPECTED["platform"].items() if k != "images"}}
NOTHING_THERE = Observed.of([], listed=what_to_import().lists)
TRLP_CRD = "tokenratelimitpolicies.kuadrant.io"
FAILED_IMPORT = "this stack file is what a `python -m maas import` that failed printed"


def comments(text: str) -> str:
    """The comment header of a stack file, unwrapped into one line of text."""
    lines = [line.removeprefix("#").strip() for line in text.splitlines() if line.startswith("#")]
    return " ".join(lines)


def config_of(text: str) -> dict:
    return yaml.safe_load(text)["config"]


def without_marker(path: Path) -> Path:
    """The stack file with its `maas:importFailed` line deleted, as its message says to look at it."""
    kept = [line for line in path.read_text().splitlines(keepends=True) if not line.startswith("  maas:importFailed:")]
    reviewed = path.with_name(f"reviewed.{path.name}")
    reviewed.write_text("".join(kept))
    return reviewed


def test_an_import_that_fails_preflight_keeps_the_configuration_it_read():
    with pytest.raises(DoesNotRenderError) as caught:
        import_cluster(controller_cluster_without_db_secret(), "prod")
    error = caught.value
    assert error.messages == [DOES_NOT_RENDER, MISSING_SECRET]
    assert error.issues == [MISSING_SECRET]
    assert error.config == READ
    assert error.missing == [IMAGES_NOT_READ]
    assert any("oidc keeps the controller's usernames" in line for line in error.unexpressed)


def test_redirected_stdout_of_a_preflight_failure_is_the_configuration_under_a_header_saying_what_failed(
    tmp_path, capsys
):
    """`python -m maas import --observed SNAPSHOT --stack prod > Pulumi.prod.yaml`, replayed: stdout is the file."""
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(dump_snapshot(controller_cluster_without_db_secret()))
    import_file = tmp_path / "pulumi-import.json"
    argv = ["import", "--observed", str(snapshot), "--stack", "prod", "--import-file", str(import_file)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text(out)  # what the shell's `>` leaves

    assert out.startswith("# IMPORT FAILED (preflight failed: 1 problem(s) in the cluster): `python -m maas import`")
    header = comments(out)
    assert f"read the snapshot {snapshot}, but did not finish; this file is not ready." in header
    assert f"What failed: {DOES_NOT_RENDER} {MISSING_SECRET}" in header
    assert f"missing: {IMAGES_NOT_READ}; the import file ({import_file} was not written)." in header
    assert "then import a new snapshot of the cluster (python -m maas observe, or import --context)" in header
    assert "Prefer --out FILE to `> FILE`" in header
    config = config_of(out)
    assert next(iter(config)) == "maas:importFailed"
    assert config["maas:importFailed"].startswith("preflight failed: 1 problem(s) in the cluster")
    assert {key.removeprefix("maas:"): value for key, value in config.items()} == {
        "importFailed": config["maas:importFailed"],
        **READ,
    }
    assert not import_file.exists()

    lines = err.splitlines()
    assert f"error: {MISSING_SECRET}" in lines
    assert lines[-2].startswith("note: the stack file printed (stdout) holds the configuration read and what failed")
    assert lines[-1].startswith("next: Fix what failed (each problem says how; those starting 'cluster:' are the")

    # The file refuses to render or deploy as it is, and is the whole configuration once the marker is deleted.
    with pytest.raises(ConfigError, match="maas:importFailed: unknown configuration key"):
        render({key.removeprefix("maas:"): value for key, value in config.items()})  # the program `pulumi up` runs
    assert main(["render", "--config-file", str(stack)]) == 2
    out, err = capsys.readouterr()
    line = next(
        n for n, text in enumerate(stack.read_text().splitlines(), 1) if text.startswith("  maas:importFailed:")
    )
    assert out == "" and f"{stack}:{line}:3: {FAILED_IMPORT}" in err
    assert raw_from_stack_file(without_marker(stack)) == (READ, [])
    load_config(READ)


def fake_cluster(*extra: dict) -> list[dict]:
    redteam_gateway = copy.deepcopy(platform_gateway())
    redteam_gateway["metadata"]["name"] = "redteam-gateway"
    return [*controller_objects(), platform_gateway(), redteam_gateway, *all_crds(), *extra]


def test_with_context_the_snapshot_and_out_file_are_written_when_preflight_fails_and_replaced_once_fixed(
    tmp_path, capsys
):
    stack, saved, import_file = tmp_path / "Pulumi.prod.yaml", tmp_path / "snapshot.yaml", tmp_path / "import.json"
    stack.write_text("# an older import\n")

    def run_import(kube: FakeKube) -> int:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(kube.kubeconfig())
        argv = ["import", "--context", "maas-dev", "--kubeconfig", str(kubeconfig), "--stack", "prod"]
        return main([*argv, "--save-snapshot", str(saved), "--import-file", str(import_file), "--out", str(stack)])

    with FakeKube(fake_cluster()) as kube:
        assert run_import(kube) == 2
    out, err = capsys.readouterr()
    assert out == ""
    text = stack.read_text()
    assert text.startswith("# IMPORT FAILED (preflight failed: 1 problem(s) in the cluster)")
    assert f"What was read is saved in {saved}." in comments(text)
    assert "Prefer --out" not in comments(text)
    assert {**config_of(text)["maas:platform"]} == {**READ["platform"], "kubernetes": {"context": "maas-dev"}}
    assert parse_snapshot(saved.read_text()).lookup("Secret", DB_SECRET.namespace, DB_SECRET.name).state == "absent"
    assert not import_file.exists()
    assert f"note: {stack} holds the configuration read and what failed in its first lines" in err

    with FakeKube(fake_cluster(db_secret())) as kube:  # the next step: create the Secret, import again
        assert run_import(kube) == 0, capsys.readouterr().err
    assert capsys.readouterr().out == ""
    raw, _ = raw_from_stack_file(stack)
    assert "importFailed" not in raw and raw["subscriptions"] == EXPECTED["subscriptions"]
    assert import_file.exists()
    assert parse_snapshot(saved.read_text()).lookup("Secret", DB_SECRET.namespace, DB_SECRET.name).state == "present"


def test_with_context_preflight_failing_on_the_first_read_still_reads_what_the_plan_observes_and_saves_it(
    tmp_path, capsys
):
    """The first read fetches the CRDs: without Kuadrant's TokenRateLimitPolicy, the objects the configuration
    would own cannot be rendered, but what its plan observes (Gateways, the Secret) is still read and saved."""
    saved = tmp_path / "snapshot.yaml"
    cluster = [body for body in fake_cluster(db_secret()) if body["metadata"].get("name") != TRLP_CRD]
    with FakeKube(cluster) as kube:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(kube.kubeconfig())
        argv = ["import", "--context", "maas-dev", "--kubeconfig", str(kubeconfig), "--save-snapshot", str(saved)]
        assert main([*argv, "--import-file", str(tmp_path / "import.json")]) == 2
    out, err = capsys.readouterr()
    assert out.startswith("# IMPORT FAILED (preflight failed: 1 problem(s) in the cluster)")
    assert (
        "the CRD tokenratelimitpolicies.kuadrant.io (TokenRateLimitPolicy kuadrant.io/v1alpha1) is not installed" in err
    )
    assert config_of(out)["maas:subscriptions"] == EXPECTED["subscriptions"]
    observed = parse_snapshot(saved.read_text())
    assert observed.installed("TokenRateLimitPolicy") is False
    assert observed.lookup("Gateway", "openshift-ingress", "redteam-gateway").state == "present"
    assert observed.lookup("Secret", DB_SECRET.namespace, DB_SECRET.name).state == "present"


def test_with_context_a_cluster_with_nothing_to_import_still_saves_what_was_read(tmp_path, capsys):
    saved = tmp_path / "snapshot.yaml"
    with FakeKube(all_crds()) as kube:
        kubeconfig = tmp_path / "kubeconfig"
        kubeconfig.write_text(kube.kubeconfig())
        argv = ["import", "--context", "maas-dev", "--kubeconfig", str(kubeconfig), "--save-snapshot", str(saved)]
        assert main([*argv, "--import-file", str(tmp_path / "import.json")]) == 2
    out, err = capsys.readouterr()
    assert f"error: {NOTHING}" in err.splitlines()
    assert parse_snapshot(saved.read_text()).items("MaaSSubscription") == ()
    assert config_of(out) == {"maas:importFailed": "nothing was imported; see the comments at the top of this file"}


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        ([], NOTHING),
        (["--stack", "a\nb"], "--stack 'a\\nb' is not a name Pulumi accepts for a stack"),
        (["--kubeconfig", "k"], "--kubeconfig and --save-snapshot apply only with --context"),
    ],
    ids=["nothing-to-import", "bad-stack-name", "bad-options"],
)
def test_without_out_any_failure_prints_a_stack_file_that_says_so_and_refuses_to_deploy(tmp_path, capsys, extra, error):
    """Never an empty file after `> Pulumi.prod.yaml`: with no configuration read, the one key `pulumi up` (and
    `render`) refuses, under comments that say what failed."""
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(dump_snapshot(controller_cluster_without_db_secret() if extra else NOTHING_THERE))
    argv = ["import", "--observed", str(snapshot), "--import-file", str(tmp_path / "import.json"), *extra]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out.startswith("# IMPORT FAILED ")
    header = out[: out.index("\nconfig:\n")].splitlines()
    assert all(line.startswith("# ") for line in header)  # text from the command line cannot end a comment
    assert error in comments(out) and "No configuration was read, so this file holds none." in comments(out)
    assert list(config_of(out)) == ["maas:importFailed"]
    assert f"error: {error}" in err
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text(out)
    with pytest.raises(ConfigError, match=FAILED_IMPORT):
        raw_from_stack_file(stack)
    assert not (tmp_path / "import.json").exists()


def test_with_out_an_import_that_reads_no_configuration_leaves_the_file_as_it_was(tmp_path, capsys):
    snapshot, stack = tmp_path / "empty.yaml", tmp_path / "Pulumi.prod.yaml"
    snapshot.write_text(dump_snapshot(NOTHING_THERE))
    stack.write_text("config:\n  maas:models: []\n")
    argv = ["import", "--observed", str(snapshot), "--import-file", str(tmp_path / "i.json"), "--out", str(stack)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert stack.read_text() == "config:\n  maas:models: []\n"
    assert f"note: {stack} is left as it was: no configuration was read" in err


def test_out_may_not_name_a_file_the_import_reads_or_writes(tmp_path, capsys):
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(dump_snapshot(controller_cluster_without_db_secret()))
    for other in (["--import-file", str(tmp_path / "x")], []):
        target = other[1] if other else str(snapshot)
        assert main(["import", "--observed", str(snapshot), *other, "--out", target]) == 2
        err = capsys.readouterr().err
        assert f"error: --out '{target}' is a file the import also reads or writes; give another" in err
    assert snapshot.read_text() == dump_snapshot(controller_cluster_without_db_secret())
