"""Provider options the plan makes impossible: `enableServerSideApply: false` while the plan adopts objects.

Objects that may exist before the first `pulumi up` (`Desired.adopt`: the tenant and infra Namespaces, OpenShift's
`openshift-service-ca.crt`) go through a provider with `upsertExistingObjects`. pulumi-kubernetes applies over an
existing object only with server-side apply (`provider/pkg/await/await.go` 190 at 94977969, v4.32.0 and 27
commits): without it a create is a POST that fails with AlreadyExists (276-290). The update is refused rather
than server-side apply turned on behind the option's back for those objects: the option says the cluster or its
operator wants no server-side apply, and one provider that ignores it would be a surprise.
"""

from __future__ import annotations

from ...config import ConfigIssue, MaasConfig
from ...listing import listed
from ..desired import Plan

PATH = "maas:platform.kubernetes.enableServerSideApply"
SHOWN = 3  # names shown per kind


def provider_option_issues(config: MaasConfig, plan: Plan) -> list[ConfigIssue]:
    options = config.platform.kubernetes
    if options.enableServerSideApply or options.renderYamlToDirectory is not None:
        return []  # rendering writes files: nothing can already exist
    adopted: dict[str, list[str]] = {}
    for desired in plan.objects():
        if desired.adopt and desired.subresource is None:
            name = f"{desired.namespace}/{desired.name}" if desired.namespace else desired.name
            adopted.setdefault(desired.kind, []).append(name)
    if not adopted:
        return []
    count = sum(len(names) for names in adopted.values())
    shown = "; ".join(f"{kind} {_names(sorted(names))}" for kind, names in sorted(adopted.items()))
    return [
        ConfigIssue(
            PATH,
            f"is false, but {count} object(s) the plan registers may already exist ({shown}): "
            "pulumi-kubernetes applies over an existing object only with server-side apply, so without it their "
            "creation fails with AlreadyExists (on OpenShift always, for openshift-service-ca.crt); remove "
            "enableServerSideApply: false",
        )
    ]


def _names(names: list[str]) -> str:
    return listed(names, SHOWN)
