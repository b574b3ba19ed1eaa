"""The policy benchmark's harness on small generated streams (no corpus needed)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("cachetools")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_policies as bench
from _lib import policies_corpora, policies_stream
from _lib import policies_reference as ref

from muscle_mem.eviction import make_policy


def _vectors(n: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, 16)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_generated_streams_recur_and_drift() -> None:
    users = policies_stream.users_stream(
        [[0, 1, 2, 3], [4, 5, 6]], _vectors(7), seed=1, length=3_000, users=20
    )
    topics = policies_stream.topics_stream(
        [list(range(i, i + 5)) for i in range(0, 50, 5)], _vectors(50), 1, 3_000
    )
    for s in (users, topics):
        assert len(s.keys) == 3_000 and s.distinct == len(np.unique(s.keys))
        assert s.distinct < 3_000 / 3  # recurrence: most requests repeat a task
        first, last = set(s.keys[:500].tolist()), set(s.keys[-500:].tolist())
        assert first != last  # drift: the working set moves
    assert users.keys.max() < 20 * 7  # a task is one user's prompt


def test_arrivals_keep_their_mean_gap_or_change_pace() -> None:
    for gap in (1.0, 600.0):
        times = policies_stream.arrivals(20_000, gap, seed=0)
        assert np.all(np.diff(times) >= 0) and np.mean(np.diff(times)) == pytest.approx(gap, rel=0.05)
    varying = np.diff(policies_stream.arrivals(20_001, None, seed=0)).reshape(-1, 500).mean(axis=1)
    assert varying.max() / varying.min() > 10


def test_engine_path_matches_the_reference_lru_and_runs_adaptive() -> None:
    s = policies_stream.topics_stream(
        [list(range(i, i + 5)) for i in range(0, 50, 5)], _vectors(50), 2, 2_000
    )
    texts = [f"task {i}" for i in range(50)]
    times = policies_stream.arrivals(2_000, 30.0, seed=2)
    assert bench.engine_run(make_policy("lru"), s, 10, texts, times) == ref.lru(s.keys.tolist(), 10)
    adaptive = bench.engine_run(make_policy("adaptive", 10), s, 10, texts, times)
    assert 0 < adaptive <= ref.belady(s.keys.tolist(), 10)


def test_hits_written_behind_reach_the_store_only_after_the_sync_interval() -> None:
    """Hits that never reach the store before the stream ends leave LRU a FIFO; written at once, an LRU."""
    s = policies_stream.topics_stream(
        [list(range(i, i + 5)) for i in range(0, 50, 5)], _vectors(50), 3, 1_000
    )
    texts = [f"task {i}" for i in range(50)]
    times = np.arange(1_000, dtype=np.float64)
    keys = s.keys.tolist()
    at_once = bench.shared_run([make_policy("lru")], s, 10, texts, times, sync_interval=0.0)
    behind = bench.shared_run([make_policy("lru")], s, 10, texts, times, sync_interval=1e9)
    assert at_once == ref.lru(keys, 10)
    assert behind == _fifo(keys, 10) != at_once


def _fifo(keys: list[int], capacity: int) -> int:
    cached: list[int] = []
    hits = 0
    for key in keys:
        if key in cached:
            hits += 1
            continue
        cached.append(key)
        if len(cached) > capacity:
            cached.pop(0)
    return hits


def test_agentdojo_prompts_are_read_without_running_code() -> None:
    module = ast.parse(
        "_NAME = 'Bob'\n"
        "class UserTask1:\n"
        "    _AMOUNT = 12\n"
        "    PROMPT = f'Send {_AMOUNT} to {_NAME} and {self.other}'\n"
        "class UserTask2:\n"
        "    PROMPT = 'Read ' + f'{unknown()}'\n"
    )
    assert policies_corpora._prompts(module) == ["Send 12 to Bob and {other}", "Read {value}"]


def test_summary_holds_the_references_to_the_same_bar_as_the_policies(
    capsys: pytest.CaptureFixture[str],
) -> None:
    behind, level = np.array([-0.010, -0.011, -0.009, -0.012]), np.zeros(4)
    margins: bench.Margins = {
        ("ARC", 1, "bfcl", "any", 0.10): behind,
        ("ARC", 1, "bfcl", "any", 0.20): level,
        (bench.DEFAULT, 1, "bfcl", "1 s", 0.10): level + 0.002,
    }
    bench.summary(margins)
    lines = capsys.readouterr().out.splitlines()
    arc = next(line for line in lines if line.strip().startswith("ARC"))
    ours = next(line for line in lines if bench.DEFAULT in line)
    assert lines.index(arc) < lines.index(ours)
    assert "ahead in 0 of 2" in arc and "behind beyond noise 1" in arc and "margin -1.05 to +0.00" in arc
    assert "ahead in 1 of 1" in ours and "behind beyond noise 0" in ours
