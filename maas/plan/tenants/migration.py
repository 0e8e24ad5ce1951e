"""The IPP → Praxis migration decision (seed 002, upstream-platform.md §10.2): whether a `type: praxis` tenant's
IPP objects may be deleted, judged on its live plugins ConfigMap, its live MaasTenantConfig and its active
ExternalModels.

Fingerprints are compared on the parsed YAML of every `data` key (so indentation, key order and comments do not
count, every value does), against the IPP default this program renders and that default with response-side
`api-translation` (baseline #2).

The compatibility hold applies in every row, an absent ConfigMap included: an active binding Praxis does not
qualify keeps IPP until an explicit `apiTranslation.enabled: false` or force accepts the risk.

The live MaasTenantConfig carries what has to outlive the ConfigMap, which the cleanup deletes:

- the operator's force annotation: seed 002's procedure is `kubectl annotate maastenantconfig … =true`, so it
  forces like `forceMigration` does (the preview says it came from the cluster);
- the `apiTranslation` permission. Seed 002's controller durably writes `spec.apiTranslation.enabled: true`
  before cleaning up baseline #2. The vendored MaasTenantConfig CRD has no `spec.apiTranslation` (the API
  server would prune it, and the self-check refuses it), so the program records the permission in the
  annotation `API_TRANSLATION_ANNOTATION` and reads it back on later runs (else a 3.6 controller's
  `spec.apiTranslation.enabled`), as rate-limit identities are sticky; configuration wins;
- that this program already cleaned IPP up (`MIGRATED_ANNOTATION`): the cleanup is one-shot, so a later run whose
  ConfigMap is gone neither takes the tenant for one still to migrate nor re-creates IPP.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ... import naming
from ...config import ConfigError, ModelConfig, TenantConfig
from ...config.stackfile import yaml_document
from ...observe import Lookup
from ...observe.views import LiveTenantConfig, view_of
from .payload import IPP_CONFIG, PLUGINS_DEFAULT

Outcome = Literal["cleanup", "blocked", "undecided"]
FORCE_ANNOTATION = naming.FORCE_MIGRATION_ANNOTATION
API_TRANSLATION_ANNOTATION = naming.API_TRANSLATION_ANNOTATION
MIGRATED_ANNOTATION = naming.MIGRATED_ANNOTATION
FORCE = f"payloadProcessing.forceMigration: true, or annotate the MaasTenantConfig {FORCE_ANNOTATION}=true"
QUALIFIED = {("openai", "openai-chat"), ("anthropic", "messages")}  # OpenAI pass-through, Anthropic translation
PURE_DEFAULT = "the product default"
RESPONSE_DEFAULT = "the product default plus response api-translation"
SERVING_OBJECTS = "the ExternalModel and its Service, ServiceEntry, DestinationRule and HTTPRoute"


@dataclass(frozen=True)
class Decision:
    """`cleanup`: the IPP objects are not registered; `blocked` and `undecided`: they stay. `causes` are why it is
    blocked (one line each), `warnings` the accepted risks (Degraded), `notes` what the preview prints besides.
    `translation` is the `apiTranslation` permission the MaasTenantConfig records (None: omitted); `held` the
    ExternalModels whose serving objects keep their last applied form while blocked."""

    outcome: Outcome
    causes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    translation: bool | None = None
    held: tuple[str, ...] = ()


@dataclass(frozen=True)
class LiveTenant:
    """What the live MaasTenantConfig says about the migration; `notes` name the values it could not read."""

    force: bool = False
    translation: bool | None = None
    migrated: bool = False
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Case:
    """One tenant's migration: where its objects are, where force came from, the effective permission."""

    subject: str
    configmap: str  # namespace/name of the plugins ConfigMap
    tenant_config: str  # namespace/name of the MaasTenantConfig
    namespace: str  # the tenant namespace (for the kubectl commands)
    force: Literal["configuration", "cluster"] | None
    translation: bool | None


@dataclass(frozen=True)
class _Hold:
    """One reason to keep IPP, the warning it leaves when an override lifts it, and the model it holds (if any)."""

    cause: str
    accepted: str
    lifted_by_false: bool  # an explicit `apiTranslation.enabled: false` accepts it (the compatibility loss)
    model: str | None = None


def _parsed(data: Mapping[str, str]) -> dict[str, Any]:
    """Each key's YAML, read with the bounded stack-file reader: a live ConfigMap is input nobody vouches for."""
    return {key: yaml_document(value, f"ConfigMap data {key}") for key, value in data.items()}


def _with_response_translation(data: Mapping[str, str]) -> dict[str, Any]:
    """Baseline #2: the documented opt-in edit, `- pluginRef: api-translation` under the response chain."""
    parsed = copy.deepcopy(_parsed(data))
    parsed[IPP_CONFIG]["profiles"][0]["plugins"]["response"] = [{"pluginRef": "api-translation"}]
    return parsed


FINGERPRINTS = {
    PURE_DEFAULT: _parsed(PLUGINS_DEFAULT),
    RESPONSE_DEFAULT: _with_response_translation(PLUGINS_DEFAULT),
}


def fingerprint(configmap: Mapping[str, Any]) -> str | None:
    """Which recognised baseline a live plugins ConfigMap is, or None when it is customized (or unparsable)."""
    data = configmap.get("data")
    if configmap.get("binaryData") or not isinstance(data, Mapping):
        return None
    if not all(isinstance(value, str) for value in data.values()):
        return None
    try:
        parsed = _parsed(data)
    except ConfigError:
        return None
    return next((name for name, known in FINGERPRINTS.items() if known == parsed), None)


def compatible(model: ModelConfig, translation: bool | None = True) -> bool:
    """Praxis qualifies only OpenAI `openai-chat` pass-through and Anthropic `messages` translation; the latter
    needs the `apiTranslation` permission, which stays off for a new Praxis tenant unless something grants it."""
    external = model.external
    if external is None or (external.provider, external.apiFormat) not in QUALIFIED:
        return False
    return external.apiFormat != "messages" or translation is True


def backup_command(name: str, namespace: str) -> str:
    return f"kubectl get configmap {name} -n {namespace} -o yaml > plugins-backup.yaml"


# The live MaasTenantConfig ------------------------------------------------------------------------------------


def live_tenant(obj: Mapping[str, Any] | None, where: str) -> LiveTenant:
    """Read once, any shape: a value that is neither `"true"` nor `"false"` is said and read as unset."""
    if obj is None:
        return LiveTenant()
    live = view_of(LiveTenantConfig, obj)
    notes: list[str] = []
    translation = _flag(live, API_TRANSLATION_ANNOTATION, where, notes)
    if translation is None:
        translation = _spec_translation(live, where, notes)
    force = _flag(live, FORCE_ANNOTATION, where, notes) is True
    migrated = _flag(live, MIGRATED_ANNOTATION, where, notes) is True
    return LiveTenant(force, translation, migrated, tuple(notes))


def _flag(live: LiveTenantConfig, key: str, where: str, notes: list[str]) -> bool | None:
    if key not in live.meta.annotations:
        return None
    value = live.meta.annotations[key]
    if value in ("true", "false"):
        return value == "true"
    notes.append(
        f'the live MaasTenantConfig {where} has annotation {key}={_shown(value)}, which is neither "true" nor '
        '"false"; it is ignored'
    )
    return None


def _spec_translation(live: LiveTenantConfig, where: str, notes: list[str]) -> bool | None:
    """`spec.apiTranslation.enabled` as a 3.6 controller writes it (a CRD that has the field keeps it)."""
    value = live.api_translation
    if value is None or isinstance(value, bool):
        return value
    notes.append(
        f"the live MaasTenantConfig {where} has spec.apiTranslation.enabled {_shown(value)}, not a boolean; it is "
        "ignored"
    )
    return None


def _shown(value: Any) -> str:
    """A live value in one line of bounded length (a preview line must not be forged by what it quotes)."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


# The decision -------------------------------------------------------------------------------------------------


def migration_decision(
    tenant: TenantConfig,
    live_plugins: Lookup,
    live_config: Lookup,
    external_models: Iterable[ModelConfig],
    namespace: str,
) -> Decision:
    """The seed's table for a `type: praxis` tenant whose plugins ConfigMap is in the gateway `namespace` and
    whose MaasTenantConfig (`live_config`) is in the tenant namespace."""
    settings = tenant.payloadProcessing
    explicit = None if settings.apiTranslation is None else settings.apiTranslation.enabled
    configmap = naming.qualified(namespace, naming.payload_plugins_name(tenant.name))
    tenant_config = naming.qualified(tenant.namespace, naming.TENANT_CONFIG_NAME)
    subject = f"maas:tenants ({tenant.name}).payloadProcessing"
    looked_up = (("ConfigMap", configmap, live_plugins), ("MaasTenantConfig", tenant_config, live_config))
    unobserved = [f"{kind} {where}" for kind, where, lookup in looked_up if lookup.state == "unknown"]
    if unobserved:
        return _undecided(subject, unobserved, explicit)
    live = live_tenant(live_config.object, tenant_config)
    baseline = None if live_plugins.object is None else fingerprint(live_plugins.object)
    case = _Case(
        subject,
        configmap,
        tenant_config,
        tenant.namespace,
        "configuration" if settings.forceMigration else "cluster" if live.force else None,
        _translation(explicit, live.translation, baseline),
    )
    notes = [f"{subject}: {note}" for note in live.notes] + _live_notes(case, explicit, live)
    holds = _binding_holds(case, external_models)
    if live.migrated:
        return _after_cleanup(case, holds, notes)
    if live_plugins.object is not None:
        holds = _configmap_holds(case, baseline) + holds
        notes += _forced_cleanup_notes(case)
    elif case.force and holds:  # an absent ConfigMap: parity is in question only for a binding that needs IPP
        holds.append(_parity_hold(case, "the former plugins ConfigMap is gone"))
    return _judged(case, holds, notes, recorded=explicit if explicit is not None else live.translation)


def _judged(case: _Case, holds: list[_Hold], notes: list[str], recorded: bool | None) -> Decision:
    """Blocked while a hold is not lifted, each blocking ExternalModel held; else cleanup, the lifted holds left
    as accepted risks. A permission only inferred (baseline #2) is recorded with the cleanup, not before it."""
    kept = [hold for hold in holds if not _lifted(hold, case)]
    if kept:
        held = tuple(hold.model for hold in kept if hold.model)
        notes = notes + [_held_note(case.subject, model) for model in held]
        return Decision("blocked", tuple(h.cause for h in kept), (), tuple(notes), recorded, held)
    if recorded is None and case.translation:
        notes = [*notes, _recorded_translation_note(case)]
    warnings = tuple(hold.accepted for hold in holds)
    return Decision("cleanup", warnings=warnings, notes=tuple(notes), translation=case.translation)


def _undecided(subject: str, unobserved: list[str], explicit: bool | None) -> Decision:
    what = " and ".join(unobserved)
    verb = "was" if len(unobserved) == 1 else "were"
    warning = (
        f"{subject}: {what} {verb} not observed, so the IPP-to-Praxis migration is not decided and IPP stays; run "
        "with observation (platform.observe: true) to decide it"
    )
    return Decision("undecided", warnings=(warning,), translation=explicit)


def _translation(explicit: bool | None, live: bool | None, baseline: str | None) -> bool | None:
    """Configuration wins; else the live, sticky value; else baseline #2 grants it (seed 002: the controller
    writes `enabled: true` for it unless an operator set the field); else it stays omitted (off)."""
    if explicit is not None:
        return explicit
    if live is not None:
        return live
    return True if baseline == RESPONSE_DEFAULT else None


def _lifted(hold: _Hold, case: _Case) -> bool:
    """Force lifts every hold; an explicit `apiTranslation.enabled: false` only a compatibility one."""
    return case.force is not None or (hold.lifted_by_false and case.translation is False)


def _after_cleanup(case: _Case, holds: list[_Hold], notes: list[str]) -> Decision:
    """IPP is already gone (the one-shot cleanup ran): nothing is left to keep, so nothing blocks. An active
    binding Praxis does not qualify stays a warning (Degraded) until it is gone or its risk is accepted. A forced
    cleanup's parity warning stays only while such a binding does (seed 002: "The warning clears when no active
    ExternalModel needs the unsupported legacy transform")."""
    if case.force and holds:
        holds = [*holds, _parity_hold(case, "the former plugins ConfigMap is gone")]
    warnings = tuple(
        hold.accepted if _lifted(hold, case) else f"{case.subject}: after the IPP cleanup: {hold.cause}"
        for hold in holds
    )
    return Decision("cleanup", warnings=warnings, notes=tuple(notes), translation=case.translation)


def _configmap_holds(case: _Case, baseline: str | None) -> list[_Hold]:
    if baseline is None:
        why = f"ConfigMap {case.configmap} is neither {PURE_DEFAULT} nor {RESPONSE_DEFAULT}"
        return [_parity_hold(case, why)]
    if baseline == RESPONSE_DEFAULT and case.translation is False:
        return [
            _Hold(
                f"ConfigMap {case.configmap} is {RESPONSE_DEFAULT}; apiTranslation.enabled: false drops its response "
                "translation",
                f"{case.subject}: accepted loss: ConfigMap {case.configmap} is {RESPONSE_DEFAULT}, and with "
                "apiTranslation.enabled: false IPP's response translation is not carried over to Praxis",
                lifted_by_false=True,
            )
        ]
    return []


def _parity_hold(case: _Case, why: str) -> _Hold:
    return _Hold(
        f"{why}; the program does not infer equivalent Praxis behaviour",
        f"{case.subject}: forced migration: {why}, and the migration does not establish IPP parity; re-apply needed "
        f"customizations in Praxis, then {_unforce(case)}",
        lifted_by_false=False,
    )


def _unforce(case: _Case) -> str:
    """How to stop forcing, where the force came from."""
    if case.force == "cluster":
        name, namespace = naming.TENANT_CONFIG_NAME, case.namespace
        return f"remove the annotation: kubectl annotate maastenantconfig {name} -n {namespace} {FORCE_ANNOTATION}-"
    return "remove forceMigration"


def _binding_holds(case: _Case, models: Iterable[ModelConfig]) -> list[_Hold]:
    holds = []
    for model in sorted(models, key=lambda m: m.key):
        if compatible(model, case.translation):
            continue
        binding = (
            f"ExternalModel {model.key} (provider {model.external.provider}, apiFormat {model.external.apiFormat})"
        )
        cause = (
            f"{binding} needs Praxis's Anthropic translation, which payloadProcessing.apiTranslation.enabled: true "
            "permits; set it, or false to accept the compatibility loss"
            if compatible(model, translation=True)
            else f"{binding} is not qualified for Praxis (only openai/openai-chat and anthropic/messages are); set "
            "payloadProcessing.apiTranslation.enabled: false to accept the compatibility loss"
        )
        accepted = (
            f"{case.subject}: accepted compatibility risk: {binding} is not qualified for Praxis and stays active; "
            "review and test it"
        )
        holds.append(_Hold(cause, accepted, lifted_by_false=True, model=model.key))
    return holds


# What the preview says besides --------------------------------------------------------------------------------


def _live_notes(case: _Case, explicit: bool | None, live: LiveTenant) -> list[str]:
    """Where a live value decided or was overridden: the operator must see what the cluster contributed."""
    notes = []
    if case.force == "cluster":
        notes.append(
            f"{case.subject}: the migration is forced by annotation {FORCE_ANNOTATION}=true on the live "
            f"MaasTenantConfig {case.tenant_config} (set in the cluster, not in this configuration)"
        )
    if explicit is not None and live.translation is not None and explicit != live.translation:
        notes.append(
            f"{case.subject}: apiTranslation.enabled: {str(explicit).lower()} replaces the live MaasTenantConfig's "
            f"{str(live.translation).lower()}"
        )
    return notes


def _forced_cleanup_notes(case: _Case) -> list[str]:
    """Seed 002: back up first (the cleanup keeps no copy); the Praxis plugins schema replaces the ConfigMap."""
    if not case.force:
        return []
    namespace, _, name = case.configmap.partition("/")
    return [
        f"{case.subject}: before the forced cleanup, back up the plugins: {backup_command(name, namespace)}",
        f"{case.subject}: the forced cleanup deletes ConfigMap {case.configmap} and this program writes no "
        "replacement: the Praxis plugins ConfigMap comes with the Praxis data plane, which another component "
        "deploys; re-apply still-needed customizations there, in the Praxis ConfigMap shape",
    ]


def _recorded_translation_note(case: _Case) -> str:
    return (
        f"{case.subject}: ConfigMap {case.configmap} is {RESPONSE_DEFAULT}, so before the cleanup the "
        f"MaasTenantConfig records the apiTranslation permission as enabled ({API_TRANSLATION_ANNOTATION}: "
        '"true"; the CRD has no spec.apiTranslation) and keeps it on later runs; set '
        "payloadProcessing.apiTranslation.enabled to choose"
    )


def _held_note(subject: str, model: str) -> str:
    return (
        f"{subject}: ExternalModel {model}: {SERVING_OBJECTS} keep their last applied form while the migration is "
        f"blocked; changes to maas:models ({model}) apply once it proceeds"
    )


def blocked_message(causes: Iterable[str]) -> str:
    """The MaasTenantConfig's Ready message: every cause, and the settings that force the migration."""
    return f"IPP-to-Praxis migration blocked: {'; '.join(causes)}. After review and a backup, set {FORCE}"
