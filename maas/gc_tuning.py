"""The garbage collector's settings for the program's entry points: `__main__.py` (what `pulumi preview`/`up`
run) and `python -m maas`.

The program allocates millions of objects that live until it ends (configuration, plan, the SDK's resources,
futures and serialized inputs) and almost no reference cycles. CPython's default threshold collects the youngest
generation every 700 allocations and promotes the survivors, which then get scanned again by every older
collection as the heap grows: the collector took 40 % of a 10,000-subscription render. Collecting the youngest
generation every 100,000 allocations instead keeps every collection (cycles are still found, memory stays
bounded) and cut the render by 22 % at 1,000 and at 10,000 subscriptions (45 s to 35 s; peak RSS +3 %), and the
SDK's own registration floor by 27 % (`bench/render_scale.py --default-gc` measures without it); `pulumi up` runs
the same program and gains the same. Only entry points call this: it changes the whole process.

Once the plan is built and checked, its objects (configuration, plan, bodies: several million at 10,000
subscriptions) live until the program ends, and every collection while the SDK registers them traversed them
again: `freeze_plan` moves them out of the collector's sight (`gc.freeze()`), which took the collector's share of
that render from about 5 s to 3 s. Frozen objects are still freed when nothing refers to them; only a cycle among
them waits for `thaw`, which a tool that renders twice in one process (`diff`) calls after each render. Freezing at
start, before the plan exists, gains nothing.

While the configuration is loaded and the plan built and checked, `collection_paused` stops collection altogether:
that work allocates millions of objects that live on or are freed by their reference counts, and makes no reference
cycles, so every young collection there only traversed survivors (about 0.15 s of 4 s at 10,000 subscriptions, with
the same peak memory).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# Allocations between collections of the youngest generation (default 700), then how many young collections per
# middle one (default 10) and middle ones per full one (default 10): the plan's objects live until it is
# registered, so an older collection in the middle of a plan only traverses them again (0.2 s at 10,000
# subscriptions with the default ratios).
THRESHOLDS = (100_000, 50, 100)


def tune_gc() -> None:
    gc.set_threshold(*THRESHOLDS)


@contextmanager
def collection_paused() -> Iterator[None]:
    """No collection while the block runs, in a process whose entry point tuned the collector (tests and library
    callers keep CPython's settings, as with `freeze_plan`)."""
    pause = gc.isenabled() and gc.get_threshold() == THRESHOLDS
    if pause:
        gc.disable()
    try:
        yield
    finally:
        if pause:
            gc.enable()


def freeze_plan() -> None:
    """Called when the plan is final, before it is registered; only in a process whose entry point tuned the
    collector (tests and library callers keep CPython's settings, and their cycles collectable)."""
    if gc.get_threshold() == THRESHOLDS:
        gc.freeze()


def thaw() -> None:
    """What `freeze_plan` froze is collectable again (a no-op when nothing is frozen)."""
    gc.unfreeze()
