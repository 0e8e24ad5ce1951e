"""The garbage collector's settings for the program's entry points: `__main__.py` (what `pulumi preview`/`up`
run) and `python -m maas`.

The program allocates millions of objects that live until it ends (configuration, plan, the SDK's resources,
futures and serialized inputs) and almost no reference cycles. CPython's default threshold collects the youngest
generation every 700 allocations and promotes the survivors, which then get scanned again by every older
collection as the heap grows: the collector took 40 % of a 10,000-subscription render. Collecting the youngest
generation every 100,000 allocations instead keeps every collection (cycles are still found, memory stays
bounded) and cut the render by 22 % at 1,000 and at 10,000 subscriptions (45 s to 35 s; peak RSS +3 %), and the
SDK's own registration floor by 27 % (`bench/render_scale.py --default-gc` measures without it); `pulumi up` runs
the same program and gains the same. `gc.freeze()` as well measured no further gain. Only entry points call this:
it changes the whole process.
"""

from __future__ import annotations

import gc

# Allocations between collections of the youngest generation (default 700), then how many young collections per
# middle one (default 10) and middle ones per full one (default 10): the plan's objects live until it is
# registered, so an older collection in the middle of a plan only traverses them again (0.2 s at 10,000
# subscriptions with the default ratios).
THRESHOLDS = (100_000, 50, 100)


def tune_gc() -> None:
    gc.set_threshold(*THRESHOLDS)
