"""`platform.kubernetes`: the option combinations the Kubernetes provider refuses or turns against a deployed stack,
and the one connection the provider, the observation and the status writer share.

Read in pulumi-kubernetes `provider/pkg/provider/provider.go` at 94977969 (v4.32.0 and 27 commits; the pinned
4.34.2 is not in the stored repository, so its own changes are unverified):

- `CheckConfig` (402-424): with `renderYamlToDirectory`, a `cluster`, `context` or `kubeconfig` (unless equal to
  `$KUBECONFIG`) fails with "arg is not compatible with "renderYamlToDirectory" arg".
- `DiffConfig` (490-499, 531-534): a changed render directory replaces every resource of the provider, the old
  ones deleted through the old provider (from the cluster); an unchanged `clusterIdentifier` cancels every
  replacement, and the state then records rendered files as the cluster's objects.
- `await/await.go` 190: an existing object is applied over (upsert) only with server-side apply; without it a
  create is a POST that fails with AlreadyExists (276-290).
- `util.go` 135-169: `kubeconfig` is a path when `os.Stat` finds one, else a kubeconfig's contents, so a
  `$KUBECONFIG` list (`a:b`), which the Python SDK copies into `kubeconfig` (pulumi_kubernetes/provider.py 590-591),
  reads as broken contents; provider.go 872-900: an empty `kubeconfig` lets client-go's loading rules read
  `$KUBECONFIG`, a list included (client-go v0.36.2 `tools/clientcmd/loader.go` 160-180; the first file to set
  `current-context` wins, 190 and 256-261).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import ConfigIssue
from .schema import KubernetesProvider

PATH = "maas:platform.kubernetes"
RENDER = f"{PATH}.renderYamlToDirectory"
OFFLINE = "`python -m maas render --stack <stack>` renders the manifests offline, with no provider"
_CLUSTER_NAMES = {
    "kubeconfig": (
        'pulumi-kubernetes refuses the combination (\'"kubeconfig" arg is not compatible with '
        '"renderYamlToDirectory" arg\'), and a stack that names its cluster is one that deploys'
    ),
    "context": (
        'pulumi-kubernetes refuses the combination (\'"context" arg is not compatible with '
        '"renderYamlToDirectory" arg\'), and a stack that names its cluster is one that deploys'
    ),
    "clusterIdentifier": (
        "it names the cluster this stack deploys to, and with it unchanged the provider replaces nothing when "
        "rendering starts: the state would record the rendered files as the cluster's objects"
    ),
}


def kubernetes_option_issues(options: KubernetesProvider) -> list[ConfigIssue]:
    """The combinations of `platform.kubernetes` the provider refuses, or that cannot do what they say."""
    issues: list[ConfigIssue] = []
    if options.renderYamlToDirectory == "":
        issues.append(
            ConfigIssue(RENDER, "must not be empty (the provider reads '' as off); give a directory, or remove the key")
        )
    elif options.renderYamlToDirectory is not None:
        for key, why in _CLUSTER_NAMES.items():
            if getattr(options, key) is not None:
                issues.append(
                    ConfigIssue(
                        f"{PATH}.{key}",
                        f"is not compatible with {RENDER}: {why}; render on a stack of its own without {key} "
                        f"(switching a deployed stack to rendering replaces every resource, deleting the live "
                        f"objects), or remove renderYamlToDirectory; {OFFLINE}",
                    )
                )
    if options.upsertExistingObjects and not options.enableServerSideApply:
        issues.append(
            ConfigIssue(
                f"{PATH}.upsertExistingObjects",
                "has no effect with enableServerSideApply: false: pulumi-kubernetes applies over an existing object "
                "only with server-side apply, so creating one fails with AlreadyExists; remove "
                "enableServerSideApply: false (or upsertExistingObjects)",
            )
        )
    return issues


@dataclass(frozen=True)
class Connection:
    """Which kubeconfig and context to use. For the provider, `kubeconfig` None lets the SDK default it to
    `$KUBECONFIG` and "" makes the provider read `$KUBECONFIG` itself; for the observation reader and the status
    writer, None means their own reading of `$KUBECONFIG`."""

    kubeconfig: str | None
    context: str | None


def kubeconfig_list(environ: Mapping[str, str] = os.environ) -> list[str] | None:
    """The files of a `$KUBECONFIG` that lists several (`os.pathsep`), in order, without repeats; None otherwise."""
    value = environ.get("KUBECONFIG", "")
    if os.pathsep not in value:
        return None
    return list(dict.fromkeys(path for path in value.split(os.pathsep) if path))


def provider_connection(options: KubernetesProvider, environ: Mapping[str, str] = os.environ) -> Connection:
    """What the Kubernetes provider is given. Rendering to a directory: no context (the configuration refuses
    one), and for a `$KUBECONFIG` list "" so that the provider can still reach the cluster it looks CRDs up in."""
    paths = kubeconfig_list(environ) if options.kubeconfig is None else None
    if options.renderYamlToDirectory is not None:
        return Connection("" if paths is not None else None, None)
    if paths is None:
        return Connection(options.kubeconfig, options.context)
    return Connection("", options.context or kubectl_context(paths))


def reader_connection(options: KubernetesProvider, environ: Mapping[str, str] = os.environ) -> Connection:
    """What the observation and the status writer are given: the configured values; for a `$KUBECONFIG` list and
    no configured context, the context kubectl (and the provider) would use, since the reader's merge lets the last
    file that sets `current-context` win, client-go the first."""
    paths = kubeconfig_list(environ) if options.kubeconfig is None else None
    if paths is None or options.context is not None:
        return Connection(options.kubeconfig, options.context)
    return Connection(None, kubectl_context(paths))


def kubectl_context(paths: list[str]) -> str | None:
    """The `current-context` of the first file of `paths` that sets one (client-go's merge); a file that cannot be
    read is skipped here: the reader reports it."""
    for path in paths:
        try:
            document = yaml.load(Path(path).expanduser().read_text(encoding="utf-8"), Loader=_LOADER)
        except (OSError, ValueError, yaml.YAMLError):
            continue
        context = document.get("current-context") if isinstance(document, dict) else None
        if isinstance(context, str) and context:
            return context
    return None


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
