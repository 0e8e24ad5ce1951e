"""Which status writes share one resource: batches bounded in count and bytes, whose members stay put as others come
and go.

One resource per tenant held all of its statuses, 39.8 MB in the state at 10,000 subscriptions, rewritten whole at
every change of one status; one resource per status nearly doubled the registrations. So a tenant's statuses (its
own, its subscriptions', its auth policies' and its models') form one batch while they fit MAX_STATUSES and
MAX_BYTES, named as before; beyond that they split by the bits of each target key's sha256, one bit per level, until
each part fits. A target's batch depends only on the targets whose hashes share its prefix, so adding or removing a
status changes one batch, and moves members only when that batch overflows (or shrinks to fit its sibling again):
what sorting and cutting into chunks would do at every insertion.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from .status_writer import target_key

MAX_STATUSES = 512
# The targets' JSON. The state keeps each status once, in the inputs (the outputs keep a digest of it, and of the
# stored form when the API server prunes a field): about 1.95 times this in the indented state of older CLIs, 1.4
# times in the compact one, so a batch stays under 1 MB there (`bench/state_growth.py`).
MAX_BYTES = 480 * 1024
HASH_BITS = 256


def status_batches(name: str, targets: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(resource name, targets) per batch, in name order: `name` alone when everything fits, else `name/{bits}`."""
    keyed = sorted(((_bits(target_key(t)), t) for t in targets), key=lambda item: item[0])
    sized = [(bits, target, len(json.dumps(target, separators=(",", ":")))) for bits, target in keyed]
    return [(f"{name}/{prefix}" if prefix else name, members) for prefix, members in _split("", sized)]


def _split(prefix: str, items: list[tuple[str, dict[str, Any], int]]) -> list[tuple[str, list[dict[str, Any]]]]:
    fits = len(items) <= MAX_STATUSES and sum(size for _, _, size in items) <= MAX_BYTES
    if fits or len(items) == 1 or len(prefix) == HASH_BITS:
        return [(prefix, [target for _, target, _ in items])]
    depth = len(prefix)
    parts = [[item for item in items if item[0][depth] == bit] for bit in "01"]
    return [batch for bit, part in zip("01", parts, strict=True) if part for batch in _split(prefix + bit, part)]


def _bits(key: str) -> str:
    return bin(int.from_bytes(hashlib.sha256(key.encode()).digest(), "big"))[2:].zfill(HASH_BITS)
