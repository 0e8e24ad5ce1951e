"""Benchmark (not a test): seconds of the pure plan, `load_config(raw)` + `build_plan(config, Observed.nothing())`,
on `render_scale.py`'s configuration (200 models, 5 per subscription, short identities).

Each figure is the median of 3 runs, each in a fresh process: a warm process would hide the garbage collector's
cost, which grows with everything still alive. `plan_cpu_s` is that process's CPU time, steadier than the wall
clock on a busy machine. Modes: `default` (Python's collection thresholds), `tuned` (as the program runs
it: the thresholds its entry points set and no collection while it loads and plans, `maas.gc_tuning`), `off` (no
collection at all in the whole process).

Usage:
    python bench/plan_profile.py                    # the table: 1,000 and 10,000 subscriptions, every mode
    python bench/plan_profile.py 10000 tuned        # one run, one JSON line
    python bench/plan_profile.py --profile 10000    # cProfile of one plan (GC off), the 30 costliest functions
"""

from __future__ import annotations

import gc
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from maas.gc_tuning import THRESHOLDS, collection_paused, tune_gc  # noqa: E402 (after the path that makes it importable)

COUNTS = (1000, 10000)
RUNS = 3
# Few, large young generations and no full collection during one plan: the objects the plan allocates live until
# it is registered, so the default thresholds would traverse them (and the configuration) again and again.
MODES = ("default", "tuned", "off")


def set_mode(mode: str) -> None:
    if mode == "tuned":
        tune_gc()
    elif mode == "off":
        gc.disable()
    elif mode != "default":
        raise SystemExit(f"unknown mode {mode!r}; use one of: {', '.join(MODES)}")


def one_run(subscriptions: int, mode: str) -> dict:
    set_mode(mode)
    from bench.render_scale import configuration
    from maas.config import load_config
    from maas.observe import Observed
    from maas.plan.build import build_plan

    raw = configuration(subscriptions, "short")
    with collection_paused():  # as the program pauses it (`maas/deploy/program.py`); a no-op unless tuned
        started, cpu = time.perf_counter(), time.process_time()
        config = load_config(raw)
        loaded = time.perf_counter()
        plan = build_plan(config, Observed.nothing())
        done, cpu = time.perf_counter(), time.process_time() - cpu
    # The clocks stop while the plan is alive, as in `plan_scale.py`: the program goes on to register it, so
    # freeing it (20 ms at 10,000 subscriptions) is no part of planning.
    del plan
    return {"load_s": loaded - started, "build_s": done - loaded, "plan_s": done - started, "plan_cpu_s": cpu}


def profile(subscriptions: int) -> None:
    import cProfile
    import pstats

    from bench.render_scale import configuration
    from maas.config import load_config
    from maas.observe import Observed
    from maas.plan.build import build_plan

    raw = configuration(subscriptions, "short")
    gc.disable()
    profiler = cProfile.Profile()
    profiler.runcall(lambda: build_plan(load_config(raw), Observed.nothing()))
    pstats.Stats(profiler).sort_stats("tottime").print_stats(30)


def median_run(subscriptions: int, mode: str) -> dict:
    """Each figure's median over RUNS fresh processes, and `plan_cpu_range`: the lowest and highest plan CPU of a
    single run (one plan is a second of CPU, so the machine's noise shows; the range says how much)."""
    runs = []
    for _ in range(RUNS):
        command = [sys.executable, __file__, str(subscriptions), mode]
        out = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
        runs.append(json.loads(out.stdout))
    cpu = [run["plan_cpu_s"] for run in runs]
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    return medians | {"plan_cpu_range": f"{min(cpu):.2f}-{max(cpu):.2f}"}


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--profile":
        profile(int(sys.argv[2]))
        return
    if len(sys.argv) == 3:
        print(json.dumps(one_run(int(sys.argv[1]), sys.argv[2])))
        return
    print(f"median of {RUNS} fresh processes; tuned: maas.gc_tuning, gc.set_threshold{THRESHOLDS}")
    print("subscriptions  mode      load_s  build_s  plan_s  plan_cpu_s  cpu_us_per_subscription")
    for count in COUNTS:
        for mode in MODES:
            r = median_run(count, mode)
            per = r["plan_cpu_s"] / count * 1e6
            print(
                f"{count:13d}  {mode:8s} {r['load_s']:7.2f} {r['build_s']:8.2f} {r['plan_s']:7.2f} "
                f"{r['plan_cpu_s']:11.2f}  {per:23.0f}"
            )


if __name__ == "__main__":
    main()
