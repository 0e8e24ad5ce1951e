"""`python -m maas`: the offline tools. `render` prints what the program would register, without a cluster."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from ..config import ConfigError, raw_from_stack_file
from ..observe import ObservationError, Observed, load_snapshot
from ..observe.command import add_observe_parser
from .diff import add_diff_parser
from .explaining import add_explain_parser
from .import_command import add_import_parser
from .outdir import OutDir, OutputError
from .render import Rendering, render
from .stack_args import add_stack_options, missing_file_message, stack_source
from .validate import add_validate_parser

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EXIT_INVALID = 2
NOTHING_OBSERVED = (
    "nothing was observed (no --observed SNAPSHOT): statuses are the intended ones and no preflight ran; "
    "python -m maas observe > snapshot.yaml takes a snapshot"
)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    return args.command(args)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m maas", description=__doc__)
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    _add_render_parser(commands)
    add_observe_parser(commands, stack_file)
    add_import_parser(commands)
    add_explain_parser(commands, stack_file)
    add_diff_parser(commands, stack_file)
    add_validate_parser(commands, stack_file)
    return parser


def _add_render_parser(commands: Any) -> None:
    cmd = commands.add_parser("render", help="render the Kubernetes objects of a stack offline")
    add_stack_options(cmd)
    cmd.add_argument("--format", choices=("yaml", "json"), help="of the objects (default: yaml)")
    output = cmd.add_mutually_exclusive_group()
    output.add_argument("--out", type=Path, help="write one file per object into this directory")
    output.add_argument(
        "--outputs", action="store_true", help="print the stack outputs (JSON, as pulumi stack output --json)"
    )
    cmd.add_argument("--status", action="store_true", help="also print the status writes, as {Kind}Status documents")
    cmd.set_defaults(command=_render)


def stack_file(stack: str) -> Path:
    """`Pulumi.<stack>.yaml` in the working directory, else beside `Pulumi.yaml` in this project."""
    name = f"Pulumi.{stack}.yaml"
    local = Path(name)
    return local if local.exists() else PROJECT_ROOT / name


def _render(args: argparse.Namespace) -> int:
    source = stack_source(args, stack_file)
    fmt = args.format or "yaml"
    problem = _outputs_conflict(args) or (None if source.path.is_file() else missing_file_message(source))
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_INVALID
    try:
        out = OutDir.open(args.out) if args.out else None
        raw, warnings = raw_from_stack_file(source.path)
        observed = load_snapshot(args.observed) if args.observed else Observed.nothing()
        rendering = render(raw, stack=source.name, observed=observed)
        objects = rendering.objects() + (rendering.statuses() if args.status else [])
        if out is not None:
            _write_files(objects, out, fmt)
    except (ConfigError, OutputError, ObservationError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_INVALID
    if args.outputs:
        sys.stdout.write(stack_outputs(rendering))
    elif out is None:
        sys.stdout.write(dump(objects, fmt))
    _summary(objects, rendering.plan.notes if rendering.plan else [], warnings + rendering.warnings)
    if args.observed is None:
        print(f"note: {NOTHING_OBSERVED}", file=sys.stderr)
    return 0


def _outputs_conflict(args: argparse.Namespace) -> str | None:
    """`--outputs` prints no objects: the options that shape objects do not combine with it."""
    if args.outputs and args.status:
        return "--status adds status writes to the objects, and --outputs prints no objects; use one of them"
    if args.outputs and args.format == "yaml":
        return "--outputs prints JSON (as pulumi stack output --json); drop --format yaml"
    return None


def stack_outputs(rendering: Rendering) -> str:
    """What the program exports (`pulumi.export` of `plan.outputs`), as JSON with sorted keys: byte-stable."""
    assert rendering.plan is not None  # render() returns only after the program built its plan
    return json.dumps(rendering.plan.outputs, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def dump(objects: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(objects, indent=2) + "\n"
    # libyaml's emitter prints the same bytes as PyYAML's pure-Python one at this width (tests/test_determinism.py),
    # 5x faster: 44 s at 10,000 subscriptions; a PyYAML built without libyaml has no CSafeDumper: SafeDumper then
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    return yaml.dump_all(objects, Dumper=dumper, sort_keys=False, default_flow_style=False, width=4096)


def file_name(body: dict[str, Any], fmt: str) -> str:
    metadata = body["metadata"]
    parts = [body["kind"], metadata.get("namespace", "_cluster"), metadata["name"]]
    return "_".join(parts).lower() + f".{fmt}"


def _write_files(objects: list[dict[str, Any]], out: OutDir, fmt: str) -> None:
    """One file per object; two objects that would share a file name are an error, never an overwrite."""
    files: dict[str, str] = {}
    for body in objects:
        name = file_name(body, fmt)
        if name in files:
            raise OutputError(f"--out: two objects would both be written to {name}; nothing was written")
        files[name] = json.dumps(body, indent=2) + "\n" if fmt == "json" else yaml.safe_dump(body, sort_keys=False)
    out.replace(files)


def _summary(objects: list[dict[str, Any]], notes: list[str], warnings: list[str]) -> None:
    """On stderr: objects per kind, the plan's notes (each gateway's size budget), then the warnings."""
    counts = Counter(body["kind"] for body in objects)
    print(f"rendered {len(objects)} objects:", file=sys.stderr)
    for kind in sorted(counts):
        print(f"  {counts[kind]:5d} {kind}", file=sys.stderr)
    for note in notes:
        print(note, file=sys.stderr)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
