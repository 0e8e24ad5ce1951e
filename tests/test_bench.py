"""The benchmarks still run (they are not timed here: figures go into issue notes, never into assertions)."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def test_render_scale_runs_one_small_case():
    result = subprocess.run(
        [sys.executable, "bench/render_scale.py", "20", "legacy"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert '"subscriptions": 20' in result.stdout and '"trlps"' in result.stdout


def test_tenants_benchmark_imports():
    result = subprocess.run(
        [sys.executable, "-c", "import runpy; runpy.run_path('bench/tenants.py', run_name='bench')"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
