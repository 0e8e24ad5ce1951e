"""`python -m maas observe`: read the live objects a stack's plan needs and print them as a snapshot file."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import ConfigError, load_config, raw_from_stack_file
from ..config.errors import escaped
from .errors import ObservationError
from .reader import DEFAULT_TIMEOUT, read_cluster
from .scope import what_to_observe
from .snapshot_file import dump_snapshot

EXIT_INVALID = 2


def add_observe_parser(subparsers: Any, stack_file: Callable[[str], Path]) -> None:
    """The `observe` subcommand of `python -m maas`; `stack_file` maps a stack name to its Pulumi.<stack>.yaml."""
    cmd = subparsers.add_parser(
        "observe",
        help="read the live objects the program needs (read-only) and print a snapshot (YAML) on stdout",
        description=__doc__,
    )
    source = cmd.add_mutually_exclusive_group()
    source.add_argument("--stack", default="dev", help="stack name: reads Pulumi.<stack>.yaml (default: dev)")
    source.add_argument("--config-file", type=Path, help="a Pulumi.<stack>.yaml file to read instead")
    cmd.add_argument("--context", help="kubeconfig context (default: platform.kubernetes.context, else current)")
    cmd.add_argument(
        "--kubeconfig",
        help="kubeconfig path or contents (default: platform.kubernetes.kubeconfig, else $KUBECONFIG or "
        "~/.kube/config, else in-cluster)",
    )
    cmd.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds for the whole read (default 30)")
    cmd.set_defaults(command=observe_command, stack_file=stack_file)


def observe_command(args: argparse.Namespace) -> int:
    """Exit 0 with the snapshot on stdout, or 2 with one message on stderr."""
    path = args.config_file or args.stack_file(args.stack)
    if not path.is_file():
        return _fail(f"stack file {path} not found; pass --stack NAME or --config-file PATH")
    try:
        config = load_config(raw_from_stack_file(path)[0])
        kubernetes = config.platform.kubernetes
        kubeconfig = args.kubeconfig or kubernetes.kubeconfig
        observed = read_cluster(what_to_observe(config), kubeconfig, args.context or kubernetes.context, args.timeout)
    except ConfigError as error:  # one issue a line, each escaped already
        return _fail(str(error))
    except ObservationError as error:
        return _fail(escaped(str(error)))
    sys.stdout.write(dump_snapshot(observed))
    where = observed.cluster.server if observed.cluster else "the cluster"
    print(f"observed {len(observed.objects)} objects from {where}", file=sys.stderr)
    return 0


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_INVALID
