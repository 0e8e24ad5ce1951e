"""One served version of one CRD: its validator and per-schema-node lookups, built on first use."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from .formats import format_checker
from .openapi import crd_root_json_schema
from .rules import Rule, rules_below, rules_of
from .schema_nodes import sub_schemas
from .validators import CrdJsonValidator


@dataclass
class CrdVersion:
    group: str
    version: str
    kind: str
    scope: str
    schema: dict
    _validator: Any = field(default=None, repr=False)
    _walk_cache: dict[int, bool] = field(default_factory=dict, repr=False)
    _rules_cache: dict[int, tuple[Rule, ...]] = field(default_factory=dict, repr=False)
    _defaults_cache: dict[int, bool] = field(default_factory=dict, repr=False)

    @property
    def validator(self) -> Any:
        """JSON-schema validator of the whole object, built lazily (the big CRDs take a while to convert)."""
        if self._validator is None:
            self._validator = CrdJsonValidator(crd_root_json_schema(self.schema), format_checker=format_checker())
        return self._validator

    @functools.cached_property
    def status_validator(self) -> Any:
        """JSON-schema validator of ``status`` alone: the root validator's own node for it, so its errors are those
        the whole object's validation reports there."""
        status = self.validator.schema["properties"]["status"]
        return CrdJsonValidator(status, format_checker=self.validator.format_checker)

    def needs_walk(self, schema: dict) -> bool:
        """Whether a schema node or any descendant has CEL rules or list-type checks (prunes the walk)."""
        key = id(schema)
        if key not in self._walk_cache:
            self._walk_cache[key] = _has_own_checks(schema) or any(self.needs_walk(sub) for sub in sub_schemas(schema))
        return self._walk_cache[key]

    @functools.cached_property
    def defaulting_schema(self) -> dict:
        """The root schema without ``metadata`` (the API server does not default it from the CRD); one dict, so that
        ``has_defaults`` can remember its answer for it."""
        properties = {k: v for k, v in self.schema.get("properties", {}).items() if k != "metadata"}
        return {**self.schema, "properties": properties}

    def has_defaults(self, schema: dict) -> bool:
        """Whether a schema node's properties, or any node below, declare a ``default`` (prunes defaulting)."""
        key = id(schema)
        if key not in self._defaults_cache:
            own = any(isinstance(sub, dict) and "default" in sub for sub in schema.get("properties", {}).values())
            self._defaults_cache[key] = own or any(self.has_defaults(sub) for sub in sub_schemas(schema))
        return self._defaults_cache[key]

    def rules_at(self, schema: dict) -> tuple[Rule, ...]:
        """The rules of one schema node that can be checked on create (transition rules left out)."""
        key = id(schema)
        if key not in self._rules_cache:
            self._rules_cache[key] = tuple(rule for rule in rules_of(schema) if not rule.is_transition)
        return self._rules_cache[key]

    def rules(self) -> Iterator[tuple[str, Rule]]:
        """Every CEL rule reachable in the structural schema, with its schema path."""
        yield from rules_below(self.schema)


def _has_own_checks(schema: dict) -> bool:
    return bool(schema.get("x-kubernetes-validations")) or schema.get("x-kubernetes-list-type") in ("set", "map")
