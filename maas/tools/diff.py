"""`python -m maas diff BASE HEAD`: what a change of stack configuration does, for a pull-request review.

Both sides are rendered by the program `pulumi up` runs, HEAD on the cluster BASE leaves (see
`diffing/sides.py`), and compared: objects and status writes (field by field), the warnings HEAD adds and those it
resolves, who gains or loses a model (effective access: admitted by the model's AuthPolicy and owning a
subscription maas-api selects), token limits per subscription and model, and the quota report's counter resets.
`--base-ref REF` reads BASE from git.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .diffing.formats import markdown, text

# `diff --help` imports this module: the configuration, the snapshot and the plan are imported by the functions that
# run the command (tests/test_cli_help.py)
if TYPE_CHECKING:
    from ..observe import Observed
    from .diffing.git import GitFile
    from .diffing.review import Review
    from .diffing.sides import Side

EXIT_CHANGED = 1
EXIT_INVALID = 2
FORMATS: dict[str, Callable[[Review], str]] = {"text": text, "markdown": markdown}
ABSENT_BASE = (
    "note: BASE: {path} does not exist at {ref}: the change adds this stack, so BASE registers nothing and every "
    "object of HEAD is added"
)
NOTHING_OBSERVED = (
    "nothing was observed (no --observed SNAPSHOT): both sides are planned without live state, so statuses are the "
    "intended ones"
)


def add_diff_parser(subparsers: Any, stack_file: Callable[[str], Path]) -> None:
    """The `diff` subcommand of `python -m maas`; `stack_file` maps a stack name to its Pulumi.<stack>.yaml."""
    cmd = subparsers.add_parser(
        "diff",
        help="what a change of stack configuration does: objects, warnings, access, limits and quota resets",
        description=__doc__,
    )
    cmd.add_argument(
        "stacks",
        nargs="+",
        metavar="STACK",
        help="BASE HEAD, or HEAD alone with --base-ref: a stack file, or a stack name (dev: Pulumi.dev.yaml)",
    )
    cmd.add_argument("--base-ref", metavar="REF", help="read BASE from git: HEAD's file as it is at REF (origin/main)")
    cmd.add_argument(
        "--observed", type=Path, metavar="SNAPSHOT", help="plan both sides against this snapshot (observe)"
    )
    cmd.add_argument("--format", choices=tuple(FORMATS), default="text", help="markdown fits a pull-request comment")
    cmd.add_argument("--exit-code", action="store_true", help="exit 1 when anything changes, 0 when nothing does")
    cmd.set_defaults(command=diff_command, stack_file=stack_file, usage_error=cmd.error)


def diff_command(args: argparse.Namespace) -> int:
    """Exit 0 (or 1 with --exit-code and a change) with the review on stdout; 2 with the errors on stderr only."""
    from ..config.errors import escaped, quoted
    from ..observe import ObservationError, Observed, load_snapshot
    from .diffing.git import GitError
    from .diffing.review import review
    from .diffing.sides import SideError

    wanted = 1 if args.base_ref else 2
    if len(args.stacks) != wanted:
        args.usage_error("give BASE and HEAD, or HEAD alone with --base-ref REF")
    try:
        base_file, head_path = _sources(args)
        observed = load_snapshot(args.observed) if args.observed else Observed.nothing()
    except GitError as error:
        return _fail([f"BASE (--base-ref): {error}"])
    except (SideError, ObservationError) as error:
        return _fail([str(error)])
    if base_file is None:
        print(ABSENT_BASE.format(path=escaped(str(head_path)), ref=quoted(args.base_ref)), file=sys.stderr)
    stack = head_path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    base, head, errors = _render_sides(base_file, head_path, stack, observed)
    if errors:
        return _fail(errors)
    if args.observed is None:
        print(f"note: {NOTHING_OBSERVED}", file=sys.stderr)
    result = review(base, head)
    sys.stdout.write(FORMATS[args.format](result))
    return EXIT_CHANGED if args.exit_code and result.changed else 0


def _path(argument: str, stack_file: Callable[[str], Path]) -> Path:
    """A stack file, or a bare stack name (no `/`, no `.yaml`) resolved as render's --stack is."""
    if "/" in argument or argument.endswith((".yaml", ".yml")) or Path(argument).is_file():
        return Path(argument)
    return stack_file(argument)


def _sources(args: argparse.Namespace) -> tuple[Path | GitFile | None, Path]:
    """BASE (a file, the file at --base-ref, or None when it does not exist there) and HEAD."""
    from ..config.errors import escaped
    from .diffing.git import file_at
    from .diffing.sides import SideError

    head = _path(args.stacks[-1], args.stack_file)
    base = None if args.base_ref else _path(args.stacks[0], args.stack_file)
    for label, path in (("BASE", base), ("HEAD", head)):
        if path is not None and not path.is_file():
            where = escaped(str(path))
            raise SideError(f"{label}: stack file {where} not found; give a Pulumi.<stack>.yaml or a stack name")
    return (file_at(args.base_ref, head) if args.base_ref else base), head


def _render_sides(
    base_file: Path | GitFile | None, head_path: Path, stack: str, observed: Observed
) -> tuple[Side, Side, list[str]]:
    """Both sides and the errors of each: HEAD is planned on the cluster BASE leaves, or, when BASE is invalid,
    still checked against the snapshot alone, so that one run names the errors of both."""
    from .diffing.sides import Side, SideError, applied, render_side, settled_warnings

    errors = []
    base = head = Side()
    head_observed = observed
    try:
        base = Side() if base_file is None else render_side("BASE", base_file, stack, observed)
        head_observed = applied(base, observed)
        if base_file is not None:  # BASE's warnings on the cluster HEAD is planned on (`sides.py`)
            base = replace(base, warnings=settled_warnings(base_file, stack, head_observed))
    except SideError as error:
        errors.append(str(error))
    try:
        head = render_side("HEAD", head_path, stack, head_observed)
    except SideError as error:
        errors.append(str(error))
    return base, head, errors


def _fail(errors: list[str]) -> int:
    for error in errors:
        print(f"error: {error}", file=sys.stderr)
    return EXIT_INVALID
