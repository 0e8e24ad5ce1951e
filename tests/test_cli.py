"""`python -m maas render`: the command-line contract of DESIGN.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import yaml

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
    files = sorted((tmp_path / "out").iterdir())
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
