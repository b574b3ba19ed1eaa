"""The observation-cost benchmark: its task hits in both engines, and it prints each figure with its ratio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_observations as bench

BENCHMARKS = Path(bench.__file__).resolve().parent


def test_the_records_task_hits_with_observations_compared_and_ignored() -> None:
    """Both engines replay every step of the task from its one recorded run."""
    for observations in ("compared", "ignored"):
        result = bench.build(observations)(bench.TASK, "cus_41")
        assert result.hit and result.steps_replayed == 5


def test_a_run_prints_both_engines_and_the_baseline_side_by_side() -> None:
    """With this code as its own baseline, all three figures and both ratios are printed."""
    src = str(Path(bench.__file__).resolve().parents[1] / "src")
    ran = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "bench_observations.py"),
            "--rounds",
            "1",
            "--batches",
            "1",
            "--baseline",
            src,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    for label in (
        "observations compared",
        "observations ignored",
        "compared / ignored",
        "this code / baseline",
    ):
        assert label in ran.stdout
