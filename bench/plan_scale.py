"""Benchmark (not a test): the pure plan and the self-check, without the render, at 10,000 subscriptions over 200
models and at 100,000 over 1,000, to show that nothing grows faster than linearly.

Each case runs in its own fresh process (the collector tuned as the program's entry points tune it): `load_s` is
`load_config`, `plan_s` `build_plan` on no observation, `check_s` the identity and CRD checks the program runs
before registering (cold: the CRD schemas are parsed in it, as in `pulumi up`), with their CPU seconds per
subscription; `ratio` is the 100,000 case's CPU per subscription over the 10,000 case's (1.0: linear). The
configuration is `render_scale.configuration` (5 models per subscription, short identities). Usage:
    python bench/plan_scale.py                   # both cases and the ratio
    python bench/plan_scale.py 100000 1000       # one case, one JSON line
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

CASES = ((10_000, 200), (100_000, 1_000))


def one_case(subscriptions: int, models: int) -> dict:
    from render_scale import configuration

    from maas.config import load_config
    from maas.gc_tuning import collection_paused, tune_gc
    from maas.observe import Observed
    from maas.plan.build import build_plan
    from maas.plan.checks.identities import identity_issues
    from maas.plan.checks.selfcheck import check_plan

    tune_gc()
    raw = configuration(subscriptions, "short", models)
    with collection_paused():  # as the program runs them (`maas/deploy/program.py`)
        cpu = time.process_time()
        config = load_config(raw)
        loaded = time.process_time()
        plan = build_plan(config, Observed.nothing())
        planned = time.process_time()
        problems = identity_issues(plan) + check_plan(plan)
        checked = time.process_time()
    assert problems == [], problems[:3]
    return {
        "subscriptions": subscriptions,
        "models": models,
        "objects": sum(1 for obj in plan.objects() if obj.subresource is None),
        "load_s": round(loaded - cpu, 2),
        "plan_s": round(planned - loaded, 2),
        "check_s": round(checked - planned, 2),
        "us_per_subscription": round((checked - cpu) / subscriptions * 1e6),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def main() -> None:
    if len(sys.argv) == 3:
        print(json.dumps(one_case(int(sys.argv[1]), int(sys.argv[2]))))
        return
    rows = []
    print("subscriptions  models   objects  load_s  plan_s  check_s  us/subscription  peak_MiB")
    for subscriptions, models in CASES:
        out = subprocess.run(
            [sys.executable, __file__, str(subscriptions), str(models)], capture_output=True, text=True, check=True
        )
        row = json.loads(out.stdout)
        rows.append(row)
        print(
            f"{row['subscriptions']:13d} {row['models']:7d} {row['objects']:9d} {row['load_s']:7.2f} "
            f"{row['plan_s']:7.2f} {row['check_s']:8.2f} {row['us_per_subscription']:16d} {row['peak_rss_mib']:9d}"
        )
    ratio = rows[1]["us_per_subscription"] / rows[0]["us_per_subscription"]
    print(f"ratio (100,000 over 10,000, CPU per subscription): {ratio:.2f}")


if __name__ == "__main__":
    main()
