"""The program `pulumi up` runs: validate the configuration, observe the cluster, compute the desired state,
check it, register it.

When the checks fail only on preflight problems that concern tenants (a missing or unusable Gateway, a missing
`maas-db-config` Secret, a missing CRD their objects need), the update still publishes those tenants'
MaasTenantConfig status (seed 000: `Failed`) and changes nothing else. How, given the real engine:

- `pulumi up` first runs the program as a preview and stops if that fails (pulumi/pulumi `pkg/backend/apply.go`
  `PreviewThenPromptThenExecute`), so a preview that raised would never let the update publish anything. The
  preview therefore registers the whole plan, as a successful update would, with those tenants' status resources
  in their stopped form, and warns that the update will stop; a preview writes nothing (a dynamic provider's
  update is not called in preview).
- A successful run that registers less deletes the rest, so the update registers only those status resources
  (under their tenant components) and then fails: the engine performs deletes only after the program finished
  without error (`pkg/resource/deploy/deployment_executor.go`, `performPostSteps` after the source's last event),
  and keeps every resource it was not sent as it was.
- The status resource writes only the MaasTenantConfig target (`writeOnly`, `status_writer.py`); its other
  targets keep their records, so the next full update compares each with what the cluster holds.

Problems of the configuration itself (schema, identities, quota resets, gateway budgets) still stop every run
before anything is registered, preview included.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pulumi

from ..config import KEYS, NAMESPACE, ConfigError, ConfigIssue, MaasConfig, load_config
from ..config.kubernetes import RENDER, reader_connection
from ..config.secrets import Secrets, identity_warning
from ..config.stackfile import no_keys_warning
from ..gc_tuning import collection_paused, freeze_plan
from ..observe import ObservationError, Observed, read_cluster, what_to_observe
from ..plan.build import build_plan
from ..plan.checks.issues import plan_issues
from ..plan.checks.preflight import preflight
from ..plan.desired import Desired, Owner, Plan
from ..plan.status.failed import failed_tenant_writes, failure_issues
from .components import deploy, deploy_failed, from_pulumi

PREVIEW_STOP = (
    "preflight failed: `pulumi up` will publish the MaasTenantConfig status of {tenants} and stop before changing "
    "anything else; the other changes shown are those of the first `pulumi up` after these are fixed"
)
UPDATE_STOP = (
    "preflight failed ({count} problem(s)): published the MaasTenantConfig status of {tenants} (where an earlier "
    "`pulumi up` wrote one) and changed nothing else; fix these and run `pulumi up` again"
)
RENDER_ONLY = (
    f"{RENDER} is set: objects are written to files, not to a cluster; keep it on a stack of its own that never "
    "deployed: on a deployed stack it replaces every resource (pulumi-kubernetes DiffConfig; the engine replaces "
    "what a replaced provider manages), deleting the live objects through the previous provider"
)
# The language host's "error already shown" exit code: `pulumi-language-python/main.go` 97 and 1184-1185 (pulumi/pulumi
# 1b594989) answer it with a bail, which the engine reports without a line of its own, where a RunError (exit 1) is
# followed by "an unhandled error occurred: program exited with non-zero exit code: 1" (program_source.go 150-152).
# The host itself exits so after logging an error (`pulumi-language-python-exec` 222-227).
ALREADY_REPORTED = 32
NOT_OBSERVING = (
    "maas:platform.observe is false: nothing was read from the cluster, so model, subscription and tenant "
    "statuses are the intended ones (from configuration), not observed"
)


def run(observed: Observed | None = None, publish_failed: bool = False) -> Plan:
    """Raises ConfigError before registering anything when the configuration is invalid. `observed`: a snapshot
    taken elsewhere (the offline renderer); None reads the cluster of `platform.kubernetes` once, now.
    `publish_failed` (what `pulumi up` runs): a failed preflight that concerns tenants publishes their status
    first (module docstring); the renderer keeps the plain refusal, so `render` and `validate` exit 2."""
    with collection_paused():  # the plan makes no garbage cycles (`maas.gc_tuning`); observation's few wait
        config = load_config(raw_from_pulumi())
        rendering = config.platform.kubernetes.renderYamlToDirectory is not None
        observation_warnings = [RENDER_ONLY] if rendering else []  # also when given a snapshot
        if observed is None:
            observed, observation_warnings = observe(config)
        plan = build_plan(config, observed)
        plan.warnings[:0] = observation_warnings
        for note in plan.notes:  # before the checks, so that a refused update still shows every gateway's size
            pulumi.log.info(note)
        issues = plan_issues(config, plan, observed)
    if not issues:
        freeze_plan()  # what is left is registering it: no collection need traverse the plan again
        deploy(kept_secret(plan, from_pulumi()), config)
        return plan
    failed = publishable(config, plan, observed, issues) if publish_failed else {}
    if not failed:
        raise ConfigError(issues)
    _stop_after_publishing(plan, config, failed, issues)
    return plan


def kept_secret(plan: Plan, secrets: Secrets) -> Plan:
    """The plan as it is registered: every text a `secure:` configuration value wrote, in an object (status
    writes aside) or an output, as a Pulumi secret (`config.secrets`); `plan` itself when there is none."""
    if not secrets:
        return plan
    wrap = pulumi.Output.secret
    named: list[str] = []
    owners: dict[tuple[str, str], Owner] = {}
    for key, owner in plan.owners_by_key.items():
        objects = []
        for desired in owner.objects:
            if desired.subresource is not None:
                objects.append(desired)
                continue
            body, is_named = secrets.protect_body(desired.body, wrap)
            objects.append(replace(desired, body=body))
            if is_named:
                named.append(desired.identity)
        owners[key] = replace(owner, objects=objects, outputs=secrets.protect(owner.outputs, wrap))
    warnings = [*plan.warnings, *secrets.warnings, *([identity_warning(sorted(named))] if named else [])]
    return replace(plan, owners_by_key=owners, warnings=warnings, outputs=secrets.protect(plan.outputs, wrap))


def publishable(config: MaasConfig, plan: Plan, observed: Observed, issues: list[ConfigIssue]) -> dict[str, Desired]:
    """The status writes a stopped run publishes; {} when it must stop at once: no tenant concerned, a write the
    API server would refuse, or a preview of a configuration with problems besides preflight (its objects must not
    be previewed as if they could be applied)."""
    failed = failed_tenant_writes(config, plan, observed)
    if not failed or failure_issues(failed):
        return {}
    only_preflight = set(issues) <= set(preflight(config, plan, observed))
    return failed if only_preflight or not pulumi.runtime.is_dry_run() else {}


def _stop_after_publishing(plan: Plan, config: MaasConfig, failed: dict[str, Desired], issues: list) -> None:
    """Preview: the whole plan with the stopped form of those tenants' status resources, and a warning. Update:
    those status resources alone, then the run fails listing every problem, once they are registered."""
    for name, write in failed.items():
        plan.owner("Tenant", name).outputs["phase"] = write.body["status"]["phase"]
    listed = "\n".join(f"  - {issue}" for issue in issues)
    if pulumi.runtime.is_dry_run():
        plan.warnings[:0] = [f"{PREVIEW_STOP.format(tenants=_phases(failed))}:\n{listed}"]
        deploy(kept_secret(plan, from_pulumi()), config, failed)
        return
    writers = deploy_failed(plan, config, failed)
    message = f"{UPDATE_STOP.format(tenants=_phases(failed), count=len(issues))}:\n{listed}"
    pulumi.Output.all(*[writer.urn for writer in writers]).apply(lambda _: _stop(message))


def _phases(failed: dict[str, Desired]) -> str:
    return ", ".join(f"{name} ({write.body['status']['phase']})" for name, write in sorted(failed.items()))


def _stop(message: str) -> None:
    """Raised once the status resources are registered: the engine then deletes nothing this run left out."""
    raise pulumi.RunError(message)


def raw_from_pulumi() -> dict[str, Any]:
    """The `maas:` keys of the running stack, parsed from the JSON strings the engine passes."""
    config = pulumi.Config(NAMESPACE)
    prefix = f"{NAMESPACE}:"
    present = {*pulumi.runtime.config.CONFIG.get(), *pulumi.runtime.config.get_config_env()}
    names = sorted(name[len(prefix) :] for name in present if name.startswith(prefix))
    return {name: config.get_object(name) if name in KEYS else config.get(name) for name in names}


def observe(config: MaasConfig) -> tuple[Observed, list[str]]:
    """The snapshot `pulumi preview`/`up` plans against, read-only; ObservationError when the cluster cannot be
    read. Rendering to a directory talks to no cluster, so it observes nothing, as `platform.observe: false`."""
    kubernetes = config.platform.kubernetes
    if kubernetes.renderYamlToDirectory is not None:
        return Observed.nothing(), [RENDER_ONLY]
    if not config.platform.observe:
        return Observed.nothing(), [NOT_OBSERVING]
    connection = reader_connection(kubernetes)  # the provider's cluster, also for a `$KUBECONFIG` list
    return read_cluster(what_to_observe(config), connection.kubeconfig, connection.context), []


def main() -> None:
    """`pulumi preview`/`up`: configuration and observation errors end the program as one clean message, logged
    as an error, and the exit code that tells the language host it was shown (ALREADY_REPORTED): no Python
    traceback with the program's source, and no generic second line."""
    if not raw_from_pulumi():  # an empty stack file, or an import that did not finish writing it
        pulumi.log.warn(no_keys_warning(f"stack {pulumi.get_stack()}", "its configuration has none"))
    try:
        run(publish_failed=True)
    except (ConfigError, ObservationError) as error:
        pulumi.log.error(str(error))
        raise SystemExit(ALREADY_REPORTED) from None
