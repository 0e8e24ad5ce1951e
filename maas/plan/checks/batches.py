"""`platform.subscriptionBatches`: a batch holds only subscriptions a batch of this stack created, and a
subscription a batch holds is never registered on its own while the batch still holds it.

- A subscription the plan batches that exists live without the batch annotation was created by something else: a
  stack that registers subscriptions one by one (whose state would delete it once a batch holds it), another
  stack, `pulumi import`, the controller.
- A subscription the plan registers on its own (batches off, or one Pulumi must adopt or leave alone, `batching`)
  that carries the annotation is still held by the batch that applied it, and that batch, updated without it or
  deleted, would delete it.

Either stops the update before anything is registered, naming the subscriptions and the way out; the provider
refuses foreign objects again at create time, for what the snapshot could not see.
"""

from __future__ import annotations

from collections.abc import Iterable

from ... import naming
from ...config import MaasConfig
from ...config.batches import PATH
from ...config.errors import ConfigIssue
from ...observe import Observed
from ..batching import BATCHED_KINDS, is_batched
from ..desired import Desired, Plan

SHOWN = 5
ANNOTATION = naming.BATCH_ANNOTATION
_GROUP = naming.MAAS_API_VERSION.partition("/")[0]

FOREIGN = (
    "{names}: live MaaSSubscription(s) this stack would batch carry no {annotation} annotation, so no subscription "
    "batch created them: a stack that registers subscriptions one by one (whose state would delete them once a "
    "batch holds them), another stack, `pulumi import` or the controller did. Keep subscriptionBatches for stacks "
    "that start with it (docs/scale.md#subscription-batches), or remove it; adopt an object only if no Pulumi "
    "stack registers it as a resource of its own: `kubectl annotate -n NAMESPACE maassubscriptions.{group} NAME "
    "{annotation}=PROJECT/STACK:adopted`"
)
HELD = (
    "{names}: live MaaSSubscription(s) this stack registers one by one ({why}) carry the {annotation} annotation: "
    "the subscription batch that applied them still holds them and would delete them. Release each first: "
    "`kubectl annotate -n NAMESPACE maassubscriptions.{group} NAME {annotation}-` (the batch then leaves it in "
    "place); an object Pulumi creates one by one then needs adopting (`python -m maas import`, or "
    "maas:platform.kubernetes.upsertExistingObjects) (docs/scale.md#subscription-batches)"
)


def batch_issues(config: MaasConfig, plan: Plan, observed: Observed) -> list[ConfigIssue]:
    platform = config.platform
    objects = [d for d in plan.objects() if d.body["kind"] in BATCHED_KINDS and d.subresource is None]
    batched = [d for d in objects if is_batched(d, platform)]
    alone = [d for d in objects if not is_batched(d, platform)]
    why = "it adopts or leaves them alone" if platform.subscriptionBatches else "subscriptionBatches is off"
    issues = []
    if foreign := _live(observed, batched, marked=False):
        issues.append(ConfigIssue(PATH, FOREIGN.format(names=_names(foreign), annotation=ANNOTATION, group=_GROUP)))
    if held := _live(observed, alone, marked=True):
        message = HELD.format(names=_names(held), why=why, annotation=ANNOTATION, group=_GROUP)
        issues.append(ConfigIssue(PATH, message))
    return issues


def _live(observed: Observed, objects: Iterable[Desired], marked: bool) -> list[str]:
    """`namespace/name` of each object present live whose batch annotation is set (`marked`) or not."""
    found = []
    for desired in objects:
        meta = observed.meta(desired.kind, desired.namespace, desired.name)
        if meta is not None and (meta.annotation(ANNOTATION) is not None) == marked:
            found.append(f"{desired.namespace}/{desired.name}")
    return sorted(found)


def _names(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return f"{len(names)} ({shown} and {len(names) - SHOWN} more)" if len(names) > SHOWN else f"{len(names)} ({shown})"
