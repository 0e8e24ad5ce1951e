"""`platform.subscriptionBatches`: what it needs from the rest of the platform configuration.

A batch is applied by the program's own provider (`deploy/object_batch.py`), which talks to the cluster and renders
no files, and it may only take over objects it created, which the program checks on the snapshot before anything
is registered (`plan/checks/batches.py`): so it needs a cluster to observe.
"""

from __future__ import annotations

from .errors import ConfigIssue
from .kubernetes import RENDER
from .schema import PlatformConfig

PATH = "maas:platform.subscriptionBatches"


def subscription_batch_issues(platform: PlatformConfig) -> list[ConfigIssue]:
    if not platform.subscriptionBatches:
        return []
    issues = []
    if not platform.observe:
        issues.append(
            ConfigIssue(
                PATH,
                "needs maas:platform.observe: true: before anything is registered the program checks that no live "
                "subscription it would batch was created by anything else (another stack, a stack that registered "
                "subscriptions one by one, the controller); remove observe: false, or subscriptionBatches",
            )
        )
    if platform.kubernetes.renderYamlToDirectory is not None:
        issues.append(
            ConfigIssue(
                PATH,
                f"is not compatible with {RENDER}: batches are applied by the program's own provider, which writes "
                "no files; remove one of the two (`python -m maas render --stack <stack>` renders every object "
                "offline)",
            )
        )
    return issues
