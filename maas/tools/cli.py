"""`maas` (`python -m maas`): the offline tools of the program: render, validate, diff and explain a stack, and
observe or import a cluster.

The command line is built lazily: `COMMANDS` names each subcommand with its one-line summary and examples, and the
module that declares its arguments is imported only when that subcommand is used, so `maas --help` imports neither
Pulumi, the kubernetes client nor the plan. The arguments of render, validate and observe are declared here and
their code is imported only to run them, so their `--help` is as quick.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .stack_args import add_stack_options, add_stack_source, missing_file_message, stack_source

if TYPE_CHECKING:
    from .outdir import OutDir
    from .render import Rendering

PROJECT_ROOT = Path(__file__).resolve().parents[2]
EXIT_INVALID = 2
NOTHING_OBSERVED = (
    "nothing was observed (no --observed SNAPSHOT): statuses are the intended ones and no preflight ran; "
    "python -m maas observe > snapshot.yaml takes a snapshot"
)
DESCRIPTION = (
    "The offline tools of MaaS as code: render, validate, diff and explain a stack; observe or import a cluster."
)
ALL = ""  # `_parser(ALL)`: every subcommand with its arguments


class HelpFormatter(argparse.HelpFormatter):
    """Descriptions and epilogs as paragraphs filled to the terminal's width, except a paragraph whose lines
    after the first are indented (`examples:` and the commands under it), which keeps its lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in textwrap.dedent(text).strip("\n").split("\n\n"):
            lines = paragraph.splitlines()
            if len(lines) > 1 and all(line.startswith("  ") for line in lines[1:]):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                filled = textwrap.fill(" ".join(lines), width, initial_indent=indent, subsequent_indent=indent)
                paragraphs.append(filled)
        return "\n\n".join(paragraphs)


@dataclass(frozen=True)
class Command:
    """One subcommand: its one-line summary (the command list, and the first line of its --help), examples (the
    end of its --help), and `module:function` that adds its parser, called with the subparsers (and `stack_file`
    when `stack_file` is set). `nested` gives the subcommands of a command (`explain caller`) their summary and
    examples."""

    summary: str
    examples: tuple[str, ...]
    adds: str
    stack_file: bool = True
    nested: tuple[tuple[str, str, tuple[str, ...]], ...] = ()


COMMANDS: dict[str, Command] = {
    "render": Command(
        "render a stack's Kubernetes objects offline (what `pulumi up` registers)",
        (
            "maas render --stack dev > objects.yaml",
            "maas render --config-file Pulumi.prod.yaml --observed snapshot.yaml --format json",
            "maas render --outputs",
        ),
        "maas.tools.cli:add_render_parser",
    ),
    "validate": Command(
        "check a stack's objects or YAML files as the API server would, offline",
        (
            "maas validate --stack dev",
            "maas validate objects.yaml --crds cluster-crds.yaml",
            "maas validate --config-file Pulumi.prod.yaml --format junit > validate.xml",
        ),
        "maas.tools.cli:add_validate_parser",
    ),
    "diff": Command(
        "what a change of stack configuration does: objects, access, limits, resets",
        (
            "maas diff --base-ref origin/main dev",
            "maas diff Pulumi.dev.yaml Pulumi.new.yaml --format markdown --exit-code",
        ),
        "maas.tools.diff:add_diff_parser",
    ),
    "drift": Command(
        "what pulumi up would change in a snapshot's live objects (kubectl diff)",
        (
            "maas drift --stack prod --observed snapshot.yaml",
            "maas drift --config-file Pulumi.prod.yaml --observed snapshot.yaml --format markdown --exit-code",
        ),
        "maas.tools.drift:add_parser",
    ),
    "explain": Command(
        "explain a subscription, a caller or a request from the rendered objects",
        (
            "maas explain subscription models-as-a-service/premium --model llm/granite-7b",
            "maas explain caller --user alice --groups premium-users --model llm/granite-7b",
        ),
        "maas.tools.explaining:add_explain_parser",
        nested=(
            (
                "subscription",
                "identity, short IDs, limits, counters and access of one subscription",
                ("maas explain subscription models-as-a-service/premium --model llm/granite-7b",),
            ),
            (
                "caller",
                "the subscription, auth decision and limit for one caller of one model",
                ("maas explain caller --user alice --groups premium-users --model llm/granite-7b",),
            ),
            (
                "request",
                "one request as a client sends it: route, policies, subscription, limit",
                (
                    "maas explain request --path /llm/granite-7b-instruct/v1/chat/completions --user alice "
                    "--groups premium-users",
                ),
            ),
        ),
    ),
    "observe": Command(
        "read the live objects a stack needs (read-only) and print a snapshot",
        (
            "maas observe --stack dev > snapshot.yaml",
            "maas observe --config-file Pulumi.prod.yaml --context prod --kubeconfig ~/.kube/prod > snapshot.yaml",
        ),
        "maas.tools.cli:add_observe_parser",
    ),
    "import": Command(
        "turn a maas-controller cluster into configuration and a Pulumi import file",
        (
            "maas import --context prod --stack prod --save-snapshot prod-snapshot.yaml > Pulumi.prod.yaml",
            "maas import --observed snapshot.yaml --stack prod > Pulumi.prod.yaml",
        ),
        "maas.tools.import_command:add_import_parser",
        stack_file=False,
    ),
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = _parser(_command_in(argv)).parse_args(argv)
    return args.command(args)


def _command_in(argv: list[str]) -> str | None:
    """The subcommand argv names (its first word that is not an option), or None: then no command's module is
    imported (`maas --help`, or a name that is no command, which argparse refuses)."""
    first = next((arg for arg in argv if not arg.startswith("-")), None)
    return first if first in COMMANDS else None


def _parser(only: str | None = ALL) -> argparse.ArgumentParser:
    """The command line; with `only` (a command's name, or None for none) the other subcommands are listed with
    their summary but get no arguments, so that their modules are not imported. The default builds all."""
    prog = _prog()
    parser = argparse.ArgumentParser(
        prog=prog,
        description=DESCRIPTION,
        epilog=f"Each command's options and examples: {prog} COMMAND --help",
        formatter_class=HelpFormatter,
    )
    commands = parser.add_subparsers(required=True, metavar="COMMAND", title="commands")
    for name, command in COMMANDS.items():
        if only == ALL or name == only:
            _add(commands, name, command)
        else:
            commands.add_parser(name, help=command.summary)
    return parser


def _prog() -> str:
    """`maas` when run as the console script, else `python -m maas`."""
    return "maas" if os.path.basename(sys.argv[0]) == "maas" else "python -m maas"


def _add(commands: Any, name: str, command: Command) -> None:
    """The subcommand's parser from its module, given its summary (if it has no description) and examples."""
    module, function = command.adds.split(":")
    adder = getattr(import_module(module), function)
    adder(commands, stack_file) if command.stack_file else adder(commands)
    parser = commands.choices[name]
    _document(parser, command.summary, command.examples)
    for nested, summary, examples in command.nested:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction) and nested in action.choices:
                _document(action.choices[nested], summary, examples)


def _document(parser: argparse.ArgumentParser, summary: str, examples: tuple[str, ...]) -> None:
    """Its --help: the summary as a sentence, then the description its module gives (if any), then examples."""
    parser.formatter_class = HelpFormatter
    sentence = summary[0].upper() + summary[1:] + "."
    parser.description = sentence + (f"\n\n{textwrap.dedent(parser.description)}" if parser.description else "")
    parser.epilog = "examples:\n" + "\n".join(f"  {example}" for example in examples)


def _lazy(module: str, function: str) -> Callable[[argparse.Namespace], int]:
    """A command that imports its module when it runs, not when the command line is built."""

    def run(args: argparse.Namespace) -> int:
        return getattr(import_module(module), function)(args)

    return run


def stack_file(stack: str) -> Path:
    """`Pulumi.<stack>.yaml` in the working directory, else beside `Pulumi.yaml` in this project."""
    name = f"Pulumi.{stack}.yaml"
    local = Path(name)
    return local if local.exists() else PROJECT_ROOT / name


# ---------------------------------------------------------------------------------------------------- render


def add_render_parser(commands: Any, stack_file: Callable[[str], Path]) -> None:
    cmd = commands.add_parser(
        "render",
        help=COMMANDS["render"].summary,
        description=(
            "The objects go to stdout (YAML, or JSON with --format json), or one file per object with --out DIR;\n"
            "a count per kind, the gateway size budget and the warnings go to stderr. Exit 0, or 2 for an invalid\n"
            "stack file, configuration or snapshot."
        ),
    )
    add_stack_options(cmd)
    cmd.add_argument("--format", choices=("yaml", "json"), help="of the objects (default: yaml)")
    output = cmd.add_mutually_exclusive_group()
    output.add_argument("--out", type=Path, help="write one file per object into this directory")
    output.add_argument(
        "--outputs", action="store_true", help="print the stack outputs (JSON, as pulumi stack output --json)"
    )
    cmd.add_argument("--status", action="store_true", help="also print the status writes, as {Kind}Status documents")
    cmd.set_defaults(command=_render, stack_file=stack_file)


def _render(args: argparse.Namespace) -> int:
    from ..config import ConfigError, raw_from_stack_file
    from ..observe import ObservationError, Observed, load_snapshot
    from .outdir import OutDir, OutputError
    from .render import render

    source = stack_source(args, args.stack_file)
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
    """What the program exports (what `pulumi.export` received: the plan's outputs, with `subscriptions` as counts
    under `subscriptionOutputs: summary`), as JSON with sorted keys: byte-stable. Plain values: an offline render
    marks no configuration value secret."""
    return json.dumps(rendering.stack_outputs, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def dump(objects: list[dict[str, Any]], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(objects, indent=2) + "\n"
    import yaml

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
    import yaml

    from .outdir import OutputError

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


# -------------------------------------------------------------------------------------------------- validate


def add_validate_parser(commands: Any, stack_file: Callable[[str], Path]) -> None:
    """The code is `tools/validate.py`, imported when the command runs."""
    cmd = commands.add_parser(
        "validate",
        help=COMMANDS["validate"].summary,
        description=(
            "With no FILE: the stack's plan through every check `pulumi up` runs (CRD schemas and rules, status\n"
            "writes, sizes, the gateway budget, quota resets), each problem naming its configuration entry. With\n"
            "FILEs (YAML or JSON; a List; a JSON array): every object, each problem at FILE:LINE, the line the\n"
            "object starts on. Exit 0: valid; 1: invalid objects; 2: unusable input."
        ),
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
    cmd.add_argument(
        "--format",
        choices=("text", "json", "junit"),
        default="text",
        help="text: one problem a line (default); json: one document; junit: JUnit XML for CI (a testcase per "
        "object of a file, one per stack file)",
    )
    add_stack_options(cmd)
    cmd.set_defaults(command=_lazy("maas.tools.validate", "validate_command"), stack_file=stack_file)


# --------------------------------------------------------------------------------------------------- observe


def add_observe_parser(commands: Any, stack_file: Callable[[str], Path]) -> None:
    """The code is `observe/command.py`, imported when the command runs."""
    cmd = commands.add_parser(
        "observe",
        help=COMMANDS["observe"].summary,
        description=(
            "The endpoint must answer as a Kubernetes API server (/version, discovery) before anything is read.\n"
            "`render`, `validate`, `diff` and `explain` take the snapshot with --observed SNAPSHOT. Exit 0, or 2\n"
            "with one message on stderr."
        ),
    )
    add_stack_source(cmd)
    cmd.add_argument("--context", help="kubeconfig context (default: platform.kubernetes.context, else current)")
    cmd.add_argument(
        "--kubeconfig",
        help="kubeconfig path or contents (default: platform.kubernetes.kubeconfig, else $KUBECONFIG or "
        "~/.kube/config, else in-cluster)",
    )
    cmd.add_argument("--timeout", type=float, help="seconds for the whole read (default 30)")
    cmd.set_defaults(command=_lazy("maas.observe.command", "observe_command"), stack_file=stack_file)
