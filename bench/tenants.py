"""Benchmark (not a test): render time and object counts as the number of tenants grows.

.venv/bin/python bench/tenants.py [COUNTS...]     # default: 1 10 50
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from maas.tools.render import render

TITLES = ("tenants", "seconds", "objects", "per tenant", "shared", "registrations")
WIDTHS = (7, 7, 7, 10, 6, 13)


def raw_config(tenants: int) -> dict:
    """The default tenant plus `tenants - 1` others, half of them autoscaled and capturing users and groups."""
    entries = [{"name": "models-as-a-service"}]
    for index in range(1, tenants):
        entry: dict = {"name": f"tenant-{index:03d}"}
        if index % 2:
            entry["payloadProcessing"] = {"replicas": 2, "autoscaling": {}}
            entry["telemetry"] = {"metrics": {"captureUser": True, "captureGroup": True}}
        entries.append(entry)
    return {"tenants": entries}


def main(counts: list[int]) -> None:
    print("  ".join(f"{title:>{width}}" for title, width in zip(TITLES, WIDTHS, strict=True)))
    for count in counts:
        start = time.perf_counter()
        rendering = render(raw_config(count))
        elapsed = time.perf_counter() - start
        objects = [r for r in rendering.registrations if r.is_kubernetes_object]
        owners = Counter(r.parent.rsplit("::", 1)[0].rsplit("$", 1)[-1] for r in objects)
        shared = owners["maas:index:Platform"]
        per_tenant = (len(objects) - shared) / count
        row = (count, f"{elapsed:.2f}", len(objects), f"{per_tenant:.1f}", shared, len(rendering.registrations))
        print("  ".join(f"{value:>{width}}" for value, width in zip(row, WIDTHS, strict=True)))


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [1, 10, 50])
