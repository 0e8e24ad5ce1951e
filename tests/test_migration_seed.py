"""Seed 002's IPP → Praxis migration, statement by statement (issue 18, "Disagreements with the seeds" rows 1, 4
and 5, partial rows 002-37 and 002-51): each test quotes the seed sentence it checks, renders a purpose-built
stack against a hand-built snapshot and compares what is registered, annotated and said."""

from __future__ import annotations

from pathlib import Path

import yaml

from maas.config import load_config
from maas.observe import ObjectRef, Observed, parse_snapshot, what_to_observe
from maas.plan.tenants.migration import API_TRANSLATION_ANNOTATION, MIGRATED_ANNOTATION
from maas.plan.tenants.payload import PLUGINS_DEFAULT
from maas.tools.render import render
from tests.conftest import objects_of
from tests.test_migration import ONE_BYTE, RESPONSE, external

GW_NS = "openshift-ingress"
FORCE = "maas.opendatahub.io/force-payload-processing-migration"
BLOCKED = "maas.opendatahub.io/payload-processing-migration"
CRD = Path(__file__).parents[1] / "crds" / "maas.opendatahub.io_maastenantconfigs.yaml"


def ipp_objects(tenant: str) -> set[tuple[str, str]]:
    """The 11 IPP objects of a tenant and its credential reader (its ExternalModels are in `{tenant}-models`)."""
    processing, pre = f"{GW_NS}/payload-processing-{tenant}", f"{GW_NS}/payload-pre-processing-{tenant}"
    return {
        ("Deployment", processing),
        ("Deployment", pre),
        ("Service", processing),
        ("Service", pre),
        ("DestinationRule", processing),
        ("DestinationRule", pre),
        ("EnvoyFilter", processing),
        ("ServiceAccount", processing),
        ("NetworkPolicy", processing),
        ("ConfigMap", f"{GW_NS}/payload-processing-plugins-{tenant}"),
        ("ClusterRoleBinding", f"payload-processing-reader-{tenant}"),
        ("RoleBinding", f"{tenant}-models/payload-processing-credentials-{tenant}"),
    }


def model(tenant: str, name: str, provider: str, api_format: str = "openai-chat") -> dict:
    entry = external(name, provider, api_format)
    return {**entry, "namespace": f"{tenant}-models", "tenant": tenant}


def stack(tenant: str, *models: dict, **payload) -> dict:
    return {"tenants": [{"name": tenant, "payloadProcessing": {"type": "praxis", **payload}}], "models": list(models)}


def plugins(tenant: str, data: dict[str, str]) -> dict:
    metadata = {"name": f"payload-processing-plugins-{tenant}", "namespace": GW_NS}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": data}


def live_tenant_config(tenant: str, annotations: dict | None = None, spec: dict | None = None) -> dict:
    """The live MaasTenantConfig, as `kubectl annotate` (or a 3.6 controller) left it."""
    metadata = {"name": "default-tenant", "namespace": f"ai-tenant-{tenant}", "annotations": annotations or {}}
    kind = {"apiVersion": "maas.opendatahub.io/v1alpha1", "kind": "MaasTenantConfig"}
    return {**kind, "metadata": metadata, "spec": spec or {}}


def snapshot(tenant: str, *objects: dict) -> Observed:
    """Both objects the migration reads were looked at; those not in `objects` are absent."""
    got = [
        ObjectRef("ConfigMap", GW_NS, f"payload-processing-plugins-{tenant}"),
        ObjectRef("MaasTenantConfig", f"ai-tenant-{tenant}", "default-tenant"),
    ]
    return Observed.of(objects, got=got)


def registered_ipp(rendering, tenant: str) -> set[tuple[str, str]]:
    wanted = ipp_objects(tenant)
    return {(kind, key) for kind in {k for k, _ in wanted} for key in objects_of(rendering, kind)} & wanted


def annotations_of(rendering, tenant: str) -> dict[str, str]:
    tenant_config = objects_of(rendering, "MaasTenantConfig")[f"ai-tenant-{tenant}/default-tenant"]
    return tenant_config["metadata"]["annotations"]


def migration_of(rendering, tenant: str) -> dict:
    return rendering.stack_outputs["tenants"][tenant]["payloadProcessingMigration"]


def rendering_warnings_of(rendering, tenant: str) -> list[str]:
    """The tenant's Degraded warnings (stack output `tenants.{name}.warnings`)."""
    return rendering.stack_outputs["tenants"][tenant]["warnings"]


# Row 1 --------------------------------------------------------------------------------------------------------


def test_002_an_absent_plugins_configmap_keeps_ipp_while_an_unqualified_binding_is_active():
    """Seed 002: "An active Azure OpenAI, Vertex AI, Bedrock, custom provider, or unqualified format/auth binding
    is not claimed as compatible. [...] the migration compatibility check likewise must keep IPP state until that
    binding is qualified or an operator explicitly accepts the compatibility risk."

    Praxis tenant `blue` with an active Bedrock ExternalModel; `payload-processing-plugins-blue` looked at and
    absent. Before: `cleanup`, its 11 IPP objects left the plan and the preview called the risk accepted. Now:
    blocked, as with the ConfigMap at the product default, every IPP object registered, nothing called accepted."""
    bedrock = model("blue", "titan", "bedrock")
    for live in ((), (plugins("blue", PLUGINS_DEFAULT),)):
        rendering = render(stack("blue", bedrock), observed=snapshot("blue", *live))
        assert migration_of(rendering, "blue") == {
            "outcome": "blocked",
            "causes": [
                "ExternalModel blue-models/titan (provider bedrock, apiFormat openai-chat) is not qualified for "
                "Praxis (only openai/openai-chat and anthropic/messages are); set "
                "payloadProcessing.apiTranslation.enabled: false to accept the compatibility loss"
            ],
        }
        assert registered_ipp(rendering, "blue") == ipp_objects("blue")
        assert annotations_of(rendering, "blue")[BLOCKED] == "blocked"
        assert not [w for w in rendering.warnings if "accepted compatibility risk" in w]


def test_002_only_an_explicit_false_or_force_lifts_the_hold_of_an_absent_configmap():
    """Seed 002: "an explicit spec.apiTranslation.enabled: false accepts the compatibility loss for an unsupported
    active ExternalModel and lets cleanup proceed. [...] The force annotation below can bypass that separate
    check. Both choices accept compatibility risk."

    Same tenant, same absent ConfigMap: `apiTranslation.enabled: false` and `forceMigration: true` each clean up
    (no IPP object left), and only then is the Bedrock binding an accepted risk (Degraded)."""
    bedrock = model("blue", "titan", "bedrock")
    accepted = (
        "maas:tenants (blue).payloadProcessing: accepted compatibility risk: ExternalModel blue-models/titan "
        "(provider bedrock, apiFormat openai-chat) is not qualified for Praxis and stays active; review and test it"
    )
    for override in ({"apiTranslation": {"enabled": False}}, {"forceMigration": True}):
        rendering = render(stack("blue", bedrock, **override), observed=snapshot("blue"))
        assert migration_of(rendering, "blue")["outcome"] == "cleanup"
        assert registered_ipp(rendering, "blue") == set()
        assert accepted in rendering.stack_outputs["tenants"]["blue"]["warnings"]


def test_002_the_one_shot_cleanup_is_recorded_so_a_later_run_does_not_bring_ipp_back():
    """Seed 002: "MaaS records an accepted risk on MaasTenantConfig and keeps it in the Degraded condition after
    the one-shot cleanup while affected provider bindings remain active."

    Holding in every row must not undo a cleanup: a forced cleanup writes `payload-processing-migrated: "true"`;
    with that live stamp, force removed and the ConfigMap gone, the Bedrock binding is a Degraded warning and
    no IPP object is registered again (before the stamp, the same run would have re-created all 12)."""
    bedrock = model("blue", "titan", "bedrock")
    forced = render(stack("blue", bedrock, forceMigration=True), observed=snapshot("blue"))
    assert annotations_of(forced, "blue")[MIGRATED_ANNOTATION] == "true"
    migrated = live_tenant_config("blue", {MIGRATED_ANNOTATION: "true"})
    later = render(stack("blue", bedrock), observed=snapshot("blue", migrated))
    assert migration_of(later, "blue") == {"outcome": "cleanup", "causes": []}
    assert registered_ipp(later, "blue") == set()
    assert annotations_of(later, "blue")[MIGRATED_ANNOTATION] == "true"
    assert rendering_warnings_of(later, "blue") == [
        "maas:tenants (blue).payloadProcessing: after the IPP cleanup: ExternalModel blue-models/titan (provider "
        "bedrock, apiFormat openai-chat) is not qualified for Praxis (only openai/openai-chat and anthropic/messages "
        "are); set payloadProcessing.apiTranslation.enabled: false to accept the compatibility loss"
    ]


# Row 4 --------------------------------------------------------------------------------------------------------


CLAUDE = model("green", "claude", "anthropic", "messages")
GPT = model("green", "gpt", "openai")


def test_002_baseline_2_with_api_translation_unset_records_the_permission_and_cleans_up():
    """Seed 002: "Exact default plus response api-translation: IPP translated requests and responses. Before
    cleanup, maas-controller durably writes spec.apiTranslation.enabled: true, unless an operator already set the
    field. The compatibility check still applies."

    Tenant `green` (OpenAI pass-through and Anthropic `messages`), live ConfigMap = baseline #2, nothing set.
    Before: blocked until configuration set the field. Now: cleanup, the Anthropic binding qualified by the
    granted permission, and the MaasTenantConfig records `api-translation-enabled: "true"`."""
    rendering = render(stack("green", GPT, CLAUDE), observed=snapshot("green", plugins("green", RESPONSE)))
    assert migration_of(rendering, "green") == {"outcome": "cleanup", "causes": []}
    assert registered_ipp(rendering, "green") == set()
    assert annotations_of(rendering, "green")[API_TRANSLATION_ANNOTATION] == "true"
    assert rendering_warnings_of(rendering, "green") == []
    assert (
        "maas:tenants (green).payloadProcessing: ConfigMap openshift-ingress/payload-processing-plugins-green is the "
        "product default plus response api-translation, so before the cleanup the MaasTenantConfig records the "
        f'apiTranslation permission as enabled ({API_TRANSLATION_ANNOTATION}: "true"; the CRD has no '
        "spec.apiTranslation) and keeps it on later runs; set payloadProcessing.apiTranslation.enabled to choose"
    ) in rendering.warnings


def test_002_the_recorded_permission_survives_the_configmaps_deletion():
    """Seed 002: "[the controller] durably writes spec.apiTranslation.enabled: true" (durably: the cleanup
    deletes the ConfigMap it was inferred from).

    The next run sees the ConfigMap absent and the live MaasTenantConfig with the annotation (or, written by a
    3.6 controller, `spec.apiTranslation.enabled: true`): the Anthropic binding stays qualified, nothing blocks,
    nothing warns, and the annotation is written again (without it the run would block on Anthropic)."""
    for live in (
        live_tenant_config("green", {API_TRANSLATION_ANNOTATION: "true"}),
        live_tenant_config("green", spec={"apiTranslation": {"enabled": True}}),
    ):
        rendering = render(stack("green", GPT, CLAUDE), observed=snapshot("green", live))
        assert migration_of(rendering, "green") == {"outcome": "cleanup", "causes": []}
        assert annotations_of(rendering, "green")[API_TRANSLATION_ANNOTATION] == "true"
        assert rendering_warnings_of(rendering, "green") == []


def test_002_an_explicit_value_in_configuration_wins_over_the_live_permission():
    """Seed 002: "unless an operator already set the field" (here the operator's field is the configuration).

    Live `"true"`, configuration `apiTranslation.enabled: false`: the MaasTenantConfig says `"false"`, the
    preview names the replaced value, and Anthropic becomes an accepted risk."""
    live = live_tenant_config("green", {API_TRANSLATION_ANNOTATION: "true"})
    rendering = render(stack("green", GPT, CLAUDE, apiTranslation={"enabled": False}), observed=snapshot("green", live))
    assert annotations_of(rendering, "green")[API_TRANSLATION_ANNOTATION] == "false"
    assert (
        "maas:tenants (green).payloadProcessing: apiTranslation.enabled: false replaces the live MaasTenantConfig's "
        "true"
    ) in rendering.warnings
    assert (
        "accepted compatibility risk: ExternalModel green-models/claude" in rendering_warnings_of(rendering, "green")[0]
    )


def test_002_baseline_2_still_checks_compatibility_and_records_nothing_while_blocked():
    """Seed 002: "The compatibility check still applies."

    Baseline #2 with a Vertex binding: blocked on that binding alone, and the permission is not recorded (the
    seed writes it before cleanup; the ConfigMap it is inferred from is still there)."""
    vertex = model("green", "gemini", "vertex")
    rendering = render(stack("green", vertex), observed=snapshot("green", plugins("green", RESPONSE)))
    migration = migration_of(rendering, "green")
    assert migration["outcome"] == "blocked" and len(migration["causes"]) == 1
    assert migration["causes"][0].startswith("ExternalModel green-models/gemini (provider vertex")
    assert API_TRANSLATION_ANNOTATION not in annotations_of(rendering, "green")


def test_002_the_vendored_maastenantconfig_crd_has_no_api_translation_field():
    """Seed 002 names `spec.apiTranslation.enabled`; the vendored 3.5 CRD (crds/SOURCES.md) does not have it, and
    the API server prunes unknown fields. So the permission is an annotation. When this fails, the CRD has been
    updated: write `spec.apiTranslation.enabled` too, beside `platform._migration_annotations`."""
    schema = yaml.safe_load(CRD.read_text())["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert "apiTranslation" not in schema["properties"]["spec"]["properties"]


# Row 5 --------------------------------------------------------------------------------------------------------


def test_002_the_force_annotation_on_the_live_maastenantconfig_forces_the_migration():
    """Seed 002: "Force migration after reviewing release notes. Back up the current tenant plugins ConfigMap from
    the gateway namespace first [...] kubectl annotate maastenantconfig default-tenant -n <tenant-namespace>
    maas.opendatahub.io/force-payload-processing-migration=true --overwrite"

    Tenant `red`, customized ConfigMap, no `forceMigration` in configuration, the annotation set with kubectl on
    the live object (read from a `kubectl get -o yaml` List). Before: blocked, the annotation never read. Now:
    cleanup, the preview says the force came from the cluster, prints the backup command and keeps the parity
    warning; the program does not write the annotation (it stays the operator's)."""
    listing = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [plugins("red", ONE_BYTE), live_tenant_config("red", {FORCE: "true"})],
    }
    rendering = render(stack("red", model("red", "gpt", "openai")), observed=parse_snapshot(yaml.safe_dump(listing)))
    assert migration_of(rendering, "red") == {"outcome": "cleanup", "causes": []}
    assert registered_ipp(rendering, "red") == set()
    assert FORCE not in annotations_of(rendering, "red")
    subject = "maas:tenants (red).payloadProcessing"
    assert (
        f"{subject}: the migration is forced by annotation {FORCE}=true on the live MaasTenantConfig "
        "ai-tenant-red/default-tenant (set in the cluster, not in this configuration)"
    ) in rendering.warnings
    backup = f"kubectl get configmap payload-processing-plugins-red -n {GW_NS} -o yaml > plugins-backup.yaml"
    assert f"{subject}: before the forced cleanup, back up the plugins: {backup}" in rendering.warnings
    assert rendering_warnings_of(rendering, "red") == [
        f"{subject}: forced migration: ConfigMap {GW_NS}/payload-processing-plugins-red is neither the product "
        "default nor the product default plus response api-translation, and the migration does not establish IPP "
        "parity; re-apply needed customizations in Praxis, then remove the annotation: kubectl annotate "
        f"maastenantconfig default-tenant -n ai-tenant-red {FORCE}-"
    ]


def test_002_only_the_value_true_forces_and_another_is_said():
    """Seed 002: "maas.opendatahub.io/force-payload-processing-migration=true".

    `=True`, or annotations of the wrong shape, do not force (blocked, no traceback); the odd value is named."""
    gpt = model("red", "gpt", "openai")
    capitalised = live_tenant_config("red", {FORCE: "True"})
    odd = render(stack("red", gpt), observed=snapshot("red", plugins("red", ONE_BYTE), capitalised))
    assert migration_of(odd, "red")["outcome"] == "blocked"
    assert (
        f"maas:tenants (red).payloadProcessing: the live MaasTenantConfig ai-tenant-red/default-tenant has "
        f'annotation {FORCE}=\'True\', which is neither "true" nor "false"; it is ignored'
    ) in odd.warnings
    shapeless = live_tenant_config("red")
    shapeless["metadata"]["annotations"] = ["x"]
    shapeless["spec"] = {"apiTranslation": "yes"}
    wrong = render(stack("red", gpt), observed=snapshot("red", plugins("red", ONE_BYTE), shapeless))
    assert migration_of(wrong, "red")["outcome"] == "blocked"


def test_002_a_praxis_tenants_maastenantconfig_is_observed():
    """Seed 002's force procedure annotates the live object, so the program reads it: one GET per Praxis tenant
    (an IPP tenant has no migration to read it for)."""
    config = load_config({"tenants": [{"name": "red", "payloadProcessing": {"type": "praxis"}}, {"name": "blue"}]})
    tenant_configs = [ref for ref in what_to_observe(config).gets if ref.kind == "MaasTenantConfig"]
    assert tenant_configs == [ObjectRef("MaasTenantConfig", "ai-tenant-red", "default-tenant")]


def test_002_an_unobserved_maastenantconfig_leaves_the_migration_undecided():
    """Unknown is never absent: a snapshot with the ConfigMap but not the MaasTenantConfig cannot know of a force
    annotation or a past cleanup, so IPP stays (one warning naming what was not observed)."""
    observed = Observed.of([], got=[ObjectRef("ConfigMap", GW_NS, "payload-processing-plugins-red")])
    rendering = render(stack("red", model("red", "gpt", "openai")), observed=observed)
    assert migration_of(rendering, "red")["outcome"] == "undecided"
    assert registered_ipp(rendering, "red") == ipp_objects("red")
    assert (
        "maas:tenants (red).payloadProcessing: MaasTenantConfig ai-tenant-red/default-tenant was not observed, so "
        "the IPP-to-Praxis migration is not decided and IPP stays; run with observation (platform.observe: true) to "
        "decide it"
    ) in rendering.warnings


# 002-37 -------------------------------------------------------------------------------------------------------


SERVING = {"ExternalModel", "Service", "ServiceEntry", "DestinationRule", "HTTPRoute"}


def model_registrations(rendering, key: str) -> dict[str, tuple[str, ...]]:
    """kind -> ignore_changes of each Kubernetes object under the `maas:index:Model` component `key`."""
    parents = {r.urn for r in rendering.registrations if r.type == "maas:index:Model" and r.name == key}
    found = {}
    for registration in rendering.registrations:
        if registration.is_kubernetes_object and registration.parent in parents:
            found[registration.inputs["kind"]] = tuple(registration.ignore_changes)
    return found


def test_002_while_blocked_an_unqualified_external_models_serving_objects_keep_their_last_applied_form():
    """Seed 002: "The AIGC resolver fails that reconcile before publishing or cleaning serving resources,
    preserving the last-known route and overlay".

    Tenant `blue` blocked by its Bedrock ExternalModel `titan`: titan's ExternalModel, Service, ServiceEntry,
    DestinationRule and HTTPRoute are registered with every field ignored (not retained), and the preview says
    so; its MaaSModelRef still follows the configuration, and the qualified `gpt` is untouched. Once the
    migration proceeds (force), nothing is held."""
    bedrock, gpt = model("blue", "titan", "bedrock"), model("blue", "gpt", "openai")
    blocked = render(stack("blue", bedrock, gpt), observed=snapshot("blue"))
    held = model_registrations(blocked, "blue-models/titan")
    assert {kind for kind, ignored in held.items() if ignored} == SERVING
    assert held["ExternalModel"] == ("apiVersion", "kind", "metadata", "spec")
    assert held["MaaSModelRef"] == ()
    assert not any(model_registrations(blocked, "blue-models/gpt").values())
    assert not [r for r in blocked.registrations if r.retain_on_delete and r.parent and "titan" in r.name]
    assert (
        "maas:tenants (blue).payloadProcessing: ExternalModel blue-models/titan: the ExternalModel and its Service, "
        "ServiceEntry, DestinationRule and HTTPRoute keep their last applied form while the migration is blocked; "
        "changes to maas:models (blue-models/titan) apply once it proceeds"
    ) in blocked.warnings
    forced = render(stack("blue", bedrock, gpt, forceMigration=True), observed=snapshot("blue"))
    assert not any(model_registrations(forced, "blue-models/titan").values())


# 002-51 -------------------------------------------------------------------------------------------------------


def test_002_a_forced_cleanup_says_what_replaces_the_plugins_configmap():
    """Seed 002: "Applying force on a customized ConfigMap replaces it with the Praxis plugins schema; re-apply
    any still-needed customizations in the Praxis ConfigMap shape afterward."

    The Praxis data plane, and so its plugins ConfigMap, is another component's (the seed gives no schema): the
    forced cleanup of `red`'s customized ConfigMap registers no ConfigMap of that name or any other in its place,
    and the preview says where the replacement comes from and what to re-apply."""
    rendering = render(
        stack("red", model("red", "gpt", "openai"), forceMigration=True),
        observed=snapshot("red", plugins("red", ONE_BYTE)),
    )
    assert [key for key in objects_of(rendering, "ConfigMap") if key.startswith(f"{GW_NS}/")] == []
    assert (
        f"maas:tenants (red).payloadProcessing: the forced cleanup deletes ConfigMap {GW_NS}/"
        "payload-processing-plugins-red and this program writes no replacement: the Praxis plugins ConfigMap comes "
        "with the Praxis data plane, which another component deploys; re-apply still-needed customizations there, "
        "in the Praxis ConfigMap shape"
    ) in rendering.warnings
