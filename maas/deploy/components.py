"""The Pulumi layer: one explicit Kubernetes provider and one component per owner of the desired state.

Nothing is computed here; every object arrives complete from `maas.plan`.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .. import naming
from ..config import PlatformConfig
from ..plan.desired import Desired, Owner, Plan, object_identity
from .status_writer import StatusPatch, status_inputs

COMPONENT_TYPE = "maas:index:{kind}"


def type_token(api_version: str, kind: str) -> str:
    """The pulumi-kubernetes type of an object; the core group is spelled `core` there."""
    return f"kubernetes:{api_version if '/' in api_version else 'core/' + api_version}:{kind}"


class KubernetesObject(pulumi.CustomResource):
    """Any Kubernetes object, registered exactly as computed (CRD casing kept, nothing translated)."""

    def __init__(self, desired: Desired, opts: pulumi.ResourceOptions) -> None:
        super().__init__(type_token(desired.api_version, desired.kind), desired.logical_name, desired.body, opts)


class OwnerComponent(pulumi.ComponentResource):
    """A tenant, a model or the shared platform: the parent of the objects it owns, so they go together."""

    def __init__(self, owner: Owner) -> None:
        super().__init__(COMPONENT_TYPE.format(kind=owner.kind), owner.name, None)
        self.owner = owner


class _Registrar:
    """Registers objects under their components; objects with `depends_on` after the objects they wait for."""

    def __init__(self, providers: dict[bool, k8s.Provider], platform: PlatformConfig) -> None:
        self.providers = providers
        options = platform.kubernetes
        self.connection = {k: v for k, v in (("kubeconfig", options.kubeconfig), ("context", options.context)) if v}
        self.observe = platform.observe
        self.registered: dict[str, pulumi.Resource] = {}

    def register_all(self, components: list[OwnerComponent]) -> None:
        pending = [(d, c) for c in components for d in c.owner.objects]
        while pending:
            ready = [(d, c) for d, c in pending if all(i in self.registered for i in d.depends_on)]
            if not ready:
                raise ValueError(f"dependency cycle or unknown dependency among {[d.identity for d, _ in pending]}")
            for desired, component in ready:
                self.registered[desired.identity] = self._register(desired, component)
            pending = [(d, c) for d, c in pending if d.identity not in self.registered]

    def _register(self, desired: Desired, parent: OwnerComponent) -> pulumi.Resource:
        depends_on = [self.registered[i] for i in desired.depends_on] or None
        if desired.subresource == "status":
            resource = naming.STATUS_RESOURCES[desired.kind]
            facts = desired.status_facts if self.observe else None  # `observe: false`: the writer reads nothing
            inputs = status_inputs(desired.body, resource, self.connection, self._uid(desired), facts)
            options = pulumi.ResourceOptions(parent=parent, depends_on=depends_on)
            return StatusPatch(desired.logical_name, inputs, options)
        options = pulumi.ResourceOptions(
            parent=parent,
            provider=self.providers[desired.adopt],
            depends_on=depends_on,
            retain_on_delete=desired.retain_on_delete or None,
            ignore_changes=list(desired.ignore_changes) or None,
        )
        return KubernetesObject(desired, options)

    def _uid(self, desired: Desired) -> pulumi.Output | None:
        """The target's uid: a re-created object (new uid, empty status) gets its status written again."""
        target = self.registered.get(object_identity(desired.kind, desired.namespace, desired.name))
        metadata = getattr(target, "metadata", None)
        return None if metadata is None else metadata.apply(lambda m: (m or {}).get("uid"))


ADOPTING_PROVIDER = "kubernetes-adopt"


def kubernetes_provider(platform: PlatformConfig, name: str = "kubernetes", upsert: bool = False) -> k8s.Provider:
    """A provider for the cluster of `platform.kubernetes`; `clusterIdentifier` keeps a kubeconfig change from
    replacing every resource. `upsert` applies over objects that already exist instead of failing."""
    options = platform.kubernetes
    args: dict[str, Any] = {
        "kubeconfig": options.kubeconfig,
        "context": options.context,
        "cluster_identifier": options.clusterIdentifier,
        "render_yaml_to_directory": options.renderYamlToDirectory,
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


def deploy(plan: Plan, platform: PlatformConfig) -> None:
    components = [OwnerComponent(owner) for owner in plan.owners]
    _Registrar(providers_for(plan, platform), platform).register_all(components)
    for component in components:
        component.register_outputs(component.owner.outputs)
    for warning in plan.warnings:
        pulumi.log.warn(warning)
    for name, value in plan.outputs.items():
        pulumi.export(name, value)
