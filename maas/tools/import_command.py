"""`python -m maas import`: turn a cluster that the upstream maas-controller built into this program's stack
configuration, printed as a `Pulumi.<stack>.yaml` document, and a Pulumi import file (`pulumi import --file`) that
adopts the objects the configuration would own. Read-only: nothing in the cluster changes.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

# `import --help` imports this module: the configuration, the observation and the importer are imported by the
# functions that run the command (tests/test_cli_help.py)
if TYPE_CHECKING:
    from ..observe import ObservationRequest, Observed
    from .importer import Imported
    from .importing.adoption import Managers

EXIT_INVALID = 2
# Pulumi's rule for a stack name (sdk/go/common validation, the Pulumi Service's): it becomes part of every URN.
STACK_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
STACK_NAME_RULE = "a stack name may only contain alphanumeric, hyphens, underscores, or periods (at most 100)"
DEFAULT_IMPORT_FILE = "pulumi-import.json"
HEADER = (
    "# Imported from {source} by `python -m maas import`; review it before the first `pulumi up`.\n"
    "# controllerMode: coexist keeps the still-running maas-controller off what Pulumi adopts, and every\n"
    "# subscription the cluster counts by its key is pinned to rateLimitIdentity: legacy (no quota resets).\n"
    "# See docs/migrating.md.\n"
)


def add_import_parser(subparsers: Any) -> None:
    """The `import` subcommand of `python -m maas`."""
    cmd = subparsers.add_parser(
        "import",
        help="turn a maas-controller cluster into this program's configuration and a Pulumi import file",
        description=__doc__,
    )
    source = cmd.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--observed",
        type=Path,
        metavar="SNAPSHOT",
        help="a snapshot file (python -m maas observe, kubectl get -o yaml)",
    )
    source.add_argument("--context", help="read the cluster of this kubeconfig context (read-only)")
    cmd.add_argument("--kubeconfig", help="with --context: kubeconfig path or contents (default: $KUBECONFIG, ~/.kube)")
    cmd.add_argument("--stack", default="dev", help="the stack the configuration is for (default: dev)")
    cmd.add_argument(
        "--import-file", type=Path, default=Path(DEFAULT_IMPORT_FILE), help=f"where to write it ({DEFAULT_IMPORT_FILE})"
    )
    cmd.add_argument(
        "--out",
        type=Path,
        metavar="FILE",
        help="write the stack file here instead of stdout (also a failed import's; untouched when nothing was read)",
    )
    cmd.add_argument(
        "--save-snapshot",
        type=Path,
        metavar="FILE",
        help="with --context: also write what was read (render --observed)",
    )
    cmd.add_argument("--timeout", type=float, help="seconds for each read (default 30)")
    cmd.set_defaults(command=import_command)


def import_command(args: argparse.Namespace) -> int:
    """Exit 0 with the configuration on stdout (or in --out FILE) and the report on stderr; 2 when the import
    failed: the stack file then says what failed at its top and is refused by `pulumi up` (importing/failure.py),
    and the snapshot read is saved all the same (--save-snapshot)."""
    from ..config.errors import escaped, quoted
    from ..observe import ObservationError, dump_snapshot, load_snapshot
    from .importer import CannotImportError, DoesNotRenderError, import_cluster
    from .importing.failure import COMMAND_LINE, Failure

    failure = Failure(args, _write)
    if args.observed is not None and (args.kubeconfig is not None or args.save_snapshot is not None):
        return failure.stop(["--kubeconfig and --save-snapshot apply only with --context"], step=COMMAND_LINE)
    if not STACK_NAME.fullmatch(args.stack):
        return failure.stop(
            [f"--stack {quoted(args.stack)} is not a name Pulumi accepts for a stack: {STACK_NAME_RULE}"],
            step=COMMAND_LINE,
        )
    others = [path for path in (args.observed, args.import_file, args.save_snapshot) if path is not None]
    if args.out is not None and any(args.out.resolve() == path.resolve() for path in others):
        message = f"--out {quoted(str(args.out))} is a file the import also reads or writes; give another"
        return failure.stop([message], step=COMMAND_LINE)
    try:
        if args.observed is not None:
            observed, managers = load_snapshot(args.observed), _managers_in(args.observed)
        else:
            observed, managers = _read(args)
        failure.source = _source(args, observed)
        if args.save_snapshot is not None:  # first: what was read is kept whatever the import makes of it
            _write(args.save_snapshot, dump_snapshot(observed))
            failure.snapshot = args.save_snapshot
        imported = import_cluster(observed, args.stack, managers)
        failure.config, failure.unexpressed = imported.config, imported.unexpressed
        failure.missing = [f"the import file ({escaped(str(args.import_file))} was not written)"]
        _write(args.import_file, json.dumps(imported.import_file, indent=4, ensure_ascii=False) + "\n")
        failure.missing = []
        if args.out is not None:
            _write(args.out, stack_document(imported.config, failure.source))
    except ObservationError as error:
        return failure.stop([str(error)])
    except DoesNotRenderError as error:
        failure.config, failure.unexpressed = error.config, error.unexpressed
        failure.missing = [*error.missing, f"the import file ({escaped(str(args.import_file))} was not written)"]
        return failure.stop(error.messages, error.issues)
    except CannotImportError as error:
        return failure.stop(error.messages)
    except OSError as error:
        return failure.stop([f"cannot write {error.filename}: {error.strerror}"])
    if args.out is None:
        sys.stdout.write(stack_document(imported.config, failure.source))
    _report(imported, args.import_file)
    return 0


def _read(args: argparse.Namespace) -> tuple[Observed, Managers]:
    """Two reads: the controller's resources everywhere; then what the configuration they express observes at
    `pulumi preview` (so the import renders as the first preview will) and, by name, every object it would own
    (whether each exists decides what the import file adopts). Each object's field managers are kept as read."""
    from ..config import load_config
    from ..observe import ObservationRequest
    from ..observe.scope import what_to_import, what_to_observe
    from .importer import CannotImportError, configuration, owned_by
    from .importing.adoption import field_managers
    from .importing.common import Report

    first, objects = _read_cluster(what_to_import(), args)
    try:
        config = configuration(first, Report())
    except CannotImportError:  # the import of `first` says why, once it is saved (--save-snapshot)
        return first, field_managers(objects) or {}
    planned = what_to_observe(load_config(config))
    try:
        owned = owned_by(config, first, args.stack)
    except CannotImportError:  # preflight on the first read: still read what the plan observes, to show it all
        owned = []
    second = ObservationRequest(planned.lists, tuple(sorted({*planned.gets, *owned}, key=lambda ref: ref.sort_key)))
    again, more = _read_cluster(second, args)
    return merged(first, again), field_managers([*objects, *more]) or {}


def _read_cluster(request: ObservationRequest, args: argparse.Namespace) -> tuple[Observed, list[dict[str, Any]]]:
    """`read_cluster`, and the objects as the API server returned them: the snapshot drops `managedFields`."""
    from ..observe.reader import DEFAULT_TIMEOUT, _Reading, connect

    timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
    deadline = time.monotonic() + timeout
    connection = connect(args.kubeconfig, args.context, timeout)
    with connection.client:
        reading = _Reading(connection, deadline, timeout)
        return reading.run(request), reading.objects


def _managers_in(path: Path) -> Managers | None:
    """The field managers a snapshot file holds (a `kubectl get -o yaml` List does; this program's snapshots keep
    none); the file was read and checked already (`load_snapshot`)."""
    from ..config import ConfigError
    from ..config.stackfile import yaml_document
    from .importing.adoption import field_managers

    try:
        document = yaml_document(path.read_text(encoding="utf-8"), str(path))
    except (OSError, UnicodeDecodeError, ConfigError):
        return None
    items = document.get("items") if isinstance(document, dict) else None
    return field_managers(item for item in items if isinstance(item, dict)) if isinstance(items, list) else None


def merged(first: Observed, second: Observed) -> Observed:
    """One snapshot of two reads of the same cluster."""
    from ..observe import Observed

    return Observed(
        first.cluster or second.cluster,
        MappingProxyType({**first.objects, **second.objects}),
        first.listed | second.listed,
        first.got | second.got,
        MappingProxyType({**first.crds, **second.crds}),
    )


def stack_document(config: dict[str, Any], source: str) -> str:
    """The `Pulumi.<stack>.yaml` text: a header saying where it comes from, then `config:` with the `maas:` keys."""
    from ..config.errors import escaped
    from ..observe.yaml_text import yaml_text

    document = {"config": {f"maas:{key}": value for key, value in config.items()}}
    body = yaml_text(document, sort_keys=False)
    return HEADER.format(source=escaped(source)) + body


def _source(args: argparse.Namespace, observed: Observed) -> str:
    if observed.cluster is not None:
        context = f" (context {observed.cluster.context})" if observed.cluster.context else ""
        return f"{observed.cluster.server}{context}"
    return f"the snapshot {args.observed}"


def _report(imported: Imported, import_file: Path) -> None:
    from ..config.errors import escaped

    for line in imported.unexpressed:
        print(f"not expressed: {line}", file=sys.stderr)
    for warning in imported.warnings:
        print(f"warning: {escaped(warning)}", file=sys.stderr)
    for line in imported.adoption:
        print(f"adopting: {escaped(line)}", file=sys.stderr)
    config, resources = imported.config, imported.import_file["resources"]
    pinned = sum(1 for s in config.get("subscriptions", ()) if s.get("rateLimitIdentity") == "legacy")
    components = sum(1 for r in resources if r.get("component"))
    counts = ", ".join(f"{len(config.get(key, ()))} {key}" for key in ("tenants", "models", "authPolicies"))
    print(
        f"imported {counts} and {len(config.get('subscriptions', ()))} subscriptions ({pinned} pinned to legacy); "
        f"{escaped(str(import_file))}: {len(resources) - components} live objects to adopt under {components} "
        "components",
        file=sys.stderr,
    )
    targets = " ".join(f"--target '{urn}'" for urn in imported.import_file["nameTable"].values())
    providers = f"pulumi up {targets}; " if targets else ""
    print(
        f"next: review the configuration; {providers}pulumi import --file {escaped(str(import_file))} "
        "--protect=false --generate-code=false (docs/migrating.md)",
        file=sys.stderr,
    )


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a temporary sibling renamed over the target. An error names the target, never the
    temporary file."""
    if path.is_dir():
        raise OSError(errno.EISDIR, "it is a directory; give a file name", str(path))
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError as error:
        Path(temporary).unlink(missing_ok=True)
        raise OSError(error.errno, error.strerror, str(path)) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
