"""Output hygiene: `render --outputs`, `--out` across a configuration change, and `make render` as a clean pipe."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pulumi
import pytest
import yaml

from maas.config import raw_from_stack_file
from maas.tools.cli import main
from maas.tools.outdir import MANIFEST
from tests.conftest import DEV_STACK, ROOT

FAKE_PYTHON = """#!/bin/sh
# `python -m venv DIR` makes DIR/bin/python: a pip that talks on stdout and stderr, as the real one does.
if [ "$1 $2" = "-m venv" ]; then
  mkdir -p "$3/bin"
  printf '#!/bin/sh\\necho "Collecting pulumi==3.272.0"\\necho "Downloading pulumi.whl (1.2 MB)" >&2\\n' > "$3/bin/python"
  chmod +x "$3/bin/python"
  echo "created virtual environment $3"
fi
"""


def render(capsys, *args: str) -> tuple[int, str, list[str]]:
    code = main(["render", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err.splitlines()


def stack_file(tmp_path, raw, name="Pulumi.edited.yaml", extra=""):
    path = tmp_path / name
    path.write_text(extra + yaml.safe_dump({"config": {f"maas:{key}": value for key, value in raw.items()}}))
    return path


# ------------------------------------------------------------------------------------------------- --outputs


def test_outputs_prints_exactly_what_the_program_exports_as_sorted_json(capsys, monkeypatch):
    exported, export = {}, pulumi.export

    def recorded(name, value):
        exported[name] = value
        export(name, value)

    monkeypatch.setattr(pulumi, "export", recorded)
    code, out, err = render(capsys, "--outputs")
    assert code == 0
    assert json.loads(out) == exported and {"models", "subscriptions", "tenants", "quotaResets"} <= set(exported)
    assert out == json.dumps(exported, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert err[0].startswith("rendered ")  # the summary stays on stderr


def test_outputs_under_summary_print_the_counts_the_stack_exports(capsys, tmp_path):
    raw, _ = raw_from_stack_file(DEV_STACK)
    raw["platform"]["subscriptionOutputs"] = "summary"
    code, out, _ = render(capsys, "--config-file", str(stack_file(tmp_path, raw)), "--outputs")
    assert code == 0
    assert json.loads(out)["subscriptions"] == {"count": 7, "rateLimitIdentity": {"legacy": 2, "short": 5}}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--status"],
            "error: --status adds status writes to the objects, and --outputs prints no objects; use one of them",
        ),
        (["--format", "yaml"], "error: --outputs prints JSON (as pulumi stack output --json); drop --format yaml"),
    ],
)
def test_outputs_refuse_the_options_that_shape_objects(capsys, options, message):
    assert render(capsys, "--outputs", *options) == (2, "", [message])


def test_outputs_and_out_are_exclusive(capsys, tmp_path):
    with pytest.raises(SystemExit) as caught:
        main(["render", "--outputs", "--out", str(tmp_path / "out")])
    assert caught.value.code == 2
    assert "argument --out: not allowed with argument --outputs" in capsys.readouterr().err


def test_esc_environment_warns_and_outputs_stay_clean_json(capsys, tmp_path):
    raw, _ = raw_from_stack_file(DEV_STACK)
    path = stack_file(tmp_path, raw, extra="environment:\n  - maas/prod\n")
    code, out, err = render(capsys, "--config-file", str(path), "--outputs")
    assert code == 0 and json.loads(out)["models"]
    assert (
        f"warning: {path}:1:1: the stack imports Pulumi ESC environments, which offline rendering does not resolve; "
        "configuration they provide is missing from this rendering"
    ) in err


# ---------------------------------------------------------------------------------------------------- --out


def test_out_after_a_configuration_change_replaces_only_the_files_it_wrote(capsys, tmp_path):
    out = tmp_path / "rendered"
    raw, _ = raw_from_stack_file(DEV_STACK)
    assert render(capsys, "--config-file", str(stack_file(tmp_path, raw)), "--out", str(out))[0] == 0
    before = {path.name for path in out.iterdir()}
    gone = "maassubscription_models-as-a-service_team-y.yaml"
    assert gone in before
    (out / "NOTES.md").write_text("the reviewer's notes\n")
    raw["subscriptions"] = [entry for entry in raw["subscriptions"] if entry["name"] != "team-y"]
    assert render(capsys, "--config-file", str(stack_file(tmp_path, raw)), "--out", str(out))[0] == 0
    assert {path.name for path in out.iterdir()} == before - {gone} | {"NOTES.md"}
    assert manifest(out) == before - {gone, MANIFEST}
    assert (out / "NOTES.md").read_text() == "the reviewer's notes\n"


def manifest(out) -> set[str]:
    return {line for line in (out / MANIFEST).read_text().splitlines() if line and not line.startswith("#")}


# --------------------------------------------------------------------------------------------------- Makefile


def make(*args: str) -> subprocess.CompletedProcess:
    """`make` as a person types it: not a sub-make of `make test` (which would print "Entering directory")."""
    inherited = {key: value for key, value in os.environ.items() if key not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    environment = {**inherited, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        ["make", *args], cwd=ROOT, env=environment, capture_output=True, text=True, check=False, timeout=120
    )


def test_make_render_prints_the_objects_and_nothing_else(capsys):
    """No recipe echo and no install output (`-o`: the venv counts as built, whatever its stamp says)."""
    result = make("-o", ".venv/.installed", "render", f"PY={sys.executable}")
    assert result.returncode == 0, result.stderr
    assert result.stdout == render(capsys)[1]
    assert result.stderr.startswith("rendered ")


def test_first_install_reports_progress_on_stderr_only(tmp_path):
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    venv = tmp_path / "venv"
    result = make(f"{venv}/.installed", f"VENV={venv}", f"PYTHON={fake}")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert result.stderr.splitlines() == [
        f"make: installing requirements.txt into {venv} (created if missing; the first time takes a few minutes)",
        f"created virtual environment {venv}",
        "Collecting pulumi==3.272.0",
        "Downloading pulumi.whl (1.2 MB)",
    ]
    assert (venv / ".installed").is_file()
