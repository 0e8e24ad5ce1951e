"""The ``x-kubernetes-validations`` rules declared in a structural schema."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    rule: str
    message: str
    message_expression: str | None

    @classmethod
    def parse(cls, raw: dict) -> Rule:
        rule = raw["rule"]
        return cls(rule, raw.get("message") or f"failed rule: {rule}", raw.get("messageExpression"))

    @property
    def is_transition(self) -> bool:
        """Transition rules compare with the stored object; on create there is none, so they are skipped."""
        return bool(re.search(r"\boldSelf\b", self.rule))


def rules_of(schema: dict) -> list[Rule]:
    """The rules of one schema node."""
    return [Rule.parse(raw) for raw in schema.get("x-kubernetes-validations", [])]


def rules_below(schema: dict, path: str = "") -> Iterator[tuple[str, Rule]]:
    """Every rule reachable in the schema, with its schema path (``spec.rules[*]``)."""
    for rule in rules_of(schema):
        yield path or "<root>", rule
    for name, sub in schema.get("properties", {}).items():
        yield from rules_below(sub, f"{path}.{name}" if path else name)
    if isinstance(schema.get("additionalProperties"), dict):
        yield from rules_below(schema["additionalProperties"], f"{path}.*")
    if isinstance(schema.get("items"), dict):
        yield from rules_below(schema["items"], f"{path}[*]")
