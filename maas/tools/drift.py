"""`python -m maas drift`: what `pulumi up` of a stack would change in the live objects of a snapshot.

`kubectl diff` for the program: each object the stack registers is applied to its live object in the snapshot as
a server-side apply merges it, and only the fields that apply changes are shown. Fields the program does not set
never show: status, the server's metadata (uid, resourceVersion, generation, creationTimestamp, managedFields),
the API server's defaults, and what other managers own (finalizers, ownerReferences, annotations). An object the
snapshot shows absent would be created; one it did not look at is "not observed", never "would be created".

This module only declares the command line; the comparison (`drifting/`) is imported when the command runs.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .stack_args import add_stack_source, missing_file_message, stack_source

if TYPE_CHECKING:
    from ..observe import Observed
    from .drifting.report import Drift

EXIT_DRIFT = 1
EXIT_INVALID = 2
FORMATS = ("text", "markdown")
DESCRIPTION = (
    "Each object the stack registers is applied to its live object in SNAPSHOT as a server-side apply merges it\n"
    "(the kind's list and map types, the CRD's defaults), and only what that apply changes is shown, as kubectl\n"
    "diff shows it: status, server metadata, API server defaults and other managers' fields never show. '+' would\n"
    "be created (the snapshot shows it absent), '-' would be deleted (a live object labelled as this program's\n"
    "that it no longer registers), '~' would change; objects the snapshot did not look at are listed as not\n"
    "observed. The plan's warnings go to stderr. Exit 0 (or 1 with --exit-code and any drift); 2 for an invalid\n"
    "stack file, configuration or snapshot."
)


def add_parser(commands: Any, stack_file: Callable[[str], Path]) -> None:
    """The `drift` subcommand; `stack_file` maps a stack name to its Pulumi.<stack>.yaml (as render's)."""
    cmd = commands.add_parser(
        "drift",
        help="what pulumi up would change in the live objects of a snapshot, field by field (kubectl diff)",
        description=DESCRIPTION,
    )
    add_stack_source(cmd)
    cmd.add_argument(
        "--observed",
        type=Path,
        metavar="SNAPSHOT",
        required=True,
        help="the live objects (python -m maas observe, or import --save-snapshot)",
    )
    cmd.add_argument("--format", choices=FORMATS, default="text", help="markdown fits a pull-request comment")
    cmd.add_argument("--exit-code", action="store_true", help="exit 1 when anything would change, 0 when nothing")
    cmd.set_defaults(command=run, stack_file=stack_file)


def run(args: argparse.Namespace) -> int:
    """The drift on stdout; exit 0 (1 with --exit-code and a drift), or 2 with the error on stderr only."""
    from ..config import ConfigError, raw_from_stack_file
    from ..observe import ObservationError, load_snapshot
    from .drifting.formats import markdown, text

    source = stack_source(args, args.stack_file)
    if not source.path.is_file():
        return _fail(missing_file_message(source))
    try:
        raw, warnings = raw_from_stack_file(source.path)
        observed = load_snapshot(args.observed)
        report = drift(raw, observed, stack=source.name)
    except (ConfigError, ObservationError) as error:
        return _fail(str(error))
    for warning in (*warnings, *report.warnings):
        print(f"warning: {warning}", file=sys.stderr)
    sys.stdout.write((markdown if args.format == "markdown" else text)(report))
    return EXIT_DRIFT if args.exit_code and report.changed else 0


def drift(config_raw: Mapping[str, Any], observed: Observed, stack: str = "dev") -> Drift:
    """What `pulumi up` of `config_raw` (the `maas:` keys) would change in `observed`; ConfigError if invalid."""
    from .drifting.report import drift as compute

    return compute(config_raw, observed, stack)


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_INVALID
