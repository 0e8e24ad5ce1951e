"""`python -m maas validate`: what the API server would reject, offline, in a stack's objects or in YAML files.

With no FILE it checks the stack's plan (what `render` prints and `pulumi up` registers) with the program's own
self-check (`plan/checks/`: every object against its CRD or the Kubernetes schema, status writes, sizes, two entries
rendering one object), so each problem names the configuration entry it came from. With FILEs it checks every
document (multi-document YAML or JSON, `kind: List`, a JSON array as `render --format json` prints) with the same
validator (`maas/crdschema`). `--crds` puts a cluster's own CRDs (`kubectl get crd -o yaml`) in place of the vendored
ones, and a kind that dump has no CRD for is a problem. Exit 0: valid; 1: invalid objects; 2: unusable input.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..config import ConfigError, load_config, raw_from_stack_file
from ..config.errors import escaped
from ..crdschema import CrdRegistry, default_registry, object_label, validate
from ..crdschema.core import core_schemas, split_api_version
from ..observe import ObservationError, Observed, load_snapshot
from ..plan.build import build_plan
from ..plan.checks.issues import plan_issues
from ..plan.checks.selfcheck import MAX_OBJECT_BYTES, UNCHECKED_KINDS, encoded_size, owner_path
from .manifest_files import UnusableInputError, documents, shown, yaml_message
from .stack_args import add_stack_options, given, missing_file_message, stack_source

EXIT_INVALID_OBJECTS = 1
EXIT_UNUSABLE = 2
MAX_DATA_BYTES = 1_048_576  # core.MaxSecretSize: a ConfigMap's or Secret's data


@dataclass
class Outcome:
    """What one run found: problems in objects (exit 1), input it could not use (exit 2), and notes."""

    checked: int = 0
    problems: list[str] = field(default_factory=list)
    unusable: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.unusable:
            return EXIT_UNUSABLE
        return EXIT_INVALID_OBJECTS if self.problems else 0


def add_validate_parser(subparsers: Any, stack_file: Callable[[str], Path]) -> None:
    """The `validate` subcommand of `python -m maas`; `stack_file` maps a stack name to its Pulumi.<stack>.yaml."""
    cmd = subparsers.add_parser(
        "validate",
        help="check a stack's objects (default) or YAML files as the API server would, offline",
        description=__doc__,
    )
    cmd.add_argument(
        "files", nargs="*", metavar="FILE", help="YAML or JSON files of Kubernetes objects ('-' reads stdin)"
    )
    cmd.add_argument(
        "--crds",
        type=Path,
        metavar="PATH",
        help="a file or directory of CRDs (kubectl get crd -o yaml) to use instead of the vendored crds/",
    )
    add_stack_options(cmd)
    cmd.set_defaults(command=validate_command, stack_file=stack_file)


def validate_command(args: argparse.Namespace) -> int:
    """Problems on stdout, one per line; a summary, notes and unusable input on stderr."""
    if args.files and given(args):
        return _fail("give FILEs or a stack (--stack, --config-file, --observed), not both")
    try:
        registry = crd_registry(args.crds)
        if args.files:
            outcome = validate_files(args.files, registry, strict=args.crds is not None)
        else:
            outcome = validate_stack(args, registry)
    except UnusableInputError as error:
        return _fail(str(error))
    for problem in outcome.problems:
        print(problem)
    for prefix, lines in (("error", outcome.unusable), ("warning", outcome.warnings), ("note", outcome.notes)):
        for line in lines:
            print(f"{prefix}: {line}", file=sys.stderr)
    print(_summary(outcome), file=sys.stderr)
    return outcome.exit_code


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
    if not source.path.is_file():
        raise UnusableInputError(missing_file_message(source))
    try:
        raw, warnings = raw_from_stack_file(source.path)
        observed = load_snapshot(args.observed) if args.observed else Observed.nothing()
        config = load_config(raw)
        plan = build_plan(config, observed)
    except (ConfigError, ObservationError) as error:
        raise UnusableInputError(str(error)) from None
    issues = plan_issues(config, plan, observed, registry)
    bodies = [(f"{owner_path(o)}:", obj.body) for o in plan.owners for obj in o.objects if obj.subresource is None]
    outcome = Outcome(checked=len(bodies), problems=[str(issue) for issue in issues], warnings=warnings)
    _kinds_without_schema(outcome, bodies, registry, strict=args.crds is not None)
    return outcome


def validate_files(names: Iterable[str], registry: CrdRegistry, strict: bool) -> Outcome:
    """Every object of every file; a file that cannot be used is reported and the others are still checked."""
    outcome = Outcome()
    objects: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        try:
            objects.extend(documents(name))
        except UnusableInputError as error:
            outcome.unusable.append(str(error))
    writes = [(label, body) for label, body in objects if _is_status_write(body, registry)]
    objects = [(label, body) for label, body in objects if not _is_status_write(body, registry)]
    for label, body in objects:
        outcome.problems.extend(f"{label} {problem}" for problem in validate(body, UNCHECKED_KINDS, registry))
        outcome.problems.extend(f"{label} {problem}" for problem in size_problems(body))
    outcome.checked = len(objects)
    if not objects and not writes and not outcome.unusable:
        outcome.unusable.append(f"no Kubernetes object in {', '.join(map(shown, names))}; nothing was validated")
    _kinds_without_schema(outcome, objects, registry, strict)
    if writes:
        outcome.notes.append(
            f"{len(writes)} status write(s) (`render --status` documents, e.g. {writes[0][0]}) not checked: a status "
            "is judged on the object it is written to, so validate the stack instead (no FILE), which checks them"
        )
    return outcome


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
    outcome: Outcome, objects: Iterable[tuple[str, dict[str, Any]]], registry: CrdRegistry, strict: bool
) -> None:
    """Objects whose kind has neither a CRD here nor a core schema, never passed silently. Each is a problem
    already, except the kinds the program renders without a vendored CRD (cert-manager's Certificate): with the
    cluster's CRDs (`strict`) an object the cluster cannot store is a problem too; with the vendored ones, a note
    says it went unchecked. One note then lists every kind missing, with its count."""
    missing = [(label, body) for label, body in objects if _schema_less(body, registry)]
    unchecked = [(label, body) for label, body in missing if _kind_of(body) in UNCHECKED_KINDS]
    if strict:
        for label, body in unchecked:
            outcome.problems.extend(f"{label} {problem}" for problem in validate(body, (), registry))
        accepted, rejected = [], missing
    else:
        accepted = unchecked
        rejected = [(label, body) for label, body in missing if _kind_of(body) not in UNCHECKED_KINDS]
    if accepted:
        outcome.notes.append(
            f"{len(accepted)} object(s) of {_kinds(accepted)} not checked: no CRD for them in {registry.directory}; "
            "pass --crds with your cluster's CRDs to check them"
        )
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


def _kinds(objects: list[tuple[str, dict[str, Any]]]) -> str:
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


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_UNUSABLE
