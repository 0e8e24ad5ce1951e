"""Issue 21: a tenant's statuses in bounded batches whose members stay put (`maas/deploy/batches.py`)."""

from __future__ import annotations

import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from maas.deploy import batches
from maas.deploy.batches import MAX_BYTES, MAX_STATUSES, status_batches
from maas.deploy.status_writer import status_target, target_key


def targets(count: int, size: int = 40, prefix: str = "team") -> list[dict]:
    bodies = (
        {
            "apiVersion": "maas.opendatahub.io/v1alpha1",
            "kind": "MaaSSubscription",
            "metadata": {"name": f"{prefix}-{i:05d}", "namespace": "models-as-a-service"},
            "status": {"phase": "Active", "note": "x" * size},
        }
        for i in range(count)
    )
    return [status_target(body, "maassubscriptions") for body in bodies]


def members(result: list[tuple[str, list[dict]]]) -> dict[str, set[str]]:
    return {name: {target_key(t) for t in ts} for name, ts in result}


def test_statuses_that_fit_are_one_batch_named_as_before():
    result = status_batches("statuses/models-as-a-service", targets(MAX_STATUSES))
    assert [name for name, _ in result] == ["statuses/models-as-a-service"]


def test_beyond_the_count_they_split_by_hash_bits_each_part_within_the_bounds():
    every = targets(3 * MAX_STATUSES)
    result = status_batches("statuses/t", every)
    assert len(result) > 3
    assert all(len(ts) <= MAX_STATUSES for _, ts in result)
    assert all(name.startswith("statuses/t/") and set(name[len("statuses/t/") :]) <= {"0", "1"} for name, _ in result)
    keys = [target_key(t) for _, ts in result for t in ts]
    assert sorted(keys) == sorted(target_key(t) for t in every) and len(set(keys)) == len(keys)


def test_large_statuses_split_by_bytes_before_the_count_is_reached():
    every = targets(100, size=8 * 1024)  # 800 KiB of statuses: over MAX_BYTES, under MAX_STATUSES
    result = status_batches("statuses/t", every)
    assert len(result) > 1
    for _, ts in result:
        assert len(ts) == 1 or sum(len(json.dumps(t, separators=(",", ":"))) for t in ts) <= MAX_BYTES


def test_adding_or_removing_a_status_leaves_every_other_batch_as_it_was():
    every = targets(4 * MAX_STATUSES)
    before = members(status_batches("statuses/t", every))
    for change in (every + targets(1, prefix="new"), every[1:]):
        after = members(status_batches("statuses/t", change))
        moved = [name for name in set(before) | set(after) if before.get(name) != after.get(name)]
        assert len(moved) == 1, moved  # the one batch that gained or lost the status; no split at this size


def test_the_batches_do_not_depend_on_the_order_of_the_statuses():
    every = targets(2 * MAX_STATUSES + 7)
    shuffled = every[:]
    random.Random(21).shuffle(shuffled)
    assert status_batches("statuses/t", shuffled) == status_batches("statuses/t", every)


def test_a_batch_splits_only_where_its_own_statuses_overflow(monkeypatch):
    """The tree of one bit per level: a part that fits is never cut further."""
    monkeypatch.setattr(batches, "MAX_STATUSES", 4)
    result = status_batches("s", targets(9))
    assert all(1 <= len(ts) <= 4 for _, ts in result)
    bits = [name.removeprefix("s/") for name, _ in result]
    assert not any(a != b and b.startswith(a) for a in bits for b in bits)  # each status has exactly one home
    for a in bits:  # a split part's sibling exists or was empty, and their parent did not fit
        parent = a[:-1]
        assert sum(len(ts) for name, ts in result if name.removeprefix("s/").startswith(parent)) > 4


@settings(max_examples=60, deadline=None)
@given(
    names=st.sets(st.integers(min_value=0, max_value=9999), min_size=1, max_size=40),
    added=st.integers(min_value=10_000, max_value=10_100),
)
def test_a_new_status_leaves_every_batch_off_its_hash_path_as_it_was(names, added):
    """For any set of statuses: a new one changes only the batch whose bits it shares (split in two when it
    overflows); every other batch keeps its name and its members."""
    every = [t for i in sorted(names) for t in targets(1, prefix=f"s{i}")]
    new = targets(1, prefix=f"s{added}")[0]
    bits = batches._bits(target_key(new))
    original = batches.MAX_STATUSES
    batches.MAX_STATUSES = 4
    try:
        before = members(status_batches("s", every))
        after = members(status_batches("s", [*every, new]))
    finally:
        batches.MAX_STATUSES = original
    for name, keys in before.items():
        if not bits.startswith(name.removeprefix("s").removeprefix("/")):
            assert after.get(name) == keys, name
    assert sum(len(keys) for keys in after.values()) == len(every) + 1
