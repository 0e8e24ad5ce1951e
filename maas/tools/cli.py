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
from .import_command import add_import_parser
from .outdir import OutDir, OutputError
from .render import render

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
    render_cmd = commands.add_parser("render", help="render the Kubernetes objects of a stack offline")
    source = render_cmd.add_mutually_exclusive_group()
    source.add_argument("--stack", default="dev", help="stack name: reads Pulumi.<stack>.yaml (default: dev)")
    source.add_argument("--config-file", type=Path, help="a Pulumi.<stack>.yaml file to read instead")
    render_cmd.add_argument("--format", choices=("yaml", "json"), default="yaml")
    render_cmd.add_argument("--out", type=Path, help="write one file per object into this directory")
    render_cmd.add_argument(
        "--observed", type=Path, metavar="SNAPSHOT", help="plan against this snapshot (python -m maas observe)"
    )
    render_cmd.add_argument(
        "--status", action="store_true", help="also print the status writes, as {Kind}Status documents"
    )
    render_cmd.set_defaults(command=_render)
    add_observe_parser(commands, stack_file)
    add_import_parser(commands)
    return parser


def stack_file(stack: str) -> Path:
    """`Pulumi.<stack>.yaml` in the working directory, else beside `Pulumi.yaml` in this project."""
    name = f"Pulumi.{stack}.yaml"
    local = Path(name)
    return local if local.exists() else PROJECT_ROOT / name


def _render(args: argparse.Namespace) -> int:
    path = args.config_file or stack_file(args.stack)
    stack = args.stack if args.config_file is None else path.name.removeprefix("Pulumi.").removesuffix(".yaml")
    if not path.is_file():
        print(f"error: stack file {path} not found; pass --stack NAME or --config-file PATH", file=sys.stderr)
        return EXIT_INVALID
    try:
        out = OutDir.open(args.out) if args.out else None
        raw, warnings = raw_from_stack_file(path)
        observed = load_snapshot(args.observed) if args.observed else Observed.nothing()
        rendering = render(raw, stack=stack, observed=observed)
        objects = rendering.objects() + (rendering.statuses() if args.status else [])
        if out is not None:
            _write_files(objects, out, args.format)
    except (ConfigError, OutputError, ObservationError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_INVALID
    if out is None:
        sys.stdout.write(dump(objects, args.format))
    _summary(objects, warnings + rendering.warnings)
    if args.observed is None:
        print(f"note: {NOTHING_OBSERVED}", file=sys.stderr)
    return 0


def dump(objects: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(objects, indent=2) + "\n"
    return yaml.safe_dump_all(objects, sort_keys=False, default_flow_style=False, width=4096)


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


def _summary(objects: list[dict[str, Any]], warnings: list[str]) -> None:
    counts = Counter(body["kind"] for body in objects)
    print(f"rendered {len(objects)} objects:", file=sys.stderr)
    for kind in sorted(counts):
        print(f"  {counts[kind]:5d} {kind}", file=sys.stderr)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
