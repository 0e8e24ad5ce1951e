"""`python -m maas import`, without the I/O: a cluster that the upstream maas-controller built, as a snapshot, into
this program's configuration (the `maas:` keys), a Pulumi import file for the objects it would own that already
exist, and one line for everything that could not be expressed (nothing is dropped silently).

The configuration pins `rateLimitIdentity: legacy` on every subscription the cluster counts by its key (stamped
legacy, or not stamped at all: pre-3.6), so taking over resets no live Limitador counter (seed 002); subscriptions
stamped short keep that sticky identity without a pin. It sets `controllerMode: coexist`, because the controller
still runs during the first `up` (docs/migrating.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .. import naming
from ..config import ConfigError, load_config
from ..crdschema import validate
from ..observe import ObjectRef, Observed
from ..observe.scope import IMPORTED_KINDS
from ..observe.snapshot import thawed
from .importing.adoption import Managers, adopted_refs, adoption_notes
from .importing.common import Report
from .importing.drift import policy_drift
from .importing.entries import import_auth_policies, import_models, import_subscriptions, opt_outs
from .importing.images import live_images
from .importing.import_file import owned_objects, pulumi_import_file
from .importing.tenants import import_tenants
from .render import Rendering, render

ENTRY_KEYS = ("tenants", "models", "authPolicies", "subscriptions")
CR_KINDS = frozenset(IMPORTED_KINDS) - {"TokenRateLimitPolicy", "AuthPolicy"}  # what the configuration is read from
DOES_NOT_RENDER = "the imported configuration does not render against the cluster:"
IMAGES_NOT_READ = (
    "platform.images (comparing the images the live workloads run with this program's defaults needs a rendering, "
    "so a first `pulumi up` of this file might change them)"
)
ENTRY_PATH = re.compile(r"maas:(" + "|".join(ENTRY_KEYS) + r")\[(\d+)\]")
PLATFORM_ORDER = ("controllerMode", "gateway", "infraNamespace", "images", "usageMetricsDashboard", "kubernetes")
NOTHING = (
    "nothing to import: the snapshot holds no MaaSModelRef, MaaSAuthPolicy, MaaSSubscription, MaasTenantConfig, "
    "AITenant or Tenant that this program can express; read the cluster the maas-controller manages "
    "(--context NAME), or give a snapshot of it (--observed FILE)"
)


@dataclass(frozen=True)
class Imported:
    """`config`: the `maas:` keys (without the prefix); `import_file`: for `pulumi import --file`; `unexpressed`:
    what was left out and why, one line each; `warnings`: what the first preview of `config` will say; `adoption`:
    what the objects of the import file bring along that no diff shows (owners, other field managers, the
    controller's finalizers), with what to do about it (`importing/adoption.py`)."""

    config: dict[str, Any]
    import_file: dict[str, Any]
    unexpressed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    adoption: list[str] = field(default_factory=list)


class CannotImportError(Exception):
    """Nothing could be imported, or what was imported does not render; `messages` are the lines to show."""

    def __init__(self, message: str, messages: list[str] | None = None) -> None:
        super().__init__(message)
        self.messages = [message, *(messages or [])]


class DoesNotRenderError(CannotImportError):
    """The configuration was read and is valid on its own, but it does not render against the cluster: preflight
    (a Secret, Gateway or CRD it needs is missing: the `cluster` issues), or another check of the plan. `config` is
    what was read, without what only a rendering gives (`platform.images`, the import file); `unexpressed` the
    report so far; `issues` the problems, as `ConfigIssue` text."""

    def __init__(self, issues: list[str], config: dict[str, Any], unexpressed: list[str] | None = None) -> None:
        super().__init__(DOES_NOT_RENDER, issues)
        self.issues = issues
        self.config = config
        self.unexpressed = list(unexpressed or ())
        self.missing = [IMAGES_NOT_READ] if "images" not in config.get("platform", {}) else []


def import_cluster(observed: Observed, stack: str = "dev", managers: Managers | None = None) -> Imported:
    """The whole import of one snapshot, for stack `stack` (the URNs of the import file name it). `managers`: the
    foreign field managers of each object as read (`adoption.field_managers`), which the snapshot does not keep;
    None when they are not known."""
    report = Report()
    observed = well_formed(observed, report)
    config = configuration(observed, report)
    try:
        rendering = _rendered(config, stack, observed)
        images = live_images(rendering, observed, load_config(config).platform, report)
        if images:
            config["platform"] = _ordered({**config["platform"], "images": images})
            rendering = _rendered(config, stack, observed)
    except DoesNotRenderError as error:
        raise DoesNotRenderError(error.issues, config, report.messages) from None
    import_file, notes = pulumi_import_file(rendering, observed)
    unexpressed = report.messages + notes + policy_drift(rendering, observed)
    adoption = adoption_notes(adopted_refs(import_file), observed, managers)
    return Imported(config, import_file, unexpressed, rendering.warnings, adoption)


def well_formed(observed: Observed, report: Report) -> Observed:
    """The snapshot without the controller's CRs whose values have the wrong type for their CRD (a hand-edited
    snapshot may hold `status: 5`): each is reported and left out, so nothing below reads a value of the wrong
    shape. Other CRD rules are the importer's to explain, and fields the vendored CRD does not know are no reason
    (a newer controller writes some)."""
    kept, dropped = [], []
    for ref, body in sorted(observed.objects.items(), key=lambda item: item[0].sort_key):
        problems = [p for p in validate(thawed(body)) if "is not of type" in p] if ref.kind in CR_KINDS else []
        if problems:
            dropped.append(ref)
            report.add(
                f"{ref.kind} {ref.namespace}/{ref.name} does not match its CRD ({problems[0]}), so it is left out"
            )
        else:
            kept.append(thawed(body))
    if not dropped:
        return observed
    return Observed.of(kept, observed.listed, observed.got, dict(observed.crds), observed.cluster)


def owned_by(config: dict[str, Any], observed: Observed, stack: str = "dev") -> list[ObjectRef]:
    """Every object the configuration would own: what `--context` fetches by name after the first read."""
    return owned_objects(_rendered(config, stack, observed))


def configuration(observed: Observed, report: Report) -> dict[str, Any]:
    """The `maas:` keys the snapshot's CRs express, each entry valid (an invalid one is reported and left out)."""
    tenants, platform = import_tenants(observed, report)
    namespaces = {naming.DEFAULT_TENANT, *(naming.tenant_namespace(t["name"]) for t in tenants)}
    models = import_models(observed, report)
    auth_policies = import_auth_policies(observed, namespaces, report)
    subscriptions = import_subscriptions(observed, namespaces, report)
    opt_outs(observed, report)
    if not (tenants or models or auth_policies or subscriptions):
        raise CannotImportError(NOTHING, report.messages)
    tenants = _with_default_tenant(tenants, models, auth_policies + subscriptions, report)
    raw = {"platform": _ordered(platform), "tenants": tenants, "models": models}
    raw |= {"authPolicies": auth_policies, "subscriptions": subscriptions}
    return _validated({key: value for key, value in raw.items() if value}, report)


def _with_default_tenant(
    tenants: list[dict[str, Any]], models: list[dict[str, Any]], namespaced: list[dict[str, Any]], report: Report
) -> list[dict[str, Any]]:
    """Entries of the default tenant need it configured, even when no CR describes it (the controller always
    serves the default tenant namespace)."""
    if any(t["name"] == naming.DEFAULT_TENANT for t in tenants):
        return tenants
    users = [m for m in models if "tenant" not in m] + [
        e for e in namespaced if e["namespace"] == naming.DEFAULT_TENANT
    ]
    if not users:
        return tenants
    report.add(
        f"no AITenant, MaasTenantConfig or Tenant describes the default tenant {naming.DEFAULT_TENANT}, but "
        f"{len(users)} imported entries belong to it: it is added with this program's defaults"
    )
    return [{"name": naming.DEFAULT_TENANT}, *tenants]


def _validated(raw: dict[str, Any], report: Report) -> dict[str, Any]:
    """Entries the configuration rejects (a tenant another one's Gateway, a subscription across tenants, ...) are
    left out with the reason, until the rest is valid; a problem outside the entries stops the import."""
    while True:
        try:
            load_config(raw)
            return raw
        except ConfigError as error:
            rejected: set[tuple[str, int]] = set()
            for issue in error.issues:
                match = ENTRY_PATH.match(issue.path)
                if match is None:
                    raise CannotImportError(
                        f"the imported configuration is invalid: {issue}", report.messages
                    ) from None
                rejected.add((match[1], int(match[2])))
                report.add(f"rejected by the configuration rules, so left out: {issue}")
        raw = {key: _kept(key, value, rejected) for key, value in raw.items()}
        raw = {key: value for key, value in raw.items() if value}


def _kept(key: str, value: Any, rejected: set[tuple[str, int]]) -> Any:
    if key not in ENTRY_KEYS:
        return value
    return [entry for index, entry in enumerate(value) if (key, index) not in rejected]


def _ordered(platform: dict[str, Any]) -> dict[str, Any]:
    return {key: platform[key] for key in PLATFORM_ORDER if key in platform}


def _rendered(config: dict[str, Any], stack: str, observed: Observed) -> Rendering:
    try:
        return render(config, stack=stack, observed=observed)
    except ConfigError as error:
        raise DoesNotRenderError([str(issue) for issue in error.issues], config) from None
