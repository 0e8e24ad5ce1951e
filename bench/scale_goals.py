"""Benchmark (not a test): issue 21's scale goals, each measured in one run and printed beside its target.

Each figure comes from the benchmark that owns it, run in its own processes:

- render CPU over the SDK floor's, resources per subscription: `render_scale.py` at 10,000 subscriptions, ROUNDS
  alternated rounds of the render and its floor (median CPU over median CPU);
- the plan (`load_config` + `build_plan`, tuned collector): `plan_profile.py`, median CPU of 3 fresh processes
  (and the lowest and highest), and its share of that floor;
- the largest resource in the state and what a first `up` writes per backend: `state_growth.py` at 10,000
  (`--parallel 1`; DIY with a current CLI writes compact JSON), in the default layout (one resource per
  subscription) and with `platform.subscriptionBatches` (a tenant's subscriptions in a few batch resources), the
  layout docs/scale.md gives for large stacks on a DIY backend, which the DIY goal reads;
- the plan and self-check's CPU per subscription at 100,000 over the 10,000 case's: `plan_scale.py`.

Figures only: nothing here asserts a time (tests never do). About six minutes on two cores. Usage:
    python bench/scale_goals.py [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

SUBSCRIPTIONS = 10_000
GB, MB = 1e9, 1e6


@dataclass(frozen=True)
class Goal:
    """One goal of the issue: what was measured, against what, and whether it holds."""

    name: str
    measured: str
    target: str
    met: bool


def goals(
    render: dict[str, Any], plan: dict[str, Any], states: dict[str, dict[str, Any]], scale: list[dict]
) -> list[Goal]:
    """The goals from the rows of `render_scale` (a median row), `plan_profile` (a median run), `state_growth`
    (one case per layout: `default` and `batches`) and `plan_scale` (the 10,000 and the 100,000 case, in that
    order)."""
    floor = render["floor_cpu_seconds"]
    share = plan["plan_cpu_s"] / floor
    diy = states["batches"]["backends"]["diy"]["bytes_p1"]
    largest = max(states.values(), key=lambda state: state["largest_resource_bytes"])
    per_subscription = scale[1]["us_per_subscription"] / scale[0]["us_per_subscription"]
    return [
        Goal(
            "render CPU / SDK floor CPU",
            f"{render['ratio']:.2f} ({render['render_cpu_seconds']:.1f} s / {floor:.1f} s, rounds "
            f"{render['ratio_range']})",
            "<= 1.30",
            render["ratio"] <= 1.3,
        ),
        Goal(
            "plan CPU / SDK floor CPU",
            f"{share:.1%} ({plan['plan_cpu_s']:.2f} s, runs {plan['plan_cpu_range']} s)",
            "<= 4.0 %",
            share <= 0.04,
        ),
        Goal(
            "resources per subscription",
            f"{render['resources_per_subscription']:.3f}",
            "<= 1.09",
            render["resources_per_subscription"] <= 1.09,
        ),
        Goal(
            "largest resource in the state (either layout)",
            f"{largest['largest_resource_bytes'] / MB:.2f} MB ({largest['largest_resource']})",
            "<= 1 MB",
            largest["largest_resource_bytes"] <= MB,
        ),
        Goal(
            "first up, DIY backend (compact JSON), subscriptionBatches",
            f"{diy / GB:,.1f} GB ({states['batches']['resources']:,} resources)",
            "< 100 GB",
            diy < 100 * GB,
        ),
        Goal(
            "plan + check CPU per subscription, 100,000 / 10,000",
            f"{per_subscription:.2f} ({scale[1]['us_per_subscription']} / {scale[0]['us_per_subscription']} us)",
            "<= 1.5",
            per_subscription <= 1.5,
        ),
    ]


def _json_line(*command: str) -> dict[str, Any]:
    out = subprocess.run([sys.executable, *command], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


LAYOUTS = {"default": (), "batches": ("--batches",)}  # state_growth's arguments for each layout


def measure(rounds: int) -> tuple[dict, dict, dict[str, dict], list[dict]]:
    """Run every benchmark the goals read, one after another (never two at once: they share the machine)."""
    from plan_profile import median_run
    from plan_scale import CASES
    from render_scale import rounds_of

    render = rounds_of(SUBSCRIPTIONS, "short", [], rounds)
    plan = median_run(SUBSCRIPTIONS, "tuned")
    growth = (str(BENCH / "state_growth.py"), str(SUBSCRIPTIONS), "short", "--lever", "none")
    states = {layout: _json_line(*growth, *flags) for layout, flags in LAYOUTS.items()}
    scale = [_json_line(str(BENCH / "plan_scale.py"), str(n), str(models)) for n, models in CASES]
    return render, plan, states, scale


def main() -> None:
    from render_scale import ROUNDS, positive

    parser = argparse.ArgumentParser(description="issue 21's scale goals, measured in one run")
    parser.add_argument("--rounds", type=positive, default=ROUNDS, help="alternated render/floor rounds")
    args = parser.parse_args()
    from maas.gc_tuning import tune_gc

    tune_gc()
    render, plan, states, scale = measure(args.rounds)
    rows = goals(render, plan, states, scale)
    width = max(len(goal.name) for goal in rows)
    print(f"{'goal':<{width}}  {'target':>9}  met  measured ({SUBSCRIPTIONS:,} subscriptions over 200 models)")
    for goal in rows:
        print(f"{goal.name:<{width}}  {goal.target:>9}  {'yes' if goal.met else 'NO ':3}  {goal.measured}")
    for layout, state in states.items():
        print(
            f"\nfirst up at {SUBSCRIPTIONS:,} subscriptions, {layout} layout ({state['resources']:,} resources, "
            f"{state['state_compact_bytes'] / 2**20:.0f} MiB of compact state), --parallel 1 (GB = 10^9 bytes)"
        )
        for name, figures in state["backends"].items():
            print(f"  {name:<14} {figures['bytes_p1'] / GB:>10.2f} GB in {figures['writes_p1']:>6,} writes")


if __name__ == "__main__":
    main()
