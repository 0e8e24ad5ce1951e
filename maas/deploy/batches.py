"""Which status writes, and which batched objects (`platform.subscriptionBatches`), share one resource: batches
bounded in count and bytes, whose members stay put as others come and go.

One resource per tenant held all of its statuses, 39.8 MB in the state at 10,000 subscriptions, rewritten whole at
every change of one status; one resource per status nearly doubled the registrations. So a tenant's statuses (its
own, its subscriptions', its auth policies' and its models') form one batch while they fit MAX_STATUSES and
MAX_BYTES, named as before; beyond that they split by the bits of each member key's sha256, one bit per level,
until each part fits. A member's batch depends only on the members whose hashes share its prefix, so adding or
removing one changes one batch, and moves members only when that batch overflows (or shrinks to fit its sibling
again): what sorting and cutting into chunks would do at every insertion.

The same tree cuts a tenant's batched objects, and gives them one more guarantee: a member moves only when the
batch it leaves is no longer a leaf of the tree, so its old resource is deleted, never updated, and the engine
deletes what the program stopped registering after every create and update (`object_batch.py` relies on it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .status_writer import target_key

MAX_STATUSES = 512
# The targets' JSON. The state keeps each status once, in the inputs (the outputs keep a digest of it, and of the
# stored form when the API server prunes a field): about 1.95 times this in the indented state of older CLIs, 1.4
# times in the compact one, so a batch stays under 1 MB there (`bench/state_growth.py`).
MAX_BYTES = 480 * 1024
MAX_OBJECTS = 512
# The objects' JSON. A batch of objects keeps them twice, in its inputs and its outputs (what `pulumi refresh`
# compares the live objects with): half the statuses' bound keeps it under 1 MB in the state as well.
MAX_OBJECT_BYTES = 240 * 1024
HASH_BITS = 256

T = TypeVar("T")


def status_batches(name: str, targets: Sequence[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """(resource name, targets) per batch, in name order: `name` alone when everything fits, else `name/{bits}`."""
    return bounded_batches(name, targets, target_key, json_size, MAX_STATUSES, MAX_BYTES)


def object_batches(
    name: str, members: Sequence[T], key: Callable[[T], str], measure: Callable[[T], int]
) -> list[tuple[str, list[T]]]:
    """(resource name, members) per batch of objects, as `status_batches` cuts statuses."""
    return bounded_batches(name, members, key, measure, MAX_OBJECTS, MAX_OBJECT_BYTES)


def bounded_batches(
    name: str, members: Sequence[T], key: Callable[[T], str], measure: Callable[[T], int], count: int, size: int
) -> list[tuple[str, list[T]]]:
    """(resource name, members) per batch of at most `count` members and `size` bytes as `measure` counts them (a
    member larger than that alone), in name order: `name` alone when everything fits, else `name/{bits}`."""
    keyed = sorted(((_bits(key(m)), m) for m in members), key=lambda item: item[0])
    sized = [(bits, member, measure(member)) for bits, member in keyed]
    return [(f"{name}/{prefix}" if prefix else name, batch) for prefix, batch in _split("", sized, count, size)]


def _split(prefix: str, items: list[tuple[str, T, int]], count: int, size: int) -> list[tuple[str, list[T]]]:
    fits = len(items) <= count and sum(bytes_ for _, _, bytes_ in items) <= size
    if fits or len(items) == 1 or len(prefix) == HASH_BITS:
        return [(prefix, [member for _, member, _ in items])]
    depth = len(prefix)
    parts = [[item for item in items if item[0][depth] == bit] for bit in "01"]
    return [
        batch
        for bit, part in zip("01", parts, strict=True)
        if part
        for batch in _split(prefix + bit, part, count, size)
    ]


def json_size(value: Any, default: Callable[[Any], Any] | None = None) -> int:
    """The bytes of `value` as compact JSON (`default`: as `json.dumps` takes it)."""
    return len(json.dumps(value, separators=(",", ":"), default=default))


def _bits(key: str) -> str:
    return bin(int.from_bytes(hashlib.sha256(key.encode()).digest(), "big"))[2:].zfill(HASH_BITS)
