"""Compiling and evaluating CEL rules with cel-python, with results cached per what a rule reads."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

import celpy
from celpy.evaluation import CELEvalError

from .caching import digest, memoised
from .cel_functions import K8S_CEL_FUNCTIONS, KNOWN_FUNCTIONS, called_functions
from .cel_values import CelValues
from .self_use import SelfUse, projection, self_use


class UnsupportedRuleError(Exception):
    """A CEL rule that cel-python cannot compile or evaluate; reported, never treated as passing."""


@dataclass(frozen=True)
class CompiledRule:
    program: Any
    self_use: SelfUse | None


class RuleSubject:
    """The value a schema node's rules see; converted to CEL and fingerprinted only as far as each rule reads it.

    ``plain`` says the object is plain JSON data, which converts to CEL in full: only then is a rule shown just the
    part it reads (converting the rest could fail, and that failure is the rule's result).
    """

    def __init__(self, raw: Any, schema: dict, values: CelValues, plain: bool = True) -> None:
        self.raw = raw
        self.schema = schema
        self._values = values
        self._plain = plain
        self._fingerprints: dict[SelfUse | None, bytes] = {}

    @functools.cached_property
    def cel(self) -> Any:
        return self._values.convert(self.raw, self.schema)

    def seen(self, use: SelfUse | None) -> Any:
        """The CEL value a rule that reads ``use`` is evaluated on."""
        return self._values.view(self.raw, self.schema, use) if self._plain and use is not None else self.cel

    def fingerprint(self, use: SelfUse | None) -> bytes:
        """Digest of the part of the value a rule reads (all of it when ``use`` is None or the data is not plain)."""
        key = use if self._plain else None
        if key not in self._fingerprints:
            shown = projection(self.raw, self.schema, key) if self._plain else ["not plain data", self.raw]
            self._fingerprints[key] = digest(json.dumps(shown, sort_keys=True, default=repr))
        return self._fingerprints[key]


class CelEngine:
    """Compiles each rule text once (cached) and evaluates it with ``self`` bound to a value."""

    def __init__(self) -> None:
        self._env = celpy.Environment()
        self._compiled: dict[str, CompiledRule | UnsupportedRuleError] = {}
        self._results: dict[tuple[int, str, bytes], Any] = {}

    def compiled(self, rule: str) -> CompiledRule:
        """The compiled rule; raises UnsupportedRuleError (also on later calls) if it cannot run here."""
        if rule not in self._compiled:
            self._compiled[rule] = self._compile(rule)
        compiled = self._compiled[rule]
        if isinstance(compiled, UnsupportedRuleError):
            raise compiled
        return compiled

    def _compile(self, rule: str) -> CompiledRule | UnsupportedRuleError:
        try:
            tree = self._env.compile(rule)
        except Exception as exc:  # any parser failure means "cannot evaluate"
            return UnsupportedRuleError(f"does not compile: {_first_line(exc)}")
        unknown = called_functions(tree) - KNOWN_FUNCTIONS
        if unknown:
            return UnsupportedRuleError(f"uses unsupported function(s) {', '.join(sorted(unknown))}")
        return CompiledRule(self._env.program(tree, functions=K8S_CEL_FUNCTIONS), self_use(tree))

    def evaluate(self, rule: str, subject: RuleSubject) -> Any:
        """Result of the rule, or a CELEvalError for a failed evaluation (which counts as a failure).

        cel-python needs 0.1-1 ms per evaluation, so results are cached per (schema node, rule, the part
        of the value the rule reads): rendered objects repeat the same shapes, and tests re-validate them.
        """
        compiled = self.compiled(rule)
        key = (id(subject.schema), rule, subject.fingerprint(compiled.self_use))
        return memoised(self._results, key, lambda: self._run(compiled, subject))

    @staticmethod
    def _run(compiled: CompiledRule, subject: RuleSubject) -> Any:
        try:
            return compiled.program.evaluate({"self": subject.seen(compiled.self_use)})
        except CELEvalError as exc:
            return exc
        except (TypeError, ValueError) as exc:  # a value that is not plain JSON data
            return CELEvalError(f"cannot convert the value to CEL: {exc}")


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
