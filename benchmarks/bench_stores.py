"""Hit latency and recording throughput of the engine through each store, memory as the reference.

Hit latency: a 5-step trajectory with cheap equality pre-checks (``Check.equal``); N trajectories stored
under the same task, each recorded in a different environment state, the matching one recorded last
(as in ``bench_engine.py``). The median time of a full hit through the engine, per store, at each N.
Targets: a SQLite hit within 3x of the memory store's, a PostgreSQL hit within 10x.

Filling: one trajectory per state is recorded by the engine itself; the other states' trajectories are
the same steps with that state's snapshots (checked equal to what the engine records), written with
``add_many`` so that 100,000 trajectories take seconds rather than minutes.

Recording throughput: 4 writer processes, each running the engine on new tasks (every call a miss that
the agent solves and the engine stores) for a few seconds against one store; trajectories stored per
second in total. The memory reference is 4 processes each with its own memory store.

PostgreSQL is measured when ``--postgres URL`` is given or ``MUSCLE_MEM_TEST_POSTGRES`` is set.

Run: python benchmarks/bench_stores.py [--sizes 1000 100000] [--repeat 1000] [--seconds 4]
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_engine import STEPS, build_engine

from muscle_mem import Engine
from muscle_mem.model.trajectory import Snapshot, Trajectory
from muscle_mem.stores import MemoryStore, PostgresStore, Rank, SQLiteStore, Store, open_store

Built = tuple[Engine, dict[str, int], list[Callable[[int], int]]]
TASK = "process the queue"
TARGETS = {"sqlite": 3.0, "postgres": 10.0}


def template() -> Trajectory:
    """What the engine records for state 0, checked against what it records for state 1."""
    engine, env, _ = build_engine(MemoryStore())
    recorded = []
    for state in (0, 1):
        env["state"] = state
        result = engine(TASK)
        assert result.stored and result.trajectory_id is not None
        found = engine.store.get(result.trajectory_id)
        assert found is not None
        recorded.append(found)
    assert _comparable(for_state(recorded[0], 1)) == _comparable(recorded[1])
    engine.close()
    return recorded[0]


def for_state(base: Trajectory, state: int) -> Trajectory:
    snapshot = Snapshot.digest(state)  # equality pre-checks store the hash of what they captured
    steps = tuple(dataclasses.replace(s, pre=snapshot) for s in base.steps)
    return dataclasses.replace(base, steps=steps, id=uuid.uuid4().hex, created_at=base.created_at + state)


def _comparable(t: Trajectory) -> Any:
    return (t.task_key, t.task, [(s.tool, s.version, s.args, s.kwargs, s.pre, s.post) for s in t.steps])


def fill(store: Store, trajectories: list[Trajectory]) -> None:
    chunk = 5_000
    for first in range(0, len(trajectories), chunk):
        store.add_many([(t, None) for t in trajectories[first : first + chunk]])


def hit_once(built: Built) -> tuple[float, float]:
    """Seconds of one full hit, and of the same tool bodies called bare."""
    engine, env, raw = built
    t0 = time.perf_counter()
    result = engine(TASK)
    t1 = time.perf_counter()
    for body in raw:
        _ = env["state"]  # what each capture reads
        body(7)
    t2 = time.perf_counter()
    assert result.hit and result.steps_replayed == STEPS, result
    return t1 - t0, t2 - t1


def measure_hits(
    engines: dict[str, Built], state: int, repeat: int
) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """Seconds of the first call after the fill (the engine's index reads the new trajectories), then
    the median µs of a full hit and of the tool bodies alone, per store. The stores take turns, one hit
    each, so that a busy machine slows them all alike."""
    catch_up = {}
    for name, (engine, env, _) in engines.items():
        env["state"] = state
        started = time.perf_counter()
        assert engine(TASK).hit, "expected a hit"
        catch_up[name] = time.perf_counter() - started
        for _ in range(20):
            assert engine(TASK).hit, "expected a hit"
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in engines}
    for _ in range(repeat):
        for name, built in engines.items():
            samples[name].append(hit_once(built))
    return catch_up, {
        name: (statistics.median(h for h, _ in found) * 1e6, statistics.median(b for _, b in found) * 1e6)
        for name, found in samples.items()
    }


def first_call_of_a_new_engine(stores: dict[str, Store], state: int) -> dict[str, float]:
    """Seconds of the first call of an engine made now on each store: it reads every trajectory of
    the task into its index, as a restarted worker does (the store handle is reused: no connection
    set-up in the figure)."""
    found = {}
    for name, store in stores.items():
        engine, env, _ = build_engine(store)
        env["state"] = state
        started = time.perf_counter()
        assert engine(TASK).hit, "expected a hit"
        found[name] = time.perf_counter() - started
        engine.journal.flush()  # not engine.close(): the store is shared with the other engines
    return found


def hit_table(stores: dict[str, Store], sizes: list[int], repeat: int) -> None:
    base = template()
    print(f"\nHit latency, {STEPS}-step trajectory, equality pre-checks, N trajectories under one task")
    print(f"{'store':>9} | {'stored':>9} | {'hit µs':>8} | {'overhead µs':>11} | {'vs memory':>9} | target")
    engines = {name: build_engine(store) for name, store in stores.items()}
    done = 0
    for size in sizes:
        batch = [for_state(base, state) for state in range(done, size)]
        filled = {}
        for name, store in stores.items():
            started = time.perf_counter()
            fill(store, batch)
            filled[name] = time.perf_counter() - started
        catch_up, results = measure_hits(engines, size - 1, repeat)
        first = first_call_of_a_new_engine(stores, size - 1)
        reference = results["memory"][0]
        for name, (hit, bodies) in results.items():
            ratio = hit / reference
            target = TARGETS.get(name)
            verdict = (
                "reference" if target is None else f"<= {target:g}x {'met' if ratio <= target else 'NOT met'}"
            )
            print(
                f"{name:>9} | {size:>9,} | {hit:>8.1f} | {hit - bodies:>11.1f} | {ratio:>8.2f}x | {verdict}"
                f"   (fill {filled[name]:.1f} s, first call after it {catch_up[name]:.1f} s,"
                f" first call of a new engine {first[name]:.1f} s)"
            )
        done = size
    operations_table(stores, done)
    for engine, _, _ in engines.values():
        engine.close()  # flushes its event journal, then closes its store


def operations_table(stores: dict[str, Store], size: int, repeat: int = 200) -> None:
    """Median µs of the store calls behind a hit and an eviction, with ``size`` trajectories stored
    (the stores take turns, call by call)."""
    print(f"\nStore operations with {size:,} trajectories stored (median µs)")
    names = ["revision", "usage", "touch", "victims priority", "victims recency", "add + evict one"]
    print(f"{'store':>9} | " + " | ".join(f"{n:>16}" for n in names))
    base = template()
    calls = {name: operations(store, base, repeat) for name, store in stores.items()}
    cells: dict[str, list[float]] = {name: [] for name in stores}
    for column in range(len(names)):
        found: dict[str, list[float]] = {name: [] for name in stores}
        for _ in range(repeat):
            for name in stores:
                found[name].append(elapsed(calls[name][column]))
        for name in stores:
            cells[name].append(statistics.median(found[name]) * 1e6)
    for name in stores:
        print(f"{name:>9} | " + " | ".join(f"{c:>16.1f}" for c in cells[name]))


def operations(store: Store, base: Trajectory, repeat: int) -> list[Callable[[], object]]:
    some = next(iter(store.summaries())).id
    now = time.time()
    extra = [for_state(base, -1 - i) for i in range(repeat)]
    return [
        store.revision,
        lambda: store.usage(some),
        lambda: store.touch(some, now=now, saved_seconds=0.0, priority=1.0, attention=0.5),
        lambda: store.victims(1, Rank()),
        lambda: store.victims(1, Rank("recency_attention", now=now)),
        lambda: (store.add(extra.pop()), store.remove(store.victims(1, Rank()))),
    ]


def elapsed(call: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def writer(url: str, seconds: float, start: Any, results: Any) -> None:
    engine, env, _ = build_engine(url)
    prefix = f"{os.getpid()}-{uuid.uuid4().hex[:6]}"
    engine(f"warm up {prefix}")
    start.wait()
    stored, deadline, i = 0, time.perf_counter() + seconds, 0
    while time.perf_counter() < deadline:
        env["state"] = i
        stored += engine(f"task {prefix} {i}").stored
        i += 1
    engine.close()
    results.put(stored)


def recording_rate(url: str, writers: int, seconds: float) -> int:
    """Trajectories stored by ``writers`` processes in ``seconds`` (after one warm-up task each)."""
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(writers + 1), ctx.Queue()
    processes = [ctx.Process(target=writer, args=(url, seconds, start, results)) for _ in range(writers)]
    for process in processes:
        process.start()
    start.wait()
    total = sum(results.get(timeout=120 + seconds) for _ in processes)
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    return int(total)


def writer_table(urls: dict[str, str], writers: int, seconds: float) -> None:
    print(f"\nRecording throughput, {writers} writer processes, {seconds:g} s, every call a new task")
    print(f"{'store':>9} | {'stored/s':>9} | {'vs memory':>9} | check")
    reference = 0.0
    for name, url in urls.items():
        total = recording_rate(url, writers, seconds)
        rate = total / seconds
        reference = reference or rate
        if name == "memory":
            check = "each process has its own memory store"
        else:
            store = open_store(url)
            found = len(store)
            store.close()
            expected = total + writers  # one warm-up task per writer
            check = (
                f"{found:,} stored, {expected:,} reported: {'nothing lost' if found == expected else 'LOST'}"
            )
        print(f"{name:>9} | {rate:>9.0f} | {rate / reference:>8.2f}x | {check}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--repeat", type=int, default=1_000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--postgres", default=os.environ.get("MUSCLE_MEM_TEST_POSTGRES", ""))
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="muscle-mem-bench-"))
    schemas = [f"mm_bench_{uuid.uuid4().hex[:10]}" for _ in range(2)]
    stores: dict[str, Store] = {"memory": MemoryStore(), "sqlite": SQLiteStore(workdir / "hits.db")}
    urls = {"memory": "memory://", "sqlite": f"sqlite:///{workdir}/writers.db"}
    if args.postgres:
        stores["postgres"] = PostgresStore(args.postgres, schema=schemas[0])
        urls["postgres"] = f"{args.postgres}{'&' if '?' in args.postgres else '?'}schema={schemas[1]}"
    else:
        print("PostgreSQL not measured: pass --postgres URL or set MUSCLE_MEM_TEST_POSTGRES")
    try:
        hit_table(stores, sorted(args.sizes), args.repeat)
        writer_table(urls, args.writers, args.seconds)
    finally:
        if args.postgres:
            import psycopg

            with psycopg.connect(args.postgres, autocommit=True) as conn:
                for schema in schemas:
                    conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


if __name__ == "__main__":
    main()
