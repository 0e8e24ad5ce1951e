"""Which URLs and hostnames read from the cluster a status may publish.

`MaaSModelRef.status.endpoint` is what maas-api hands to every client, and it comes from live objects: an
LLMInferenceService's `status.addresses[].url` and `status.url` (KServe writes them, and so may anyone allowed to
patch that status), an HTTPRoute's hostnames, a Gateway's listener hostnames and addresses. A URL is published only
when a client can call it and it can carry nothing else: absolute `http` or `https` with a host, only the characters
of RFC 3986 (so no control character, whitespace or non-ASCII that could split a header or forge a log line), no user
information (credentials would be handed to every client, and `https://trusted.example.com@evil.example` disguises
the host it names), at most MAX_URL characters. The configuration's own URLs follow `maas.config.types`, which is
stricter (lowercase DNS hosts): a backend URL is published as reported (`https://MaaS.Example.COM/...`, upstream 3.3)
and may name an IP address.
"""

from __future__ import annotations

import ipaddress
import re
import string
import unicodedata
import urllib.parse

from ...config.types import HOSTNAME

MAX_URL = 2048  # what browsers and HTTP libraries reliably accept; an endpoint is far shorter
SCHEMES = ("http", "https")
URL_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")
DNS_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]*[A-Za-z0-9])?)*\.?")
PORT = re.compile(r"[0-9]{1,5}")


def url_problem(url: str) -> str | None:
    """Why `url` may not be published, as the rest of a sentence about it; None when it may."""
    if len(url) > MAX_URL:
        return f"is longer than {MAX_URL} characters"
    odd = next((ch for ch in url if ch not in URL_CHARACTERS), None)
    if odd is not None:
        return f"contains {_character(odd)}"
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:  # urllib refuses an unclosed `[` and a bracketed host that is no IP address
        return "has a malformed bracketed (IPv6) host"
    if parts.scheme not in SCHEMES:
        return "is not an absolute http or https URL"
    if "@" in parts.netloc:
        return "carries user information (user@ or user:password@), which would be handed to every client"
    return _netloc_problem(parts.netloc)


def hostname_problem(hostname: str) -> str | None:
    """Why a route hostname may not be published: the Gateway API's rule, which the API server enforces on a live
    HTTPRoute (so only a snapshot file or a nonconforming CRD can break it)."""
    if len(hostname) <= 253 and HOSTNAME.fullmatch(hostname):
        return None
    return "is not a Gateway API hostname (a lowercase DNS name of at most 253 characters, optionally '*.' first)"


def _character(ch: str) -> str:
    """The character a URL may not hold, named by its code point: it is never echoed raw."""
    code = f"U+{ord(ch):04X}"
    if unicodedata.category(ch) == "Cc":  # C0 (CR, LF, TAB ...), DEL and C1
        return f"the control character {code}"
    if ch.isspace():
        return f"whitespace ({code})"
    if not ch.isascii():
        return f"the non-ASCII character {code} (a URL percent-encodes it)"
    return f"the character {ch!r} ({code}), which a URL percent-encodes"


def _netloc_problem(netloc: str) -> str | None:
    """`host[:port]`, the host a DNS name (any case, as reported), an IPv4 address or a bracketed IPv6 one."""
    if netloc.endswith("]") or ":" not in netloc:
        host, port = netloc, None
    else:
        host, _, port = netloc.rpartition(":")
    if not host:
        return "has no host"
    if port is not None and not (PORT.fullmatch(port) and 1 <= int(port) <= 65535):
        return "has a port that is not a number from 1 to 65535"
    return None if _valid_host(host) else "has no valid host name or IP address"


def _valid_host(host: str) -> bool:
    if host.startswith("[") and host.endswith("]"):
        try:
            return ipaddress.ip_address(host[1:-1]).version == 6
        except ValueError:
            return False
    labels = host.rstrip(".").split(".")
    return len(host) <= 253 and all(len(label) <= 63 for label in labels) and DNS_NAME.fullmatch(host) is not None
