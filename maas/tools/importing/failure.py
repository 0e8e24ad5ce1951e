"""What a failed `python -m maas import` leaves: never an empty stack file.

`python -m maas import ... > Pulumi.prod.yaml` has the shell empty the file before the import runs, so whatever
fails, stdout gets a stack file: comments at its top say what failed, what is missing and what to do next, and
its first key, `maas:importFailed`, makes `pulumi up` refuse it (no configuration has that key) as `render` and
`validate` do (`config/stackfile.py`). When the configuration was read but does not render against the cluster
(preflight: a Secret, Gateway or CRD it needs is missing), the file holds that configuration, complete but for
what only a rendering gives (`platform.images`, the import file); otherwise it holds no other key.

With `--out FILE` nothing is printed: FILE is written (whole or not at all) when a configuration was read, even one
that failed, and left as it was when none was: a failed re-import keeps the file of the last one that worked.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...config.errors import escaped
from ...config.stackfile import IMPORT_FAILED, NAMESPACE
from ...observe.yaml_text import yaml_text
from ...plan.checks.preflight import PATH as PREFLIGHT

EXIT_FAILED = 2
RUN_AGAIN = "Fix what failed (the error says how), then run the import again."
COMMAND_LINE = "Correct the command line, then run the import again (python -m maas import --help)."
WIDTH = 118


@dataclass
class Failure:
    """What is known of one import run, for the stack file it leaves if it fails: `source` once the cluster or
    snapshot was read, `snapshot` once `--save-snapshot` wrote it, `config` once a configuration was read."""

    args: argparse.Namespace
    write: Callable[[Path, str], None]  # whole or not at all (`import_command._write`)
    source: str | None = None
    snapshot: Path | None = None
    config: dict[str, Any] | None = None
    unexpressed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def stop(self, messages: list[str], issues: list[str] | None = None, step: str = RUN_AGAIN) -> int:
        """Report `messages` (the first says what failed; `issues`, when given, are the problems a rendering
        found, and `step` what to do otherwise), leave the stack file, say what to do next; the exit code."""
        for line in self.unexpressed:
            print(f"not expressed: {line}", file=sys.stderr)
        for message in messages:
            print(f"error: {escaped(message)}", file=sys.stderr)
        summary = self._summary(issues)
        steps = self._next(issues, step)
        text = failed_stack_file(summary, self.source, messages, self.missing, steps, self.config)
        out = getattr(self.args, "out", None)
        if out is None:
            sys.stdout.write(text)
            where = "the stack file printed (stdout)"
        elif self.config is None:
            where = None
            print(f"note: {escaped(str(out))} is left as it was: no configuration was read", file=sys.stderr)
        else:
            try:
                self.write(out, text)
            except OSError as error:
                print(f"error: cannot write {escaped(str(error.filename))}: {error.strerror}", file=sys.stderr)
                return EXIT_FAILED
            where = escaped(str(out))
        if where is not None:
            held = "the configuration read and " if self.config is not None else ""
            print(
                f"note: {where} holds {held}what failed in its first lines, and {NAMESPACE}:{IMPORT_FAILED}, so "
                "`pulumi up` refuses it",
                file=sys.stderr,
            )
        print(f"next: {' '.join(steps)}", file=sys.stderr)
        return EXIT_FAILED

    def _summary(self, issues: list[str] | None) -> str:
        if issues is not None:
            count = f"{len(issues)} problem(s)"
            if all(issue.startswith(f"{PREFLIGHT}: ") for issue in issues):
                return f"preflight failed: {count} in the cluster"
            return f"the configuration does not render against the cluster: {count}"
        if self.config is not None:
            return "the configuration was read, but the import did not finish"
        return "nothing was imported"

    def _next(self, issues: list[str] | None, step: str) -> list[str]:
        """What to do, one sentence each."""
        again = (
            "then import a new snapshot of the cluster (python -m maas observe, or import --context)"
            if getattr(self.args, "observed", None) is not None
            else "then run the same import again"
        )
        steps = [step]
        if issues is not None:
            steps = [
                f"Fix what failed (each problem says how; those starting '{PREFLIGHT}:' are the cluster's, not the "
                f"configuration's), {again}: it checks the configuration against the cluster, "
                "writes the import file and replaces this stack file."
            ]
        if self.snapshot is not None:
            steps.append(f"What was read is saved in {escaped(str(self.snapshot))}.")
        elif getattr(self.args, "context", None) is not None:
            steps.append("Add --save-snapshot FILE to keep what is read.")
        if getattr(self.args, "out", None) is None:
            steps.append(
                "Prefer --out FILE to `> FILE`: the shell empties FILE before the import runs, --out writes it only "
                "once something was read."
            )
        return steps


def failed_stack_file(
    summary: str,
    source: str | None,
    what_failed: list[str],
    missing: list[str],
    steps: list[str],
    config: dict[str, Any] | None,
) -> str:
    """The stack file a failed import leaves: what failed and what to do, as comments, then `config:` with
    `maas:importFailed` first and the configuration read, if any."""
    read = f" read {escaped(source)}, but" if source is not None else ""
    lines = [f"IMPORT FAILED ({summary}): `python -m maas import`{read} did not finish; this file is not ready."]
    lines += ["What failed:", *(f"  {escaped(message)}" for message in what_failed)]
    if config is not None:
        lines.append(
            "The configuration below is what the cluster's resources express, for review; "
            + (f"missing: {'; '.join(missing)}." if missing else "nothing of it is missing.")
        )
    else:
        lines.append("No configuration was read, so this file holds none.")
    lines += ["Next:", *(f"  {step}" for step in steps)]
    lines.append(
        f"Until then {NAMESPACE}:{IMPORT_FAILED} makes `pulumi up`, `python -m maas render` and `validate` refuse "
        "this file."
    )
    header = "".join(_comment(line) for line in lines)
    value = f"{summary}; see the comments at the top of this file"
    document = {f"{NAMESPACE}:{IMPORT_FAILED}": value, **{f"{NAMESPACE}:{k}": v for k, v in (config or {}).items()}}
    return header + yaml_text({"config": document}, sort_keys=False)


def _comment(line: str) -> str:
    """One line of text as YAML comment lines, wrapped; continuation lines indented under their first."""
    indent = " " * (len(line) - len(line.lstrip(" ")) + 2)
    wrapped = textwrap.wrap(
        line, WIDTH - 2, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
    ) or [""]
    return "".join(f"# {part}\n" for part in wrapped)
