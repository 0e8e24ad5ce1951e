"""The stack options the commands share (`--stack` | `--config-file`, `--observed`), and what they name.

One place decides which stack file a command reads and under which stack name, so the commands cannot drift.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..naming import DEFAULT_STACK


def add_stack_source(parser: argparse.ArgumentParser) -> None:
    """`--stack NAME | --config-file PATH` on a subcommand (read by `stack_source`)."""
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--stack", help=f"stack name: reads Pulumi.<stack>.yaml (default: {DEFAULT_STACK})")
    source.add_argument("--config-file", type=Path, help="a Pulumi.<stack>.yaml file to read instead")


def add_stack_options(parser: argparse.ArgumentParser) -> None:
    """`--stack NAME | --config-file PATH` and `--observed SNAPSHOT` on a subcommand."""
    add_stack_source(parser)
    parser.add_argument(
        "--observed", type=Path, metavar="SNAPSHOT", help="plan against this snapshot (python -m maas observe)"
    )


@dataclass(frozen=True)
class StackSource:
    """The stack file a command reads and the stack name the program runs under (`Pulumi.<name>.yaml`)."""

    path: Path
    name: str


def stack_source(args: argparse.Namespace, stack_file: Callable[[str], Path]) -> StackSource:
    """What `--stack` / `--config-file` name; `stack_file` maps a stack name to its file."""
    if args.config_file is not None:
        name = args.config_file.name.removeprefix("Pulumi.").removesuffix(".yaml")
        return StackSource(args.config_file, name)
    name = args.stack or DEFAULT_STACK
    return StackSource(stack_file(name), name)


def given(args: argparse.Namespace) -> bool:
    """Whether any stack option was given on the command line."""
    return args.stack is not None or args.config_file is not None or args.observed is not None


def missing_file_message(source: StackSource) -> str:
    return f"stack file {source.path} not found; pass --stack NAME or --config-file PATH"
