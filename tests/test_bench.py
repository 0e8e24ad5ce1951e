"""The benchmarks still run (they are not timed here: figures go into issue notes, never into assertions)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import ROOT


def test_render_scale_runs_one_small_case():
    result = subprocess.run(
        [sys.executable, "bench/render_scale.py", "20", "legacy"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert '"subscriptions": 20' in result.stdout and '"trlps"' in result.stdout
    assert '"floor_cpu_seconds"' in result.stdout and '"resources_per_subscription"' in result.stdout


def test_the_table_reports_medians_over_rounds_and_the_range_of_their_ratios():
    from bench.render_scale import median_row

    runs = [
        {"subscriptions": 10, "render_cpu_seconds": 30.0, "floor_cpu_seconds": 20.0, "ratio": 1.5, "objects": 7},
        {"subscriptions": 10, "render_cpu_seconds": 36.0, "floor_cpu_seconds": 24.0, "ratio": 1.5, "objects": 7},
        {"subscriptions": 10, "render_cpu_seconds": 33.0, "floor_cpu_seconds": 30.0, "ratio": 1.1, "objects": 7},
    ]
    for run in runs:
        run |= {key: run["render_cpu_seconds"] for key in ("plan_seconds", "check_seconds", "render_seconds")}
        run["floor_seconds"] = run["floor_cpu_seconds"]
    row = median_row(runs)
    assert (row["render_cpu_seconds"], row["floor_cpu_seconds"]) == (33.0, 24.0)
    assert row["ratio"] == 1.38 and row["ratio_range"] == "1.10-1.50"  # median over median, not a median ratio
    assert row["objects"] == 7


def test_render_scale_refuses_a_malformed_case_or_round_count():
    for args in (["20"], ["--rounds", "0"]):
        result = subprocess.run(
            [sys.executable, "bench/render_scale.py", *args], cwd=ROOT, capture_output=True, text=True, check=False
        )
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr


def test_state_growth_runs_one_small_case():
    result = subprocess.run(
        [sys.executable, "bench/state_growth.py", "20", "short"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)
    assert abs(row["state_bytes_modelled"] - row["state_bytes"]) < 64  # the per-resource model adds up to the file
    assert abs(row["state_compact_bytes_modelled"] - row["state_compact_bytes"]) < 64  # and to the compact one
    backends = row["backends"]
    # every create saves twice and every component's outputs once, at any --parallel; skipping checkpoints, once
    assert backends["diy"]["writes_p1"] == backends["diy"]["writes_p32"] == row["first_up_writes"]
    assert 2 * row["resources"] < row["first_up_writes"] < 3 * row["resources"]
    assert backends["diy-skip"]["writes_p1"] == 1
    assert backends["diy-skip"]["bytes_p1"] < 4 * row["state_compact_bytes"]  # one save, its backups, no O(N²)
    # each save also copies the previous file to .bak: the DIY backend writes about twice its checkpoints
    assert 1.9 < backends["diy"]["bytes_p1"] / backends["diy"]["checkpoint_bytes_p1"] < 2.1
    assert backends["cloud-journal"]["writes_p32"] < backends["cloud-journal"]["writes_p1"] == row["first_up_writes"]
    levers = row["levers"]
    assert levers["base"]["diy_bytes"] == backends["diy"]["bytes_p1"]
    assert levers["subscriptions-grouped"]["resources"] < levers["base"]["resources"]


def test_tenants_benchmark_imports():
    result = subprocess.run(
        [sys.executable, "-c", "import runpy; runpy.run_path('bench/tenants.py', run_name='bench')"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


def test_simulator_benchmark_runs_one_small_case():
    result = subprocess.run(
        [sys.executable, "bench/simulator.py", "2"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].split()[0] == "2"


def test_status_writes_benchmark_runs_one_small_case():
    result = subprocess.run(
        [sys.executable, "bench/status_writes.py", "1"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[2].split()[0] == "1"


def test_plan_scale_runs_one_small_case():
    result = subprocess.run(
        [sys.executable, "bench/plan_scale.py", "40", "8"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)
    assert (row["subscriptions"], row["models"]) == (40, 8) and row["objects"] > 40


def test_the_scale_goals_hold_each_figure_to_its_target():
    from bench.scale_goals import goals

    render = {
        "ratio": 1.31,
        "render_cpu_seconds": 33.0,
        "floor_cpu_seconds": 25.0,
        "ratio_range": "1.28-1.35",
        "resources_per_subscription": 1.088,
    }
    plan = {"plan_cpu_s": 0.9, "plan_cpu_range": "0.88-0.95"}  # 3.6 % of the floor
    states = {
        "default": {"largest_resource_bytes": 1_000_001, "largest_resource": "statuses/t", "resources": 10_900},
        "batches": {"largest_resource_bytes": 990_000, "largest_resource": "subscriptions/t/0", "resources": 950},
    }
    states["default"]["backends"] = {"diy": {"bytes_p1": 1_600e9}}  # the default layout is not the DIY goal's
    states["batches"]["backends"] = {"diy": {"bytes_p1": 99e9}}
    scale = [{"us_per_subscription": 400}, {"us_per_subscription": 620}]
    found = goals(render, plan, states, scale)
    met = {goal.name: goal.met for goal in found}
    assert met == {
        "render CPU / SDK floor CPU": False,
        "plan CPU / SDK floor CPU": True,
        "resources per subscription": True,
        "largest resource in the state (either layout)": False,  # 1 MB is 10^6 bytes
        "first up, DIY backend (compact JSON), subscriptionBatches": True,
        "plan + check CPU per subscription, 100,000 / 10,000": False,  # 1.55
    }
    [plan_goal] = [goal for goal in found if goal.name == "plan CPU / SDK floor CPU"]
    assert plan_goal.measured == "3.6% (0.90 s, runs 0.88-0.95 s)"  # the spread of single runs beside the median


def state_growth(*flags: str) -> dict:
    command = [sys.executable, "bench/state_growth.py", "40", "short", "--lever", "none", *flags]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_state_growth_without_levers_models_the_state_as_rendered():
    row = state_growth()
    assert list(row["levers"]) == ["base"] and row["levers"]["base"]["resources"] == row["resources"]
    assert row["batches"] is False


def test_state_growth_models_the_subscription_batches_layout():
    """40 subscriptions, one resource each, become one batch: 39 fewer resources, and fewer bytes written."""
    one_each, batched = state_growth(), state_growth("--batches")
    assert batched["batches"] is True
    assert batched["resources"] == one_each["resources"] - 39
    assert batched["backends"]["diy"]["bytes_p1"] < one_each["backends"]["diy"]["bytes_p1"]
