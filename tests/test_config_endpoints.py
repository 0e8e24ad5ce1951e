"""ExternalModel endpoints stay outside the cluster and its network unless `allowInternalEndpoint` says otherwise,
and the settings that weaken an endpoint (`allowInternalEndpoint: true`, `tls: false`) warn at every preview."""

from __future__ import annotations

import pytest

from maas.config import (
    ConfigError,
    internal_endpoint_warnings,
    load_config,
    plaintext_endpoint_warnings,
)
from maas.observe import Observed
from maas.plan.build import build_plan

PATH = "maas:models[0] (ext/gpt)"
FIX = (
    "use the provider's public endpoint, or set external.allowInternalEndpoint: true if the model really is "
    "served inside your network"
)
NOT_A_HOST = "is not a host name ({}); give the FQDN without scheme, port or path, e.g. api.openai.com"
LOOPBACK_NAME = "is a loopback name (it always means this machine: the gateway pod itself)"
LOOPBACK = "is a loopback address (this machine: the gateway pod itself)"
UNSPECIFIED = "is the unspecified address (it means this machine: the gateway pod itself)"
LINK_LOCAL = "is a link-local address (the cloud metadata service lives there)"
PRIVATE = "is a private or special-purpose address (your network's or the cluster's, not the internet's)"
METADATA = "is a cloud metadata service name (it hands out the node's credentials)"
API_SERVER = "is the Kubernetes API server"
CLUSTER_DOMAIN = "is in the cluster's DNS domain cluster.local (it resolves inside the cluster)"


def external(name: str = "gpt", endpoint: str = "api.openai.com", **fields) -> dict:
    return {
        "name": name,
        "namespace": "ext",
        "modelRef": {"kind": "ExternalModel", "name": name},
        "external": {
            "provider": "openai",
            "targetModel": name,
            "endpoint": endpoint,
            "credentialRef": {"name": "openai-key"},
            **fields,
        },
    }


def errors_of(*models: dict) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config({"models": list(models)})
    return [str(issue) for issue in caught.value.issues]


@pytest.mark.parametrize(
    ("endpoint", "reason"),
    [
        ("169.254.169.254", LINK_LOCAL),
        ("localhost", LOOPBACK_NAME),
        ("models.localhost", LOOPBACK_NAME),
        ("127.0.0.1", LOOPBACK),
        ("127.1", LOOPBACK),  # the shorthand, decimal and hex forms C resolvers read as 127.0.0.1
        ("2130706433", LOOPBACK),
        ("0x7f.0.0.1", LOOPBACK),
        ("0.0.0.0", UNSPECIFIED),
        ("10.0.0.1", PRIVATE),
        ("172.16.0.1", PRIVATE),
        ("192.168.1.1", PRIVATE),
        ("100.64.0.1", PRIVATE),  # carrier-grade NAT, the pod network of some clusters
        ("240.0.0.1", PRIVATE),
        ("224.0.0.1", "is a multicast address, not a provider's"),
        ("metadata", METADATA),
        ("metadata.google.internal", METADATA),
        ("instance-data", METADATA),
        ("instance-data.ec2.internal", METADATA),
        ("kubernetes", API_SERVER),
        ("kubernetes.default", API_SERVER),
        ("kubernetes.default.svc", API_SERVER),
        ("kubernetes.default.svc.cluster.local", API_SERVER),
        ("maas-api.odh-ai-gateway-infra.svc", "is a Kubernetes Service name (it resolves inside the cluster)"),
        ("maas-api.odh-ai-gateway-infra.svc.cluster.local", CLUSTER_DOMAIN),
        ("cluster.local", CLUSTER_DOMAIN),
        (
            "10-0-0-1.default.pod",
            "is a Kubernetes pod name (it resolves inside the cluster, to any address written in it)",
        ),
        ("printer.local", "is a multicast DNS name (.local, RFC 6762: it resolves on the local network)"),
        (
            "vllm.corp.internal",
            "is in .internal, the top-level domain reserved for private networks (cloud providers' own DNS)",
        ),
        ("openai", "is a single-label name (it resolves against the cluster's DNS search domains, to a Service)"),
    ],
)
def test_an_internal_endpoint_is_refused_saying_why(endpoint, reason):
    assert errors_of(external(endpoint=endpoint)) == [f"{PATH}.external.endpoint: '{endpoint}' {reason}; {FIX}"]


@pytest.mark.parametrize(
    ("endpoint", "service", "namespace"),
    [
        ("maas-api.odh-ai-gateway-infra", "maas-api", "odh-ai-gateway-infra"),  # platform.infraNamespace
        ("gateway.openshift-ingress", "gateway", "openshift-ingress"),  # platform.gateway.namespace
        ("kube-dns.kube-system", "kube-dns", "kube-system"),
        ("api.default", "api", "default"),
        ("maas-api.ai-tenant-redteam", "maas-api", "ai-tenant-redteam"),  # a tenant namespace
        ("granite.llm", "granite", "llm"),  # the namespace of another model
        ("secrets.ext", "secrets", "ext"),  # the model's own namespace
    ],
)
def test_a_service_in_a_namespace_the_configuration_knows_is_refused(endpoint, service, namespace):
    """`{service}.{namespace}` resolves through the pods' DNS search domains to that Service."""
    granite = {"name": "granite", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": "granite"}}
    raw = {"tenants": [{"name": "models-as-a-service"}, {"name": "redteam"}], "models": [external(endpoint=endpoint)]}
    raw["models"].append(granite)
    with pytest.raises(ConfigError) as caught:
        load_config(raw)
    assert [str(issue) for issue in caught.value.issues] == [
        f"{PATH}.external.endpoint: '{endpoint}' is Service '{service}' in namespace '{namespace}' (the cluster's "
        f"DNS search domains resolve it); {FIX}"
    ]


@pytest.mark.parametrize(
    ("endpoint", "problem", "reason"),
    [
        ("LOCALHOST", "host names are lowercase", LOOPBACK_NAME),
        ("Metadata.Google.Internal", "host names are lowercase", METADATA),
        ("localhost.", "not a DNS host name", LOOPBACK_NAME),
        ("kubernetes.default.svc.", "not a DNS host name", API_SERVER),
        ("::1", "not a DNS host name", LOOPBACK),
        ("[::1]", "not a DNS host name", LOOPBACK),
        ("::", "not a DNS host name", UNSPECIFIED),
        ("fe80::1", "not a DNS host name", LINK_LOCAL),
        ("fe80::a9fe:a9fe%eth0", "not a DNS host name", LINK_LOCAL),
        ("fc00::1", "not a DNS host name", PRIVATE),
        ("fd12:3456::1", "not a DNS host name", PRIVATE),
        ("::ffff:169.254.169.254", "not a DNS host name", LINK_LOCAL),  # IPv4-mapped
    ],
)
def test_a_misspelt_internal_endpoint_is_refused_as_both(endpoint, problem, reason):
    """Case, a trailing dot and IPv6 literals are not host names; the error also says where the name points, so
    that fixing the spelling is not taken for the whole fix."""
    expected = f"{PATH}.external.endpoint: '{endpoint}' {NOT_A_HOST.format(problem)}; besides, it {reason}"
    assert errors_of(external(endpoint=endpoint)) == [expected]


@pytest.mark.parametrize("endpoint", ["2606:4700::1111", "https://localhost", "*.svc.cluster.local", ""])
def test_a_malformed_endpoint_that_is_not_a_misspelt_host_gets_no_guess_where_it_points(endpoint):
    """Only case, a trailing dot, brackets or an IP literal are read as a host; a URL or a wildcard is not one."""
    expected = f"{PATH}.external.endpoint: '{endpoint}' {NOT_A_HOST.format('not a DNS host name')}"
    assert errors_of(external(endpoint=endpoint)) == [expected]


@pytest.mark.parametrize(
    "endpoint",
    [
        "api.openai.com",
        "api.anthropic.com",
        "bedrock-runtime.us-east-1.amazonaws.com",
        "openai.azure.com",
        "kubernetes.example.com",
        "metadata.example.com",
        "localhost.example.com",
        "svc.example.com",
        "models.local.example.com",
        "8.8.8.8",
    ],
)
def test_a_public_endpoint_is_accepted_without_a_warning(endpoint):
    config = load_config({"models": [external(endpoint=endpoint)]})
    assert config.models[0].external.endpoint == endpoint
    assert config.models[0].external.allowInternalEndpoint is False
    assert internal_endpoint_warnings(config) == [] and plaintext_endpoint_warnings(config) == []


def test_every_internal_endpoint_is_reported_at_once():
    errors = errors_of(external("a", "169.254.169.254"), external("b", "localhost"), external("c", "api.openai.com"))
    assert errors == [
        f"maas:models[0] (ext/a).external.endpoint: '169.254.169.254' {LINK_LOCAL}; {FIX}",
        f"maas:models[1] (ext/b).external.endpoint: 'localhost' {LOOPBACK_NAME}; {FIX}",
    ]


@pytest.mark.parametrize(
    ("endpoint", "reason"),
    [("169.254.169.254", LINK_LOCAL), ("vllm.llm-serving.svc.cluster.local", CLUSTER_DOMAIN), ("10.0.0.1", PRIVATE)],
)
def test_allow_internal_endpoint_loads_and_warns_at_every_preview(endpoint, reason):
    config = load_config({"models": [external(endpoint=endpoint, allowInternalEndpoint=True)]})
    expected = [
        f"{PATH}.external.endpoint: '{endpoint}' {reason}; external.allowInternalEndpoint: true lets the gateway "
        "forward callers' requests and the provider credential there, so be sure this model really is served at "
        "that address"
    ]
    assert internal_endpoint_warnings(config) == expected
    assert internal_endpoint_warnings(config) == expected  # pure: the same warning at every preview


def test_allow_internal_endpoint_on_a_public_endpoint_warns_that_it_only_disarms_the_check():
    config = load_config({"models": [external(allowInternalEndpoint=True)]})
    assert internal_endpoint_warnings(config) == [
        f"{PATH}.external.allowInternalEndpoint: is true, but 'api.openai.com' is not an internal endpoint; remove "
        "the setting, so that a later change to an internal endpoint is refused"
    ]


def test_allow_internal_endpoint_does_not_make_an_ipv6_literal_a_host_name():
    """An ExternalName Service and a ServiceEntry host take DNS names, whatever the setting."""
    assert errors_of(external(endpoint="::1", allowInternalEndpoint=True)) == [
        f"{PATH}.external.endpoint: '::1' {NOT_A_HOST.format('not a DNS host name')}; besides, it {LOOPBACK}"
    ]


def test_allow_internal_endpoint_is_a_boolean():
    assert errors_of(external(allowInternalEndpoint="yes")) == [
        f"{PATH}.external.allowInternalEndpoint: must be true or false (got str 'yes')"
    ]


def test_tls_false_warns_once_per_model_at_every_preview():
    config = load_config(
        {
            "models": [
                external("a", "vllm.example.com", tls=False, port=8080),
                external("b", "api.openai.com"),
                external("c", "10.1.2.3", tls=False, allowInternalEndpoint=True),
            ]
        }
    )
    expected = [
        "maas:models[0] (ext/a).external.tls: external.tls is false: credentials and prompts to vllm.example.com "
        "travel unencrypted; set tls: true unless the provider only serves plain HTTP",
        "maas:models[2] (ext/c).external.tls: external.tls is false: credentials and prompts to 10.1.2.3 travel "
        "unencrypted; set tls: true unless the provider only serves plain HTTP",
    ]
    assert plaintext_endpoint_warnings(config) == expected
    assert plaintext_endpoint_warnings(config) == expected
    assert [w.split(":")[1] for w in internal_endpoint_warnings(config)] == ["models[2] (ext/c).external.endpoint"]


def test_an_endpoint_override_is_the_published_url_and_is_not_checked():
    """`endpointOverride` is what maas-api lists for callers, not where the gateway sends requests."""
    model = {
        "name": "granite",
        "namespace": "llm",
        "modelRef": {"kind": "LLMInferenceService", "name": "granite"},
        "endpointOverride": "https://10.0.0.1/llm/granite",
    }
    assert load_config({"models": [model]}).models[0].endpointOverride == "https://10.0.0.1/llm/granite"


def test_the_plan_every_preview_runs_carries_both_warnings():
    """`build_plan` is what `pulumi preview` runs: the warnings reach it, not only the configuration layer."""
    raw = {"models": [external("c", "10.1.2.3", tls=False, allowInternalEndpoint=True)]}
    warnings = build_plan(load_config(raw), Observed.nothing()).warnings
    assert [w for w in warnings if w.startswith("maas:models[0] (ext/c).external.")] == [
        *internal_endpoint_warnings(load_config(raw)),
        *plaintext_endpoint_warnings(load_config(raw)),
    ]
