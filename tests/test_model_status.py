"""MaaSModelRef status from observation: every phase rule of seed 004 / upstream 3.4, the endpoint rules of 3.3."""

from __future__ import annotations

import pytest

from maas.crdschema import validate_all
from maas.observe import Observed, Scope
from maas.observe.views import LiveInferenceService, view_of
from maas.plan.checks.selfcheck import check_plan
from maas.plan.desired import Desired, Plan, k8s_object
from maas.plan.status.model import Found, ModelFacts, llmisvc_endpoint, model_status
from tests.fake_kube import kserve_route, llm_inference_service, platform_gateway

GOVERNED = ("authPolicy", "subscription")
GRANITE = ModelFacts(
    name="granite-7b",
    namespace="llm",
    kind="LLMInferenceService",
    backend="granite-7b-instruct",
    route_name="granite-7b-instruct-kserve-route",
    route_namespace="llm",
    gateway_name="maas-default-gateway",
    gateway_namespace="openshift-ingress",
    governed_by=GOVERNED,
)
GPT = ModelFacts(
    name="gpt-4o",
    namespace="llm",
    kind="ExternalModel",
    backend="gpt-4o",
    route_name="maas-gpt-4o",
    route_namespace="llm",
    gateway_name="maas-default-gateway",
    gateway_namespace="openshift-ingress",
    governed_by=GOVERNED,
)
LISTED = [
    Scope("LLMInferenceService", "llm"),
    Scope("HTTPRoute", "llm"),
    Scope("Gateway", "openshift-ingress"),
]


def cluster(*objects) -> Observed:
    """A snapshot that listed the model namespace and the gateway namespace: what it lacks is absent."""
    return Observed.of(objects, listed=LISTED)


def external_route(accepted: bool = True) -> dict:
    route = kserve_route("llm", "gpt-4o", accepted=accepted)
    route["metadata"] = {"name": "maas-gpt-4o", "namespace": "llm"}
    return route


def conditions(status) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


READY_CLUSTER = (
    llm_inference_service("llm", "granite-7b-instruct", ready=True),
    kserve_route("llm", "granite-7b-instruct"),
)


def test_fixtures_are_objects_the_real_crds_accept():
    objects = [*READY_CLUSTER, platform_gateway(), external_route(), llm_inference_service("llm", "x", ready=False)]
    assert validate_all(objects) == []


# ------------------------------------------------------------------------------------------------- phases


def test_governed_model_with_ready_backend_and_accepted_route_is_ready():
    status = model_status(GRANITE, cluster(*READY_CLUSTER, platform_gateway()))
    assert (status["phase"], status["endpoint"]) == ("Ready", "https://maas.apps.example.com/llm/granite-7b-instruct")
    assert conditions(status) == {
        "GovernanceAttached": ("True", "GovernancePaired"),
        "Ready": ("True", "Reconciled"),
        "RuntimeReady": ("True", "RuntimeHealthy"),
    }
    assert status["httpRouteName"] == "granite-7b-instruct-kserve-route"
    assert (status["httpRouteGatewayNamespace"], status["httpRouteGatewayName"]) == (
        "openshift-ingress",
        "maas-default-gateway",
    )
    assert status["httpRouteHostnames"] == ["maas.apps.example.com"]
    assert status["resolvedModelAlias"] == "publishers/llm/models/granite-7b-instruct"


def test_missing_llminferenceservice_is_failed_with_no_endpoint():
    """The mistyped `modelRef.name` of the issue: the backend does not exist."""
    status = model_status(GRANITE, cluster(kserve_route("llm", "granite-7b-instruct")))
    assert (status["phase"], status["endpoint"]) == ("Failed", "")
    assert conditions(status)["Ready"] == ("False", "ReconcileFailed")
    assert "LLMInferenceService llm/granite-7b-instruct not found" in status["conditions"][1]["message"]


def test_backend_not_ready_is_pending_and_says_why():
    objects = (
        llm_inference_service("llm", "granite-7b-instruct", ready=False),
        kserve_route("llm", "granite-7b-instruct"),
    )
    status = model_status(GRANITE, cluster(*objects))
    assert (status["phase"], status["endpoint"]) == ("Pending", "")
    assert conditions(status)["Ready"] == ("False", "BackendNotReady")
    assert conditions(status)["RuntimeReady"] == ("False", "RuntimeHealthFailure")
    assert "Deployment does not have minimum availability" in status["conditions"][2]["message"]


def test_missing_route_is_pending_with_route_fields_cleared():
    """KServe still deploying: upstream `TestMaaSModelRefReconciler_HTTPRouteRaceCondition`."""
    status = model_status(GRANITE, cluster(llm_inference_service("llm", "granite-7b-instruct", ready=True)))
    assert (status["phase"], status["endpoint"]) == ("Pending", "")
    assert conditions(status)["Ready"] == ("False", "BackendNotReady")
    assert not any(key.startswith("httpRoute") for key in status)


def test_route_not_accepted_by_the_gateway_is_pending():
    objects = (
        llm_inference_service("llm", "granite-7b-instruct", ready=True),
        kserve_route("llm", "granite-7b-instruct", accepted=False),
    )
    status = model_status(GRANITE, cluster(*objects))
    assert status["phase"] == "Pending"
    assert "not yet accepted by gateway openshift-ingress/maas-default-gateway" in status["conditions"][1]["message"]


def test_route_on_another_gateway_is_failed():
    route = kserve_route("llm", "granite-7b-instruct")
    route["spec"]["parentRefs"] = [{"name": "other-gateway", "namespace": "other"}]
    status = model_status(GRANITE, cluster(llm_inference_service("llm", "granite-7b-instruct", ready=True), route))
    assert (status["phase"], status["endpoint"]) == ("Failed", "")
    assert (
        "does not reference gateway openshift-ingress/maas-default-gateway (found: other/other-gateway)"
        in (status["conditions"][1]["message"])
    )
    assert (status["httpRouteGatewayNamespace"], status["httpRouteGatewayName"]) == ("other", "other-gateway")


@pytest.mark.parametrize("governed_by", [(), ("subscription",), ("authPolicy",)])
def test_ungoverned_healthy_model_is_pending(governed_by):
    """Upstream vector 28: no pairing + healthy -> Pending, GovernanceAttached False, RuntimeReady True."""
    facts = ModelFacts(**{**GRANITE.__dict__, "governed_by": governed_by})
    status = model_status(facts, cluster(*READY_CLUSTER))
    assert (status["phase"], status["endpoint"]) == ("Pending", "")
    assert conditions(status) == {
        "GovernanceAttached": ("False", "NoPairingFound"),
        "Ready": ("False", "BackendNotReady"),
        "RuntimeReady": ("True", "RuntimeHealthy"),
    }


def test_external_model_is_ready_once_its_route_is_accepted():
    status = model_status(GPT, cluster(external_route(), platform_gateway()))
    assert (status["phase"], status["endpoint"], status["resolvedModelAlias"]) == (
        "Ready",
        "https://maas.apps.example.com",
        "gpt-4o",
    )


def test_external_model_before_its_route_exists_is_pending():
    """The route is created in the same `pulumi up`: the status writer judges it again at write time."""
    assert model_status(GPT, cluster(platform_gateway()))["phase"] == "Pending"


# ---------------------------------------------------------------------------------------------- override


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        (None, "https://maas.apps.example.com/llm/granite-7b-instruct"),
        ("https://override.example.com/model", "https://override.example.com/model"),
    ],
)
def test_endpoint_override_replaces_the_discovered_endpoint_only_when_ready(override, expected):
    """Upstream `TestReconcile_EndpointOverride`; in every other phase the endpoint is cleared."""
    facts = ModelFacts(**{**GRANITE.__dict__, "endpoint_override": override})
    assert model_status(facts, cluster(*READY_CLUSTER))["endpoint"] == expected
    not_ready = (llm_inference_service("llm", "granite-7b-instruct", ready=False), READY_CLUSTER[1])
    assert model_status(facts, cluster(*not_ready))["endpoint"] == ""


# ---------------------------------------------------------------------------------- unknown: intended state


def test_nothing_observed_publishes_the_intended_status_marked_not_observed():
    status = model_status(GRANITE, Observed.nothing())
    assert status["phase"] == "Ready"
    assert conditions(status)["RuntimeReady"] == ("Unknown", "NotObserved")


def test_a_snapshot_that_did_not_look_at_the_model_never_invents_absence():
    """Only the gateway namespace was listed: the model's backend and route are unknown, not absent."""
    observed = Observed.of([platform_gateway()], listed=[Scope("Gateway", "openshift-ingress")])
    assert conditions(model_status(GRANITE, observed))["RuntimeReady"] == ("Unknown", "NotObserved")


def test_a_kind_that_is_not_installed_makes_the_backend_absent():
    observed = Observed.of(
        [kserve_route("llm", "granite-7b-instruct")],
        listed=[Scope("HTTPRoute", "llm")],
        crds={"LLMInferenceService": False},
    )
    assert model_status(GRANITE, observed)["phase"] == "Failed"


# ----------------------------------------------------------------------------- endpoint: upstream 3.3 vectors


def isvc(*addresses, url=None) -> dict:
    status = {"addresses": [dict(zip(("name", "url"), a, strict=True)) for a in addresses]}
    if url is not None:
        status["url"] = url
    return {"status": status}


@pytest.mark.parametrize(
    ("backend", "hostnames", "expected"),
    [
        # the route's hostname picks the matching gateway address
        (
            isvc(
                ("gateway-external", "https://wrong.example.com/test-model"),
                ("gateway-external", "https://correct-gateway.example.com/test-model"),
            ),
            ["correct-gateway.example.com"],
            "https://correct-gateway.example.com/test-model",
        ),
        # model routing is preferred over the plain external address
        (
            isvc(
                ("gateway-external", "https://maas.example.com/test-model"),
                ("gateway-external-model-routing", "https://maas.example.com/v1/chat/completions"),
            ),
            ["maas.example.com"],
            "https://maas.example.com/v1/chat/completions",
        ),
        # https over http
        (
            isvc(
                ("gateway-external", "http://maas.example.com/test-model"),
                ("gateway-external", "https://maas.example.com/test-model"),
            ),
            [],
            "https://maas.example.com/test-model",
        ),
        # host match is case-insensitive and the URL is returned as reported
        (
            isvc(("gateway-external", "https://MaaS.Example.COM/test-model")),
            ["maas.example.com"],
            "https://MaaS.Example.COM/test-model",
        ),
        # no address on the route's hostnames
        (isvc(("gateway-external", "https://other.example.com/test-model")), ["maas.example.com"], ""),
        # no hostnames: the cluster-local address is all there is
        (
            isvc(("cluster-local", "http://test-model.default.svc.cluster.local")),
            [],
            "http://test-model.default.svc.cluster.local",
        ),
        # no hostnames: a base-path address before status.url, status.url before a path address
        (isvc(("a", "https://x.example.com/p"), ("b", "https://y.example.com/")), [], "https://y.example.com/"),
        (isvc(("a", "https://x.example.com/p"), url="https://u.example.com"), [], "https://u.example.com"),
        (isvc(("a", "https://x.example.com/p"), url="https://u.example.com/p"), [], "https://x.example.com/p"),
        (isvc(url="https://u.example.com/p"), [], "https://u.example.com/p"),
    ],
)
def test_llminferenceservice_endpoint_preference(backend, hostnames, expected):
    found = llmisvc_endpoint(view_of(LiveInferenceService, backend), hostnames)
    assert (found.url if found else "") == expected


def test_the_endpoint_found_names_the_field_it_was_read_from():
    """The field goes into the reason when the URL is refused, so it is its position in the list as written."""
    backend = isvc(("cluster-local", "http://x.svc"), ("gateway-external", "https://maas.example.com/m"))
    assert llmisvc_endpoint(view_of(LiveInferenceService, backend), ["maas.example.com"]) == Found(
        "https://maas.example.com/m", "status.addresses[1].url"
    )
    served = view_of(LiveInferenceService, isvc(url="https://u.example.com"))
    assert llmisvc_endpoint(served, []) == Found("https://u.example.com", "status.url")


def test_without_backend_urls_the_endpoint_is_the_route_host_then_the_gateway():
    backend = llm_inference_service("llm", "granite-7b-instruct", ready=True)
    backend["status"]["addresses"] = []
    del backend["status"]["url"]
    route = kserve_route("llm", "granite-7b-instruct")
    assert model_status(GRANITE, cluster(backend, route))["endpoint"] == "https://maas.apps.example.com/granite-7b"
    del route["spec"]["hostnames"]
    gateway = platform_gateway()
    assert (
        model_status(GRANITE, cluster(backend, route, gateway))["endpoint"]
        == "https://maas.apps.example.com/granite-7b"
    )
    del gateway["spec"]["listeners"][0]["hostname"]
    assert model_status(GRANITE, cluster(backend, route, gateway))["endpoint"] == (
        "https://a1b2c3.elb.us-east-1.amazonaws.com/granite-7b"
    )


def test_wildcard_hostnames_are_passed_over_for_a_host_a_client_can_call():
    """`https://*.apps.example.com/...` names no host: the next candidate of upstream's order is used, as for the
    intended endpoint (it used to be published as it was)."""
    backend = llm_inference_service("llm", "granite-7b-instruct", ready=True)
    backend["status"]["addresses"] = []
    del backend["status"]["url"]
    route = kserve_route("llm", "granite-7b-instruct")
    route["spec"]["hostnames"] = ["*.apps.example.com"]
    gateway = platform_gateway()
    gateway["spec"]["listeners"][0]["hostname"] = "*.apps.example.com"
    assert model_status(GRANITE, cluster(backend, route, gateway))["endpoint"] == (
        "https://a1b2c3.elb.us-east-1.amazonaws.com/granite-7b"
    )


def only_gateway_address(kind: str, value: str):
    """A ready backend that reports no URL, a route without hostnames, and a Gateway whose one address is
    `value`: the endpoint can only come from that address."""
    backend = llm_inference_service("llm", "granite-7b-instruct", ready=True)
    backend["status"]["addresses"] = []
    del backend["status"]["url"]
    route = kserve_route("llm", "granite-7b-instruct")
    del route["spec"]["hostnames"]
    gateway = platform_gateway()
    del gateway["spec"]["listeners"][0]["hostname"]
    gateway["status"]["addresses"] = [{"type": kind, "value": value}]
    return cluster(backend, route, gateway)


def test_an_ipv6_gateway_address_is_bracketed_in_the_endpoint():
    assert (
        model_status(GRANITE, only_gateway_address("IPAddress", "2001:db8::1"))["endpoint"]
        == "https://[2001:db8::1]/granite-7b"
    )


# ------------------------------------------------------------------------------- endpoint: refused live URLs


def status_issues(status: dict) -> list:
    """What the API server's status schema says of `status` (the self-check every `pulumi up` runs)."""
    write = k8s_object("maas.opendatahub.io/v1alpha1", "MaaSModelRef", "granite-7b", "llm", status=status)
    plan = Plan()
    plan.add("Model", "llm/granite-7b", Desired(write, subresource="status"))
    return check_plan(plan)


def backend_reporting(url: str, field: str) -> tuple[dict, dict]:
    """A ready backend whose only URL is `url` in `status.url` or its first address (`field`), and its route
    without hostnames (legacy: any URL qualifies)."""
    backend = llm_inference_service("llm", "granite-7b-instruct", ready=True)
    del backend["status"]["url"]
    if field == "url":
        backend["status"]["url"] = url
        backend["status"]["addresses"] = []
    else:
        backend["status"]["addresses"] = [{"name": "gateway-external", "url": url}]
    route = kserve_route("llm", "granite-7b-instruct")
    del route["spec"]["hostnames"]
    return backend, route


LIVE = "LLMInferenceService llm/granite-7b-instruct"


@pytest.mark.parametrize(
    ("url", "field", "reason"),
    [
        (
            "javascript:alert(1)",
            "url",
            "status.url refused as the endpoint: 'javascript:alert(1)' is not an absolute http or https URL",
        ),
        (
            "https://maas.example.com/\r\nSet-Cookie: x=1",
            "addresses",
            "status.addresses[0].url refused as the endpoint: 'https://maas.example.com/\\r\\nSet-Cookie: x=1' contains the control character U+000D",
        ),
        (
            "https://maas.example.com/\tx",
            "url",
            "'https://maas.example.com/\\tx' contains the control character U+0009",
        ),
        (
            "https://maas.example.com/\x7f",
            "url",
            "'https://maas.example.com/\\x7f' contains the control character U+007F",
        ),
        (
            "https://maas.example.com/\x85",
            "url",
            "'https://maas.example.com/\\x85' contains the control character U+0085",
        ),
        ("https://maas.example.com/a b", "url", "'https://maas.example.com/a b' contains whitespace (U+0020)"),
        (
            "https://user:pass@maas.example.com/",
            "url",
            "'https://user:pass@maas.example.com/' carries user information (user@ or user:password@)",
        ),
        (
            "https://maas.example.com/" + "a" * 2030,
            "url",
            "status.url refused as the endpoint: 'https://maas.example.com/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa... (2055 characters)' is longer than 2048 characters",
        ),
        ("https:///granite", "url", "'https:///granite' has no host"),
    ],
)
def test_a_backend_url_a_client_cannot_safely_call_fails_the_model_naming_its_field(url, field, reason):
    """Issue 17: KServe's status (or whoever may patch it) is not trusted with what maas-api hands to clients."""
    status = model_status(GRANITE, cluster(*backend_reporting(url, field), platform_gateway()))
    message = status["conditions"][1]["message"]
    assert (status["phase"], status["endpoint"], conditions(status)["Ready"]) == (
        "Failed",
        "",
        ("False", "ReconcileFailed"),
    )
    assert message.startswith(LIVE) and reason in message
    assert message.endswith("or set the model's endpointOverride")
    assert not any(ch in message for ch in "\r\n\t\x7f\x85")
    assert conditions(status)["RuntimeReady"] == ("False", "RuntimeHealthFailure")
    assert status_issues(status) == []


def test_a_backend_url_on_a_host_the_route_serves_is_refused_even_though_python_would_strip_its_line_break():
    """urllib drops CR, LF and TAB before parsing, so the URL matches the route's host; it is refused as written."""
    backend = llm_inference_service("llm", "granite-7b-instruct", ready=True)
    backend["status"]["addresses"][0]["url"] = "https://maas.apps.example.com/llm/granite\r\nX-Injected: 1"
    status = model_status(GRANITE, cluster(backend, kserve_route("llm", "granite-7b-instruct")))
    assert status["phase"] == "Failed"
    assert f"{LIVE} status.addresses[0].url refused as the endpoint" in status["conditions"][1]["message"]


def test_a_refused_backend_url_does_not_matter_when_the_endpoint_override_replaces_it():
    """Only what is published is judged: the override (validated with the configuration) is the endpoint."""
    facts = ModelFacts(**{**GRANITE.__dict__, "endpoint_override": "https://override.example.com/model"})
    status = model_status(facts, cluster(*backend_reporting("javascript:alert(1)", "url")))
    assert (status["phase"], status["endpoint"]) == ("Ready", "https://override.example.com/model")


def test_a_gateway_address_that_makes_no_url_fails_the_model_naming_the_gateway_field():
    status = model_status(GRANITE, only_gateway_address("Hostname", "lb.example.com/\nx"))
    assert status["phase"] == "Failed"
    assert status["conditions"][1]["message"].startswith(
        "Gateway openshift-ingress/maas-default-gateway status.addresses[0].value refused as the endpoint: "
        "'https://lb.example.com/\\nx/granite-7b' contains the control character U+000A"
    )


def test_a_route_hostname_that_is_no_hostname_fails_the_model_and_is_not_published():
    """The API server enforces the Gateway API hostname rule on live routes; a snapshot file may not."""
    route = kserve_route("llm", "granite-7b-instruct")
    route["spec"]["hostnames"] = ["maas.apps.example.com", "evil.example.com\r\nX: 1"]
    status = model_status(GRANITE, cluster(READY_CLUSTER[0], route))
    assert (status["phase"], status["endpoint"]) == ("Failed", "")
    assert status["conditions"][1]["message"] == (
        "HTTPRoute llm/granite-7b-instruct-kserve-route spec.hostnames[1] refused: 'evil.example.com\\r\\nX: 1' is "
        "not a Gateway API hostname (a lowercase DNS name of at most 253 characters, optionally '*.' first)"
    )
    assert status["httpRouteHostnames"] == ["maas.apps.example.com"]
    assert status_issues(status) == []
