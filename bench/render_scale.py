"""Benchmark (not a test): plan and render time, registered resources, the SDK floor, peak memory and TRLP size
as subscriptions grow (200 models, 5 models per subscription).

`plan_s` is the pure computation (validate and build every object); `check_s` the checks the program runs on
it before registering (identities, CRD schemas and rules, sizes; CRD files already parsed); `render_s` is the whole
program under Pulumi's mock engine, which registers each object as a resource, as `pulumi up` would (wall clock;
`render_cpu_s` is this process's CPU time, steadier on a busy machine). `resources` counts what the program
registers (Kubernetes objects, components, status writes, providers), `per_sub` per subscription. `floor_s` is
`bench/sdk_floor.py` for the same configuration, in its own process: the SDK registering the same Kubernetes
objects as plain CustomResources under the same mock engine; `ratio` is render CPU over floor CPU. Every process
tunes its garbage collector as the program's entry points do (`maas.gc_tuning`).

Each case runs in its own process so that peak RSS belongs to that case alone (the render's: it runs first).
A shared machine moves one process's CPU seconds by ±20 % from run to run, so the table runs each case and its
floor ROUNDS times, alternately, and reports the median of each (ratio: median over median) with the lowest and
highest ratio of a round beside it. Usage:
    python bench/render_scale.py [--default-gc] [--rounds N]    # the whole table (1,000 and 10,000 subscriptions)
    python bench/render_scale.py 1000 short [--default-gc]      # one case and its floor, one JSON line
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FLOOR = ROOT / "bench" / "sdk_floor.py"

MODELS = 200
MODELS_PER_SUBSCRIPTION = 5
RATE_SETS = [
    [{"limit": 1000, "window": "1m"}],
    [{"limit": 20000, "window": "1h"}],
    [{"limit": 50000, "window": "1h"}, {"limit": 2000, "window": "1m"}],
    [{"limit": 1000000, "window": "24h"}],
    [{"limit": 100, "window": "1s"}, {"limit": 100000, "window": "1h"}],
    [{"limit": 500, "window": "1m"}],
    [{"limit": 10000, "window": "24h"}],
    [{"limit": 250000, "window": "168h"}],
]


def configuration(subscriptions: int, identity: str, model_count: int = MODELS, batches: bool = False) -> dict:
    rng = random.Random(subscriptions)
    models = [
        {
            "name": f"model-{i:03d}",
            "namespace": f"llm-{i % 10}",
            "modelRef": {"kind": "LLMInferenceService", "name": f"model-{i:03d}"},
        }
        for i in range(model_count)
    ]
    subs = []
    for i in range(subscriptions):
        refs = []
        for model in rng.sample(models, MODELS_PER_SUBSCRIPTION):
            ref = {"name": model["name"], "namespace": model["namespace"]}
            if rng.random() < 0.02:
                ref["unlimited"] = True
            else:
                ref["tokenRateLimits"] = rng.choice(RATE_SETS)
            refs.append(ref)
        subs.append(
            {
                "name": f"team-{i:05d}-subscription",
                "owner": {"groups": [{"name": f"team-{i:05d}"}]},
                "rateLimitIdentity": identity,
                "modelRefs": refs,
            }
        )
    # the gateway budget is reported, not enforced: one shared gateway for 200 models is over it by design here;
    # the stack output `subscriptions` as counts, as docs/scale.md recommends from 1,000 subscriptions
    # `batches`: the layout for large stacks on a DIY backend (`platform.subscriptionBatches`)
    platform = {
        "gatewayBudget": "warn",
        "subscriptionOutputs": "summary",
        **({"subscriptionBatches": True} if batches else {}),
    }
    return {"platform": platform, "models": models, "subscriptions": subs}


def one_case(subscriptions: int, identity: str, gc_flag: list[str]) -> dict:
    """The render first, cold as `python -m maas render` runs it; then the plan and the checks alone (warm: the CRD
    schemas the render parsed are cached)."""
    from maas.config import load_config
    from maas.observe import Observed
    from maas.plan.build import build_plan
    from maas.plan.checks.identities import identity_issues
    from maas.plan.checks.selfcheck import check_plan
    from maas.tools.render import render

    raw = configuration(subscriptions, identity)
    started, cpu = time.perf_counter(), time.process_time()
    rendering = render(raw)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    objects = sum(r.is_kubernetes_object for r in rendering.registrations)
    registered, trlps = len(rendering.registrations), trlp_sizes(rendering.objects())
    del rendering
    started = time.perf_counter()
    plan = build_plan(load_config(raw), Observed.nothing())
    plan_seconds = time.perf_counter() - started
    started = time.perf_counter()
    assert identity_issues(plan) + check_plan(plan) == []
    check_seconds = time.perf_counter() - started
    floor = sdk_floor(subscriptions, identity, gc_flag)
    return {
        "subscriptions": subscriptions,
        "identity": identity,
        "gc": "default" if gc_flag else "tuned",
        "plan_seconds": round(plan_seconds, 2),
        "check_seconds": round(check_seconds, 2),
        "objects": objects,
        "resources": registered,
        "resources_per_subscription": round(registered / subscriptions, 3),
        "render_seconds": round(seconds, 2),
        "render_cpu_seconds": round(cpu, 2),
        "floor_seconds": floor["floor_seconds"],
        "floor_cpu_seconds": floor["floor_cpu_seconds"],
        "ratio": round(cpu / floor["floor_cpu_seconds"], 2),
        "peak_rss_mib": round(peak, 1),
        **trlps,
    }


def sdk_floor(subscriptions: int, identity: str, gc_flag: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, str(FLOOR), str(subscriptions), identity, *gc_flag], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def trlp_sizes(objects: list[dict]) -> dict:
    trlps = [o for o in objects if o["kind"] == "TokenRateLimitPolicy" and "limits" in o["spec"]]
    sizes = [len(json.dumps(o, separators=(",", ":"))) for o in trlps]
    return {
        "trlps": len(trlps),
        "limits": sum(len(o["spec"]["limits"]) for o in trlps),
        "trlp_bytes_total": sum(sizes),
        "trlp_bytes_max": max(sizes),
    }


COLUMNS = (  # (heading, key, width, format)
    ("subscriptions", "subscriptions", 13, "d"),
    ("identity", "identity", 8, "s"),
    ("plan_s", "plan_seconds", 7, ".2f"),
    ("check_s", "check_seconds", 8, ".2f"),
    ("objects", "objects", 8, "d"),
    ("resources", "resources", 9, "d"),
    ("per_sub", "resources_per_subscription", 7, ".3f"),
    ("render_s", "render_seconds", 8, ".2f"),
    ("render_cpu_s", "render_cpu_seconds", 12, ".2f"),
    ("floor_s", "floor_seconds", 7, ".2f"),
    ("floor_cpu_s", "floor_cpu_seconds", 11, ".2f"),
    ("ratio", "ratio", 5, ".2f"),
    ("ratio_range", "ratio_range", 11, "s"),
    ("peak_rss_MiB", "peak_rss_mib", 12, ".1f"),
    ("TRLPs", "trlps", 5, "d"),
    ("limits", "limits", 6, "d"),
    ("TRLP_bytes_total", "trlp_bytes_total", 16, "d"),
    ("TRLP_bytes_max", "trlp_bytes_max", 14, "d"),
)


DEFAULT_GC = "--default-gc"  # keep CPython's collector settings: what the program gains from `maas.gc_tuning`
ROUNDS = 3  # each case and its floor, alternately (module docstring)
TIMED = ("plan_seconds", "check_seconds", "render_seconds", "render_cpu_seconds", "floor_seconds", "floor_cpu_seconds")


def rounds_of(subscriptions: int, identity: str, gc_flag: list[str], rounds: int) -> dict:
    """`rounds` runs of the case, each with its own floor run right after it, as one row (`median_row`)."""
    command = [sys.executable, __file__, str(subscriptions), identity, *gc_flag]
    return median_row(
        [json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout) for _ in range(rounds)]
    )


def median_row(runs: list[dict]) -> dict:
    """The first run's row with its seconds replaced by the medians over all runs, the ratio of the median render
    CPU to the median floor CPU, and the lowest and highest ratio of a single run."""
    row = dict(runs[0]) | {key: round(statistics.median(run[key] for run in runs), 2) for key in TIMED}
    row["ratio"] = round(row["render_cpu_seconds"] / row["floor_cpu_seconds"], 2)
    ratios = [run["ratio"] for run in runs]
    return row | {"ratio_range": f"{min(ratios):.2f}-{max(ratios):.2f}"}


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive whole number of rounds")
    return int(text)


def main() -> None:
    parser = argparse.ArgumentParser(description="render and SDK-floor seconds as subscriptions grow")
    parser.add_argument("case", nargs="*", help="SUBSCRIPTIONS IDENTITY: one case and its floor, one JSON line")
    parser.add_argument(DEFAULT_GC, action="store_true", help="keep CPython's collector settings")
    parser.add_argument("--rounds", type=positive, default=ROUNDS, help="runs of each case in the table")
    args = parser.parse_args()
    if args.case and len(args.case) != 2:
        parser.error("one case is SUBSCRIPTIONS IDENTITY, e.g. `1000 short`")
    gc_flag = [DEFAULT_GC] if args.default_gc else []
    if not gc_flag:
        from maas.gc_tuning import tune_gc

        tune_gc()
    if args.case:
        count, identity = args.case
        print(json.dumps(one_case(int(count), identity, gc_flag)))
        return
    print(" ".join(f"{heading:>{width}s}" for heading, _, width, _ in COLUMNS))
    for count in (1000, 10000):
        for identity in ("short", "legacy"):
            row = rounds_of(count, identity, gc_flag, args.rounds)
            print(" ".join(f"{row[key]:>{width}{fmt}}" for _, key, width, fmt in COLUMNS))


if __name__ == "__main__":
    main()
