"""Benchmark (not a test): the request simulator's cost per request, and building its network, as models grow.

.venv/bin/python bench/simulator.py [MODELS...]     # default: 5 50 200
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from maas.observe import Observed
from maas.tools.explaining.world import world_of
from maas.tools.simulator import Caller, Network, Request, simulate

REQUESTS = 200


def raw_config(models: int) -> dict:
    """`models` ExternalModels, one subscription and one auth policy over all of them."""
    entries = [
        {
            "name": f"m{i}",
            "namespace": "ext",
            "modelRef": {"kind": "ExternalModel", "name": f"m{i}"},
            "external": {
                "provider": "openai",
                "targetModel": f"t{i}",
                "endpoint": "api.openai.com",
                "credentialRef": {"name": "k"},
            },
        }
        for i in range(models)
    ]
    refs = [
        {"name": f"m{i}", "namespace": "ext", "tokenRateLimits": [{"limit": 100, "window": "1m"}]}
        for i in range(models)
    ]
    keys = [{"name": f"m{i}", "namespace": "ext"} for i in range(models)]
    return {
        "models": entries,
        "subscriptions": [{"name": "s", "owner": {"groups": [{"name": "g"}]}, "modelRefs": refs}],
        "authPolicies": [{"name": "p", "modelRefs": keys, "subjects": {"groups": [{"name": "g"}]}}],
    }


def main(counts: list[int]) -> None:
    print(f"{'models':>6}  {'network s':>9}  {'ms/request':>10}  {'action sets':>11}")
    for count in counts:
        world = world_of(raw_config(count), "bench", Observed.nothing())
        start = time.process_time()
        network = Network(world)
        action_sets = sum(len(view.wasm.action_sets) for view in network.gateways.values())
        built = time.process_time() - start
        caller = Caller("u", ("g",))
        requests = [Request(f"/ext/m{i % count}/v1/chat/completions", caller) for i in range(REQUESTS // 2)]
        requests += [Request("/v1/chat/completions", caller, model=f"t{i % count}") for i in range(REQUESTS // 2)]
        start = time.process_time()
        for request in requests:
            simulate(network, request)
        per = (time.process_time() - start) / len(requests) * 1000
        print(f"{count:>6}  {built:>9.2f}  {per:>10.1f}  {action_sets:>11}")


if __name__ == "__main__":
    main([int(arg) for arg in sys.argv[1:]] or [5, 50, 200])
