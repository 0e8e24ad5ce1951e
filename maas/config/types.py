"""Constrained scalar types and the strict base model shared by every configuration entry.

Each constraint carries its own message, phrased as what is wrong and how to fix it, because these messages are
what a platform engineer reads when `pulumi up` refuses a configuration.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
FQDN = re.compile(r"^[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9\-]*[a-zA-Z0-9])?)*$")
WINDOW = re.compile(r"^[1-9]\d{0,3}(s|m|h)$")
WINDOW_SECONDS = {"s": 1, "m": 60, "h": 3600}
MAX_WINDOW_SECONDS = 366 * 24 * 3600
MAX_TOKEN_LIMIT = 1_000_000_000
INT32_MAX = 2**31 - 1


class Strict(BaseModel):
    """Unknown keys are errors (a typo must never be ignored) and validated entries are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False)


def _dns_label(max_length: int):
    def check(value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        if len(value) > max_length:
            raise ValueError(f"'{value}' is {len(value)} characters long; use at most {max_length}")
        if not DNS_LABEL.match(value):
            raise ValueError(
                f"'{value}' is not a DNS label; use lowercase letters, digits and '-', "
                "starting and ending with a letter or digit"
            )
        return value

    return AfterValidator(check)


def _dns_subdomain(value: str) -> str:
    if not value or len(value) > 253 or not DNS_SUBDOMAIN.match(value):
        raise ValueError(
            f"'{value}' is not a valid Kubernetes object name; use at most 253 lowercase letters, digits, '-' and '.'"
        )
    return value


def _length(min_length: int, max_length: int):
    def check(value: str) -> str:
        if not min_length <= len(value) <= max_length:
            raise ValueError(f"must be {min_length} to {max_length} characters long (is {len(value)})")
        return value

    return AfterValidator(check)


def _window(value: str) -> str:
    if not WINDOW.match(value):
        raise ValueError(f"'{value}' is not a valid window; use s, m or h, e.g. 24h")
    seconds = int(value[:-1]) * WINDOW_SECONDS[value[-1]]
    if seconds > MAX_WINDOW_SECONDS:
        raise ValueError(f"'{value}' is longer than 366 days; use at most 8784h")
    return value


def _token_limit(value: int) -> int:
    if not 1 <= value <= MAX_TOKEN_LIMIT:
        raise ValueError(f"{value} is out of range; use a whole number from 1 to {MAX_TOKEN_LIMIT}")
    return value


def _between(low: int, high: int):
    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"{value} is out of range; use a whole number from {low} to {high}")
        return value

    return AfterValidator(check)


def _at_least(low: int, unit: str = ""):
    def check(value: int) -> int:
        if value < low:
            raise ValueError(f"{value} is too small; use a whole number of at least {low}{unit}")
        return value

    return AfterValidator(check)


def _https_url(value: str) -> str:
    if not re.match(r"^https://[^\s/]+", value):
        raise ValueError(f"'{value}' is not an https URL; use https://host/path")
    return value


def _fqdn(value: str) -> str:
    if not 1 <= len(value) <= 253 or not FQDN.match(value):
        raise ValueError(
            f"'{value}' is not a host name; give the FQDN without scheme, port or path, e.g. api.openai.com"
        )
    return value


DnsLabel = Annotated[StrictStr, _dns_label(63)]
TenantName = Annotated[StrictStr, _dns_label(41)]
ObjectName = Annotated[StrictStr, AfterValidator(_dns_subdomain)]
Name63 = Annotated[StrictStr, _length(1, 63)]
Name253 = Annotated[StrictStr, _length(1, 253)]
NonEmpty = Annotated[StrictStr, _length(1, 4096)]
Window = Annotated[StrictStr, AfterValidator(_window)]
TokenLimit = Annotated[StrictInt, AfterValidator(_token_limit)]
Int32 = Annotated[StrictInt, _between(-(2**31), INT32_MAX)]
Port = Annotated[StrictInt, _between(1, 65535)]
Percent = Annotated[StrictInt, _between(1, 100)]
Replicas = Annotated[StrictInt, _between(1, 100)]
NonNegative = Annotated[StrictInt, _at_least(0)]
JwksTTLSeconds = Annotated[Int32, _at_least(30, " seconds")]
ExpirationDays = Annotated[Int32, _at_least(1, " day(s)")]
HttpsUrl = Annotated[StrictStr, AfterValidator(_https_url)]
Fqdn = Annotated[StrictStr, AfterValidator(_fqdn)]

__all__ = [
    "DnsLabel",
    "Fqdn",
    "HttpsUrl",
    "Int32",
    "Name63",
    "Name253",
    "NonEmpty",
    "NonNegative",
    "ObjectName",
    "Percent",
    "Port",
    "Replicas",
    "Strict",
    "StrictBool",
    "StrictInt",
    "StrictStr",
    "TenantName",
    "TokenLimit",
    "Window",
]
