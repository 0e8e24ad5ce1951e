"""The Pulumi layer: one explicit Kubernetes provider and one component per owner of the desired state.

Nothing is computed here; every object arrives complete from `plan.py`.
"""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from .config import PlatformConfig
from .desired import Desired, Owner, Plan

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

    def __init__(self, owner: Owner, provider: k8s.Provider) -> None:
        super().__init__(COMPONENT_TYPE.format(kind=owner.kind), owner.name, None)
        for desired in owner.objects:
            KubernetesObject(desired, _options(desired, self, provider))
        self.register_outputs(owner.outputs)


def _options(desired: Desired, parent: pulumi.Resource, provider: k8s.Provider) -> pulumi.ResourceOptions:
    return pulumi.ResourceOptions(
        parent=parent,
        provider=provider,
        retain_on_delete=desired.retain_on_delete or None,
        ignore_changes=list(desired.ignore_changes) or None,
    )


def kubernetes_provider(platform: PlatformConfig) -> k8s.Provider:
    """The one provider every object uses; `clusterIdentifier` keeps a kubeconfig change from replacing all."""
    options = platform.kubernetes
    args: dict[str, Any] = {
        "kubeconfig": options.kubeconfig,
        "context": options.context,
        "cluster_identifier": options.clusterIdentifier,
        "render_yaml_to_directory": options.renderYamlToDirectory,
        "enable_server_side_apply": options.enableServerSideApply,
    }
    return k8s.Provider("kubernetes", **{k: v for k, v in args.items() if v is not None})


def deploy(plan: Plan, platform: PlatformConfig) -> None:
    provider = kubernetes_provider(platform)
    for owner in plan.owners:
        OwnerComponent(owner, provider)
    for warning in plan.warnings:
        pulumi.log.warn(warning)
    for name, value in plan.outputs.items():
        pulumi.export(name, value)
