"""String checks with the API server's (Go) semantics: RE2 patterns and the formats CRDs use."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import re2

# Matched whole (fullmatch) and ASCII-only like Go's regexp: Python's \d and \s also match non-ASCII digits and spaces.
GO_DURATION = re.compile(r"[-+]?(0|(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)")
_STRFMT_DURATION = re.compile(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)")
# go-openapi accepts these units exactly, and the last spelling of each unit as a prefix ("seconds", "days")
_STRFMT_UNIT = re.compile(r"(ns|us|µs|ms|s|m|h|hr|d|w|wk)|(nano|micro|milli|sec|min|hour|day|week)[a-zµ]*")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def re2_pattern(validator: Any, pattern: str, instance: Any, schema: dict) -> Iterator[Any]:
    """``pattern`` with RE2 semantics like the Go API server (e.g. ``$`` does not match before ``\\n``)."""
    if isinstance(instance, str) and not compiled_re2(pattern).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


@functools.cache
def compiled_re2(pattern: str) -> Any:
    return re2.compile(pattern)


def is_strfmt_duration(value: str) -> bool:
    """go-openapi ``strfmt`` duration, the check the API server applies to ``format: duration``."""
    if GO_DURATION.fullmatch(value):
        return True
    return any(_STRFMT_UNIT.fullmatch(unit.lower()) for _, unit in _STRFMT_DURATION.findall(value))


def format_checker() -> jsonschema.FormatChecker:
    """Only the formats the API server checks and the CRDs use; all others (int32, double...) pass."""
    checker = jsonschema.FormatChecker(formats=["ipv4", "ipv6"])
    checker.checks("date-time")(lambda v: not isinstance(v, str) or bool(_DATE_TIME.fullmatch(v)))
    checker.checks("duration")(lambda v: not isinstance(v, str) or is_strfmt_duration(v))
    return checker
