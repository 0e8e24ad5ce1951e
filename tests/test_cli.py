"""`python -m maas render`: the command-line contract of DESIGN.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from maas.tools import outdir
from maas.tools.cli import main
from maas.tools.outdir import _HEADER as HEADER
from maas.tools.outdir import MANIFEST, OutDir, OutputError
from tests.conftest import ROOT


def run(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "maas", *args]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)


def test_render_dev_stack_as_json_prints_objects_and_a_summary():
    result = run("render", "--stack", "dev", "--format", "json")
    assert result.returncode == 0, result.stderr
    objects = json.loads(result.stdout)
    assert {"apiVersion", "kind", "metadata"} <= set(objects[0])
    assert "TokenRateLimitPolicy" in {o["kind"] for o in objects}
    assert result.stderr.startswith(f"rendered {len(objects)} objects:")


def test_yaml_and_json_render_the_same_objects():
    as_json = json.loads(run("render", "--format", "json").stdout)
    as_yaml = list(yaml.safe_load_all(run("render", "--format", "yaml").stdout))
    assert as_yaml == as_json


def test_render_is_byte_identical_across_runs():
    assert run("render", "--format", "json").stdout == run("render", "--format", "json").stdout


def test_invalid_configuration_exits_2_with_every_error_and_prints_nothing(tmp_path):
    stack = tmp_path / "Pulumi.bad.yaml"
    stack.write_text(
        yaml.safe_dump(
            {
                "config": {
                    "maas:platform": {"flavor": "aws"},
                    "maas:subscriptions": [{"name": "s", "owner": {}, "modelRefs": []}],
                }
            }
        )
    )
    result = run("render", "--config-file", str(stack))
    assert result.returncode == 2
    assert result.stdout == ""
    assert "maas:platform.flavor: 'aws' is not allowed" in result.stderr
    assert "maas:subscriptions[0] (models-as-a-service/s).owner: name at least one group or user" in result.stderr
    assert "maas:subscriptions[0] (models-as-a-service/s).modelRefs: must not be empty" in result.stderr


def test_missing_stack_file_exits_2():
    result = run("render", "--stack", "nope")
    assert result.returncode == 2 and "Pulumi.nope.yaml not found" in result.stderr


def test_out_writes_one_file_per_object(tmp_path):
    result = run("render", "--format", "json", "--out", str(tmp_path / "out"))
    assert result.returncode == 0 and result.stdout == ""
    files = sorted(f for f in (tmp_path / "out").iterdir() if f.name != MANIFEST)
    objects = json.loads(run("render", "--format", "json").stdout)
    assert len(files) == len(objects)
    assert "tokenratelimitpolicy_llm_maas-trlp-granite-7b.json" in {f.name for f in files}


def test_encrypted_values_render_as_placeholder_with_a_warning(tmp_path):
    stack = tmp_path / "Pulumi.sec.yaml"
    stack.write_text(
        yaml.safe_dump({"config": {"maas:platform": {"kubernetes": {"kubeconfig": {"secure": "v1:abc"}}}}})
    )
    result = run("render", "--config-file", str(stack))
    assert result.returncode == 0, result.stderr
    assert "warning: maas:platform.kubernetes.kubeconfig: encrypted value cannot be decrypted offline" in result.stderr


def test_dev_stack_is_found_beside_pulumi_yaml_from_another_directory(tmp_path):
    result = run("render", "--stack", "dev", cwd=tmp_path)
    assert result.returncode == 0, result.stderr


# --out DIR: complete renderings only, and never a file that render did not write.


def listing(directory) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(directory.iterdir())}


def manifest_names(directory) -> list[str]:
    return [line for line in (directory / MANIFEST).read_text().splitlines() if not line.startswith("#")]


def test_out_creates_the_directory_with_a_manifest_and_leaves_no_staging(tmp_path):
    OutDir.open(tmp_path / "out").replace({"a.yaml": "a\n", "b.yaml": "b\n"})
    assert listing(tmp_path / "out") == {
        MANIFEST: f"{HEADER}a.yaml\nb.yaml\n",
        "a.yaml": "a\n",
        "b.yaml": "b\n",
    }
    assert [path.name for path in tmp_path.iterdir()] == ["out"]


def test_out_rerender_removes_stale_files_and_keeps_foreign_ones(tmp_path):
    out = tmp_path / "out"
    OutDir.open(out).replace({"a.yaml": "a\n", "b.yaml": "b\n"})
    (out / "NOTES.md").write_text("mine\n")
    (out / "keep").mkdir()
    OutDir.open(out).replace({"b.yaml": "b2\n", "c.yaml": "c\n"})
    assert sorted(path.name for path in out.iterdir()) == [MANIFEST, "NOTES.md", "b.yaml", "c.yaml", "keep"]
    assert (out / "b.yaml").read_text() == "b2\n" and (out / "NOTES.md").read_text() == "mine\n"
    assert manifest_names(out) == ["b.yaml", "c.yaml"]


def test_out_refuses_to_overwrite_a_file_render_did_not_write(tmp_path):
    out = tmp_path / "out"
    OutDir.open(out).replace({"a.yaml": "a\n"})
    (out / "b.yaml").write_text("someone else's\n")
    with pytest.raises(OutputError) as caught:
        OutDir.open(out).replace({"a.yaml": "a2\n", "b.yaml": "b\n"})
    assert str(caught.value) == f"--out '{out}' 'b.yaml' exists and was not written by render; move it away"
    assert listing(out) == {MANIFEST: f"{HEADER}a.yaml\n", "a.yaml": "a\n", "b.yaml": "someone else's\n"}


def test_out_accepts_an_empty_existing_directory(tmp_path):
    OutDir.open(tmp_path).replace({"a.yaml": "a\n"})
    assert sorted(path.name for path in tmp_path.iterdir()) == [MANIFEST, "a.yaml"]


def test_out_refuses_a_non_empty_directory_without_manifest(tmp_path):
    (tmp_path / "report.txt").write_text("x\n")
    result = run("render", "--out", str(tmp_path))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: --out '{tmp_path}' is not empty and has no {MANIFEST} manifest, so render did not write it; "
        "choose a new or empty directory\n"
    )
    assert listing(tmp_path) == {"report.txt": "x\n"}


def test_out_that_is_a_file_exits_2(tmp_path):
    target = tmp_path / "objects.yaml"
    target.write_text("x\n")
    result = run("render", "--out", str(target))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: --out '{target}' is not a directory; give the path of a directory (it is created if missing)\n"
    )


def test_out_that_cannot_be_written_exits_2(tmp_path):
    """A path under a regular file cannot be created, even by root."""
    (tmp_path / "file").write_text("x\n")
    result = run("render", "--out", str(tmp_path / "file" / "out"))
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        f"error: --out '{tmp_path}/file/out' cannot be created: its parent '{tmp_path}/file' is not a directory\n"
    )


def test_out_with_a_missing_parent_exits_2(tmp_path):
    with pytest.raises(OutputError) as caught:
        OutDir.open(tmp_path / "missing" / "out")
    assert str(caught.value) == (
        f"--out '{tmp_path}/missing/out' cannot be created: its parent '{tmp_path}/missing' is not a directory"
    )


def test_manifest_naming_a_file_outside_the_directory_is_refused(tmp_path):
    (tmp_path / "precious").write_text("x\n")
    out = tmp_path / "out"
    out.mkdir()
    (out / MANIFEST).write_text(f"{HEADER}../precious\n")
    with pytest.raises(OutputError) as caught:
        OutDir.open(out)
    assert str(caught.value) == (
        f"--out '{out}' {MANIFEST} line 2 ('../precious') is not a file name render writes; "
        "the manifest was edited: delete the files it lists and the manifest by hand"
    )
    assert (tmp_path / "precious").read_text() == "x\n"


def test_out_write_failure_is_one_line_and_leaves_no_staging(tmp_path):
    out = tmp_path / "out"
    OutDir.open(out).replace({"a.yaml": "a\n"})
    (out / "a.yaml").unlink()
    (out / "a.yaml").mkdir()  # someone put a directory where render's file was
    with pytest.raises(OutputError) as caught:
        OutDir.open(out).replace({"a.yaml": "a2\n"})
    assert str(caught.value) == f"--out '{out}' cannot be written: Is a directory ('{out}/a.yaml')"
    assert [path.name for path in tmp_path.iterdir()] == ["out"]


class Interrupted(dict):
    """Files whose rendering is interrupted (Ctrl-C) after the first one."""

    def items(self):
        for index, item in enumerate(super().items()):
            if index == 1:
                raise KeyboardInterrupt
            yield item


def test_interrupted_render_leaves_the_previous_set_intact(tmp_path):
    out = tmp_path / "out"
    OutDir.open(out).replace({"a.yaml": "a\n", "b.yaml": "b\n"})
    before = listing(out)
    with pytest.raises(KeyboardInterrupt):
        OutDir.open(out).replace(Interrupted({"a.yaml": "a2\n", "c.yaml": "c\n"}))
    assert listing(out) == before
    assert [path.name for path in tmp_path.iterdir()] == ["out"]


def test_interrupted_swap_keeps_every_file_listed_and_the_next_render_converges(tmp_path, monkeypatch):
    """Killed while files move in: each file is old or new, never partial, and the manifest lists them all."""
    out = tmp_path / "out"
    OutDir.open(out).replace({"a.yaml": "a\n", "b.yaml": "b\n"})
    moves, move = [], os.replace

    def replace_then_stop(source, target):
        moves.append(target)
        if len(moves) == 3:  # the provisional manifest and b.yaml have moved in; c.yaml would be next
            raise KeyboardInterrupt
        move(source, target)

    monkeypatch.setattr(outdir.os, "replace", replace_then_stop)
    with pytest.raises(KeyboardInterrupt):
        OutDir.open(out).replace({"b.yaml": "b2\n", "c.yaml": "c\n"})
    assert manifest_names(out) == ["a.yaml", "b.yaml", "c.yaml"]
    assert listing(out) | {MANIFEST: ""} == {MANIFEST: "", "a.yaml": "a\n", "b.yaml": "b2\n"}
    monkeypatch.undo()
    OutDir.open(out).replace({"b.yaml": "b2\n", "c.yaml": "c\n"})
    assert listing(out) == {MANIFEST: f"{HEADER}b.yaml\nc.yaml\n", "b.yaml": "b2\n", "c.yaml": "c\n"}
    assert [path.name for path in tmp_path.iterdir()] == ["out"]


def test_render_as_json_then_yaml_replaces_every_file(tmp_path, capsys):
    out = tmp_path / "out"
    stack = ROOT / "tests" / "stacks" / "Pulumi.minimal.yaml"
    assert main(["render", "--config-file", str(stack), "--format", "json", "--out", str(out)]) == 0
    as_json = sorted(path.name for path in out.iterdir())
    assert main(["render", "--config-file", str(stack), "--format", "yaml", "--out", str(out)]) == 0
    as_yaml = sorted(path.name for path in out.iterdir())
    assert as_yaml == [MANIFEST] + [name.removesuffix(".json") + ".yaml" for name in as_json[1:]]
    assert manifest_names(out) == as_yaml[1:]
    assert capsys.readouterr().out == ""


def test_subscription_batches_without_observation_or_with_rendered_files_are_refused(tmp_path):
    """Issue 21: `subscriptionBatches` needs a cluster to observe and writes no files; exit 2, nothing rendered."""
    stack = tmp_path / "Pulumi.bad.yaml"
    platform = {"subscriptionBatches": True, "observe": False, "kubernetes": {"renderYamlToDirectory": "out"}}
    stack.write_text(yaml.safe_dump({"config": {"maas:platform": platform}}))
    result = run("render", "--config-file", str(stack))
    assert (result.returncode, result.stdout) == (2, "")
    assert "maas:platform.subscriptionBatches: needs maas:platform.observe: true" in result.stderr
    assert "remove observe: false, or subscriptionBatches" in result.stderr
    assert "maas:platform.subscriptionBatches: is not compatible with" in result.stderr


def test_the_new_platform_switches_refuse_other_values_with_their_path_and_choices(tmp_path):
    """Issues 21 and 22: `subscriptionOutputs` and `unmeteredTraffic`, both at once; exit 2, nothing rendered."""
    stack = tmp_path / "Pulumi.bad.yaml"
    platform = {"subscriptionOutputs": "all", "unmeteredTraffic": "fail"}
    stack.write_text(yaml.safe_dump({"config": {"maas:platform": platform}}))
    result = run("render", "--config-file", str(stack))
    assert (result.returncode, result.stdout) == (2, "")
    assert "maas:platform.subscriptionOutputs: 'all' is not allowed; use 'full' or 'summary'" in result.stderr
    assert "maas:platform.unmeteredTraffic: 'fail' is not allowed; use 'warn' or 'error'" in result.stderr
