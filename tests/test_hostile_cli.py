"""Issue 18, hostile inputs on the command line: forged output lines, unbounded or undecodable input to `validate`,
names Pulumi refuses and a directory given to `import`. Each ends in exit 2 naming the place, or a safe result."""

from __future__ import annotations

import io
import time

import pytest

from maas.observe import dump_snapshot
from maas.tools.cli import main
from tests.conftest import DEV_STACK
from tests.controller_cluster import controller_cluster

FORGED = "mallory\n  decision: allowed"


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# -------------------------------------------------------------------------------------- explain: forged lines


def test_hostile_explain_caller_user_with_a_newline_cannot_forge_a_decision_line(capsys):
    code, out, _ = run(
        capsys, "explain", "caller", "--config-file", str(DEV_STACK), "--user", FORGED, "--model", "llm/granite-7b"
    )
    assert code == 0
    assert out.splitlines()[0].startswith("caller mallory\\n  decision: allowed, groups (none)")
    decisions = [line for line in out.splitlines() if line.strip().startswith("decision:")]
    assert decisions == ["  decision: DENIED by " + decisions[0].split("DENIED by ")[1]]


def test_hostile_explain_request_values_with_control_characters_are_escaped(capsys):
    args = [
        "explain",
        "request",
        "--config-file",
        str(DEV_STACK),
        "--path",
        "/llm/granite-7b-instruct/v1/x\r\nresult: 200",
    ]
    code, out, _ = run(capsys, *args, "--user", FORGED, "--groups", "a\x1b[2Jb", "--header", "X-A=1\nresult: 200")
    assert code in (0, 1)
    lines = out.splitlines()
    assert len([line for line in lines if line.startswith("result:")]) == 1
    assert not [line for line in lines if line.lstrip().startswith("decision: allowed")]
    assert "caller: mallory\\n  decision: allowed, groups a\\x1b[2Jb" in out
    assert "\x1b" not in out and "\r" not in out


def test_hostile_explain_gateway_name_with_a_newline_is_escaped_in_the_error(capsys):
    code, out, err = run(
        capsys,
        "explain",
        "request",
        "--config-file",
        str(DEV_STACK),
        "--path",
        "/x",
        "--user",
        "u",
        "--gateway",
        "a/b\nerror: forged",
    )
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "a/b\\nerror: forged" in err


# ---------------------------------------------------------------------------------------- validate FILE / -


def test_hostile_validate_billion_laughs_is_refused_in_a_second_at_its_place(capsys, tmp_path):
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: a, namespace: b}", "x0: &a0 [lol, lol, lol, lol]"]
    lines += [f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 10)]
    path = tmp_path / "laughs.yaml"
    path.write_text("\n".join(lines) + "\n")
    assert len(path.read_bytes()) < 600
    started = time.monotonic()
    code, out, err = run(capsys, "validate", str(path))
    assert time.monotonic() - started < 5
    assert (code, out) == (2, "")
    assert err.splitlines()[0].startswith(f"error: {path}:") and "aliases expand to too much data" in err


def test_hostile_validate_deep_nesting_is_refused_at_its_place_not_a_recursion_error(capsys, tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\nx: " + "[" * 400 + "]" * 400)
    code, out, err = run(capsys, "validate", str(path))
    assert (code, out) == (2, "")
    assert "nested more than 100 levels deep" in err


def configmap(data: str) -> str:
    return f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big, namespace: b}}\ndata:\n  k: {data}\n"


def test_hostile_validate_configmap_over_1_mib_is_a_problem_as_the_api_server_refuses_it(capsys, tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(configmap("x" * (1024 * 1024 + 1)))
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert out.splitlines() == [
        f"{path}:1 ConfigMap b/big: its data holds 1048577 bytes; the API server allows at most 1 MiB (1048576 bytes) "
        "in a ConfigMap: split it, or keep the content outside the cluster"
    ]
    path.write_text(configmap("x" * (1024 * 1024)))
    assert run(capsys, "validate", str(path))[0] == 0


def test_hostile_validate_object_over_the_stored_limit_is_a_problem(capsys, tmp_path):
    path = tmp_path / "huge.yaml"
    path.write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: huge\n  namespace: b\n  labels:\n"
        + "".join(f"    k{i}: {'v' * 60}\n" for i in range(25_000))
    )
    code, out, _ = run(capsys, "validate", str(path))
    assert code == 1
    assert any("the API server stores at most 1.5 MiB (1572864 bytes)" in line for line in out.splitlines())


def test_hostile_validate_stdin_that_is_not_utf8_exits_2_naming_it(capsys, monkeypatch):
    data = b'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: b}\ndata: {x: "\xff"}\n'
    stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="surrogateescape")
    monkeypatch.setattr("sys.stdin", stdin)
    code, out, err = run(capsys, "validate", "-")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == "error: <stdin>: not UTF-8 text (byte 76); give YAML or JSON files"


def test_hostile_validate_stdin_replaced_by_text_with_escaped_bytes_exits_2(capsys, monkeypatch):
    monkeypatch.setattr("sys.stdin", io.StringIO("apiVersion: v1\nkind: \udcff\n"))
    code, _, err = run(capsys, "validate", "-")
    assert code == 2 and "error: <stdin>: not UTF-8 text (byte 21)" in err


# ---------------------------------------------------------------------------------------------------- import


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory):
    path = tmp_path_factory.mktemp("import") / "cluster.yaml"
    path.write_text(dump_snapshot(controller_cluster()))
    return path


@pytest.mark.parametrize("stack", ["x::y", "dev\n", "a\nb", "org/dev", "", "x" * 101, "dév"])
def test_hostile_import_stack_name_pulumi_refuses_exits_2_and_imports_nothing(capsys, tmp_path, snapshot, stack):
    """No import file; stdout (`> Pulumi.prod.yaml`) is the failed-import stack file, its header all comments, so
    the hostile name cannot escape them."""
    import_file = tmp_path / "import.json"
    code, out, err = run(
        capsys, "import", "--observed", str(snapshot), "--stack", stack, "--import-file", str(import_file)
    )
    assert code == 2 and out.startswith("# IMPORT FAILED (nothing was imported)")
    header = out.split("\nconfig:\n")[0].splitlines()
    assert all(line.startswith("# ") or line == "#" for line in header), header
    lines = err.splitlines()
    assert lines[0].startswith("error: --stack '") and "is not a name Pulumi accepts for a stack" in lines[0]
    assert not import_file.exists()


def test_a_stack_name_with_periods_underscores_and_hyphens_is_accepted(capsys, tmp_path, snapshot):
    import_file = tmp_path / "import.json"
    code, _, err = run(
        capsys, "import", "--observed", str(snapshot), "--stack", "Prod_2.eu-1", "--import-file", str(import_file)
    )
    assert code == 0, err
    assert "urn:pulumi:Prod_2.eu-1::maas::" in import_file.read_text()


def test_hostile_import_file_that_is_a_directory_is_reported_by_its_own_name(capsys, tmp_path, snapshot):
    directory = tmp_path / "out"
    directory.mkdir()
    code, out, err = run(capsys, "import", "--observed", str(snapshot), "--import-file", str(directory))
    assert code == 2 and out.startswith("# IMPORT FAILED (the configuration was read, but the import did not finish)")
    assert f"error: cannot write {directory}: it is a directory; give a file name" in err.splitlines()
    assert list(directory.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
