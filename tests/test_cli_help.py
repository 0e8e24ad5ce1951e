"""Issue 20: the `maas` console script, and a `--help` that imports nothing heavy and shows a summary and examples.

Wall-clock time is not asserted (it depends on the machine); what made `--help` take 3 s is: 2.4 s of imports
(Pulumi, the kubernetes client, pydantic, the plan) before argparse ran. A subprocess lists what it imported.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from maas.tools.cli import COMMANDS, _parser, main
from tests.conftest import ROOT

HEAVY_PACKAGES = ("pulumi", "pulumi_kubernetes", "kubernetes", "pydantic", "celpy", "jsonschema", "urllib3", "yaml")
HEAVY_MODULES = ("maas.plan", "maas.config", "maas.observe", "maas.crdschema", "maas.tools.render")
IMPORTED = """
import json, sys
sys.argv = ["maas", *json.loads(sys.argv[1])]
from maas.__main__ import main
try:
    main()
except SystemExit:
    pass
heavy = sorted(
    name for name in sys.modules
    if name.split(".")[0] in {packages} or name.startswith({modules})
)
print(json.dumps(heavy), file=sys.stderr)
"""


def imported_by(*argv: str) -> list[str]:
    """The heavy modules `maas ARGV` imported, run in a fresh interpreter."""
    script = IMPORTED.format(packages=set(HEAVY_PACKAGES), modules=HEAVY_MODULES)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, "-c", script, json.dumps(argv)], capture_output=True, text=True, env=env, cwd=ROOT, check=False
    )
    assert result.stdout.startswith("usage: "), result.stderr
    return json.loads(result.stderr.splitlines()[-1])


def test_help_imports_no_heavy_module():
    assert imported_by("--help") == []


def commands_and_nested() -> list[tuple[str, ...]]:
    found = [(name,) for name in COMMANDS]
    return found + [(name, nested) for name, command in COMMANDS.items() for nested, _, _ in command.nested]


@pytest.mark.parametrize("argv", commands_and_nested(), ids=" ".join)
def test_each_commands_help_imports_no_heavy_module(argv):
    """The module that declares a command's arguments imports the plan, the configuration, the observation and
    the simulator in the functions that run the command, not at the top."""
    assert imported_by(*argv, "--help") == []


def help_of(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main([*argv, "--help"])
    assert exited.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", commands_and_nested(), ids=" ".join)
def test_each_commands_help_has_a_one_line_summary_and_examples(capsys, argv):
    text = help_of(capsys, *argv)
    paragraphs = text.split("\n\n")
    summary = paragraphs[1]  # after the usage
    assert "\n" not in summary and summary.endswith(".") and summary[0].isupper(), summary
    examples = text.split("\nexamples:\n", 1)[1].splitlines()
    assert examples and all(line.startswith(f"  maas {' '.join(argv)} ") for line in examples), examples


@pytest.mark.parametrize(
    "example",
    [example for command in COMMANDS.values() for example in command.examples]
    + [example for command in COMMANDS.values() for _, _, examples in command.nested for example in examples],
)
def test_every_example_parses_with_the_real_command_line(example):
    words = shlex.split(example)
    words = words[: words.index(">")] if ">" in words else words
    assert words[0] == "maas"
    assert isinstance(_parser().parse_args(words[1:]), argparse.Namespace)


@pytest.mark.parametrize(
    "argv",
    [
        ("render", "--outputs"),
        ("explain", "subscription", "models-as-a-service/premium", "--model", "llm/granite-7b"),
        ("explain", "caller", "--user", "alice", "--groups", "premium-users", "--model", "llm/granite-7b"),
    ],
)
def test_the_examples_that_need_no_file_run_on_the_dev_stack(capsys, argv):
    assert main(list(argv)) == 0
    assert capsys.readouterr().out


def test_the_top_level_help_lists_every_command_with_its_summary(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for name, command in COMMANDS.items():
        assert f"    {name}" in text
        assert " ".join(command.summary.split()[:4]) in " ".join(text.split())


# ----------------------------------------------------------------------------------------- the console script


def test_the_console_script_is_declared_and_installed_by_requirements():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["project"]["scripts"] == {"maas": "maas.__main__:main"}
    entry = importlib.import_module("maas.__main__")  # importing it runs nothing (no sys.exit at import)
    assert callable(entry.main)
    requirements = (ROOT / "requirements.txt").read_text().splitlines()
    assert "-e ." in requirements  # `make install` (and .ci/run, through `make test`) installs the package
    assert "pip install --disable-pip-version-check -r requirements.txt" in (ROOT / "Makefile").read_text()


def script() -> Path:
    path = Path(sys.executable).parent / "maas"
    if not path.exists():
        pytest.fail(f"{path} is missing: the package was installed before pyproject.toml declared it; pip install -e .")
    return path


def test_the_installed_maas_script_renders_from_any_directory(tmp_path):
    result = subprocess.run(
        [str(script()), "render", "--stack", "dev", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["apiVersion"]


def test_the_installed_script_calls_itself_maas_in_its_help():
    result = subprocess.run([str(script()), "validate", "--help"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and result.stdout.startswith("usage: maas validate ")
    module = subprocess.run(
        [sys.executable, "-m", "maas", "validate", "--help"], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert module.stdout.startswith("usage: python -m maas validate ")
