"""A request as a client sends it, and the path Envoy hands to routing and to every filter after normalisation.

Istio's gateways normalise paths the RFC 3986 way by default (`BASE`: dot segments removed, percent-escapes of
unreserved characters decoded, other escapes upper-cased, `%2F` kept); `MERGE_SLASHES` also merges runs of `/`.
The simulator applies the chosen setting before anything reads the path, as Envoy does: routing, the wasm-shim
and Authorino all see the normalised `:path`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_UNRESERVED = re.compile(r"[A-Za-z0-9\-._~]")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class Caller:
    """Who sends the request and how the gateway authenticates them.

    `kubernetes`: a token TokenReview accepts, reporting `user` and `groups`. `oidc`: a JWT of the tenant's issuer
    whose claims carry `preferred_username`/`sub` = `user`, `groups`, `aud` and `azp`. `api-key`: a maas-api key
    (`sk-oai-…`) that maas-api's validation maps to `user`, `groups` and the subscription it was minted for."""

    user: str
    groups: tuple[str, ...] = ()
    token: str = "kubernetes"
    audience: tuple[str, ...] = ()  # OIDC `aud`
    authorized_party: str | None = None  # OIDC `azp`
    key_subscription: str = ""  # an API key's subscription (`ns/name`)


@dataclass(frozen=True)
class Request:
    """One request: `path` as sent (query included), `headers` as sent, `model` the body's `"model"` (the payload
    processor's body-based routing copies it into `X-Gateway-Model-Name` before the route is chosen)."""

    path: str
    caller: Caller
    method: str = "POST"
    host: str | None = None  # None: the Gateway's own hostname
    headers: tuple[tuple[str, str], ...] = field(default_factory=tuple)
    model: str | None = None
    merge_slashes: bool = False  # Istio's MERGE_SLASHES normalisation instead of the default BASE


def normalised(path: str, merge_slashes: bool = False) -> str:
    """The `:path` after Envoy's normalisation (query string untouched)."""
    url_path, separator, query = path.partition("?")
    url_path = _ESCAPE.sub(_unescape_unreserved, url_path)
    if merge_slashes:
        url_path = re.sub("/{2,}", "/", url_path)
    return _without_dot_segments(url_path) + separator + query


def _unescape_unreserved(escape: re.Match[str]) -> str:
    char = chr(int(escape.group(1), 16))
    return char if _UNRESERVED.fullmatch(char) else f"%{escape.group(1).upper()}"


def _without_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4 on an absolute path; empty segments are kept (only MERGE_SLASHES removes them)."""
    segments = path.split("/")[1:] if path.startswith("/") else path.split("/")
    kept: list[str] = []
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == "..":
            if kept:
                kept.pop()
            if last:
                kept.append("")
        elif segment == ".":
            if last:
                kept.append("")
        else:
            kept.append(segment)
    return "/" + "/".join(kept)
