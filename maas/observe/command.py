"""`python -m maas observe`: read the live objects a stack's plan needs and print them as a snapshot file.

Its arguments are declared in `tools/cli.py` (so that `--help` imports neither this package nor the client)."""

from __future__ import annotations

import argparse
import sys

from ..config import ConfigError, load_config, raw_from_stack_file
from ..config.errors import escaped
from ..config.kubernetes import reader_connection
from ..naming import DEFAULT_STACK
from .errors import ObservationError
from .reader import DEFAULT_TIMEOUT, read_cluster
from .scope import what_to_observe
from .snapshot_file import dump_snapshot

EXIT_INVALID = 2


def observe_command(args: argparse.Namespace) -> int:
    """Exit 0 with the snapshot on stdout, or 2 with one message on stderr."""
    path = args.config_file or args.stack_file(args.stack or DEFAULT_STACK)
    if not path.is_file():
        return _fail(f"stack file {path} not found; pass --stack NAME or --config-file PATH")
    try:
        config = load_config(raw_from_stack_file(path)[0])
        cluster = reader_connection(config.platform.kubernetes)  # the provider's and the status writer's cluster
        kubeconfig = args.kubeconfig or cluster.kubeconfig
        context = args.context or (cluster.context if args.kubeconfig is None else config.platform.kubernetes.context)
        timeout = DEFAULT_TIMEOUT if args.timeout is None else args.timeout
        observed = read_cluster(what_to_observe(config), kubeconfig, context, timeout)
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
