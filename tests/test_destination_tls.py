"""How the gateway checks the certificates of the backends it re-encrypts to (issue 17): maas-api against the
OpenShift service CA where that CA is known, and a note naming each DestinationRule that still skips it (a
note, not a warning: no setting of the program can change it, and a warning at every preview trains reviewers to
ignore warnings)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from maas.config import load_config, raw_from_stack_file
from maas.observe import Observed
from maas.plan.tenants.platform import tenant_outputs, tenant_platform
from maas.tools.render import render
from tests.conftest import DEV_STACK, objects_of

XKS_STACK = Path(__file__).parent / "stacks" / "Pulumi.xks-coexist.yaml"
SKIP = {"mode": "SIMPLE", "insecureSkipVerify": True}
TWO_TENANTS = {"tenants": [{"name": "models-as-a-service"}, {"name": "x"}]}
XKS = {**TWO_TENANTS, "platform": {"flavor": "xks"}}


def built(raw: dict, tenant_name: str):
    config = load_config(copy.deepcopy(raw))
    tenant = next(t for t in config.tenants if t.name == tenant_name)
    return config, tenant, tenant_platform(config, tenant, Observed.nothing())


def rule(raw: dict, tenant_name: str, name: str) -> dict:
    _, _, platform = built(raw, tenant_name)
    return next(o.body for o in platform.objects if o.kind == "DestinationRule" and o.name == name)


def maas_api_tls(raw: dict, tenant_name: str, name: str) -> dict:
    (setting,) = rule(raw, tenant_name, name)["spec"]["trafficPolicy"]["portLevelSettings"]
    assert setting["port"] == {"number": 8443}
    return setting["tls"]


def test_on_openshift_the_gateway_verifies_maas_api_against_the_service_ca_and_its_service_names():
    assert maas_api_tls(TWO_TENANTS, "x", "maas-api-backend-tls-x") == {
        "mode": "SIMPLE",
        "caCertificates": "/var/run/secrets/kubernetes.io/serviceaccount/service-ca.crt",
        "sni": "maas-api-x.odh-ai-gateway-infra.svc.cluster.local",
        "subjectAltNames": [
            "maas-api-x.odh-ai-gateway-infra.svc",
            "maas-api-x.odh-ai-gateway-infra.svc.cluster.local",
        ],
    }


def test_the_verified_names_follow_the_infra_namespace_and_the_default_tenants_name():
    raw = {**TWO_TENANTS, "platform": {"infraNamespace": "maas-infra"}}
    tls = maas_api_tls(raw, "models-as-a-service", "maas-api-backend-tls")
    assert tls["sni"] == "maas-api.maas-infra.svc.cluster.local"
    assert tls["subjectAltNames"] == ["maas-api.maas-infra.svc", "maas-api.maas-infra.svc.cluster.local"]


def test_on_openshift_no_maas_api_destination_rule_is_noted():
    _, _, platform = built(TWO_TENANTS, "x")
    assert not [w for w in platform.notes if "maas-api-backend-tls" in w]


def test_on_xks_maas_api_keeps_skip_verify_and_the_note_names_the_rule_and_what_would_verify_it():
    assert maas_api_tls(XKS, "x", "maas-api-backend-tls-x") == SKIP
    _, _, platform = built(XKS, "x")
    assert (
        "maas:tenants (x): DestinationRule openshift-ingress/maas-api-backend-tls-x skips certificate verification "
        "(insecureSkipVerify) on flavor xks: maas-api's certificate comes from the cert-manager ClusterIssuer "
        "rhai-ca-issuer, whose CA the gateway cannot read. Verifying it needs that CA as key ca.crt of a Secret in "
        "openshift-ingress for the DestinationRule to name as credentialName; no setting of this program names one "
        "yet"
    ) in platform.notes


@pytest.mark.parametrize("raw", [TWO_TENANTS, XKS], ids=["openshift", "xks"])
def test_payload_processor_rules_keep_skip_verify_with_one_note_naming_both(raw):
    assert rule(raw, "x", "payload-processing-x")["spec"]["trafficPolicy"]["tls"] == SKIP
    assert rule(raw, "x", "payload-pre-processing-x")["spec"]["trafficPolicy"]["tls"] == SKIP
    _, _, platform = built(raw, "x")
    assert [w for w in platform.notes if "payload-pre-processing" in w] == [
        "maas:tenants (x).payloadProcessing: DestinationRules openshift-ingress/payload-processing-x and "
        "openshift-ingress/payload-pre-processing-x skip certificate verification (insecureSkipVerify): the payload "
        "processor serves a self-signed certificate it generates at every start, which no CA can verify. Verifying "
        "it needs a payload-processing image that serves a mounted certificate (such as the OpenShift serving "
        "certificate of its Service); no setting of this program can provide one"
    ]


def test_tls_notes_are_shown_but_neither_warn_nor_degrade_the_tenant():
    config, tenant, platform = built(XKS, "x")
    assert len([w for w in platform.notes if "insecureSkipVerify" in w]) == 2
    assert not [w for w in platform.warnings if "insecureSkipVerify" in w]
    assert platform.degraded == []
    assert tenant_outputs(config, tenant, platform)["phase"] == "Active"


def test_a_removed_tenant_notes_no_destination_rule():
    raw = {"tenants": [{"name": "models-as-a-service"}, {"name": "x", "managementState": "Removed"}]}
    assert not [w for w in render(raw).plan.notes if "(x)" in w and "insecureSkipVerify" in w]


@pytest.mark.parametrize("stack", [DEV_STACK, XKS_STACK], ids=["dev", "xks-coexist"])
def test_no_rendered_destination_rule_combines_skip_verify_with_a_ca_or_names(stack):
    """Istio refuses `insecureSkipVerify` together with caCertificates, credentialName or subjectAltNames."""
    raw, _ = raw_from_stack_file(stack)
    for key, body in objects_of(render(raw), "DestinationRule").items():
        settings = [body["spec"]["trafficPolicy"]]
        settings += body["spec"]["trafficPolicy"].get("portLevelSettings", [])
        for tls in (s["tls"] for s in settings if "tls" in s):
            if tls.get("insecureSkipVerify"):
                assert not {"caCertificates", "credentialName", "subjectAltNames"} & set(tls), key
