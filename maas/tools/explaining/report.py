"""The text an explanation prints, and the problems it found (a bug signal: the command exits 1)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ...config.errors import escaped

INDENT = "  "


@dataclass
class Report:
    lines: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def add(self, text: str = "", depth: int = 0) -> None:
        """One line. Control characters are escaped, wherever they came from (`--user`, `--path`, a header, a
        selection reason quoting them): a value cannot end its line and forge another, such as a decision."""
        self.lines.append(f"{INDENT * depth}{escaped(text)}" if text else "")

    def problem(self, text: str, depth: int = 0) -> None:
        """Said loudly where it happens, and counted: the plan and the evaluation disagree."""
        self.problems.append(text)
        self.add(f"!! BUG SIGNAL: {text}", depth)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def compact(value: Any) -> str:
    """A value as one deterministic line of JSON (keys sorted)."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
