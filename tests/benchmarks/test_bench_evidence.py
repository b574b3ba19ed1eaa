"""The evidence-cost benchmark: its replay is covered by the runs, and it prints each case with its ratio."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_evidence as bench

BENCHMARKS = Path(bench.__file__).resolve().parent


def test_the_replay_of_a_case_is_judged_covered_to_the_end() -> None:
    """The check runs every rule (the verdict is covered) and is timed."""
    assert bench.check_ms(4, 6, 1) >= 0


def test_a_run_prints_each_case_beside_the_baseline() -> None:
    """With this code as its own baseline, each case prints both figures and the ratio."""
    src = str(Path(bench.__file__).resolve().parents[1] / "src")
    ran = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "bench_evidence.py"),
            "--quick",
            "--repeats",
            "1",
            "--baseline",
            src,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ran.stdout.count("this code / baseline") == len(bench.QUICK)
