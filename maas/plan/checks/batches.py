"""`platform.subscriptionBatches`: a batch takes over only objects a batch of this stack created.

A subscription that exists live without the batch's annotation was created by something else: a stack that
registers subscriptions one by one (whose state would delete it once the batch holds it), another stack, `pulumi
import`, the controller. The update stops before anything is registered, naming them; the provider refuses such
an object again at create time, for what the snapshot could not see.
"""

from __future__ import annotations

from ... import naming
from ...config import MaasConfig
from ...config.batches import PATH
from ...config.errors import ConfigIssue
from ...observe import Observed
from ..batching import is_batched
from ..desired import Plan

SHOWN = 5

FOREIGN = (
    "{count} live MaaSSubscription(s) this stack would batch carry no {annotation} annotation, so no subscription "
    "batch created them: {names}. A batch takes over only objects it created; these were created by a stack that "
    "registers subscriptions one by one, another stack, `pulumi import` or the controller, and a stack whose state "
    "holds them one by one would delete them once a batch holds them. Keep subscriptionBatches for stacks that "
    "start with it (docs/scale.md#subscription-batches), or remove it"
)


def batch_issues(config: MaasConfig, plan: Plan, observed: Observed) -> list[ConfigIssue]:
    platform = config.platform
    if not platform.subscriptionBatches:
        return []
    foreign = sorted(
        f"{desired.namespace}/{desired.name}"
        for desired in plan.objects()
        if is_batched(desired, platform) and _unmarked(observed, desired.kind, desired.namespace, desired.name)
    )
    if not foreign:
        return []
    names = ", ".join(foreign[:SHOWN]) + (f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else "")
    message = FOREIGN.format(count=len(foreign), annotation=naming.BATCH_ANNOTATION, names=names)
    return [ConfigIssue(PATH, message)]


def _unmarked(observed: Observed, kind: str, namespace: str | None, name: str) -> bool:
    meta = observed.meta(kind, namespace, name)
    return meta is not None and meta.annotation(naming.BATCH_ANNOTATION) is None
