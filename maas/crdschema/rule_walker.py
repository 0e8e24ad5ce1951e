"""The walk of one object along its CRD schema that runs the CEL rules and list-type checks."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from celpy import celtypes
from celpy.evaluation import CELEvalError

from .cel_engine import CelEngine, RuleSubject, UnsupportedRuleError
from .cel_values import CelValues
from .crd_version import CrdVersion
from .errors import JsonPath, Problem
from .list_types import list_type_problems
from .rules import Rule
from .schema_nodes import children

_TYPE_CHECKS: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def rule_problems(obj: dict, crd: CrdVersion, engine: CelEngine, plain: bool = True) -> list[Problem]:
    """Failed rules and duplicate list entries of a (defaulted) object; ``plain``: it is plain JSON data (see
    ``RuleSubject``)."""
    walker = _RuleWalker(engine, crd, plain)
    walker.walk_root(obj, crd.schema)
    return walker.problems


def node_rule_problems(value: Any, schema: dict, path: JsonPath, crd: CrdVersion, engine: CelEngine) -> list[Problem]:
    """``rule_problems`` of one (defaulted, plain JSON) value below the root: what the root's walk finds there."""
    walker = _RuleWalker(engine, crd, plain=True)
    walker.walk(value, schema, path)
    return walker.problems


class _RuleWalker:
    def __init__(self, engine: CelEngine, crd: CrdVersion, plain: bool) -> None:
        self._engine = engine
        self._crd = crd
        self._plain = plain
        self._values = CelValues()
        self.problems: list[Problem] = []

    def walk(self, value: Any, schema: dict, path: JsonPath, subject: RuleSubject | None = None) -> None:
        if value is None or not self._crd.needs_walk(schema) or not _has_schema_type(value, schema):
            return
        rules = self._crd.rules_at(schema)
        if rules:
            subject = subject or RuleSubject(value, schema, self._values, self._plain)
            for rule in rules:
                self._check_rule(rule, subject, path)
        if isinstance(value, list):
            self.problems.extend(list_type_problems(value, schema, path))
        for key, sub, sub_schema in children(value, schema):
            self.walk(sub, sub_schema, (*path, key))

    def walk_root(self, obj: dict, schema: dict) -> None:
        """Like ``walk``; root rules see only metadata.name and generateName, as on the API server."""
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
        visible = {k: meta[k] for k in ("name", "generateName") if k in meta}
        self.walk(obj, schema, (), RuleSubject({**obj, "metadata": visible}, schema, self._values, self._plain))

    def _check_rule(self, rule: Rule, subject: RuleSubject, path: JsonPath) -> None:
        try:
            result = self._engine.evaluate(rule.rule, subject)
        except UnsupportedRuleError as exc:
            self.problems.append((path, f"cannot evaluate rule {rule.rule!r}: {exc} ({rule.message})"))
            return
        if isinstance(result, CELEvalError):
            detail = _eval_error_text(result)
            self.problems.append((path, f"{rule.message} (rule {rule.rule!r} failed to evaluate: {detail})"))
        elif not isinstance(result, (celtypes.BoolType, bool)):
            self.problems.append((path, f"rule {rule.rule!r} returned {result!r}, not a bool"))
        elif not result:
            self.problems.append((path, f"{self._message(rule, subject)} (rule: {rule.rule})"))

    def _message(self, rule: Rule, subject: RuleSubject) -> str:
        if rule.message_expression:
            try:
                result = self._engine.evaluate(rule.message_expression, subject)
            except UnsupportedRuleError:
                return rule.message
            if isinstance(result, str) and result:  # cel-python may return a plain str here
                return str(result)
        return rule.message


def _has_schema_type(value: Any, schema: dict) -> bool:
    """CEL rules only run on well-typed values (the schema check reports the others)."""
    if schema.get("x-kubernetes-int-or-string"):
        return isinstance(value, (int, str)) and not isinstance(value, bool)
    check = _TYPE_CHECKS.get(schema.get("type", ""))
    return check is None or check(value)


def _eval_error_text(error: CELEvalError) -> str:
    """A readable reason from cel-python's nested error arguments (e.g. "no such key: groups")."""
    text = " ".join(str(arg) for arg in _flatten(error.args))
    missing = re.findall(r"no such member in mapping: '([^']*)'", text)
    if missing:
        return "no such key: " + ", ".join(dict.fromkeys(missing))
    args = error.args
    if len(args) >= 3 and args[1] is ValueError and args[2]:
        return str(args[2][0])
    return re.sub(r"<class '[\w.]*?(\w+)'>", r"\1", str(args[0]) if args else repr(error))


def _flatten(values: Any) -> Iterator[Any]:
    for value in values if isinstance(values, tuple) else (values,):
        yield from _flatten(value) if isinstance(value, tuple) else (value,)
