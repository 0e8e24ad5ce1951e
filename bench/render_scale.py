"""Benchmark (not a test): plan and render time, peak memory and TRLP size as subscriptions grow.

`plan_s` is the pure computation (validate and build every object); `check_s` the checks the program runs on
it before registering (identities, CRD schemas and rules, sizes; CRD files parsed cold); `render_s` is the whole
program under Pulumi's mock engine, which registers each object as a resource, as `pulumi up` would.

Each case runs in its own process so that peak RSS belongs to that case alone. Usage:
    python bench/render_scale.py                 # the whole table
    python bench/render_scale.py 1000 short      # one case, one JSON line
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

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


def configuration(subscriptions: int, identity: str) -> dict:
    rng = random.Random(subscriptions)
    models = [
        {
            "name": f"model-{i:03d}",
            "namespace": f"llm-{i % 10}",
            "modelRef": {"kind": "LLMInferenceService", "name": f"model-{i:03d}"},
        }
        for i in range(MODELS)
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
    return {"models": models, "subscriptions": subs}


def one_case(subscriptions: int, identity: str) -> dict:
    from maas.config import load_config
    from maas.observe import Observed
    from maas.plan.build import build_plan
    from maas.plan.checks.identities import identity_issues
    from maas.plan.checks.selfcheck import check_plan
    from maas.tools.render import render

    raw = configuration(subscriptions, identity)
    started = time.perf_counter()
    plan = build_plan(load_config(raw), Observed.nothing())
    plan_seconds = time.perf_counter() - started
    started = time.perf_counter()
    assert identity_issues(plan) + check_plan(plan) == []
    check_seconds = time.perf_counter() - started
    objects = len(plan.objects())
    started = time.perf_counter()
    rendering = render(raw)
    seconds = time.perf_counter() - started
    trlps = [o for o in rendering.objects() if o["kind"] == "TokenRateLimitPolicy" and "limits" in o["spec"]]
    sizes = [len(json.dumps(o, separators=(",", ":"))) for o in trlps]
    return {
        "subscriptions": subscriptions,
        "identity": identity,
        "plan_seconds": round(plan_seconds, 2),
        "check_seconds": round(check_seconds, 2),
        "objects": objects,
        "render_seconds": round(seconds, 2),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "trlps": len(trlps),
        "limits": sum(len(o["spec"]["limits"]) for o in trlps),
        "trlp_bytes_total": sum(sizes),
        "trlp_bytes_max": max(sizes),
    }


def main() -> None:
    if len(sys.argv) == 3:
        print(json.dumps(one_case(int(sys.argv[1]), sys.argv[2])))
        return
    header = "subscriptions identity  plan_s  check_s  objects  render_s  peak_rss_MiB  TRLPs  limits  TRLP_bytes_total"
    header += "  TRLP_bytes_max"
    print(header)
    for count in (100, 1000, 10000):
        for identity in ("short", "legacy"):
            out = subprocess.run(
                [sys.executable, __file__, str(count), identity], capture_output=True, text=True, check=True
            )
            r = json.loads(out.stdout)
            print(
                f"{r['subscriptions']:13d} {r['identity']:8s} {r['plan_seconds']:7.2f} {r['check_seconds']:8.2f} "
                f"{r['objects']:8d} "
                f"{r['render_seconds']:9.2f} {r['peak_rss_mib']:13.1f} "
                f"{r['trlps']:6d} {r['limits']:7d} {r['trlp_bytes_total']:17d} {r['trlp_bytes_max']:15d}"
            )


if __name__ == "__main__":
    main()
