"""The workers benchmark's harness on tiny inputs: worker processes hit, and the figures come back."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench_workers  # noqa: E402


def test_two_worker_processes_on_one_sqlite_file_mostly_hit(tmp_path: Path) -> None:
    """90 % of the calls are hits after the warm-up; statements are counted per call and per hit."""
    url = f"sqlite:///{tmp_path / 'quick.db'}"
    row = bench_workers.run(bench_workers.SRC, url, 2, 0.5, None, "")
    assert 0.75 <= row["hit_share"] <= 1.0
    assert row["calls_per_s"] > 0 and row["p99_ms"] >= row["p50_ms"] > 0
    assert row["rt_per_hit"] <= row["rt_all_per_call"] + 1.0
    assert row["cpu_ms_per_1k_hits"] is None
    line = bench_workers.format_row({"store": "sqlite", "workers": 2, "code": "this", **row})
    assert line.split()[:3] == ["sqlite", "2", "this"]


def test_an_offered_rate_paces_the_workers(tmp_path: Path) -> None:
    """With an offered rate, the workers together make about that many calls per second."""
    url = f"sqlite:///{tmp_path / 'paced.db'}"
    row = bench_workers.run(bench_workers.SRC, url, 2, 1.0, None, "", rate=40.0)
    assert 25 <= row["calls_per_s"] <= 50
    assert row["p99_ms"] >= row["p50_ms"] > 0
