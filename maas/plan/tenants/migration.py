"""The IPP → Praxis migration decision (seed 002, upstream-platform.md §10.2): whether a `type: praxis` tenant's
IPP objects may be deleted, judged on its live plugins ConfigMap and its active ExternalModels.

Fingerprints are compared on the parsed YAML of every `data` key (so indentation, key order and comments do not
count, every value does), against the IPP default this program renders and that default with response-side
`api-translation` (baseline #2). The seed's controller writes `spec.apiTranslation.enabled: true` before cleaning
up baseline #2; the MaasTenantConfig CRD has no such field, so the only durable place is this program's
configuration: the migration waits for the operator to set it.
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
from .payload import IPP_CONFIG, PLUGINS_DEFAULT

Outcome = Literal["cleanup", "blocked", "undecided"]
FORCE = (
    "payloadProcessing.forceMigration: true (annotation maas.opendatahub.io/force-payload-processing-migration=true)"
)
QUALIFIED = {("openai", "openai-chat"), ("anthropic", "messages")}  # OpenAI pass-through, Anthropic translation
PURE_DEFAULT = "the product default"
RESPONSE_DEFAULT = "the product default plus response api-translation"


@dataclass(frozen=True)
class Decision:
    """`cleanup`: the IPP objects are not registered; `blocked` and `undecided`: they stay. `causes` are why it is
    blocked (one line each), `warnings` the accepted risks (Degraded), `notes` what the preview prints besides."""

    outcome: Outcome
    causes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Hold:
    """One reason to keep IPP, and the warning it leaves when an override lifts it."""

    cause: str
    accepted: str
    lifted_by_false: bool  # an explicit `apiTranslation.enabled: false` accepts it (the compatibility loss)


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
    needs the `apiTranslation` permission, which stays off for a new Praxis tenant unless configuration sets it."""
    external = model.external
    if external is None or (external.provider, external.apiFormat) not in QUALIFIED:
        return False
    return external.apiFormat != "messages" or translation is True


def backup_command(name: str, namespace: str) -> str:
    return f"kubectl get configmap {name} -n {namespace} -o yaml > plugins-backup.yaml"


def migration_decision(
    tenant: TenantConfig, live_plugins: Lookup, external_models: Iterable[ModelConfig], namespace: str
) -> Decision:
    """The seed's table for a `type: praxis` tenant whose plugins ConfigMap is in the gateway `namespace`."""
    name = naming.payload_plugins_name(tenant.name)
    subject = f"maas:tenants ({tenant.name}).payloadProcessing"
    if live_plugins.state == "unknown":
        return Decision(
            "undecided",
            warnings=(
                f"{subject}: ConfigMap {namespace}/{name} was not observed, so the IPP-to-Praxis migration is not "
                "decided and IPP stays; run with observation (platform.observe: true) to decide it",
            ),
        )
    settings = tenant.payloadProcessing
    translation = None if settings.apiTranslation is None else settings.apiTranslation.enabled
    holds = _binding_holds(subject, external_models, translation)
    notes: tuple[str, ...] = ()
    if live_plugins.object is not None:
        holds = _configmap_holds(subject, fingerprint(live_plugins.object), translation, name, namespace) + holds
        if settings.forceMigration:
            notes = (f"{subject}: before the forced cleanup, back up the plugins: {backup_command(name, namespace)}",)
    elif settings.forceMigration:
        holds.append(_parity_hold(subject, "the former plugins ConfigMap is gone"))
    elif translation is not False:
        # Nothing to migrate, so nothing holds the cleanup; a binding Praxis does not qualify stays a risk while
        # it is active (Degraded), as after an accepted cleanup.
        return Decision("cleanup", warnings=tuple(hold.accepted for hold in holds))
    causes = tuple(hold.cause for hold in holds if not _lifted(hold, settings.forceMigration, translation))
    if causes:
        return Decision("blocked", causes)
    return Decision("cleanup", warnings=tuple(h.accepted for h in holds), notes=notes)


def _lifted(hold: _Hold, force: bool, translation: bool | None) -> bool:
    """`forceMigration` lifts every hold; an explicit `apiTranslation.enabled: false` only a compatibility one."""
    return force or (hold.lifted_by_false and translation is False)


def _configmap_holds(subject: str, baseline: str | None, translation: bool | None, name: str, ns: str) -> list[_Hold]:
    if baseline is None:
        return [_parity_hold(subject, f"ConfigMap {ns}/{name} is neither {PURE_DEFAULT} nor {RESPONSE_DEFAULT}")]
    if baseline == RESPONSE_DEFAULT and translation is False:
        return [
            _Hold(
                f"ConfigMap {ns}/{name} is {RESPONSE_DEFAULT}; apiTranslation.enabled: false drops its response "
                "translation",
                f"{subject}: accepted loss: ConfigMap {ns}/{name} is {RESPONSE_DEFAULT}, and with "
                "apiTranslation.enabled: false IPP's response translation is not carried over to Praxis",
                lifted_by_false=True,
            )
        ]
    if baseline == RESPONSE_DEFAULT and translation is None:
        return [
            _Hold(
                f"ConfigMap {ns}/{name} is {RESPONSE_DEFAULT}: set payloadProcessing.apiTranslation.enabled: true "
                "(this program cannot write it durably for you: the MaasTenantConfig CRD has no such field), or "
                "false to drop response translation",
                f"{subject}: forced migration of {RESPONSE_DEFAULT} without apiTranslation: IPP's response "
                "translation is not carried over to Praxis",
                lifted_by_false=False,
            )
        ]
    return []


def _parity_hold(subject: str, why: str) -> _Hold:
    return _Hold(
        f"{why}; the program does not infer equivalent Praxis behaviour",
        f"{subject}: forced migration: {why}, and the migration does not establish IPP parity; re-apply needed "
        "customizations in Praxis, then remove forceMigration",
        lifted_by_false=False,
    )


def _binding_holds(subject: str, models: Iterable[ModelConfig], translation: bool | None) -> list[_Hold]:
    holds = []
    for model in sorted(models, key=lambda m: m.key):
        if compatible(model, translation):
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
        holds.append(
            _Hold(
                cause,
                f"{subject}: accepted compatibility risk: {binding} is not qualified for Praxis and stays active; "
                "review and test it",
                lifted_by_false=True,
            )
        )
    return holds


def blocked_message(causes: Iterable[str]) -> str:
    """The MaasTenantConfig's Ready message: every cause, and the setting that forces the migration."""
    return f"IPP-to-Praxis migration blocked: {'; '.join(causes)}. After review and a backup, set {FORCE}"
