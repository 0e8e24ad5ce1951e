"""`python -m maas validate`: what the API server would reject, offline, in a stack's objects or in YAML files.

With no FILE it checks the stack's plan (what `render` prints and `pulumi up` registers) with the program's own
self-check (`plan/checks/`: every object against its CRD or the Kubernetes schema, status writes, sizes, two entries
rendering one object), so each problem names the configuration entry it came from. With FILEs it checks every
document (multi-document YAML or JSON, `kind: List`, a JSON array as `render --format json` prints) with the same
validator (`maas/crdschema`). `--crds` puts a cluster's own CRDs (`kubectl get crd -o yaml`) in place of the vendored
ones, and a kind that dump has no CRD for is a problem. Exit 0: valid; 1: invalid objects; 2: unusable input.

A problem in a file is placed at `file:LINE`, the line its object starts on. `--format json` prints the outcome as
one JSON document and `--format junit` as JUnit XML (one testcase per object of a file, one per stack file), for
CI; the summary, notes and warnings still go to stderr. The command's arguments are declared in `tools/cli.py`,
which imports this module only to run it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import yaml

from ..config import ConfigError, load_config, raw_from_stack_file
from ..config.errors import escaped
from ..crdschema import CrdRegistry, default_registry, object_label, validate
from ..crdschema.core import core_schemas, split_api_version
from ..observe import ObservationError, Observed, load_snapshot
from ..plan.build import build_plan
from ..plan.checks.issues import plan_issues
from ..plan.checks.selfcheck import MAX_OBJECT_BYTES, UNCHECKED_KINDS, encoded_size, owner_path
from .manifest_files import Place, UnusableInputError, documents, shown, yaml_message
from .stack_args import given, missing_file_message, stack_source

EXIT_INVALID_OBJECTS = 1
EXIT_UNUSABLE = 2
MAX_DATA_BYTES = 1_048_576  # core.MaxSecretSize: a ConfigMap's or Secret's data
FORMATS = ("text", "json", "junit")
UNUSABLE = "unusable input"


@dataclass(frozen=True)
class Problem:
    """One problem: of an object in a file (`place`, `object`), or of a stack's configuration entry (`entry`).
    The message is escaped already (one line), as every line `validate` prints."""

    message: str
    place: Place | None = None
    object: str | None = None
    entry: str | None = None

    def __str__(self) -> str:
        if self.place is not None:
            return f"{self.place} {self.message}"
        return f"{self.entry}: {self.message}"

    def as_json(self) -> dict[str, Any]:
        if self.place is None:
            return {"entry": self.entry, "message": self.message}
        where: dict[str, Any] = {"file": self.place.file, "line": self.place.line}
        if self.place.column is not None:
            where["column"] = self.place.column
        if self.place.line is None:
            where["document"] = self.place.document
        return {**where, "object": self.object, "message": self.message}


@dataclass
class Checked:
    """One object of a file, as a JUnit testcase: its problems, or why it was not checked (`skipped`)."""

    place: Place
    label: str
    problems: list[Problem] = field(default_factory=list)
    skipped: str | None = None


@dataclass
class Outcome:
    """What one run found: problems in objects (exit 1), input it could not use (exit 2), and notes. Files mode
    keeps each file (`inputs`: name, and why it could not be used) and each object; stack mode the stack file
    (`source`). `complete` is False when nothing could be checked at all (no summary line then)."""

    checked: int = 0
    problems: list[Problem] = field(default_factory=list)
    unusable: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    source: str | None = None
    inputs: list[tuple[str, str | None]] = field(default_factory=list)
    objects: list[Checked] = field(default_factory=list)
    complete: bool = True

    @property
    def exit_code(self) -> int:
        if self.unusable:
            return EXIT_UNUSABLE
        return EXIT_INVALID_OBJECTS if self.problems else 0


def validate_command(args: argparse.Namespace) -> int:
    """Problems on stdout, one per line, or the whole outcome as JSON or JUnit XML (`--format`); unusable input,
    warnings, notes and a summary on stderr."""
    outcome = _outcome(args)
    fmt = getattr(args, "format", None) or "text"
    if fmt == "json":
        sys.stdout.write(as_json(outcome))
    elif fmt == "junit":
        sys.stdout.write(as_junit(outcome))
    else:
        for problem in outcome.problems:
            print(problem)
    for prefix, lines in (("error", outcome.unusable), ("warning", outcome.warnings), ("note", outcome.notes)):
        for line in lines:
            print(f"{prefix}: {line}", file=sys.stderr)
    if outcome.complete:
        print(_summary(outcome), file=sys.stderr)
    return outcome.exit_code


def _outcome(args: argparse.Namespace) -> Outcome:
    if args.files and given(args):
        return _unusable("give FILEs or a stack (--stack, --config-file, --observed), not both")
    try:
        registry = crd_registry(args.crds)
    except UnusableInputError as error:
        return _unusable(str(error))
    if args.files:
        return validate_files(args.files, registry, strict=args.crds is not None)
    return validate_stack(args, registry)


def _unusable(message: str, source: str | None = None) -> Outcome:
    return Outcome(unusable=[message], source=source, complete=False)


def crd_registry(crds: Path | None) -> CrdRegistry:
    """The vendored CRDs (or `$MAAS_CRDS_DIR`), else the CRDs of a user's file or directory, all read up front so
    that a broken dump is unusable input, not a crash halfway through validation."""
    if crds is None:
        try:
            return default_registry()
        except FileNotFoundError as error:
            raise UnusableInputError(str(error)) from None
    if not crds.exists():
        raise UnusableInputError(f"--crds {shown(crds)} not found; {_CRDS_HINT}")
    try:
        registry = _registry_of(crds)
        served = registry.all_versions()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = escaped(mark.name) if crds.is_dir() and mark is not None else escaped(str(crds))
        raise UnusableInputError(f"--crds {shown(crds)}: {yaml_message(where, error)}; {_CRDS_HINT}") from None
    except (yaml.YAMLError, OSError, UnicodeDecodeError, KeyError, TypeError, AttributeError) as error:
        message = f"--crds {shown(crds)}: cannot read its CRDs ({_reason(error)}); {_CRDS_HINT}"
        raise UnusableInputError(message) from None
    if not served:
        raise UnusableInputError(f"--crds {shown(crds)} holds no CustomResourceDefinition; {_CRDS_HINT}")
    return registry


_CRDS_HINT = "give the output of `kubectl get crd -o yaml` (a List, multi-document YAML, or a directory of files)"


def _registry_of(crds: Path) -> CrdRegistry:
    """A registry of a directory as it is; of a single file through a folder that holds only that file."""
    if crds.is_dir():
        return CrdRegistry(crds)
    with tempfile.TemporaryDirectory() as folder:
        # A name with no `<group>_` prefix: the registry reads such a file whole, up front (before this folder goes).
        (Path(folder) / "crds.yaml").symlink_to(crds.resolve())
        registry = CrdRegistry(Path(folder))
    registry.directory = crds  # what "no schema ... in DIR" messages name
    return registry


def validate_stack(args: argparse.Namespace, registry: CrdRegistry) -> Outcome:
    """The stack's plan through the program's own checks, each problem naming its configuration entry."""
    source = stack_source(args, args.stack_file)
    where = escaped(str(source.path))
    if not source.path.is_file():
        return _unusable(missing_file_message(source), where)
    try:
        raw, warnings = raw_from_stack_file(source.path)
        observed = load_snapshot(args.observed) if args.observed else Observed.nothing()
        config = load_config(raw)
        plan = build_plan(config, observed)
    except (ConfigError, ObservationError) as error:
        return _unusable(str(error), where)
    issues = plan_issues(config, plan, observed, registry)
    bodies = [(owner_path(o), obj.body) for o in plan.owners for obj in o.objects if obj.subresource is None]
    problems = [Problem(escaped(issue.message), entry=escaped(issue.path)) for issue in issues]
    outcome = Outcome(checked=len(bodies), problems=problems, warnings=[*warnings, *plan.warnings], source=where)
    _kinds_without_schema(outcome, bodies, registry, strict=args.crds is not None)
    return outcome


def validate_files(names: Iterable[str], registry: CrdRegistry, strict: bool) -> Outcome:
    """Every object of every file; a file that cannot be used is reported and the others are still checked."""
    names = list(names)
    outcome = Outcome()
    objects: list[tuple[Place, dict[str, Any]]] = []
    for name in names:
        try:
            found = documents(name)
        except UnusableInputError as error:
            outcome.unusable.append(str(error))
            outcome.inputs.append((_input_name(name), str(error)))
            continue
        objects.extend(found)
        outcome.inputs.append((_input_name(name), None))
    writes: list[Place] = []
    for place, body in objects:
        checked = Checked(place, object_label(body))
        outcome.objects.append(checked)
        if _is_status_write(body, registry):
            checked.skipped = "a status write: validate the stack (no FILE), which checks it on its object"
            writes.append(place)
            continue
        outcome.checked += 1
        for problem in [*validate(body, UNCHECKED_KINDS, registry), *size_problems(body)]:
            _add(outcome, checked, Problem(escaped(problem), place, checked.label))
    if not objects and not outcome.unusable:
        outcome.unusable.append(f"no Kubernetes object in {', '.join(map(shown, names))}; nothing was validated")
    checked_objects = [(o, body) for o, (_, body) in zip(outcome.objects, objects, strict=True) if not o.skipped]
    _kinds_without_schema(outcome, checked_objects, registry, strict)
    if writes:
        outcome.notes.append(
            f"{len(writes)} status write(s) (`render --status` documents, e.g. {writes[0]}) not checked: a status "
            "is judged on the object it is written to, so validate the stack instead (no FILE), which checks them"
        )
    return outcome


def _input_name(name: str) -> str:
    return "<stdin>" if name == "-" else escaped(name)


def _add(outcome: Outcome, checked: Checked | None, problem: Problem) -> None:
    outcome.problems.append(problem)
    if checked is not None:
        checked.problems.append(problem)


def size_problems(body: dict[str, Any]) -> list[str]:
    """What the API server refuses for its size: a ConfigMap's or Secret's data over 1 MiB (ValidateConfigMap,
    ValidateSecret), any object over the 1.5 MiB it stores (the limit the self-check applies to the plan)."""
    problems = []
    data = _data_bytes(body)
    if data is not None and data > MAX_DATA_BYTES:
        problems.append(
            f"{object_label(body)}: its data holds {data} bytes; the API server allows at most 1 MiB "
            f"({MAX_DATA_BYTES} bytes) in a {body['kind']}: split it, or keep the content outside the cluster"
        )
    size = encoded_size(body)
    if size > MAX_OBJECT_BYTES:
        problems.append(
            f"{object_label(body)} is {size} bytes; the API server stores at most 1.5 MiB ({MAX_OBJECT_BYTES} bytes): "
            "split it"
        )
    return problems


def _data_bytes(body: dict[str, Any]) -> int | None:
    """The bytes the API server counts against MAX_DATA_BYTES: of a ConfigMap its `data` (UTF-8) and `binaryData`
    (decoded) values, of a Secret its `data` (decoded) and `stringData` values; None for other objects."""
    kinds = {"ConfigMap": (("data", False), ("binaryData", True)), "Secret": (("data", True), ("stringData", False))}
    if body.get("apiVersion") != "v1" or body.get("kind") not in kinds:
        return None
    total = 0
    for key, encoded in kinds[body["kind"]]:
        values = body.get(key)
        for value in values.values() if isinstance(values, dict) else ():
            if isinstance(value, str):
                total += len(value) * 3 // 4 - value.endswith("=") - value.endswith("==") if encoded else _utf8(value)
    return total


def _utf8(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _is_status_write(body: dict[str, Any], registry: CrdRegistry) -> bool:
    """A `{Kind}Status` document of `render --status` (`status_writer.rendered_status`): a write, not an object."""
    api_version, kind = _kind_of(body)
    if set(body) != {"apiVersion", "kind", "metadata", "status"} or not isinstance(api_version, str):
        return False
    if not isinstance(kind, str) or not kind.endswith("Status"):
        return False
    return registry.lookup(*split_api_version(api_version), kind.removesuffix("Status")) is not None


def _kinds_without_schema(
    outcome: Outcome, objects: Iterable[tuple[Checked | str, dict[str, Any]]], registry: CrdRegistry, strict: bool
) -> None:
    """Objects whose kind has neither a CRD here nor a core schema, never passed silently. Each is a problem
    already, except the kinds the program renders without a vendored CRD (cert-manager's Certificate): with the
    cluster's CRDs (`strict`) an object the cluster cannot store is a problem too; with the vendored ones, a note
    says it went unchecked. One note then lists every kind missing, with its count. An object is a checked
    object of a file, or (stack mode) the configuration entry it comes from."""
    missing = [(where, body) for where, body in objects if _schema_less(body, registry)]
    unchecked = [(where, body) for where, body in missing if _kind_of(body) in UNCHECKED_KINDS]
    if strict:
        for where, body in unchecked:
            for problem in validate(body, (), registry):
                if isinstance(where, Checked):
                    _add(outcome, where, Problem(escaped(problem), where.place, where.label))
                else:
                    _add(outcome, None, Problem(escaped(problem), entry=where))
        accepted, rejected = [], missing
    else:
        accepted = unchecked
        rejected = [(where, body) for where, body in missing if _kind_of(body) not in UNCHECKED_KINDS]
    if accepted:
        outcome.notes.append(
            f"{len(accepted)} object(s) of {_kinds(accepted)} not checked: no CRD for them in {registry.directory}; "
            "pass --crds with your cluster's CRDs to check them"
        )
        for where, _ in accepted:
            if isinstance(where, Checked):
                where.skipped = f"no CRD for its kind in {registry.directory}; pass --crds with your cluster's CRDs"
    if rejected:
        outcome.notes.append(
            f"no CRD in {registry.directory} for {_kinds(rejected)}; the API server refuses such objects: "
            "install the CRDs (and add them to the --crds dump), or remove the objects"
        )


def _kind_of(body: dict[str, Any]) -> tuple[Any, Any]:
    return body.get("apiVersion"), body.get("kind")


def _schema_less(body: dict[str, Any], registry: CrdRegistry) -> bool:
    api_version, kind = _kind_of(body)
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return False  # reported as a problem of its own
    group, version = split_api_version(api_version)
    return registry.lookup(group, version, kind) is None and core_schemas().validator(api_version, kind) is None


def _kinds(objects: list[tuple[Any, dict[str, Any]]]) -> str:
    """`apiVersion Kind (n)` per kind, sorted."""
    counts = Counter(f"{escaped(str(body['apiVersion']))} {escaped(str(body['kind']))}" for _, body in objects)
    return ", ".join(f"{kind} ({count})" for kind, count in sorted(counts.items()))


def _summary(outcome: Outcome) -> str:
    found = f"{len(outcome.problems)} problem(s)" if outcome.problems else "no problem"
    unusable = f"; {len(outcome.unusable)} input(s) could not be used" if outcome.unusable else ""
    return f"validated {outcome.checked} object(s): {found}{unusable}"


def _reason(error: Exception) -> str:
    if isinstance(error, KeyError):
        return f"a CustomResourceDefinition lacks {error}"
    return escaped(" ".join(str(error).split()))


# ------------------------------------------------------------------------------------ machine-readable output


def as_json(outcome: Outcome) -> str:
    """The outcome as one JSON document: exit code, what was read (the stack file, or the files), how many objects
    were checked, the problems (file, line and object, or configuration entry; the message as text prints it
    after the place), unusable input, warnings and notes."""
    inputs = [outcome.source] if outcome.source is not None else [name for name, _ in outcome.inputs]
    document = {
        "exitCode": outcome.exit_code,
        "inputs": inputs,
        "checked": outcome.checked,
        "problems": [problem.as_json() for problem in outcome.problems],
        "unusable": outcome.unusable,
        "warnings": [escaped(warning) for warning in outcome.warnings],
        "notes": outcome.notes,
    }
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def as_junit(outcome: Outcome) -> str:
    """JUnit XML as CI systems read it: files mode, a testsuite per file and a testcase per object (failing with
    its problems, skipped when it was not checked) or, for a file that could not be used, one testcase in error;
    stack mode, one testcase for the stack file. Notes and warnings go to the suite's system-err."""
    root = ElementTree.Element("testsuites", name="maas validate")
    unusable = list(outcome.unusable)
    if not outcome.inputs:  # stack mode, or nothing could be read at all
        name = outcome.source or "validate"
        case = _case(_suite(root, name), "maas validate", name)
        if unusable:
            _mark(case, "error", unusable, UNUSABLE)
        elif outcome.problems:
            _mark(case, "failure", [str(problem) for problem in outcome.problems], "invalid")
        unusable = []
    for name, problem in outcome.inputs:
        suite = _suite(root, name)
        if problem is not None:
            _mark(_case(suite, name, name), "error", [problem], UNUSABLE)
            unusable.remove(problem)
        for checked in (o for o in outcome.objects if o.place.file == name):
            case = _case(suite, name, checked.label, checked.place)
            if checked.problems:
                _mark(case, "failure", [str(p) for p in checked.problems], "invalid")
            elif checked.skipped:
                ElementTree.SubElement(case, "skipped", message=checked.skipped)
    if unusable:  # about the files together: none of them holds an object
        _mark(_case(_suite(root, "validate"), "maas validate", "validate"), "error", unusable, UNUSABLE)
    extra = [f"warning: {w}" for w in outcome.warnings] + [f"note: {n}" for n in outcome.notes]
    suites = root.findall("testsuite")
    if extra and suites:
        ElementTree.SubElement(suites[-1], "system-err").text = "\n".join(map(escaped, extra))
    for suite in suites:
        _count(suite)
    _count(root)
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"


def _suite(root: ElementTree.Element, name: str) -> ElementTree.Element:
    return ElementTree.SubElement(root, "testsuite", name=name)


def _case(suite: ElementTree.Element, classname: str, name: str, place: Place | None = None) -> ElementTree.Element:
    attributes = {"classname": classname, "name": name}
    if place is not None:
        attributes["file"] = place.file
        if place.line is not None:
            attributes["line"] = str(place.line)
    return ElementTree.SubElement(suite, "testcase", attributes)


def _mark(case: ElementTree.Element, tag: str, lines: list[str], kind: str) -> None:
    """A `failure` (invalid objects) or `error` (unusable input): the first line as its message, all as its text."""
    first = lines[0] if len(lines) == 1 else f"{len(lines)} problem(s): {lines[0]}"
    element = ElementTree.SubElement(case, tag, message=escaped(first), type=kind)
    element.text = "\n".join(map(escaped, lines))  # XML 1.0 holds no control character


def _count(element: ElementTree.Element) -> None:
    """tests, failures, errors and skipped of a testsuite (its testcases) or of the testsuites (every suite)."""
    cases = element.iter("testcase")
    counts = Counter(child.tag for case in cases for child in case if child.tag in ("failure", "error", "skipped"))
    element.set("tests", str(sum(1 for _ in element.iter("testcase"))))
    for tag, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        element.set(attribute, str(counts[tag]))
