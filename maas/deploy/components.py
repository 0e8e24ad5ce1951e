"""The Pulumi layer: one explicit Kubernetes provider, one component per group of owners (`maas.plan.grouping`:
a tenant with its subscriptions and auth policies, a model, the shared platform), and a tenant's status writes in
bounded batches (`batches.py`) under its component: its own statuses and those of the models it serves. With
`platform.subscriptionBatches` a tenant's MaaSSubscriptions are bounded batches too (`object_batch.py`), registered
after the stack's TokenRateLimitPolicies; every other object is a pulumi-kubernetes resource of its own.

Nothing is computed here; every object arrives complete from `maas.plan`. Objects whose owner joined its tenant's
component carry `aliases`: the URNs they had under a component of their own, so Pulumi moves them instead of
replacing them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .. import naming
from ..config import KEYS, MaasConfig, PlatformConfig
from ..config.kubernetes import provider_connection, reader_connection
from ..config.secrets import NONE, Secrets, secret_values
from ..config.stackfile import NAMESPACE
from ..observe import KINDS
from ..plan.batching import is_batched
from ..plan.desired import Desired, Owner, Plan, object_identity
from ..plan.grouping import Group, component_groups, status_writes_by_tenant
from ..plan.outputs import exported
from .batches import json_size, object_batches, status_batches
from .object_batch import ObjectBatch, batch_inputs, encode_objects, object_key
from .status_writer import StatusWrites, status_inputs, status_target, target_key

COMPONENT_TYPE = "maas:index:{kind}"
SECRET_BYTES = 64
FOLLOWED_KINDS = frozenset({"TokenRateLimitPolicy"})  # what a batch of subscriptions is applied after


def type_token(api_version: str, kind: str) -> str:
    """The pulumi-kubernetes type of an object; the core group is spelled `core` there."""
    return f"kubernetes:{api_version if '/' in api_version else 'core/' + api_version}:{kind}"


def kubernetes_object(desired: Desired, opts: pulumi.ResourceOptions) -> pulumi.CustomResource:
    """Any Kubernetes object, registered exactly as computed (CRD casing kept, nothing translated).

    A plain CustomResource, not a subclass: the SDK records the program's stack trace for a resource whose class
    has a constructor of its own (`_get_stack_trace`: the third `__init__` frame), about 16 frames here, each turned
    into a file URI, a tenth of a second per 1,000 objects; every object would point at this line anyway."""
    type_ = type_token(desired.api_version, desired.kind)
    return pulumi.CustomResource(type_, desired.logical_name, desired.body, opts)


class OwnerComponent(pulumi.ComponentResource):
    """A tenant, a model or the shared platform: the parent of the objects it owns, so they go together."""

    def __init__(self, group: Group) -> None:
        super().__init__(COMPONENT_TYPE.format(kind=group.kind), group.name, None)
        self.group = group


def former_urn(owner: Owner, desired: Desired) -> str:
    """The URN an object had while its owner was a component of its own (`maas:index:Subscription`, ...); the
    engine's form, which leaves the root stack out of the parent chain."""
    chain = f"{COMPONENT_TYPE.format(kind=owner.kind)}${type_token(desired.api_version, desired.kind)}"
    return f"urn:pulumi:{pulumi.get_stack()}::{pulumi.get_project()}::{chain}::{desired.logical_name}"


@dataclass
class _Single:
    """One object, registered by pulumi-kubernetes after the objects it depends on."""

    desired: Desired
    owner: Owner
    component: OwnerComponent
    identities: tuple[str, ...] = field(init=False)
    needs: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.identities = (self.desired.identity,)
        self.needs = set(self.desired.depends_on)

    def register(self, registrar: _Registrar) -> pulumi.Resource:
        return registrar._register(self.desired, self.owner, self.component)


@dataclass
class _Batch:
    """A batch of a tenant's objects, registered as one resource after everything its members depend on and the
    objects it must follow (`after`)."""

    name: str
    component: OwnerComponent
    members: list[Desired]
    after: frozenset[str]
    identities: tuple[str, ...] = field(init=False)
    needs: set[str] = field(init=False)

    def __post_init__(self) -> None:
        self.identities = tuple(d.identity for d in self.members)
        self.needs = ({i for d in self.members for i in d.depends_on} | self.after) - set(self.identities)

    def register(self, registrar: _Registrar) -> pulumi.Resource:
        return registrar._register_batch(self)


def _key(desired: Desired) -> str:
    return object_key(desired.body)


def _size(desired: Desired) -> int:
    """A body's JSON bytes; a text a `secure:` value made a Pulumi secret (`program.kept_secret`) counts as
    SECRET_BYTES, the same in every run (its value is not known until it resolves)."""
    return json_size(desired.body, default=lambda _: "x" * SECRET_BYTES)


class _Registrar:
    """Registers objects (one by one, or a batch at a time) under their components, each after the objects it
    `depends_on`; then each tenant's status writes in batches, after everything they describe."""

    def __init__(
        self,
        providers: dict[bool, k8s.Provider] | None,
        config: MaasConfig,
        failed: Mapping[str, Desired] | None = None,
        secrets: bool = False,
    ) -> None:
        platform = config.platform
        self.config = config
        self.providers = providers or {}
        # The cluster the provider and the observation use (`config.kubernetes.reader_connection`): a secret input.
        cluster = reader_connection(platform.kubernetes)
        self.connection = {k: v for k, v in (("kubeconfig", cluster.kubeconfig), ("context", cluster.context)) if v}
        self.observe = platform.observe
        self.failed = failed or {}  # tenant -> the MaasTenantConfig status write a failed preflight publishes
        self.registered: dict[str, pulumi.Resource] = {}
        self.secrets = secrets  # whether a `secure:` value may have made part of an object a Pulumi secret

    def register_all(self, components: list[OwnerComponent]) -> None:
        singles = self._singles(components)
        pending = [*singles, *self._batches(components, singles)]
        while pending:
            ready = [entry for entry in pending if entry.needs <= self.registered.keys()]
            if not ready:
                raise ValueError(f"dependency cycle or unknown dependency among {[e.identities for e in pending]}")
            for entry in ready:
                resource = entry.register(self)
                self.registered.update(dict.fromkeys(entry.identities, resource))
            pending = [entry for entry in pending if entry.identities[0] not in self.registered]
        writes = status_writes_by_tenant([component.group for component in components], self.config)
        for component in components:
            if component.group.kind == "Tenant":
                self._register_statuses(component, writes.get(component.group.name, []))

    def _singles(self, components: list[OwnerComponent]) -> list[_Single]:
        return [
            _Single(desired, owner, component)
            for component in components
            for owner in component.group.owners
            for desired in owner.objects
            if desired.subresource is None and not self._is_batched(desired)
        ]

    def _batches(self, components: list[OwnerComponent], singles: list[_Single]) -> list[_Batch]:
        """A tenant's batched objects (`plan.batching`) in bounded batches (`batches.py`), one resource each, after
        the Namespaces this stack registers for them (pulumi-kubernetes retries a create whose namespace is not
        there yet; a batch does not) and the stack's TokenRateLimitPolicies: a new subscription is applied once the
        policies that meter it are, and the batches, the largest resources after the status writers, come late in
        a first `up`, whose writes to a DIY backend grow with the state at each step (`bench/state_growth.py`)."""
        registered = {s.desired.identity for s in singles}
        policies = frozenset(s.desired.identity for s in singles if s.desired.kind in FOLLOWED_KINDS)
        found = []
        for component in components:
            members = [d for owner in component.group.owners for d in owner.objects if self._is_batched(d)]
            parts = object_batches(f"subscriptions/{component.group.name}", members, _key, _size) if members else []
            for part, batch in parts:
                namespaces = {object_identity("Namespace", None, d.namespace) for d in batch} & registered
                found.append(_Batch(part, component, batch, policies | namespaces))
        return found

    def _is_batched(self, desired: Desired) -> bool:
        return is_batched(desired, self.config.platform)

    def _register_batch(self, batch: _Batch) -> pulumi.Resource:
        """One batch, its objects encoded once they are known: a part that a `secure:` value made a Pulumi secret
        (`program.kept_secret`) makes the whole `objects` input secret."""
        objects = [(KINDS[d.kind].plural, d.body) for d in batch.members]
        marker = f"{pulumi.get_project()}/{pulumi.get_stack()}:{batch.name}"
        inputs = batch_inputs([] if self.secrets else objects, self.connection, marker)
        if self.secrets:
            inputs["objects"] = pulumi.Output.from_input([list(pair) for pair in objects]).apply(encode_objects)
        options = pulumi.ResourceOptions(
            parent=batch.component, depends_on=self._resources(sorted(batch.needs)) or None
        )
        return ObjectBatch(batch.name, inputs, options)

    def _resources(self, identities: Iterable[str]) -> list[pulumi.Resource]:
        """The resources registering these objects, in their order, each once (a batch registers many)."""
        return list({id(r): r for r in (self.registered[i] for i in identities)}.values())

    def _register(self, desired: Desired, owner: Owner, parent: OwnerComponent) -> pulumi.Resource:
        options = pulumi.ResourceOptions(
            parent=parent,
            provider=self.providers[desired.adopt],
            depends_on=self._resources(desired.depends_on) or None,
            retain_on_delete=desired.retain_on_delete or None,
            ignore_changes=list(desired.ignore_changes) or None,
            aliases=[former_urn(owner, desired)] if owner.kind != parent.group.kind else None,
            # Adopt a live object Pulumi must not change instead of creating over it (`Desired.import_id`).
            import_=desired.import_id,
        )
        return kubernetes_object(desired, options)

    def register_failed(self, components: list[OwnerComponent], groups: list[Group]) -> list[pulumi.Resource]:
        """Only the status resources of the tenants a failed preflight concerns (see `_register_failed`), batched
        with the statuses of every group, registered or not, as the update that is not stopped batches them."""
        writes = status_writes_by_tenant(groups, self.config)
        return [
            resource
            for component in components
            if self._is_failed(component)
            for resource in self._register_failed(component, writes.get(component.group.name, []))
        ]

    def _is_failed(self, component: OwnerComponent) -> bool:
        return component.group.kind == "Tenant" and component.group.name in self.failed

    def _register_statuses(self, component: OwnerComponent, writes: list[Desired]) -> None:
        """One resource per batch of the tenant's status writes, each depending on the union of what its statuses
        describe, and replaced with any of its objects that Pulumi replaces (its create then writes them all)."""
        if self._is_failed(component):
            self._register_failed(component, writes)
            return
        targets_of = [self._target(desired) for desired in writes]
        by_key = {target_key(target): desired for target, desired in zip(targets_of, writes, strict=True)}
        for name, targets in status_batches(f"statuses/{component.group.name}", targets_of):
            members = [by_key[target_key(target)] for target in targets]
            dependencies = {identity for desired in members for identity in desired.depends_on}
            if unknown := sorted(i for i in dependencies if i not in self.registered):
                raise ValueError(f"status writes of {component.group.name} depend on {unknown}, which are not objects")
            identities = [object_identity(d.kind, d.namespace, d.name) for d in members]
            objects = self._resources(i for i in identities if i in self.registered)
            options = pulumi.ResourceOptions(
                parent=component,
                depends_on=self._resources(sorted(dependencies)),
                # A batch is never replaced: it recreates no object (`object_batch.py`).
                replace_with=[o for o in objects if not isinstance(o, ObjectBatch)] or None,
            )
            StatusWrites(name, status_inputs(targets, self.connection), options)

    def _register_failed(self, component: OwnerComponent, writes: list[Desired]) -> list[pulumi.Resource]:
        """The tenant's status resources as a stopped update registers them, the same in preview and update, cut
        from the planned statuses as the update that is not stopped cuts them (a preview that registered fewer
        would show the others deleted): every planned target (shown, not written), the MaasTenantConfig one as the
        failed preflight judged it, written alone (`writeOnly`) by its batch; the other batches write nothing. No
        dependencies, since that update registers none of the objects."""
        failed = self.failed[component.group.name]
        only = target_key(self._target(failed))
        resources = []
        for name, planned in status_batches(f"statuses/{component.group.name}", [self._target(d) for d in writes]):
            targets = [self._target(failed) if target_key(t) == only else t for t in planned]
            write_only = [only] if any(target_key(t) == only for t in planned) else []
            inputs = status_inputs(targets, self.connection, write_only=write_only)
            resources.append(StatusWrites(name, inputs, pulumi.ResourceOptions(parent=component)))
        return resources

    def _target(self, desired: Desired) -> dict[str, Any]:
        facts = desired.status_facts if self.observe else None  # `observe: false`: the writer reads nothing
        return status_target(desired.body, naming.STATUS_RESOURCES[desired.kind], facts)


def from_pulumi(project_dir: Path = Path(".")) -> Secrets:
    """The secrets of the running program's `maas:` configuration (the language host runs it in the project
    directory, so the stack file is found there)."""
    names = [name for name in KEYS if pulumi.runtime.is_config_secret(f"{NAMESPACE}:{name}")]
    if not names:
        return NONE
    config = pulumi.Config(NAMESPACE)
    values = {name: config.get_object(name) for name in names}
    return secret_values(values, project_dir / f"Pulumi.{pulumi.get_stack()}.yaml")


ADOPTING_PROVIDER = "kubernetes-adopt"


def kubernetes_provider(platform: PlatformConfig, name: str = "kubernetes", upsert: bool = False) -> k8s.Provider:
    """A provider for the cluster of `platform.kubernetes`; `clusterIdentifier` keeps a kubeconfig change from
    replacing every resource. `upsert` applies over objects that already exist instead of failing.

    The connection is `config.kubernetes.provider_connection`'s (no context when rendering, "" for a `$KUBECONFIG`
    list). A given kubeconfig is always a secret (a path, or credentials), and so is every value a `secure:`
    configuration value wrote (`config.secrets`)."""
    options = platform.kubernetes
    connection = provider_connection(options)
    secrets = from_pulumi()
    args: dict[str, Any] = {
        "kubeconfig": pulumi.Output.secret(connection.kubeconfig) if connection.kubeconfig else connection.kubeconfig,
        "context": secrets.protect(connection.context, pulumi.Output.secret),
        "cluster_identifier": secrets.protect(options.clusterIdentifier, pulumi.Output.secret),
        "render_yaml_to_directory": secrets.protect(options.renderYamlToDirectory, pulumi.Output.secret),
        "enable_server_side_apply": options.enableServerSideApply,
        "upsert_existing_objects": options.upsertExistingObjects or upsert or None,
    }
    return k8s.Provider(name, **{k: v for k, v in args.items() if v is not None})


def providers_for(plan: Plan, platform: PlatformConfig) -> dict[bool, k8s.Provider]:
    """The provider of each object, keyed by `Desired.adopt`. Objects that may pre-exist get a second, upserting
    provider, so that adopting them never lets the rest of the stack silently take over live objects."""
    main = kubernetes_provider(platform)
    adopting = platform.kubernetes.upsertExistingObjects or not any(d.adopt for d in plan.objects())
    return {False: main, True: main if adopting else kubernetes_provider(platform, ADOPTING_PROVIDER, upsert=True)}


def deploy(plan: Plan, config: MaasConfig, failed: Mapping[str, Desired] | None = None) -> None:
    """Everything the plan holds; with `failed`, those tenants' status resources as a stopped update registers
    them (the preview of an update that a failed preflight stops, `program.py`)."""
    components = [OwnerComponent(group) for group in component_groups(plan, config)]
    secrets = bool(from_pulumi())
    _Registrar(providers_for(plan, config.platform), config, failed, secrets).register_all(components)
    for component in components:
        component.register_outputs(component.group.outputs())
    for warning in plan.warnings:
        pulumi.log.warn(warning)
    for name, value in exported(config, plan.outputs).items():
        pulumi.export(name, value)


def deploy_failed(plan: Plan, config: MaasConfig, failed: Mapping[str, Desired]) -> list[pulumi.Resource]:
    """Only what an update that a failed preflight stops registers: the components of the tenants it concerns
    and their status resources (no provider, no object, no other component). The program then fails, so the
    engine deletes nothing of what this run left out."""
    groups = component_groups(plan, config)
    tenants = [OwnerComponent(g) for g in groups if g.kind == "Tenant" and g.name in failed]
    return _Registrar(None, config, failed).register_failed(tenants, groups)
