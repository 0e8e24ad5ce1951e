"""Constrained scalar types and the strict base model shared by every configuration entry.

Each constraint carries its own message, phrased as what is wrong and how to fix it, because these messages are
what a platform engineer reads when `pulumi up` refuses a configuration. Every pattern matches the whole value
(`fullmatch`: `$` would let a trailing newline through) and only ASCII where Kubernetes requires it.
"""

from __future__ import annotations

import inspect
import marshal
import re
import urllib.parse
from collections.abc import Mapping
from functools import cache, cached_property, lru_cache
from typing import Annotated, Any, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidatorFunctionWrapHandler,
)

from .. import naming
from .endpoints import as_resolved, internal_reason, ip_address
from .errors import quoted

DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# A Gateway API hostname (lowercase RFC 1123, optionally one leading `*.` label), as the CRDs require.
HOSTNAME = re.compile(r"(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
WINDOW = re.compile(r"([1-9][0-9]{0,3})(s|m|h)")
WINDOW_SECONDS = {"s": 1, "m": 60, "h": 3600}
YEAR_SECONDS = 366 * 24 * 3600
MAX_TOKEN_LIMIT = 1_000_000_000
INT32_MAX = 2**31 - 1
MAX_TEXT = 4096


class memoized(cached_property):  # noqa: N801 (a decorator, named like the one it refines)
    """`functools.cached_property` without the lock CPython 3.11 takes at each first read (3.12 dropped it): entries
    are validated and read in one thread, and a plan first reads tens of thousands of them. Validated entries are
    immutable, so a value computed twice by two threads would be the same."""

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        instance.__dict__[self.attrname] = value = self.func(instance)
        return value


class Strict(BaseModel):
    """Unknown keys are errors (a typo must never be ignored) and validated entries are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=False, ignored_types=(memoized,))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with `update`d fields computes its cached properties again: pydantic copies their values, which
        the old fields gave (a respelled reference kept its old rates)."""
        copied = super().model_copy(update=update, deep=deep)
        if update:
            for name in _cached_properties(type(self)):
                copied.__dict__.pop(name, None)
        return copied


@cache
def _cached_properties(model: type) -> tuple[str, ...]:
    return tuple(name for name in dir(model) if isinstance(inspect.getattr_static(model, name), cached_property))


def validated_once(
    model: type, data: Any, handler: ValidatorFunctionWrapHandler, shared: dict[tuple[type, bytes], Any] | None
) -> Any:
    """`data` validated, or the instance an identical value validated to before in `shared` (one load's cache,
    the validation context): ten thousand subscriptions spell a few thousand distinct model references, and a
    frozen entry can be shared. Identical means equal marshal bytes of plain data: marshal writes each value with
    its exact type (`True`, `1.0` and `1` differ), and version 2 records no interning or reference counts; only
    bytes-like values would share one spelling, so an entry holding one is never kept. Nor is a failure, so every
    occurrence reports its own errors."""
    if shared is None:
        return handler(data)
    try:
        key = (model, marshal.dumps(data, 2))
    except ValueError:  # not marshal's types, or nested too deeply: validated as usual
        return handler(data)
    found = shared.get(key)
    if found is None:
        found = handler(data)
        if _plain(data):
            shared[key] = found
    return found


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _plain(value: Any) -> bool:
    """Only JSON's kinds of value, by exact type; iterative, as marshal takes deeper nesting than recursion."""
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind is dict:
            pending += item.keys()
            pending += item.values()
        elif kind is list or kind is tuple:
            pending += item
        elif kind not in _SCALARS:
            return False
    return True


def unicode_text(value: str) -> str:
    """Encodable as UTF-8: JSON and YAML may carry a lone surrogate, which no API server accepts."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{quoted(value)} is not valid Unicode text (a lone surrogate); remove it") from None
    return value


def printable(value: str) -> str:
    """No control characters, line separators or lone surrogates: they cannot be written to the API server as
    intended (or not at all) and would let a value forge lines in logs and previews."""
    if value.isprintable():  # a lone surrogate is not printable either, so this value is valid Unicode too
        return value
    bad = next(ch for ch in value if not ch.isprintable())
    raise ValueError(f"{quoted(value)} contains the control character {quoted(bad)}; remove it")


def _dns_label(max_length: int):
    def check(value: str) -> str:
        if not value:
            raise ValueError("must not be empty")
        if len(value) > max_length:
            raise ValueError(f"{quoted(value)} is {len(value)} characters long; use at most {max_length}")
        if not DNS_LABEL.fullmatch(value):
            raise ValueError(
                f"{quoted(value)} is not a DNS label; use lowercase letters, digits and '-', "
                "starting and ending with a letter or digit"
            )
        return value

    # names repeat across thousands of entries (every reference to a model spells its name and namespace)
    return AfterValidator(lru_cache(maxsize=4096)(check))


def object_name(value: str, max_length: int = 253) -> str:
    """A Kubernetes object name (DNS-1123 subdomain) of at most `max_length` characters."""
    if not value or len(value) > max_length or not DNS_SUBDOMAIN.fullmatch(value):
        raise ValueError(
            f"{quoted(value)} is not a valid Kubernetes object name; use at most {max_length} lowercase letters, "
            "digits, '-' and '.'"
        )
    return value


def _length(min_length: int, max_length: int):
    def check(value: str) -> str:
        if not min_length <= len(value) <= max_length:
            raise ValueError(f"must be {min_length} to {max_length} characters long (is {len(value)})")
        return printable(value)

    return AfterValidator(check)


def _window_given_a_number(value: Any) -> Any:
    """`window: 60` is a common slip: say which strings mean that."""
    if isinstance(value, int) and not isinstance(value, bool):
        hint = " or ".join(_window_spellings(value)) if value > 0 else "a positive number with s, m or h, e.g. 1m"
        raise ValueError(f"{value} has no unit; windows are strings such as 60s, 1m or 24h: use {hint}")
    return value


def _window_spellings(seconds: int) -> list[str]:
    spellings = [f"{seconds}s"]
    for unit, size in (("m", 60), ("h", 3600)):
        if seconds % size == 0:
            spellings.append(f"{seconds // size}{unit}")
    return spellings


@lru_cache(maxsize=256)  # a configuration spells a handful of windows, each thousands of times
def _window(value: str) -> str:
    match = WINDOW.fullmatch(value)
    if match is None:
        raise ValueError(f"{quoted(value)} is not a valid window; use s, m or h, e.g. 24h")
    seconds = int(match.group(1)) * WINDOW_SECONDS[match.group(2)]
    if seconds > YEAR_SECONDS:
        raise ValueError(f"{quoted(value)} is longer than 366 days; use at most 8784h")
    return value


def _between(low: int, high: int):
    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"{value} is out of range; use a whole number from {low} to {high}")
        return value

    return AfterValidator(check)


def _at_least(low: int, unit: str = "", high: int = INT32_MAX):
    """A lower bound that matters to the user, and an upper one that only keeps the value representable."""

    def check(value: int) -> int:
        if value < low:
            raise ValueError(f"{value} is too small; use a whole number of at least {low}{unit}")
        if value > high:
            raise ValueError(f"{value} is too large; use at most {high}{unit}")
        return value

    return AfterValidator(check)


def _host(host: str) -> str | None:
    """The problem of a DNS host name, or None: lowercase RFC 1123 labels of at most 63, 253 in all."""
    if host != host.lower():
        return "host names are lowercase"
    if len(host) > 253 or any(len(label) > 63 for label in host.split(".")):
        return "a host name has at most 253 characters and labels of at most 63"
    return None if DNS_SUBDOMAIN.fullmatch(host) else "not a DNS host name"


def _fqdn(value: str) -> str:
    problem = _host(value)
    if problem is not None:
        raise ValueError(_not_a_host(value, problem))
    return value


def _not_a_host(value: str, problem: str) -> str:
    return (
        f"{quoted(value)} is not a host name ({problem}); give the FQDN without scheme, port or path, "
        "e.g. api.openai.com"
    )


def _endpoint(value: str) -> str:
    """An FQDN (it becomes an ExternalName Service and a ServiceEntry host). An endpoint that is only misspelt
    (case, a trailing dot, an IPv6 address) and names a place inside the cluster says so too, so that fixing the
    spelling is not mistaken for the whole fix."""
    problem = _host(value)
    if problem is None:
        return value
    host = as_resolved(value)
    reason = internal_reason(host) if _host(host) is None or ip_address(host) else None
    raise ValueError(_not_a_host(value, problem) + (f"; besides, it {reason}" if reason else ""))


def _model_namespace(value: str) -> str:
    """The gateway reads a request's first path segment as a model's namespace, except the reserved ones."""
    if value in naming.RESERVED_FIRST_SEGMENTS:
        raise ValueError(
            f"{quoted(value)} is a first path segment the gateway reserves (/v1/ and /maas-api/ are the platform's "
            "paths, /publishers/ KServe's), so the gateway would never route a request to a model there, or the "
            "model would capture other models' requests; use another namespace"
        )
    return value


def _gateway_hostname(value: str) -> str:
    problem = _host(value.removeprefix("*.")) or (None if HOSTNAME.fullmatch(value) else "not a DNS host name")
    if problem is not None:
        raise ValueError(
            f"{quoted(value)} is not a Gateway API hostname ({problem}); use a lowercase host such as "
            "models.example.com, optionally with one leading '*.'"
        )
    return value


def url_problem(value: str, schemes: tuple[str, ...]) -> str | None:
    """Why `value` is not an absolute URL with one of `schemes` and a DNS host (None when it is one)."""
    printable(value)
    if any(ch.isspace() for ch in value) or not value.isascii():
        return "a URL has no spaces and only ASCII characters (percent-encode the others)"
    parts = urllib.parse.urlsplit(value)
    if parts.scheme not in schemes:
        return f"the scheme must be {' or '.join(s + '://' for s in schemes)}"
    if parts.username is not None or parts.password is not None:
        return "credentials in a URL are not allowed"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return "the port is not a number from 1 to 65535"
    host = parts.hostname or ""
    if _host(host) is not None or parts.netloc != (host if port is None else f"{host}:{port}"):
        return "the host must be a lowercase DNS name, e.g. https://models.example.com/path"
    return None


def _url(schemes: tuple[str, ...], example: str, no_query: bool = False):
    def check(value: str) -> str:
        problem = url_problem(value, schemes)
        if problem is None and no_query and (urllib.parse.urlsplit(value).query or "#" in value):
            problem = "an issuer has no query or fragment"
        if problem is not None:
            raise ValueError(f"{quoted(value)} is not a valid URL ({problem}); use {example}")
        return value

    return AfterValidator(check)


KUADRANT_VERSION = re.compile(r"1\.([0-9]{1,3})(\.[0-9]{1,3})?")
STACK_SCOPE = re.compile(r"all|platform|tenant:(.+)", re.DOTALL)


def _kuadrant_version(value: str) -> str:
    """1.4.x writes a WasmPlugin, 1.5 and later an EnvoyFilter: the two layouts the gateway size model knows."""
    match = KUADRANT_VERSION.fullmatch(value)
    if match is None or int(match.group(1)) < 4:
        raise ValueError(f"{quoted(value)} is not a Kuadrant version this program knows; use 1.4, 1.5 or later")
    return value


def _stack_scope(value: str) -> str:
    match = STACK_SCOPE.fullmatch(value)
    if match is None or (match.group(1) is not None and not DNS_LABEL.fullmatch(match.group(1))):
        raise ValueError(f"{quoted(value)} is not a scope; use all, platform or tenant:<tenant name>")
    return value


def _subscription_key(value: str) -> str:
    namespace, _, name = value.partition("/")
    if not (DNS_LABEL.fullmatch(namespace) and DNS_LABEL.fullmatch(name) and len(namespace) <= 63 >= len(name)):
        raise ValueError(f"{quoted(value)} is not a subscription; write namespace/name, e.g. models-as-a-service/gold")
    return value


Text = Annotated[StrictStr, AfterValidator(printable)]
Unicode = Annotated[StrictStr, AfterValidator(unicode_text)]  # may span lines (an annotation's description)
DnsLabel = Annotated[StrictStr, _dns_label(63)]
TenantName = Annotated[StrictStr, _dns_label(41)]
ObjectName = Annotated[StrictStr, AfterValidator(object_name)]
Name63 = Annotated[StrictStr, _length(1, 63)]
Name253 = Annotated[StrictStr, _length(1, 253)]
NonEmpty = Annotated[StrictStr, _length(1, MAX_TEXT)]
Window = Annotated[StrictStr, BeforeValidator(_window_given_a_number), AfterValidator(_window)]
TokenLimit = Annotated[StrictInt, _between(1, MAX_TOKEN_LIMIT)]
Int32 = Annotated[StrictInt, _between(-(2**31), INT32_MAX)]
Port = Annotated[StrictInt, _between(1, 65535)]
Percent = Annotated[StrictInt, _between(1, 100)]
Replicas = Annotated[StrictInt, _between(1, 100)]
# Cache TTLs are bounded by a year: the CRD field is an integer, and Pulumi carries numbers as doubles, so nothing
# may need more than 53 bits to arrive unchanged.
TTLSeconds = Annotated[StrictInt, _at_least(0, " seconds", YEAR_SECONDS)]
JwksTTLSeconds = Annotated[StrictInt, _at_least(30, " seconds", YEAR_SECONDS)]
ExpirationDays = Annotated[StrictInt, _at_least(1, " day(s)")]
HttpsUrl = Annotated[StrictStr, _url(("https",), "https://issuer.example.com/realms/maas", no_query=True)]
EndpointUrl = Annotated[StrictStr, _url(("https", "http"), "https://models.example.com/llm/granite")]
Fqdn = Annotated[StrictStr, AfterValidator(_fqdn)]
Endpoint = Annotated[StrictStr, AfterValidator(_endpoint)]
ModelNamespace = Annotated[StrictStr, _dns_label(63), AfterValidator(_model_namespace)]
GatewayHostname = Annotated[StrictStr, AfterValidator(_gateway_hostname)]
SubscriptionKey = Annotated[StrictStr, AfterValidator(_subscription_key)]
KuadrantVersion = Annotated[StrictStr, AfterValidator(_kuadrant_version)]
StackScope = Annotated[StrictStr, AfterValidator(_stack_scope)]

__all__ = [
    "DnsLabel",
    "Endpoint",
    "EndpointUrl",
    "ExpirationDays",
    "Fqdn",
    "GatewayHostname",
    "HttpsUrl",
    "Int32",
    "JwksTTLSeconds",
    "ModelNamespace",
    "Name63",
    "Name253",
    "NonEmpty",
    "ObjectName",
    "Percent",
    "Port",
    "Replicas",
    "Strict",
    "StrictBool",
    "StrictInt",
    "StrictStr",
    "SubscriptionKey",
    "TTLSeconds",
    "TenantName",
    "Text",
    "TokenLimit",
    "Unicode",
    "Window",
    "object_name",
]
