"""Hit overhead and recording overhead of the engine (in-memory store).

Hit overhead: a 5-step trajectory with cheap equality pre-checks; N trajectories stored under the
same task, each recorded in a different environment state, the matching one recorded last. The
overhead is the time of a full hit minus the time of the tool bodies and captures themselves,
measured side by side in the same loop. Targets (issue 2): <= 100 µs at 1,000 and at 100,000.

Recording overhead: a tool called inside a run versus the same function called bare. Target <= 5 µs.

Run: python benchmarks/bench_engine.py [--sizes 1000 100000] [--repeat 5000]
"""

from __future__ import annotations

import argparse
import statistics
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass

from muscle_mem import Check, Engine
from muscle_mem.stores import Store

STEPS = 5
BATCH = 100
"""Hits timed together; each figure is per hit."""


def build_engine(
    store: Store | str | None = None,
) -> tuple[Engine, dict[str, int], list[Callable[[int], int]]]:
    """An engine with 5 tools, each pre-checked by equality on the environment's state."""
    env = {"state": 0}
    engine = Engine(store)
    check = Check.equal(lambda item: env["state"])
    raw: list[Callable[[int], int]] = []
    tools = []
    for i in range(STEPS):

        def body(item: int, _i: int = i) -> int:
            return item + _i

        body.__qualname__ = f"step{i}"
        raw.append(body)
        tools.append(engine.register(body, name=f"step{i}", pre_check=check))

    def agent(task: str) -> int:
        return sum(tool(7) for tool in tools)

    engine.set_agent(agent)
    return engine, env, raw


@dataclass
class Timing:
    total: float
    bodies: float
    best: float
    """Overhead, best batch (as timeit reports: the least disturbed by the rest of the machine)."""
    median: float
    """Overhead, median batch."""
    fill: float


def hit_overhead(size: int, repeat: int) -> Timing:
    engine, env, raw = build_engine()
    started = time.perf_counter()
    for state in range(size):
        env["state"] = state
        result = engine("process the queue")
        assert not result.hit and result.stored, result
    fill_seconds = time.perf_counter() - started
    env["state"] = size - 1
    assert engine("process the queue").hit

    def bare() -> None:
        for body in raw:
            _ = env["state"]  # what each capture reads
            body(7)

    hits, bodies = [], []
    for _ in range(max(1, repeat // BATCH)):
        t0 = time.perf_counter()
        for _ in range(BATCH):
            result = engine("process the queue")
        t1 = time.perf_counter()
        for _ in range(BATCH):
            bare()
        t2 = time.perf_counter()
        assert result.hit and result.steps_replayed == STEPS
        hits.append((t1 - t0) / BATCH)
        bodies.append((t2 - t1) / BATCH)
    overheads = [h - b for h, b in zip(hits, bodies, strict=True)]
    return Timing(
        total=statistics.median(hits) * 1e6,
        bodies=statistics.median(bodies) * 1e6,
        best=min(overheads) * 1e6,
        median=statistics.median(overheads) * 1e6,
        fill=fill_seconds,
    )


def record_overhead(calls: int = 20_000, batch: int = 500) -> tuple[float, float]:
    """µs added to a tool call by recording it, in the call (best and median batch): batches of
    ``batch`` calls of the instrumented tool inside one run, each followed by the same number of
    bare calls, so the machine's load weighs on both alike. Building and storing the trajectory at
    the end of the run is not included (bench_vs_010.py reports it end to end)."""
    engine = Engine()

    def noop(x: int) -> int:
        return x

    tool = engine.register(noop, name="noop")
    overheads: list[float] = []

    def agent(task: str) -> None:
        for _ in range(calls // batch):
            t0 = time.perf_counter()
            for i in range(batch):
                tool(i)
            t1 = time.perf_counter()
            for i in range(batch):
                noop(i)
            t2 = time.perf_counter()
            overheads.append(((t1 - t0) - (t2 - t1)) / batch * 1e6)

    engine.set_agent(agent)
    engine("record many calls")
    return min(overheads), statistics.median(overheads)


def reference_loop() -> float:
    """µs for a fixed pure-Python loop: how fast this machine runs Python right now (for comparing runs)."""
    best = min(timeit.repeat("sum(range(1000))", number=2_000, repeat=5))
    return best / 2_000 * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--repeat", type=int, default=5_000, help="timed hits per size")
    args = parser.parse_args()
    print(f"machine reference: sum(range(1000)) takes {reference_loop():.1f} µs here")
    print(
        f"{'stored':>9} | {'hit total µs':>12} | {'tool bodies µs':>14} | "
        f"{'overhead µs best':>16} | {'overhead µs median':>18} | fill s"
    )
    timings = []
    for size in args.sizes:
        t = hit_overhead(size, args.repeat)
        timings.append(t)
        print(
            f"{size:>9,} | {t.total:>12.1f} | {t.bodies:>14.1f} | {t.best:>16.1f} | {t.median:>18.1f} | {t.fill:.1f}"
        )
    if len(timings) > 1:
        ratio = timings[-1].median / timings[0].median
        print(f"median overhead, largest/smallest size: {ratio:.2f}x (1.00x = flat)")
    met = "met" if max(t.median for t in timings) <= 100 else "NOT met"
    print(f"target <= 100 µs (median batch): {met}")
    best, median = record_overhead()
    print(
        f"recording overhead per tool call, best / median batch: {best:.2f} / {median:.2f} µs"
        f" (target <= 5 µs: {'met' if median <= 5 else 'NOT met'})"
    )


if __name__ == "__main__":
    main()
