"""Benchmark (not a test): how long the status writes of one `pulumi up` take when routes are slow to settle.

The engine runs one dynamic-provider host per `pulumi up`, serving four resources at a time, and every model's
status is a resource of its own. Here N model resources, none of whose routes the Gateway accepts, are written
through four threads against the local fake API server, with the waits scaled down (SETTLE, WINDOW seconds), once
with the per-process settle window and once without it (each route waiting its full SETTLE, as before).

.venv/bin/python bench/status_writes.py [MODELS...]     # default: 8 40 200
"""

from __future__ import annotations

import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from maas.deploy import status_writer
from maas.deploy.status_writer import StatusBatchProvider, encode_json, encode_status, target_key
from tests.fake_kube import FakeKube, all_crds, kserve_route, llm_inference_service, platform_gateway
from tests.test_model_status import GRANITE

HOST_THREADS = 4  # pulumi/dynamic/__main__.py: futures.ThreadPoolExecutor(max_workers=4)
SETTLE, WINDOW, POLL = 1.0, 2.0, 0.1  # seconds, scaled down from 30 / 60 / 2


def model(index: int) -> tuple[list[dict], dict]:
    """A governed model whose route is not accepted: the objects the server holds, and its status target."""
    name, backend = f"m{index}", f"m{index}-isvc"
    facts = replace(GRANITE, name=name, backend=backend, route_name=f"{backend}-kserve-route")
    ref = {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSModelRef",
        "metadata": {"name": name, "namespace": "llm", "uid": f"uid-{name}"},
    }
    objects = [ref, llm_inference_service("llm", backend, ready=True), kserve_route("llm", backend, accepted=False)]
    target = {
        "apiVersion": "maas.opendatahub.io/v1alpha1",
        "kind": "MaaSModelRef",
        "resource": "maasmodelrefs",
        "namespace": "llm",
        "name": name,
        "status": encode_status({"phase": "Ready"}),
        "targetUid": f"uid-{name}",
        "facts": facts.to_inputs(),
    }
    return objects, target


def one_up(models: int, window: float) -> float:
    """Seconds for the status writes of `models` model resources, four at a time."""
    built = [model(index) for index in range(models)]
    objects = [obj for found, _ in built for obj in found]
    status_writer.WINDOW_SECONDS, status_writer.SETTLE_SECONDS, status_writer.POLL_SECONDS = window, SETTLE, POLL
    status_writer.ROUTE_WINDOW.reset()
    with FakeKube([*objects, platform_gateway(), *all_crds()]) as kube:
        connection = {"kubeconfig": kube.kubeconfig(), "context": "maas-dev"}
        batches = [{"connection": connection, "targets": encode_json({target_key(t): t})} for _, t in built]
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=HOST_THREADS) as host:
            list(host.map(StatusBatchProvider().create, batches))
        return time.monotonic() - started


def main(counts: list[int]) -> None:
    print(f"settle {SETTLE:g} s per route, window {WINDOW:g} s, {HOST_THREADS} host threads")
    print(f"{'models':>6}  {'per route':>9}  {'window':>6}  {'bound (N/4 x settle)':>20}")
    for count in counts:
        unbounded = one_up(count, window=float("inf"))
        bounded = one_up(count, window=WINDOW)
        print(f"{count:>6}  {unbounded:>8.1f}s  {bounded:>5.1f}s  {count / HOST_THREADS * SETTLE:>19.1f}s")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [8, 40, 200])
