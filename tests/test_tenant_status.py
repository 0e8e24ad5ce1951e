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


@pytest.mark.parametrize("available", [True, False])
def test_every_tenant_status_passes_the_crd_status_schema(available):
    status = tenant_status(FACTS, observed(db_secret(), maas_api_deployment("maas-api", available=available)))
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
    assert validate(body) == []


def test_a_blocked_migration_is_named_even_when_the_tenant_is_not_ready_for_another_reason():
    facts = TenantFacts(**{**FACTS.__dict__, "migration_blocked": "IPP-to-Praxis migration blocked: x. set force"})
    status = tenant_status(facts, observed(db_secret(), maas_api_deployment("maas-api", available=False)))
    ready = status["conditions"][0]
    assert (ready["status"], ready["reason"]) == ("False", "DeploymentsNotReady")
    assert ready["message"].endswith("; IPP-to-Praxis migration blocked: x. set force")
