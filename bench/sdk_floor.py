"""Benchmark (not a test): the Pulumi SDK's own floor for registering the program's Kubernetes objects.

A trivial Pulumi program under the same mock engine and recording monitor as `python -m maas render`: it registers
each Kubernetes object the program registers for the same configuration (same count, same bodies, same type
tokens and logical names) as a plain CustomResource, with no component, no provider, no dependency, no status
write, no plan and no check. What the render costs above this floor is the program's own work; what the floor
costs is the SDK's, which a real `pulumi up` pays too.

The bodies come from the pure plan of `render_scale.configuration`, built before the clock starts. The process
tunes its garbage collector as the program's entry points do (`maas.gc_tuning`), unless `--default-gc`, so that
render and floor are measured alike. One case per process, so that peak memory belongs to the floor alone. Usage:
    python bench/sdk_floor.py 1000 short [--default-gc]   # one JSON line: objects, seconds (wall, CPU), peak RSS
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def kubernetes_objects(subscriptions: int, identity: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(type token, logical name, body) of every Kubernetes object the program registers for that configuration."""
    from render_scale import configuration

    from maas.config import load_config
    from maas.deploy.components import type_token
    from maas.observe import Observed
    from maas.plan.build import build_plan

    plan = build_plan(load_config(configuration(subscriptions, identity)), Observed.nothing())
    objects = [d for d in plan.objects() if d.subresource is None]
    return [(type_token(d.api_version, d.kind), d.logical_name, d.body) for d in objects]


def floor(objects: list[tuple[str, str, dict[str, Any]]]) -> dict[str, Any]:
    """Register `objects` as plain CustomResources under the render's mock engine and monitor; the times taken."""
    import pulumi

    from maas.tools.render import PROJECT, RecordingMonitor

    monitor = RecordingMonitor()
    pulumi.runtime.set_mocks(monitor.mocks, project=PROJECT, stack="bench", preview=False, monitor=monitor)

    def program() -> None:
        for type_, name, body in objects:
            pulumi.CustomResource(type_, name, body)

    wall, cpu = time.perf_counter(), time.process_time()
    pulumi.runtime.test(program)()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    assert len(monitor.registrations) == len(objects)
    return {"objects": len(objects), "floor_seconds": round(wall, 2), "floor_cpu_seconds": round(cpu, 2)}


def main() -> None:
    if "--default-gc" not in sys.argv:
        from maas.gc_tuning import tune_gc

        tune_gc()
    subscriptions, identity = int(sys.argv[1]), sys.argv[2]
    result = {
        "subscriptions": subscriptions,
        "identity": identity,
        **floor(kubernetes_objects(subscriptions, identity)),
    }
    result["floor_peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
