"""The restart benchmark's harness on a small store (``--quick``): it builds, measures and hits."""

from __future__ import annotations

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench_restart  # noqa: E402


def test_a_fresh_process_hits_on_its_first_call(tmp_path: Path) -> None:
    """A built store answers a fresh subprocess's first call with a hit; a second build is skipped."""
    url = f"sqlite:///{tmp_path / 'quick.db'}"
    src = bench_restart.SRC
    assert bench_restart.in_subprocess(src, "build", url, 300)["built"]
    assert not bench_restart.in_subprocess(src, "build", url, 300)["built"]
    row = bench_restart.in_subprocess(src, "first_call", url, 300)
    assert row["hit"]
    assert {"open", "first_call", "added_mib", "peak_added_mib"} <= set(row)
