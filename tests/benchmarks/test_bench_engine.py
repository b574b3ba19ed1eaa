"""The engine benchmark's harness on small inputs: the floor, the figures, the side-by-side protocol."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_engine as bench


def test_the_floor_answers_as_the_engine_does() -> None:
    """The hand-written minimal replay gives the engine's answer for the stored state, and nothing for another."""
    engine, env, raw = bench.filled(20)
    floor = bench.Floor(env, raw, 20)
    assert floor.hit(bench.TASK) == engine(bench.TASK).output
    env["state"] = 99
    assert floor.hit(bench.TASK) is None
    assert floor.hit("another task") is None


def test_the_measurements_give_one_sample_per_batch() -> None:
    """Hits and floor per size, recording and a miss's end-of-run cost (written behind too): samples."""
    b = bench.Bench([5])
    hits = b.hits(2)["5"]
    assert len(hits["wall"]) == len(hits["cpu"]) == len(hits["gc"]) == 2
    assert len(b.floor(2)["5"]["wall"]) == 2
    assert len(bench.record_overhead(calls=100, batch=50)) == 2
    assert len(bench.miss_end_of_run(misses=3)) == 3
    assert len(bench.miss_end_of_run(misses=3, write_behind=True)) == 3
    assert "replay/_replayer.py" in b.profile(hits=10)


def test_a_worker_subprocess_answers_requests() -> None:
    """The side-by-side protocol: a worker on the given source fills its engines and answers."""
    src = str(Path(bench.__file__).resolve().parents[1] / "src")
    worker = bench.Worker(src, [3])
    try:
        assert worker.ask("ready") == {"ready": True}
        figures = bench.gather({"this code": worker}, rounds=1, batches=1)
    finally:
        worker.close()
    assert len(figures["this code"].hits["3"]["cpu"]) == 1
    assert len(figures["this code"].miss) == 300
    assert len(figures["this code"].behind) == 300


def test_the_hits_can_be_measured_on_a_signed_sqlite_store() -> None:
    """``--signed-sqlite``: the engines are filled on a signed SQLite file, and their hits measured."""
    b = bench.Bench([5], signed=True)
    engine = b.engines[5][0]
    assert getattr(engine.store, "signer", None) is not None
    assert len(b.hits(1)["5"]["wall"]) == 1


def test_the_cost_of_a_miss_is_measured_per_store_and_size() -> None:
    """``--miss-cost``: each engine's misses are misses that store, each followed by a hit; samples per call."""
    b = bench.MissBench([3, 6], ["memory", "sqlite"])
    costs = b.misses(2)
    assert sorted(costs) == ["memory 3", "memory 6", "sqlite 3", "sqlite 6"]
    assert all(len(c["miss"]) == len(c["hit"]) == 2 for c in costs.values())
    engine, _ = b.engines["sqlite 6"]
    assert len(engine.store) == 6 + 2
    assert b.miss_run(3) > 0 and b.miss_run(2) > 0 and b.run_misses == 5


def test_a_run_of_misses_stops_a_code_base_past_its_limit() -> None:
    """The misses one after another go in chunks through a worker; a limit of 0 s stops after one chunk."""
    src = str(Path(bench.__file__).resolve().parents[1] / "src")
    worker = bench.Worker(src, [2], miss_stores=["memory"])
    try:
        assert worker.ask("ready") == {"ready": True}
        runs = bench.run_misses({"this code": worker}, total=40, limit=0.0)
        costs = bench.gather_misses({"this code": worker}, rounds=1, misses=2)
    finally:
        worker.close()
    assert [done for done, _ in runs["this code"]] == [2]
    assert len(costs["this code"]["memory 2"]["hit"]) == 2
