"""`python -m maas explain`: what the rendered objects do for one subscription or one caller, offline.

Every answer is read off the objects `render` prints for the same stack file and snapshot, with the CEL engine
that Authorino and the Kuadrant wasm-shim would use: never from a second derivation of the plan. Exit status 0
with the explanation on stdout; 2 for an invalid stack file, snapshot or configuration, or a name the stack does
not have (the closest names are given); 1 when the evaluation contradicts the plan (a bug signal: zero or
several limits match an admitted request, or a rule could not be evaluated).

A status nobody wrote or observed (`controllerMode: coexist` without `--observed`, a CR new to the cluster,
`renderYamlToDirectory`) is the one the program's status rules give, printed `(assumed: why)`; every decision that
depends on one is marked `on an assumed status` and followed by an `assumes:` line per assumption.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..stack_args import add_stack_options, missing_file_message, stack_source

# `explain --help` (and `explain WHAT --help`) imports this package: the configuration, the snapshot, the plan, the
# simulator and CEL are imported by the functions that run the command (tests/test_cli_help.py)
if TYPE_CHECKING:
    from .report import Report
    from .world import World

EXIT_PROBLEM = 1
EXIT_INVALID = 2
# How the simulated caller authenticates (`simulator.Caller.token`): `explain request --token`
TOKEN_KINDS = ("kubernetes", "oidc", "api-key")


def add_explain_parser(subparsers: Any, stack_file: Callable[[str], Path]) -> None:
    """The `explain` command of `python -m maas`; `stack_file` maps a stack name to its Pulumi.<stack>.yaml."""
    cmd = subparsers.add_parser("explain", help="explain a subscription or a caller from the rendered objects")
    kinds = cmd.add_subparsers(required=True, metavar="WHAT")
    source = argparse.ArgumentParser(add_help=False)
    add_stack_options(source)
    subscription = kinds.add_parser(
        "subscription",
        parents=[source],
        help="identity, short ID per model, limit, predicate, counters and access of one subscription",
    )
    subscription.add_argument("subscription", metavar="NS/NAME")
    subscription.add_argument("--model", metavar="NS/NAME", help="only this model of the subscription")
    subscription.set_defaults(command=_run, explain=_subscription, stack_file=stack_file)
    caller = kinds.add_parser(
        "caller",
        parents=[source],
        help="the subscription maas-api selects, the auth decision and the limit for one caller of one model",
    )
    caller.add_argument("--user", required=True, help="the caller's user name (as TokenReview reports it)")
    caller.add_argument("--groups", default="", help="the caller's groups, comma-separated")
    caller.add_argument("--model", required=True, metavar="NS/NAME")
    caller.add_argument("--subscription", metavar="NAME", help="the X-MaaS-Subscription header: NAME or NS/NAME")
    caller.set_defaults(command=_run, explain=_caller, stack_file=stack_file)
    request = kinds.add_parser(
        "request",
        parents=[source],
        help="one request as a client sends it: route, policies, authentication, subscription, limits",
        description="Simulate one request through the rendered objects (Envoy routing, the wasm-shim's ActionSet, "
        "Authorino, maas-api's select, the token limits). Example: explain request --path "
        "//ext-a/cheap/v1/chat/completions --model gpt-4o --user dana --groups engineers",
    )
    request.add_argument("--method", default="POST")
    request.add_argument("--path", required=True, help="the path as sent, query string included")
    request.add_argument("--host", help="the Host header (default: the Gateway's hostname)")
    request.add_argument("--header", action="append", default=[], metavar="NAME=VALUE", help="a request header")
    request.add_argument("--model", help='the body\'s "model" (body-based routing sets X-Gateway-Model-Name from it)')
    request.add_argument("--user", required=True, help="the caller's user name")
    request.add_argument("--groups", default="", help="the caller's groups, comma-separated")
    request.add_argument("--token", choices=TOKEN_KINDS, default="kubernetes", help="how the caller authenticates")
    request.add_argument("--aud", default="", help="an OIDC token's audiences, comma-separated")
    request.add_argument("--azp", help="an OIDC token's authorized party")
    request.add_argument("--key-subscription", default="", metavar="NS/NAME", help="an API key's subscription")
    request.add_argument("--gateway", metavar="NS/NAME", help="the Gateway it is sent to (default: from the host)")
    request.add_argument(
        "--merge-slashes", action="store_true", help="the gateway merges slashes (Istio MERGE_SLASHES)"
    )
    request.set_defaults(command=_run, explain=_request, stack_file=stack_file)


def load_world(path: Path, stack: str, snapshot: Path | None) -> World:
    """`world.load_world`, imported when a command runs (a test replaces this one)."""
    from .world import load_world

    return load_world(path, stack, snapshot)


def _subscription(world: World, args: argparse.Namespace) -> Report:
    from .subscription import explain_subscription

    return explain_subscription(world, args.subscription, args.model)


def _caller(world: World, args: argparse.Namespace) -> Report:
    from .caller import explain_caller

    return explain_caller(world, args.user, list(_listed(args.groups)), args.model, args.subscription)


def _request(world: World, args: argparse.Namespace) -> Report:
    from ...config.errors import quoted
    from ..simulator import Caller, Request
    from .traffic import explain_request
    from .world import UnknownNameError

    headers = []
    for item in args.header:
        name, separator, value = item.partition("=")
        if not separator or not name:
            raise UnknownNameError(f"--header {quoted(item)} is not NAME=VALUE")
        headers.append((name, value))
    caller = Caller(
        user=args.user,
        groups=_listed(args.groups),
        token=args.token,
        audience=_listed(args.aud),
        authorized_party=args.azp,
        key_subscription=args.key_subscription,
    )
    request = Request(
        path=args.path,
        caller=caller,
        method=args.method,
        host=args.host,
        headers=tuple(headers),
        model=args.model,
        merge_slashes=args.merge_slashes,
    )
    return explain_request(world, request, args.gateway)


def _listed(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _run(args: argparse.Namespace) -> int:
    from ...config import ConfigError
    from ...config.errors import escaped
    from ...observe import ObservationError
    from .. import cel
    from ..simulator import SimulationError
    from ..simulator.authorization import NotModelledError
    from .world import UnknownNameError

    source = stack_source(args, args.stack_file)
    if not source.path.is_file():
        return _fail(missing_file_message(source), EXIT_INVALID)
    try:
        world = load_world(source.path, source.name, args.observed)
        report = args.explain(world, args)
    except ConfigError as error:  # one issue a line, each escaped already
        return _fail(str(error), EXIT_INVALID)
    except (ObservationError, UnknownNameError, SimulationError) as error:
        return _fail(escaped(str(error)), EXIT_INVALID)
    except (NotModelledError, cel.CelError) as error:
        return _fail(escaped(f"cannot evaluate the rendered objects: {error}"), EXIT_PROBLEM)
    sys.stdout.write(report.text())
    for warning in world.warnings:
        print(f"warning: {escaped(warning)}", file=sys.stderr)
    if report.problems:
        print(f"error: {len(report.problems)} bug signal(s), see the lines marked !!", file=sys.stderr)
        return EXIT_PROBLEM
    return 0


def _fail(message: str, status: int) -> int:
    """`message` is escaped already."""
    print(f"error: {message}", file=sys.stderr)
    return status


__all__ = ["add_explain_parser"]
