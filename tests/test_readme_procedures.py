"""The procedures README.md and docs/*.md give as shell commands, checked against the code they rely on, so that a
procedure cannot drift from the program: the flags of drift detection (README and every page; the project's refresh
in docs/operations.md), the migration's order, providers, import file and forced applies, the finalizer command
(docs/migrating.md), and the Operator's RBAC, Secret and refresh (docs/operations.md). Whether each command runs
and exits as its text says is tests/test_doc_commands.py's.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from maas.config import raw_from_stack_file
from maas.deploy.components import ADOPTING_PROVIDER
from maas.observe import Observed, Scope
from maas.observe.scope import IMPORTED_KINDS
from maas.plan.adoption import PATCH_FORCE_ANNOTATION
from maas.plan.readiness import finalizer_patch_command
from maas.tools.import_command import DEFAULT_IMPORT_FILE
from maas.tools.importer import configuration
from maas.tools.importing.common import Report
from maas.tools.render import render
from tests.conftest import DEV_STACK, ROOT
from tests.test_deploy_example import (
    RBAC,
    allows,
    covers,
    documents,
    grants,
    one,
    program_role,
    provider_request,
)

README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
OPERATIONS = ROOT / "docs" / "operations.md"  # running it for real, and the Operator
MIGRATING = ROOT / "docs" / "migrating.md"  # the migration, the whole page
RUNNING = "Running it for real"
OPERATOR = "Running continuously with the Pulumi Kubernetes Operator"
PATCH_FORCE_ENV = "PULUMI_K8S_ENABLE_PATCH_FORCE"
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    line: int  # its first line in the file

    @property
    def text(self) -> str:
        return " ".join(self.argv)

    def starts(self, *words: str) -> bool:
        return self.argv[: len(words)] == words


def sections(path: Path) -> dict[str, str]:
    """The text under each `## ` heading (its `###` subsections included)."""
    found, title, lines = {}, "", []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            found[title] = "\n".join(lines)
            title, lines = line[3:].strip(), []
        else:
            lines.append(line)
    found[title] = "\n".join(lines)
    return found


def shell_commands(text: str) -> list[Command]:
    """Every command of every ```sh block (indented inside a list item or not), continuation lines joined and
    comments dropped."""
    commands = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        fence = re.fullmatch(r"(\s*)```(sh|bash|shell|console)?\s*", lines[index])
        if not fence or fence.group(2) is None:
            index += 1
            continue
        indent, body, start = len(fence.group(1)), [], index + 1
        index += 1
        while not re.fullmatch(r"\s*```\s*", lines[index]):
            body.append((index, lines[index][indent:]))
            index += 1
        index += 1
        pending, first = "", None
        for number, line in body:
            first = number if first is None else first
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1] + " "
                continue
            argv = shlex.split(pending + line, comments=True)
            if argv:
                commands.append(Command(tuple(argv), (first or start) + 1))
            pending, first = "", None
    return commands


def inline_code(text: str) -> list[str]:
    """Every `code span`, line breaks inside it read as spaces."""
    return [" ".join(span.split()) for span in re.findall(r"(?<!`)`([^`]+)`(?!`)", text)]


def every_command_text(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    return [c.text for c in shell_commands(text)] + inline_code(text)


def kubernetes_objects(rendering) -> list:
    return [r for r in rendering.registrations if r.is_kubernetes_object]


@pytest.fixture(scope="module")
def operations() -> dict[str, str]:
    return sections(OPERATIONS)


@pytest.fixture(scope="module")
def migration_text() -> str:
    return MIGRATING.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- drift detection


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: p.name)
def test_every_expect_no_changes_refreshes_first(path):
    """Without a refresh a preview compares with the recorded state and misses live edits (pulumi-kubernetes
    provider.go Diff prunes the live object to the old inputs): a drift gate must say `--refresh`."""
    for command in every_command_text(path):
        if "--expect-no-changes" in command:
            assert "--refresh" in command.split() and "--refresh=false" not in command, command


def test_the_docs_gate_on_drift_with_refresh_and_the_project_refreshes_as_it_says(operations):
    gates = [c for path in (README, *DOCS) for c in every_command_text(path) if "--expect-no-changes" in c]
    assert gates and all(c.startswith("pulumi preview") for c in gates)
    assert any("--expect-no-changes" in c for c in every_command_text(OPERATIONS))  # where drift is explained
    # "`Pulumi.yaml` sets `options: refresh: always`": the CLI then refreshes every preview and up
    # (pulumi/pulumi pkg/cmd/pulumi/operations/io.go getRefreshOption).
    assert "`options: refresh: always`" in operations[RUNNING]
    assert yaml.safe_load((ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))["options"]["refresh"] == "always"


# ---------------------------------------------------------------------------------------------- the migration


@pytest.fixture(scope="module")
def migration(migration_text) -> list[Command]:
    return shell_commands(migration_text)


@pytest.fixture(scope="module")
def migration_rendering():
    """The dev stack as `python -m maas import` writes a migration: controllerMode as the importer sets it."""
    tenant_config = {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaasTenantConfig",
        "metadata": {"name": "default-tenant", "namespace": "models-as-a-service"},
        "spec": {},
    }
    imported = configuration(Observed.of([tenant_config], [Scope(k) for k in IMPORTED_KINDS]), Report())
    raw = copy.deepcopy(raw_from_stack_file(DEV_STACK)[0])
    raw["platform"]["controllerMode"] = imported["platform"]["controllerMode"]
    return render(raw)


def test_the_migration_runs_import_then_preview_then_up(migration):
    order = [
        next(i for i, c in enumerate(migration) if c.starts("pulumi", "up") and "--target" in c.argv),
        next(i for i, c in enumerate(migration) if c.starts("pulumi", "import")),
        next(i for i, c in enumerate(migration) if c.starts("pulumi", "preview")),
        next(i for i, c in enumerate(migration) if c.starts("pulumi", "up") and "--target" not in c.argv),
    ]
    assert order == sorted(order)


def test_the_migration_targets_exactly_the_providers_the_program_registers(migration, migration_rendering):
    """`pulumi import` needs every provider the import file names in the state first."""
    [targeted] = [c for c in migration if c.starts("pulumi", "up") and "--target" in c.argv]
    urns = [targeted.argv[i + 1] for i, word in enumerate(targeted.argv) if word == "--target"]
    project = yaml.safe_load((ROOT / "Pulumi.yaml").read_text(encoding="utf-8"))["name"]
    providers = {r.name for r in migration_rendering.registrations if r.type == "pulumi:providers:kubernetes"}
    assert ADOPTING_PROVIDER in providers
    for urn in urns:
        assert re.fullmatch(rf"urn:pulumi:[\w.-]+::{project}::pulumi:providers:kubernetes::[\w-]+", urn), urn
    assert {urn.rpartition("::")[2] for urn in urns} == providers


def test_the_migration_imports_the_file_the_importer_writes(migration):
    [imported] = [c for c in migration if c.starts("pulumi", "import")]
    assert imported.argv[imported.argv.index("--file") + 1] == DEFAULT_IMPORT_FILE
    assert "--generate-code=false" in imported.argv


def test_patch_force_is_in_effect_for_the_migration_preview_not_only_for_the_up(migration, migration_rendering):
    """A preview fails on a server-side-apply conflict (pulumi-kubernetes provider.go Update: only Forbidden is
    tolerated), so whatever forces the migration's applies must already hold for its preview: the environment
    exported before it, or the annotation the program writes on every object in the mode the import sets."""
    preview = next(i for i, c in enumerate(migration) if c.starts("pulumi", "preview"))
    for index, command in enumerate(migration):
        if any(PATCH_FORCE_ENV in word for word in command.argv):
            assert command.starts("export", f"{PATCH_FORCE_ENV}=true") and index < preview, command
    if not any(any(PATCH_FORCE_ENV in w for w in c.argv) for c in migration[:preview]):
        applied = [r for r in kubernetes_objects(migration_rendering) if not set(r.inputs) <= set(r.ignore_changes)]
        unforced = [
            r.name for r in applied if r.inputs["metadata"].get("annotations", {}).get(PATCH_FORCE_ANNOTATION) != "true"
        ]
        assert applied and unforced == []


def test_the_migration_text_never_sets_patch_force_for_the_up_alone(migration_text):
    text = " ".join(migration_text.split())
    for sentence in re.split(r"(?<=[.;:])\s", text):
        if PATCH_FORCE_ENV in sentence:
            assert "preview" in sentence, sentence
    assert "`coexist`" in text and "pulumi.com/patchForce" in text


def test_the_migration_says_the_mode_the_importer_sets(migration_text, migration_rendering):
    assert "`controllerMode: coexist`, which the import sets" in " ".join(migration_text.split())
    tenant = next(r for r in kubernetes_objects(migration_rendering) if r.inputs["kind"] == "MaasTenantConfig")
    assert tenant.inputs["metadata"]["annotations"]["opendatahub.io/managed"] == "false"  # coexist's hand-over


def test_the_finalizer_command_of_the_migration_is_the_one_the_preview_prints(migration_text):
    text = " ".join(migration_text.split())
    [command] = [c for c in inline_code(text) if c.startswith("kubectl patch")]
    assert command == finalizer_patch_command("MaaSSubscription", "NS", "NAME")


# ------------------------------------------------------------------------------------------------ the Operator


@pytest.fixture(scope="module")
def operator(operations) -> str:
    return " ".join(operations[OPERATOR].split())


def test_the_operator_procedure_applies_the_folder_whose_role_the_program_needs(operator):
    applied = [c for c in inline_code(operator) if c.startswith("kubectl apply -k")]
    assert applied == ["kubectl apply -k deploy/pulumi-operator"]
    (kustomization,) = documents(ROOT / "deploy" / "pulumi-operator" / "kustomization.yaml")
    assert "clusterrole.yaml" in kustomization["resources"]


def test_the_operator_role_lets_the_program_create_every_cluster_role_it_writes_as_the_provider_sends_it(
    operator, dev_rendering
):
    granted = grants(program_role()["rules"])
    roles = [r for r in kubernetes_objects(dev_rendering) if r.inputs["kind"] == "ClusterRole"]
    for registration in roles:
        verb, name = provider_request(dev_rendering, registration)
        assert allows(granted, RBAC, "clusterroles", verb, name)
        assert covers(granted, registration.inputs["rules"]) or allows(granted, RBAC, "clusterroles", "escalate", name)
    # "... `escalate`/`bind` on the four ClusterRoles it writes, by name"
    said = re.search(r"`escalate`/`bind` on the (\w+) ClusterRoles it writes", operator)
    assert said and NUMBERS[said.group(1)] == len(roles)
    named = {n for rule in program_role()["rules"] if "escalate" in rule["verbs"] for n in rule["resourceNames"]}
    assert named == {r.inputs["metadata"]["name"] for r in roles}
    assert "enableServerSideApply" in operator  # the named PATCH needs server-side apply


def test_the_operator_secret_command_creates_what_the_stack_reads(operator):
    [command] = [c for c in inline_code(operator) if c.startswith("kubectl -n") and "create secret" in c]
    argv = shlex.split(command.replace("…", "x"))
    stack = one("Stack")
    token = stack["spec"]["envRefs"]["PULUMI_ACCESS_TOKEN"]["secret"]
    assert argv[2] == stack["metadata"]["namespace"]
    assert argv[3:7] == ["create", "secret", "generic", token["name"]]
    assert argv[7].startswith(f"--from-literal={token['key']}=")


def test_the_operator_runs_up_with_refresh_as_the_docs_say(operator):
    assert "`pulumi up --refresh`" in operator
    assert one("Stack")["spec"]["refresh"] is True
