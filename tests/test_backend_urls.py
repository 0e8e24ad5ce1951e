"""Which URLs and hostnames read from the cluster a status may publish (issue 17): `maas.plan.status.urls`."""

from __future__ import annotations

import pytest

from maas.plan.status.urls import MAX_URL, hostname_problem, url_problem


@pytest.mark.parametrize(
    "url",
    [
        "https://maas.apps.example.com/llm/granite-7b-instruct",
        "https://MaaS.Example.COM/test-model",  # upstream 3.3 returns a backend URL as reported
        "http://test-model.default.svc.cluster.local",
        "HTTPS://maas.example.com/",
        "http://10.0.0.1:8080/v1",
        "https://[2001:db8::1]/granite",
        "https://[2001:db8::1]:8443/granite",
        "https://maas.example.com./x?model=a%20b&x=1#top",
        "https://maas.example.com/" + "a" * (MAX_URL - len("https://maas.example.com/")),
    ],
)
def test_callable_http_and_https_urls_are_published(url):
    assert url_problem(url) is None


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("javascript:alert(1)", "is not an absolute http or https URL"),
        ("data:text/html,x", "is not an absolute http or https URL"),
        ("ftp://maas.example.com/", "is not an absolute http or https URL"),
        ("//maas.example.com/x", "is not an absolute http or https URL"),
        ("https://maas.example.com/\r\nSet-Cookie: a=1", "contains the control character U+000D"),
        ("https://maas.example.com/\nx", "contains the control character U+000A"),
        ("https://maas.example.com/\tx", "contains the control character U+0009"),
        ("https://maas.example.com/\x00", "contains the control character U+0000"),
        ("https://maas.example.com/\x7f", "contains the control character U+007F"),
        ("https://maas.example.com/\x9b", "contains the control character U+009B"),
        ("https://maas.example.com/a b", "contains whitespace (U+0020)"),
        ("https://maas.example.com/\u2028", "contains whitespace (U+2028)"),
        ("https://maas.example.com/\u202e", "contains the non-ASCII character U+202E (a URL percent-encodes it)"),
        (
            "https://maas.example.com\\@evil.example/",
            "contains the character '\\\\' (U+005C), which a URL percent-encodes",
        ),
        ("https://maas.example.com/<script>", "contains the character '<' (U+003C), which a URL percent-encodes"),
        (
            "https://user:secret@maas.example.com/",
            "carries user information (user@ or user:password@), which would be handed to every client",
        ),
        (
            "https://maas.example.com@evil.example/",
            "carries user information (user@ or user:password@), which would be handed to every client",
        ),
        ("https:///granite", "has no host"),
        ("https:granite", "has no host"),
        ("https://maas.example.com:0/", "has a port that is not a number from 1 to 65535"),
        ("https://maas.example.com:65536/", "has a port that is not a number from 1 to 65535"),
        ("https://maas.example.com:http/", "has a port that is not a number from 1 to 65535"),
        ("https://*.apps.example.com/granite", "has no valid host name or IP address"),
        ("https://-maas.example.com/", "has no valid host name or IP address"),
        ("https://2001:db8::1/granite", "has no valid host name or IP address"),
        ("https://[v1.fe]/granite", "has no valid host name or IP address"),  # IPvFuture: no client calls it
        ("https://[not-ipv6]/granite", "has a malformed bracketed (IPv6) host"),
        ("https://[2001:db8::1/granite", "has a malformed bracketed (IPv6) host"),
        ("https://maas.example.com/" + "a" * MAX_URL, "is longer than 2048 characters"),
    ],
)
def test_urls_a_client_cannot_safely_be_handed_are_refused_with_the_rule_they_break(url, problem):
    assert url_problem(url) == problem


@pytest.mark.parametrize("hostname", ["maas.apps.example.com", "*.apps.example.com", "a" * 63 + ".example.com"])
def test_gateway_api_hostnames_are_published(hostname):
    assert hostname_problem(hostname) is None


@pytest.mark.parametrize(
    "hostname", ["Maas.example.com", "maas.example.com\r\nX: 1", "maas.example.com:443", "a." * 127 + "com", ""]
)
def test_other_route_hostnames_are_refused(hostname):
    assert hostname_problem(hostname) == (
        "is not a Gateway API hostname (a lowercase DNS name of at most 253 characters, optionally '*.' first)"
    )
