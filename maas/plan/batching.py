"""Which objects `platform.subscriptionBatches` registers in a tenant's batch resources instead of one resource each.

A first `pulumi up` on a DIY backend rewrites the whole state after every step, so its bytes grow with the square
of the resources registered: at 10,000 subscriptions, one resource each, about 1.6 TB (`bench/state_growth.py`).
A batch (`deploy/object_batch.py`) applies a bounded set of a tenant's MaaSSubscriptions as one resource.

Only plain objects go into a batch: one that Pulumi must adopt (`adopt`, `import_id`) or leave alone
(`retain_on_delete`, `ignore_changes`) is registered by pulumi-kubernetes as before, whose options mean exactly
that. Nothing changes in any object's body.
"""

from __future__ import annotations

from ..config import PlatformConfig
from .desired import Desired

BATCHED_KINDS = frozenset({"MaaSSubscription"})


def is_batched(desired: Desired, platform: PlatformConfig) -> bool:
    return (
        platform.subscriptionBatches
        and desired.body["kind"] in BATCHED_KINDS
        and desired.subresource is None
        and not desired.adopt
        and desired.import_id is None
        and not desired.retain_on_delete
        and not desired.ignore_changes
    )
