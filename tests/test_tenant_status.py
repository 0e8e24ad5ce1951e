"""MaasTenantConfig status (seed 000, upstream-platform.md §3.3 decision table): one named test per row we judge."""

from __future__ import annotations

import pytest

from maas.crdschema import validate
from maas.observe import ObjectRef, Observed
from maas.plan.status.tenant import TenantFacts, observation_needed, tenant_status
from tests.fake_kube import db_secret, maas_api_deployment

FACTS = TenantFacts(
    tenant="models-as-a-service",
    infra_namespace="odh-ai-gateway-infra",
    deployment="maas-api",
    crd_kinds=("AuthPolicy", "TokenRateLimitPolicy"),
)
GOT = observation_needed(FACTS)


def observed(*objects, crds=None) -> Observed:
    return Observed.of(objects, got=GOT, crds=crds or {"AuthPolicy": True, "TokenRateLimitPolicy": True})


def conditions(status) -> dict[str, tuple[str, str]]:
    return {c["type"]: (c["status"], c["reason"]) for c in status["conditions"]}


def test_it_reads_the_deployment_the_secret_and_the_crds_of_what_it_writes():
    assert (
        ObjectRef("Deployment", "odh-ai-gateway-infra", "maas-api"),
        ObjectRef("Secret", "odh-ai-gateway-infra", "maas-db-config"),
        ObjectRef("CustomResourceDefinition", None, "authpolicies.kuadrant.io"),
        ObjectRef("CustomResourceDefinition", None, "tokenratelimitpolicies.kuadrant.io"),
    ) == GOT


def test_available_maas_api_is_active():
    status = tenant_status(FACTS, observed(db_secret(), maas_api_deployment("maas-api", available=True)))
    assert status["phase"] == "Active" and status["infraNamespace"] == "odh-ai-gateway-infra"
    assert conditions(status) == {
        "Ready": ("True", "Reconciled"),
        "DependenciesAvailable": ("True", "DependenciesMet"),
        "MaaSPrerequisitesAvailable": ("True", "PrerequisitesMet"),
        "DeploymentsAvailable": ("True", "DeploymentsReady"),
        "Degraded": ("False", "NoWarnings"),
    }


def test_warnings_make_an_available_tenant_degraded():
    facts = TenantFacts(
        **{**FACTS.__dict__, "warnings": ("replicas ignored: autoscaling is on", "Praxis is not deployed")}
    )
    status = tenant_status(facts, observed(db_secret(), maas_api_deployment("maas-api", available=True)))
    assert status["phase"] == "Degraded"
    assert conditions(status)["Degraded"] == ("True", "MultipleWarnings")
    assert status["conditions"][-1]["message"] == "replicas ignored: autoscaling is on; Praxis is not deployed"


def test_maas_api_not_available_yet_is_pending():
    status = tenant_status(FACTS, observed(db_secret(), maas_api_deployment("maas-api", available=False)))
    assert status["phase"] == "Pending"
    assert conditions(status)["Ready"] == ("False", "DeploymentsNotReady")
    assert "has 0 of 1 replicas available" in status["conditions"][0]["message"]


def test_missing_database_secret_is_failed():
    status = tenant_status(FACTS, observed(maas_api_deployment("maas-api", available=True)))
    assert status["phase"] == "Failed"
    assert conditions(status)["MaaSPrerequisitesAvailable"] == ("False", "PrerequisitesMissing")
    assert conditions(status)["Degraded"] == ("True", "PrerequisitesMissing")


def test_a_missing_dependency_crd_is_pending():
    state = observed(
        db_secret(),
        maas_api_deployment("maas-api", available=True),
        crds={"AuthPolicy": False, "TokenRateLimitPolicy": True},
    )
    status = tenant_status(FACTS, state)
    assert status["phase"] == "Pending"
    assert conditions(status)["DependenciesAvailable"] == ("False", "DependencyMissing")
    assert "authpolicies.kuadrant.io" in status["conditions"][0]["message"]


def test_nothing_observed_is_the_intended_status_marked_not_observed():
    status = tenant_status(FACTS, Observed.nothing())
    assert status["phase"] == "Active"
    assert conditions(status)["DeploymentsAvailable"] == ("Unknown", "NotObserved")


def status_problems(status: dict) -> list:
    """What the MaasTenantConfig status schema says of `status`, written as the status writer stamps it."""
    stamped = {
        **status,
        "conditions": [{**c, "lastTransitionTime": "2026-12-01T00:00:00Z"} for c in status["conditions"]],
    }
    body = {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaasTenantConfig",
        "metadata": {"name": "default-tenant", "namespace": "models-as-a-service"},
        "spec": {},
        "status": stamped,
    }
    return validate(body)


@pytest.mark.parametrize("available", [True, False])
def test_every_tenant_status_passes_the_crd_status_schema(available):
    status = tenant_status(FACTS, observed(db_secret(), maas_api_deployment("maas-api", available=available)))
    assert status_problems(status) == []


def test_a_blocked_migration_is_named_even_when_the_tenant_is_not_ready_for_another_reason():
    facts = TenantFacts(**{**FACTS.__dict__, "migration_blocked": "IPP-to-Praxis migration blocked: x. set force"})
    status = tenant_status(facts, observed(db_secret(), maas_api_deployment("maas-api", available=False)))
    ready = status["conditions"][0]
    assert (ready["status"], ready["reason"]) == ("False", "DeploymentsNotReady")
    assert ready["message"].endswith("; IPP-to-Praxis migration blocked: x. set force")


# --------------------------------------------------------------------------- the tenant's Gateway (issue 18, row 2)

ON_GATEWAY = TenantFacts(**{**FACTS.__dict__, "gateway_namespace": "openshift-ingress", "gateway_name": "maas-gw"})


def gateway(*conditions_: dict) -> dict:
    return {
        "apiVersion": "gateway.networking.k8s.io/v1",
        "kind": "Gateway",
        "metadata": {"name": "maas-gw", "namespace": "openshift-ingress"},
        "spec": {"gatewayClassName": "openshift-default", "listeners": []},
        "status": {"conditions": list(conditions_)},
    }


def gateway_condition(type_: str, status: str, reason: str, message: str = "") -> dict:
    return {"type": type_, "status": status, "reason": reason, "message": message}


def on_gateway(*objects) -> Observed:
    return Observed.of(
        [db_secret(), maas_api_deployment("maas-api", available=True), *objects],
        got=observation_needed(ON_GATEWAY),
        crds={"AuthPolicy": True, "TokenRateLimitPolicy": True},
    )


def test_seed_000_a_tenant_on_a_gateway_neither_accepted_nor_programmed_is_failed_not_active():
    """Seed 000: "Failed — blocking prerequisites missing, gateway invalid, or platform apply failed." Issue 18
    row 2: with maas-api available and the Secret there, the tenant was `Active` on a Gateway its controller
    refuses."""
    refused = gateway(
        gateway_condition("Accepted", "False", "InvalidParameters", "gatewayClass openshift-default not found"),
        gateway_condition("Programmed", "False", "Invalid"),
    )
    status = tenant_status(ON_GATEWAY, on_gateway(refused))
    assert status["phase"] == "Failed"
    assert conditions(status) == {
        "Ready": ("False", "InvalidGateway"),
        "DependenciesAvailable": ("Unknown", "InvalidGateway"),
        "MaaSPrerequisitesAvailable": ("Unknown", "InvalidGateway"),
        "DeploymentsAvailable": ("Unknown", "InvalidGateway"),
        "Degraded": ("False", "InvalidGateway"),
    }
    assert status["conditions"][0]["message"] == (
        "Gateway openshift-ingress/maas-gw is neither Accepted nor Programmed (Accepted=False InvalidParameters: "
        "'gatewayClass openshift-default not found'; Programmed=False Invalid)"
    )


@pytest.mark.parametrize(
    ("conditions_", "phase"),
    [
        (
            [gateway_condition("Accepted", "True", "Accepted"), gateway_condition("Programmed", "False", "Pending")],
            "Active",
        ),
        (
            [gateway_condition("Accepted", "False", "Invalid"), gateway_condition("Programmed", "True", "Programmed")],
            "Active",
        ),
        ([gateway_condition("Accepted", "Unknown", "Pending", "Waiting for controller")], "Failed"),
        ([], "Active"),  # reports neither condition (a hand-written snapshot): not judged
    ],
)
def test_a_gateway_is_usable_when_accepted_or_programmed(conditions_, phase):
    assert tenant_status(ON_GATEWAY, on_gateway(gateway(*conditions_)))["phase"] == phase


def test_seed_000_a_tenant_whose_gateway_does_not_exist_is_failed():
    """Seed 000: "Failed — blocking prerequisites missing, gateway invalid, or platform apply failed." """
    status = tenant_status(ON_GATEWAY, on_gateway())
    assert (status["phase"], conditions(status)["Ready"]) == ("Failed", ("False", "InvalidGateway"))
    assert status["conditions"][0]["message"] == "Gateway openshift-ingress/maas-gw does not exist"


def test_the_gateway_is_judged_first_and_read_again_at_write_time():
    """Upstream's order: the Gateway before the CRDs and the Secret; the writer re-reads it (observation_needed)."""
    assert ObjectRef("Gateway", "openshift-ingress", "maas-gw") in observation_needed(ON_GATEWAY)
    no_secret = Observed.of(
        [maas_api_deployment("maas-api", available=True)],
        got=observation_needed(ON_GATEWAY),
        crds={"AuthPolicy": False},
    )
    assert conditions(tenant_status(ON_GATEWAY, no_secret))["Ready"] == ("False", "InvalidGateway")
    unknown_gateway = Observed.of(
        [db_secret(), maas_api_deployment("maas-api", available=True)],
        got=GOT,
        crds={"AuthPolicy": True, "TokenRateLimitPolicy": True},
    )
    assert tenant_status(ON_GATEWAY, unknown_gateway)["phase"] == "Active"  # nobody looked: not judged


def test_facts_without_a_gateway_as_older_states_hold_them_are_not_judged_on_it():
    assert TenantFacts.from_inputs(FACTS.to_inputs()) == FACTS and FACTS.gateway_name == ""


def test_a_hostile_gateway_condition_stays_one_line_and_the_failed_status_passes_the_status_schema():
    hostile = gateway(gateway_condition("Accepted", "False\n", "Bad\nReason", "x\n  decision: allowed " + "y" * 5000))
    status = tenant_status(ON_GATEWAY, on_gateway(hostile))
    message = status["conditions"][0]["message"]
    assert "\n" not in message and len(message) < 600 and "decision: allowed" in message
    assert status_problems(status) == []
