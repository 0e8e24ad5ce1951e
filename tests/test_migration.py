"""The IPP → Praxis migration (seed 002, upstream-platform.md §10.2): one named test per row and override of the
decision table, with the live plugins ConfigMap as an observed object, and the rendered outcome."""

from __future__ import annotations

import json

import pytest
import yaml

from maas.config import load_config
from maas.observe import Lookup, ObjectRef, Observed
from maas.plan.status.tenant import TenantFacts, tenant_status
from maas.plan.tenants.migration import (
    MIGRATED_ANNOTATION,
    PURE_DEFAULT,
    RESPONSE_DEFAULT,
    compatible,
    fingerprint,
    migration_decision,
)
from maas.plan.tenants.payload import IPP_CONFIG, PLUGINS_DEFAULT, payload_processing
from maas.tools.render import render
from tests.conftest import objects_of
from tests.fake_kube import db_secret, maas_api_deployment

GW_NS = "openshift-ingress"
PLUGINS = "payload-processing-plugins-x"
BACKUP = f"kubectl get configmap {PLUGINS} -n {GW_NS} -o yaml > plugins-backup.yaml"
RESPONSE = {
    **PLUGINS_DEFAULT,
    IPP_CONFIG: PLUGINS_DEFAULT[IPP_CONFIG].replace(
        "    response: []\n", "    response:\n    - pluginRef: api-translation\n"
    ),
}
ONE_BYTE = {
    **PLUGINS_DEFAULT,
    IPP_CONFIG: PLUGINS_DEFAULT[IPP_CONFIG].replace("apikey-injection\n", "apikey-injectiom\n"),
}
IPP_OBJECTS = {
    ("Deployment", f"{GW_NS}/payload-processing-x"),
    ("Deployment", f"{GW_NS}/payload-pre-processing-x"),
    ("Service", f"{GW_NS}/payload-processing-x"),
    ("Service", f"{GW_NS}/payload-pre-processing-x"),
    ("DestinationRule", f"{GW_NS}/payload-processing-x"),
    ("DestinationRule", f"{GW_NS}/payload-pre-processing-x"),
    ("EnvoyFilter", f"{GW_NS}/payload-processing-x"),
    ("ServiceAccount", f"{GW_NS}/payload-processing-x"),
    ("NetworkPolicy", f"{GW_NS}/payload-processing-x"),
    ("ConfigMap", f"{GW_NS}/{PLUGINS}"),
    ("ClusterRoleBinding", "payload-processing-reader-x"),
}
# IPP's read access to the credential Secrets of the tenant's ExternalModels (all of them in x-models here).
CREDENTIAL_READERS = {("RoleBinding", "x-models/payload-processing-credentials-x")}


def configmap(data: dict[str, str]) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": PLUGINS, "namespace": GW_NS}, "data": data}


def present(data: dict[str, str]) -> Lookup:
    return Lookup("present", configmap(data))


ABSENT = Lookup("absent")


def external(name: str, provider: str, api_format: str = "openai-chat") -> dict:
    return {
        "name": name,
        "namespace": "x-models",
        "tenant": "x",
        "modelRef": {"kind": "ExternalModel", "name": name},
        "external": {
            "provider": provider,
            "targetModel": name,
            "endpoint": "api.example.com",
            "credentialRef": {"name": f"{name}-key"},
            "apiFormat": api_format,
        },
    }


OPENAI = external("gpt", "openai")
BEDROCK = external("titan", "bedrock")


def raw(*models: dict, **payload) -> dict:
    return {"tenants": [{"name": "x", "payloadProcessing": {"type": "praxis", **payload}}], "models": list(models)}


def decide(live: Lookup, *models: dict, tenant_config: Lookup = ABSENT, **payload):
    """`tenant_config`: the live MaasTenantConfig (absent: a tenant that never had one)."""
    config = load_config(raw(*models, **payload))
    return migration_decision(config.tenants[0], live, tenant_config, config.models, GW_NS)


# Fingerprints -------------------------------------------------------------------------------------------------


def test_the_pure_default_fingerprint_is_what_the_program_renders():
    config = load_config(raw())
    objects, _ = payload_processing(config, config.tenants[0])
    rendered = next(obj.body for obj in objects if obj.kind == "ConfigMap")
    assert fingerprint(rendered) == PURE_DEFAULT


def test_the_response_baseline_is_the_default_with_response_api_translation():
    assert fingerprint(configmap(RESPONSE)) == RESPONSE_DEFAULT


def test_fingerprints_compare_parsed_yaml_so_layout_and_comments_do_not_count():
    relaid = {key: "# edited by hand\n" + json.dumps(yaml.safe_load(value)) for key, value in PLUGINS_DEFAULT.items()}
    assert fingerprint(configmap(relaid)) == PURE_DEFAULT


def test_one_changed_byte_an_extra_key_or_unparsable_yaml_is_customized():
    assert fingerprint(configmap(ONE_BYTE)) is None
    assert fingerprint(configmap({**PLUGINS_DEFAULT, "extra.yaml": "a: 1\n"})) is None
    assert fingerprint(configmap({**PLUGINS_DEFAULT, IPP_CONFIG: "plugins: [\n"})) is None


# Compatibility ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "api_format", "qualified"),
    [
        ("openai", "openai-chat", True),
        ("anthropic", "messages", True),
        ("openai", "messages", False),
        ("anthropic", "openai-chat", False),
        ("azure-openai", "openai-chat", False),
        ("vertex", "openai-chat", False),
        ("bedrock", "openai-chat", False),
        ("custom", "messages", False),
    ],
)
def test_only_openai_chat_pass_through_and_anthropic_messages_are_qualified(provider, api_format, qualified):
    model = load_config(raw(external("m", provider, api_format))).models[0]
    assert compatible(model) is qualified


# The table, row by row ----------------------------------------------------------------------------------------


def test_pure_default_with_openai_chat_pass_through_cleans_up():
    decision = decide(present(PLUGINS_DEFAULT), OPENAI)
    assert (decision.outcome, decision.causes, decision.warnings) == ("cleanup", (), ())


def test_pure_default_with_anthropic_messages_waits_for_the_api_translation_permission():
    """Seed 002: apiTranslation stays off for a new Praxis tenant, and Anthropic translation needs it."""
    claude = external("claude", "anthropic", "messages")
    decision = decide(present(PLUGINS_DEFAULT), OPENAI, claude)
    assert decision.outcome == "blocked"
    assert decision.causes == (
        "ExternalModel x-models/claude (provider anthropic, apiFormat messages) needs Praxis's Anthropic "
        "translation, which payloadProcessing.apiTranslation.enabled: true permits; set it, or false to accept the "
        "compatibility loss",
    )
    allowed = decide(present(PLUGINS_DEFAULT), OPENAI, claude, apiTranslation={"enabled": True})
    assert (allowed.outcome, allowed.warnings) == ("cleanup", ())


def test_pure_default_with_another_active_binding_is_blocked():
    decision = decide(present(PLUGINS_DEFAULT), OPENAI, external("azure", "azure-openai"))
    assert decision.outcome == "blocked"
    assert decision.causes == (
        "ExternalModel x-models/azure (provider azure-openai, apiFormat openai-chat) is not qualified for Praxis "
        "(only openai/openai-chat and anthropic/messages are); set payloadProcessing.apiTranslation.enabled: false "
        "to accept the compatibility loss",
    )


def test_response_baseline_with_api_translation_enabled_cleans_up():
    decision = decide(present(RESPONSE), OPENAI, apiTranslation={"enabled": True})
    assert (decision.outcome, decision.warnings) == ("cleanup", ())


def test_response_baseline_with_the_field_set_still_checks_compatibility():
    decision = decide(present(RESPONSE), external("gemini", "vertex"), apiTranslation={"enabled": True})
    assert decision.outcome == "blocked" and "ExternalModel x-models/gemini (provider vertex" in decision.causes[0]


@pytest.mark.parametrize("baseline", [PLUGINS_DEFAULT, RESPONSE], ids=["pure-default", "response"])
def test_explicit_false_on_a_recognised_baseline_accepts_the_compatibility_loss(baseline):
    decision = decide(present(baseline), OPENAI, BEDROCK, apiTranslation={"enabled": False})
    assert decision.outcome == "cleanup"
    loss = (
        (
            f"maas:tenants (x).payloadProcessing: accepted loss: ConfigMap {GW_NS}/{PLUGINS} is {RESPONSE_DEFAULT}, "
            "and with apiTranslation.enabled: false IPP's response translation is not carried over to Praxis",
        )
        if baseline == RESPONSE
        else ()
    )
    assert decision.warnings == (
        *loss,
        "maas:tenants (x).payloadProcessing: accepted compatibility risk: ExternalModel x-models/titan (provider "
        "bedrock, apiFormat openai-chat) is not qualified for Praxis and stays active; review and test it",
    )


def test_one_changed_byte_blocks_the_migration():
    decision = decide(present(ONE_BYTE), OPENAI)
    assert decision.outcome == "blocked"
    assert decision.causes == (
        f"ConfigMap {GW_NS}/{PLUGINS} is neither {PURE_DEFAULT} nor {RESPONSE_DEFAULT}; the program does not infer "
        "equivalent Praxis behaviour",
    )


def test_explicit_false_does_not_bypass_the_fingerprint_check():
    decision = decide(present(ONE_BYTE), BEDROCK, apiTranslation={"enabled": False})
    assert decision.outcome == "blocked" and len(decision.causes) == 1 and "is neither" in decision.causes[0]


def test_force_bypasses_the_fingerprint_with_a_parity_warning_and_the_backup_command():
    decision = decide(present(ONE_BYTE), OPENAI, forceMigration=True)
    assert decision.outcome == "cleanup"
    assert len(decision.warnings) == 1 and "does not establish IPP parity" in decision.warnings[0]
    assert decision.warnings[0].endswith("then remove forceMigration")
    assert decision.notes[0] == (
        f"maas:tenants (x).payloadProcessing: before the forced cleanup, back up the plugins: {BACKUP}"
    )


def test_force_accepts_unqualified_bindings_as_a_recorded_risk():
    decision = decide(present(PLUGINS_DEFAULT), BEDROCK, forceMigration=True)
    assert decision.outcome == "cleanup"
    assert (
        len(decision.warnings) == 1
        and "accepted compatibility risk: ExternalModel x-models/titan" in decision.warnings[0]
    )


def test_absent_configmap_with_qualified_bindings_has_nothing_to_migrate():
    """An absent ConfigMap has no fingerprint to check; the compatibility check still applies (see
    test_migration_seed.py for an unqualified binding)."""
    decision = decide(ABSENT, OPENAI)
    assert (decision.outcome, decision.causes, decision.warnings, decision.notes) == ("cleanup", (), (), ())


def test_the_accepted_risk_stays_after_the_cleanup_while_the_binding_is_active():
    assert len(decide(ABSENT, BEDROCK, apiTranslation={"enabled": False}).warnings) == 1
    assert decide(ABSENT, OPENAI, apiTranslation={"enabled": False}).warnings == ()


def migrated_tenant_config() -> Lookup:
    """The live MaasTenantConfig of a tenant whose one-shot cleanup already ran."""
    metadata = {"name": "default-tenant", "namespace": "ai-tenant-x", "annotations": {MIGRATED_ANNOTATION: "true"}}
    return Lookup(
        "present", {"apiVersion": "maas.opendatahub.io/v1alpha1", "kind": "MaasTenantConfig", "metadata": metadata}
    )


def test_002_a_forced_cleanups_parity_warning_clears_when_no_active_external_model_needs_the_legacy_transform():
    """Seed 002: "MaaS records an accepted risk on MaasTenantConfig and keeps it in the Degraded condition after
    the one-shot cleanup while affected provider bindings remain active. The warning clears when no active
    ExternalModel needs the unsupported legacy transform."

    After the cleanup, force still set: with only a qualified binding nothing warns (it used to warn while force was
    set); with an unqualified Bedrock binding active, its accepted risk and the parity warning stay."""
    done = migrated_tenant_config()
    assert decide(ABSENT, OPENAI, tenant_config=done, forceMigration=True).warnings == ()
    warnings = decide(ABSENT, OPENAI, BEDROCK, tenant_config=done, forceMigration=True).warnings
    assert [
        ("accepted compatibility risk: ExternalModel x-models/titan" in w, "IPP parity" in w) for w in warnings
    ] == [
        (True, False),
        (False, True),
    ]


def test_force_on_an_absent_configmap_with_only_qualified_bindings_forces_nothing():
    """Nothing needed IPP, so nothing was overridden: the cleanup is the one without force, with no warning."""
    decision = decide(ABSENT, OPENAI, forceMigration=True)
    assert (decision.outcome, decision.warnings) == ("cleanup", ())
    forced = decide(ABSENT, BEDROCK, forceMigration=True)
    assert forced.outcome == "cleanup" and any("does not establish IPP parity" in w for w in forced.warnings)


def test_not_observed_keeps_ipp_with_one_warning():
    decision = decide(Lookup("unknown"), OPENAI)
    assert (decision.outcome, decision.causes) == ("undecided", ())
    assert decision.warnings == (
        f"maas:tenants (x).payloadProcessing: ConfigMap {GW_NS}/{PLUGINS} was not observed, so the IPP-to-Praxis "
        "migration is not decided and IPP stays; run with observation (platform.observe: true) to decide it",
    )


# Rendered outcome ---------------------------------------------------------------------------------------------


def observed(data: dict[str, str] | None, *live: dict) -> Observed:
    """The plugins ConfigMap (None: absent) and the tenant's MaasTenantConfig (`live`, else absent), both looked at."""
    objects = ([] if data is None else [configmap(data)]) + list(live)
    got = [ObjectRef("ConfigMap", GW_NS, PLUGINS), ObjectRef("MaasTenantConfig", "ai-tenant-x", "default-tenant")]
    return Observed.of(objects, got=got)


def registered(rendering) -> set[tuple[str, str]]:
    ipp = IPP_OBJECTS | CREDENTIAL_READERS
    return {(kind, key) for kind, _ in ipp for key in objects_of(rendering, kind)} & ipp


def tenant_config(rendering) -> dict:
    return objects_of(rendering, "MaasTenantConfig")["ai-tenant-x/default-tenant"]


def test_blocked_keeps_ipp_annotates_the_tenant_and_sets_ready_false():
    rendering = render(raw(OPENAI), observed=observed(ONE_BYTE))
    assert registered(rendering) == IPP_OBJECTS | CREDENTIAL_READERS
    annotations = tenant_config(rendering)["metadata"]["annotations"]
    assert annotations["maas.opendatahub.io/payload-processing-migration"] == "blocked"
    assert annotations["maas.opendatahub.io/payload-processing-type"] == "praxis"
    status = next(s for s in rendering.statuses() if s["metadata"]["namespace"] == "ai-tenant-x")["status"]
    ready = status["conditions"][0]
    assert (ready["type"], ready["status"], ready["reason"]) == ("Ready", "False", "MigrationBlocked")
    assert "payloadProcessing.forceMigration: true" in ready["message"]
    assert "maas.opendatahub.io/force-payload-processing-migration=true" in ready["message"]
    assert (
        f"maas:tenants (x).payloadProcessing: IPP-to-Praxis migration blocked: ConfigMap {GW_NS}/{PLUGINS} is "
        "neither" in " ".join(rendering.warnings)
    )


def test_the_preview_explains_a_blocked_migration_one_line_per_cause():
    rendering = render(raw(BEDROCK, external("azure", "azure-openai")), observed=observed(ONE_BYTE))
    lines = [w for w in rendering.warnings if "IPP-to-Praxis migration blocked" in w]
    assert len(lines) == 3  # the fingerprint, and each unqualified binding


def test_cleanup_unregisters_the_ipp_objects_and_keeps_the_praxis_annotation():
    rendering = render(raw(OPENAI), observed=observed(PLUGINS_DEFAULT))
    assert registered(rendering) == set()
    annotations = tenant_config(rendering)["metadata"]["annotations"]
    assert annotations["maas.opendatahub.io/payload-processing-type"] == "praxis"
    assert "maas.opendatahub.io/payload-processing-migration" not in annotations
    assert "maas.opendatahub.io/force-payload-processing-migration" not in annotations


def test_an_unmanaged_tenant_keeps_its_ipp_objects_and_a_cleanup_drops_the_ipp_replica_warning():
    unmanaged = raw(OPENAI)
    unmanaged["tenants"][0]["managementState"] = "Unmanaged"
    assert registered(render(unmanaged, observed=observed(PLUGINS_DEFAULT))) == IPP_OBJECTS | CREDENTIAL_READERS
    scaled = raw(OPENAI, replicas=5, autoscaling={"maxReplicas": 2})
    assert not [w for w in render(scaled, observed=observed(PLUGINS_DEFAULT)).warnings if "maxReplicas" in w]


def test_a_forced_cleanup_writes_the_force_annotation_and_prints_the_backup_command():
    rendering = render(raw(OPENAI, forceMigration=True), observed=observed(ONE_BYTE))
    assert registered(rendering) == set()
    annotations = tenant_config(rendering)["metadata"]["annotations"]
    assert annotations["maas.opendatahub.io/force-payload-processing-migration"] == "true"
    assert any(w.endswith(BACKUP) for w in rendering.warnings)


def test_the_force_annotation_is_never_written_for_an_ipp_tenant():
    config = {"tenants": [{"name": "x", "payloadProcessing": {"forceMigration": True}}]}
    rendering = render(config, observed=observed(ONE_BYTE))
    annotations = tenant_config(rendering)["metadata"]["annotations"]
    assert "maas.opendatahub.io/force-payload-processing-migration" not in annotations
    assert "maas.opendatahub.io/payload-processing-type" not in annotations
    assert registered(rendering) == IPP_OBJECTS


def test_a_blocked_migration_turns_ready_false_and_judges_the_rest_as_before():
    facts = TenantFacts("x", "odh-ai-gateway-infra", "maas-api-x", migration_blocked="IPP-to-Praxis migration blocked")
    refs = [
        ObjectRef("Deployment", "odh-ai-gateway-infra", "maas-api-x"),
        ObjectRef("Secret", "odh-ai-gateway-infra", "maas-db-config"),
    ]
    live = Observed.of([db_secret(), maas_api_deployment("maas-api-x", available=True)], got=refs)
    conditions = {c["type"]: (c["status"], c["reason"]) for c in tenant_status(facts, live)["conditions"]}
    assert conditions["Ready"] == ("False", "MigrationBlocked")
    assert conditions["DeploymentsAvailable"] == ("True", "DeploymentsReady")
