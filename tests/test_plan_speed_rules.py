"""The pure plan's work grows linearly with the number of subscriptions (issue 13: nothing superlinear).

Counted in function calls (cProfile), not seconds, so the rule holds on any machine: with twice the
subscriptions (and twice the groups that auth policies grant, one per subscription) each added subscription costs
no more calls. A Python-level scan of every granted group per reference, of every tenant per subscription or of
every member per member breaks it; a scan inside one C call (`set(groups)`) is not counted, so keep those out by
review and `bench/plan_profile.py`.
"""

from __future__ import annotations

import cProfile
import pstats
import subprocess
import sys
from pathlib import Path

from maas.config import load_config
from maas.observe import Observed
from maas.plan.build import build_plan
from tests.conftest import ROOT

MODELS = 20
RATES = [[{"limit": 1000, "window": "1m"}], [{"limit": 50000, "window": "1h"}, {"limit": 2000, "window": "1m"}]]


def configuration(subscriptions: int) -> dict:
    """`subscriptions` teams on 3 of 20 models each, every team granted its models by one auth policy per model."""
    models = [
        {"name": f"m{i:02d}", "namespace": "llm", "modelRef": {"kind": "LLMInferenceService", "name": f"m{i:02d}"}}
        for i in range(MODELS)
    ]
    teams = [f"team-{i:05d}" for i in range(subscriptions)]
    refs = {team: [(i * 7 + k) % MODELS for k in range(3)] for i, team in enumerate(teams)}
    policies = [
        {
            "name": f"access-m{m:02d}",
            "modelRefs": [{"name": f"m{m:02d}", "namespace": "llm"}],
            "subjects": {"groups": [{"name": team} for team in teams if m in refs[team]] or [{"name": "nobody"}]},
        }
        for m in range(MODELS)
    ]
    subs = [
        {
            "name": team,
            "owner": {"groups": [{"name": team}]},
            "rateLimitIdentity": "legacy" if i % 4 == 0 else "short",
            "modelRefs": [
                {"name": f"m{m:02d}", "namespace": "llm", "tokenRateLimits": RATES[(i + m) % 2]} for m in refs[team]
            ],
        }
        for i, team in enumerate(teams)
    ]
    return {"models": models, "authPolicies": policies, "subscriptions": subs}


def calls(subscriptions: int) -> int:
    """Counted in a fresh process: the plan's memoised validators must start cold at every size, whatever earlier
    tests left in them, or the difference between two sizes depends on the order tests run in."""
    script = f"from tests.test_plan_speed_rules import counted; print(counted({subscriptions}))"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    return int(result.stdout)


def counted(subscriptions: int) -> int:
    raw = configuration(subscriptions)
    profiler = cProfile.Profile()
    profiler.runcall(lambda: build_plan(load_config(raw), Observed.nothing()))
    return pstats.Stats(profiler).total_calls


def test_each_added_subscription_costs_the_same_work_at_twice_the_size():
    small, medium, large = calls(100), calls(200), calls(400)
    first, second = medium - small, large - medium  # the calls 100, then 200, more subscriptions cost
    assert second <= 2.1 * first, (small, medium, large)


def test_a_gateway_near_its_budget_plans_members_and_reads_routes_once():
    """The levers start from the plan's own rate limits (`RateLimitPlan`: its identities, and its grouped members,
    whose predicates the compact lever writes in either format), and the routing header check reads the routes the
    budget read: each reference's member is made (and its short ID hashed) once per plan, not once more per lever."""
    from bench.render_scale import configuration as bench_configuration

    config = load_config(bench_configuration(50, "short"))  # 200 models on one gateway: far over its budget
    profiler = cProfile.Profile()
    plan = profiler.runcall(lambda: build_plan(config, Observed.nothing()))
    (gateway,) = plan.outputs["gateways"].values()
    assert any(lever["lever"].startswith("maas:platform.predicateFormat: compact") for lever in gateway["levers"])
    counts = {(Path(file).name, name): found[1] for (file, _, name), found in pstats.Stats(profiler).stats.items()}
    references = sum(len(subscription.modelRefs) for subscription in config.subscriptions)
    assert counts[("ratelimit.py", "plan_rate_limits")] == 1
    assert counts[("identity.py", "effective_identities")] == 1
    assert counts[("ratelimit.py", "short_id")] == references
    assert counts[("routes.py", "routes")] == 1
