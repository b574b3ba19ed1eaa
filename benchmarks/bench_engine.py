"""Hit overhead, recording overhead and a miss's end-of-run cost of the engine (in-memory store).

``--signed-sqlite`` measures the hits on a signed SQLite store instead (a file in a temporary
directory, ``signing_key`` set): what signing and the store's change feed add to a hit.

Hit overhead: a 5-step trajectory with cheap equality pre-checks; N trajectories stored under the
same task, each in a different environment state, the matching one recorded last (the others are
copies of a recorded one with their own snapshot keys, added in one batch: see :func:`filled`). The
overhead is the time of a full hit minus the time of the tool bodies and captures themselves,
measured side by side in the same loop (the median of those bare runs is subtracted from each batch). Target: <= 25 µs at 100,000 stored. Frozen
dataclasses cost here about 0.25-0.6 µs per field to build (``object.__setattr__``), locks taken
with ``with`` about 0.4 µs: both weigh on the figures, and on the floor not at all.

The floor: a hand-written minimal replay with the same bookkeeping (task lookup, 5 captures compared
by digest, 5 tool calls, a usage update); the engine's hit overhead is printed as a multiple of it.
Each batch is timed twice: on the wall clock, and in the process's CPU time, which leaves out the time
the machine ran other processes (on a shared machine, most of what puts the median batch at about
twice the best) and counts this process's other threads (the background writer's writes behind) and
the cyclic GC. The GC's collections during the hits are counted too: each hit leaves a few objects
alive until the writer writes them (its event), so collections run every few hundred hits, and a
full one, its cost proportional to the heap, every few tens of thousands at 1,000 stored.

Recording overhead: a tool called inside a run versus the same function called bare (target <= 3 µs).
A miss's end-of-run cost: from the agent's return to the engine's (the trajectory built, checked and
stored) for 5 tool calls (target <= 100 µs, or off the caller's path), and the same with
``Engine(write_behind=True)``, where the store write is made by a background thread.

A miss at N stored (``--miss-cost``): N trajectories of one task stored (as for the hits), the last
:data:`WARM` of them then replayed once each so that the task's nodes are cached as in an engine that
has served them (more would overflow the step index's default bound of 100,000 edges, which then keeps
few nodes); then
calls in new states, each a miss that records and stores its trajectory, each followed by the hit
that replays it (the first call to catch up with the miss). Both timed whole, per store
(``--miss-stores``, memory and SQLite) and size (``--miss-sizes``); the ratio of the largest size's
median to the smallest's says how flat they are (target <= 1.2x). ``--miss-run N`` times N misses of
one task one after another from an empty memory store (target: 100,000 within 5 minutes); a code
base that falls behind stops at ``--miss-run-limit`` seconds. ``--quick`` measures smaller sizes.

``--baseline SRC`` runs the same measurements on other code (the ``src`` of a ``git worktree`` at the
branch point, say) in a subprocess, alternating with this code's batches, and prints both side by side.
``--telemetry`` adds this code with ``Engine(telemetry=True)`` reporting to the OpenTelemetry SDK (a
batch span processor whose exporter drops the spans, and a metric reader), a third column.
``--observations-ignored`` adds this code with ``Engine(observations="ignored")``: what comparing each
replayed output with what the agent's runs saw costs a hit, apart from everything else that changed
since the baseline.

Run: python benchmarks/bench_engine.py [--sizes 1000 100000] [--rounds 5] [--baseline ../base/src]
[--telemetry] [--observations-ignored] [--signed-sqlite]; python benchmarks/bench_engine.py --miss-cost [--miss-sizes 1000
100000] [--miss-stores memory sqlite] [--misses 100] [--miss-run 100000] [--quick] [--baseline ../base/src]
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import hashlib
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _lib.layout import trajectory_module

from muscle_mem import Check, Engine
from muscle_mem.stores import Store

Snapshot = trajectory_module().Snapshot
"""How a pre-check's snapshot is stored (from the code measured: this one, or a ``--baseline``)."""
STEPS = 5
BATCH = 100
"""Hits timed together; each figure is per hit."""
TASK = "process the queue"
ENGINE_OPTIONS: dict[str, Any] = {}
"""Options every engine of this process is made with (``telemetry`` in a ``--telemetry`` worker)."""
SIGNING_KEY = "bench-signing-key-0123456789abcdef"
WARM = 10_000
"""States replayed once before misses are timed (``--miss-cost``): their nodes cached."""


def build_engine(
    store: Store | str | None = None, **options: Any
) -> tuple[Engine, dict[str, int], list[Callable[[int], int]]]:
    """An engine with 5 tools, each pre-checked by equality on the environment's state."""
    env = {"state": 0}
    engine = Engine(store, **(ENGINE_OPTIONS | options))
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


def filled(
    size: int, signed: bool = False, store: str = "memory"
) -> tuple[Engine, dict[str, int], list[Callable[[int], int]]]:
    """:func:`build_engine` with ``size`` trajectories stored, the state set to the last one's.

    ``signed``: on a signed SQLite store in a temporary directory; else ``store``: ``memory`` or
    ``sqlite`` (a file in a temporary directory).

    The first and the last are recorded by the engine; the others are copies of the first, each
    with the pre-check snapshot keys its state gives (what recording it would store), added in one
    batch: recording 100,000 misses one by one takes the better part of an hour here.
    """
    path = Path(tempfile.mkdtemp(prefix="bench_engine_")) / "cache.db"
    if signed:
        engine, env, raw = build_engine(f"sqlite:///{path}", signing_key=SIGNING_KEY)
    elif store == "sqlite":
        engine, env, raw = build_engine(f"sqlite:///{path}")
    else:
        engine, env, raw = build_engine()
    env["state"] = -1
    first = engine(TASK)
    assert not first.hit and first.stored and first.trajectory_id is not None, first
    template = engine.store.get(first.trajectory_id)
    assert template is not None
    engine.store.remove([template.id])
    started = time.time() - size
    copies = []
    for state in range(size - 1):
        key = Snapshot.digest(state)
        steps = tuple(dataclasses.replace(step, pre=key) for step in template.steps)
        copy = dataclasses.replace(template, steps=steps, id=uuid.uuid4().hex, created_at=started + state)
        copies.append((copy, None))
    engine.store.add_many(copies)
    env["state"] = size - 1
    last = engine(TASK)
    assert not last.hit and last.stored, last
    assert engine(TASK).hit and len(engine.store) == size
    return engine, env, raw


def _digest(value: Any) -> str:
    return hashlib.blake2b(repr(value).encode(), digest_size=16).hexdigest()


class Floor:
    """A hand-written minimal replay: the least a hit must do, with the same bookkeeping.

    The task's trajectories by the digest of their first snapshot; each step's capture compared by
    digest with the recorded one, the tool called; the trajectory's use count and time updated.
    """

    def __init__(self, env: dict[str, int], raw: list[Callable[[int], int]], size: int) -> None:
        self.env = env
        self.raw = raw
        self.tasks: dict[tuple[str, tuple[str, ...]], dict[str, list[tuple[int, str]]]] = {}
        self.usage: dict[str, list[float]] = {}
        for state in range(size):
            steps = [(i, _digest(state)) for i in range(len(raw))]
            self.tasks.setdefault((TASK, ()), {})[steps[0][1]] = steps
            self.usage[steps[0][1]] = [0, 0.0]

    def hit(self, task: str) -> int | None:
        by_first = self.tasks.get((task, ()))
        if not by_first:
            return None
        steps = by_first.get(_digest(self.env["state"]))
        if steps is None:
            return None
        total = 0
        for tool, recorded in steps:
            if _digest(self.env["state"]) != recorded:
                return None
            total += self.raw[tool](7)
        usage = self.usage[steps[0][1]]
        usage[0] += 1
        usage[1] = time.time()
        return total


Samples = dict[str, list[float]]
"""Per batch: ``wall`` and ``cpu`` overheads per hit in µs, ``gc`` the cyclic GC's collections in its hits."""


def _batches(hit: Callable[[], Any], bare: Callable[[], None], batches: int) -> Samples:
    """Overheads per hit in µs: each batch of hits, less the median of the same number of bare runs.

    ``wall`` is elapsed time; ``cpu`` the process's CPU time (time the machine ran other processes is
    left out; this process's other threads, the background writer's writes behind, count). Bare runs
    follow each batch; their median across batches is subtracted (pairing each batch with its own
    bare runs made an overhead negative whenever the machine stalled a bare batch).
    """
    samples: Samples = {"wall": [], "cpu": [], "gc": []}
    bare_wall: list[float] = []
    bare_cpu: list[float] = []
    for _ in range(batches):
        collections = sum(generation["collections"] for generation in gc.get_stats())
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(BATCH):
            hit()
        c1, t1 = time.process_time(), time.perf_counter()
        samples["gc"].append(sum(generation["collections"] for generation in gc.get_stats()) - collections)
        for _ in range(BATCH):
            bare()
        c2, t2 = time.process_time(), time.perf_counter()
        samples["wall"].append(t1 - t0)
        samples["cpu"].append(c1 - c0)
        bare_wall.append(t2 - t1)
        bare_cpu.append(c2 - c1)
    for kind, bare_times in (("wall", bare_wall), ("cpu", bare_cpu)):
        floor = statistics.median(bare_times)
        samples[kind] = [(elapsed - floor) / BATCH * 1e6 for elapsed in samples[kind]]
    return samples


class Bench:
    """The engines of one process, filled once, measured in rounds on request."""

    def __init__(self, sizes: list[int], signed: bool = False) -> None:
        self.engines = {size: filled(size, signed) for size in sizes}

    def hits(self, batches: int) -> dict[str, Samples]:
        out = {}
        for size, (engine, env, raw) in self.engines.items():

            def bare(env: dict[str, int] = env, raw: list[Callable[[int], int]] = raw) -> None:
                for body in raw:
                    _ = env["state"]  # what each capture reads
                    body(7)

            def hit(engine: Engine = engine) -> None:
                result = engine(TASK)
                assert result.hit and result.steps_replayed == STEPS

            out[str(size)] = _batches(hit, bare, batches)
        return out

    def floor(self, batches: int) -> dict[str, Samples]:
        out = {}
        for size, (_, env, raw) in self.engines.items():
            floor = Floor(env, raw, size)

            def bare(env: dict[str, int] = env, raw: list[Callable[[int], int]] = raw) -> None:
                for body in raw:
                    _ = env["state"]
                    body(7)

            assert floor.hit(TASK) is not None
            out[str(size)] = _batches(lambda f=floor: f.hit(TASK), bare, batches)  # type: ignore[misc]
        return out

    def profile(self, hits: int = 3000, top: int = 14) -> str:
        engine = self.engines[min(self.engines)][0]
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(hits):
            engine(TASK)
        profiler.disable()
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats("tottime").print_stats(top)
        lines = [line for line in text.getvalue().splitlines() if "(" in line or "ncalls" in line]
        return "\n".join(line.replace(str(Path.cwd()), ".") for line in lines)


def record_overhead(calls: int = 20_000, batch: int = 500) -> list[float]:
    """µs added to a tool call by recording it, per batch of ``batch`` calls inside one run, less the
    median of as many bare calls (made after each batch). Storing the trajectory is not included (see
    :func:`miss_end_of_run`)."""
    engine = Engine()

    def noop(x: int) -> int:
        return x

    tool = engine.register(noop, name="noop")
    recorded: list[float] = []
    bare: list[float] = []

    def agent(task: str) -> None:
        for _ in range(calls // batch):
            t0 = time.perf_counter()
            for i in range(batch):
                tool(i)
            t1 = time.perf_counter()
            for i in range(batch):
                noop(i)
            t2 = time.perf_counter()
            recorded.append(t1 - t0)
            bare.append(t2 - t1)

    engine.set_agent(agent)
    engine("record many calls")
    floor = statistics.median(bare)
    return [(elapsed - floor) / batch * 1e6 for elapsed in recorded]


def miss_end_of_run(misses: int = 300, **options: Any) -> list[float]:
    """µs from the agent's return to the engine's on a miss of 5 tool calls (its trajectory built and
    stored, or with ``write_behind=True`` built, checked and handed to the writer), each miss in a new
    state, in an engine holding at most ``misses`` trajectories. Empty if the code has no such option."""
    try:
        engine, env, _ = build_engine(**options)
    except TypeError:  # code from before the option
        return []
    agent = engine._agent
    assert agent is not None
    returned = [0.0]

    def timed(task: str) -> Any:
        output = agent(task)
        returned[0] = time.perf_counter()
        return output

    engine.set_agent(timed)
    costs = []
    for state in range(misses):
        env["state"] = state
        result = engine(TASK)
        costs.append((time.perf_counter() - returned[0]) * 1e6)
        assert result.stored or result.storing, result
    engine.close()  # with write_behind: every trajectory written, outside the timed part
    assert len(engine.store) == misses
    return costs


class MissBench:
    """Engines filled with one task's trajectories, their nodes cached, for the cost of a miss."""

    def __init__(self, sizes: list[int], stores: list[str]) -> None:
        self.engines = {}
        for store in stores:
            for size in sizes:
                engine, env, _ = filled(size, store=store)
                for state in range(max(size - WARM, 0), size):  # replayed once: their nodes cached
                    env["state"] = state
                    assert engine(TASK).hit
                self.engines[f"{store} {size}"] = (engine, env)
        self.next_state = 10**9
        self.run: tuple[Engine, dict[str, int]] | None = None
        self.run_misses = 0

    def misses(self, count: int) -> dict[str, Samples]:
        """µs per miss (recorded and stored) and per hit right after it, ``count`` of each per engine."""
        out: dict[str, Samples] = {}
        for name, (engine, env) in self.engines.items():
            samples: Samples = {"miss": [], "hit": []}
            for _ in range(count):
                self.next_state += 1
                env["state"] = self.next_state
                t0 = time.perf_counter()
                missed = engine(TASK)
                t1 = time.perf_counter()
                hit = engine(TASK)
                t2 = time.perf_counter()
                assert not missed.hit and missed.stored and hit.hit, (missed, hit)
                samples["miss"].append((t1 - t0) * 1e6)
                samples["hit"].append((t2 - t1) * 1e6)
            out[name] = samples
        return out

    def miss_run(self, count: int) -> float:
        """Seconds for the next ``count`` misses of one task, one after another, from an empty memory store."""
        if self.run is None:
            engine, env, _ = build_engine()
            self.run = (engine, env)
        engine, env = self.run
        started = time.perf_counter()
        for _ in range(count):
            env["state"] = self.run_misses
            self.run_misses += 1
            assert engine(TASK).stored
        return time.perf_counter() - started


def reference_loop() -> float:
    """µs for a fixed pure-Python loop: how fast this machine runs Python right now (for comparing runs)."""
    best = min(timeit.repeat("sum(range(1000))", number=2_000, repeat=5))
    return best / 2_000 * 1e6


def trace_to_the_sdk() -> None:
    """Set the OpenTelemetry SDK as the global providers: spans batched to an exporter that drops them."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    class Dropped(SpanExporter):
        def export(self, spans: Any) -> SpanExportResult:
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[InMemoryMetricReader()]))
    ENGINE_OPTIONS["telemetry"] = True


def worker(
    sizes: list[int],
    telemetry: bool,
    signed: bool,
    miss_stores: list[str] | None = None,
    observations_ignored: bool = False,
) -> None:
    """Answer measurement requests read from stdin, one JSON line each (the side-by-side protocol).

    ``miss_stores``: fill engines for the cost of a miss in these stores (not the hits' engines).
    """
    if telemetry:
        trace_to_the_sdk()
    if observations_ignored:
        ENGINE_OPTIONS["observations"] = "ignored"
    misses = MissBench(sizes, miss_stores) if miss_stores is not None else None
    bench = Bench(sizes if misses is None else [], signed)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        what, batches = json.loads(line)
        answer: Any
        if misses is not None and what == "misses":
            answer = misses.misses(batches)
        elif misses is not None and what == "miss run":
            answer = misses.miss_run(batches)
        elif what == "hits":
            answer = bench.hits(batches)
        elif what == "floor":
            answer = bench.floor(batches)
        elif what == "record":
            answer = record_overhead()
        elif what == "miss":
            answer = miss_end_of_run()
        elif what == "miss behind":
            answer = miss_end_of_run(write_behind=True)
        else:
            answer = bench.profile()
        print(json.dumps(answer), flush=True)


class Worker:
    """A measuring subprocess running this file with ``src`` first on its path."""

    def __init__(
        self,
        src: str,
        sizes: list[int],
        *,
        telemetry: bool = False,
        signed: bool = False,
        miss_stores: list[str] | None = None,
        observations_ignored: bool = False,
    ) -> None:
        env = {**os.environ, "PYTHONPATH": src}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                "--sizes",
                *map(str, sizes),
                *(["--telemetry"] if telemetry else []),
                *(["--observations-ignored"] if observations_ignored else []),
                *(["--signed-sqlite"] if signed else []),
                *(["--miss-cost", "--miss-stores", *miss_stores] if miss_stores is not None else []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def ask(self, what: str, batches: int = 0) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        if what != "ready":
            self.proc.stdin.write(json.dumps([what, batches]) + "\n")
            self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the worker for {what!r} exited with {self.proc.wait()}")
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait()


@dataclass
class Figures:
    """Samples of one code base, gathered over the rounds."""

    hits: dict[str, Samples]
    floor: dict[str, Samples]
    record: list[float]
    miss: list[float]
    behind: list[float]


def gather(workers: dict[str, Worker], rounds: int, batches: int) -> dict[str, Figures]:
    """Every measurement, in rounds alternating the code bases (the machine's load weighs on all alike)."""
    figures = {name: Figures({}, {}, [], [], []) for name in workers}
    for _ in range(rounds):
        for name, w in workers.items():
            f = figures[name]
            for kept, what in ((f.hits, "hits"), (f.floor, "floor")):
                for size, samples in w.ask(what, batches).items():
                    for name, values in samples.items():
                        kept.setdefault(size, {}).setdefault(name, []).extend(values)
            f.record.extend(w.ask("record"))
            f.miss.extend(w.ask("miss"))
            f.behind.extend(w.ask("miss behind"))
    return figures


def _per_thousand(collections: list[float]) -> str:
    return f"{sum(collections) / (len(collections) * BATCH) * 1000:.1f}"


def _bm(samples: list[float]) -> str:
    return f"{min(samples):6.1f} / {statistics.median(samples):6.1f}"


def report(figures: dict[str, Figures], profile: str) -> None:
    new = figures["this code"]
    old = figures.get("baseline")
    for clock, title in (
        ("wall", "hit overhead per hit, µs, best / median batch (hit minus tool bodies and captures)"),
        ("cpu", "the same in the process's CPU time (time the machine ran other processes left out)"),
    ):
        print(title)
        print(
            f"{'stored':>9} | {'this code':>15} | {'baseline':>15} | {'floor':>15} | ours/floor | ours/baseline"
        )
        for size in new.hits:
            ours, floor = new.hits[size][clock], new.floor[size][clock]
            base = _bm(old.hits[size][clock]) if old else "-"
            vs_base = (
                f"{statistics.median(ours) / statistics.median(old.hits[size][clock]):.2f}x" if old else "-"
            )
            ratio = statistics.median(ours) / statistics.median(floor)
            print(
                f"{int(size):>9,} | {_bm(ours)} | {base:>15} | {_bm(floor)} | {ratio:>9.1f}x | {vs_base:>6}"
            )
    traced = figures.get("telemetry on")
    if traced is not None:
        print("hit overhead with telemetry on (the OpenTelemetry SDK, spans batched and dropped), µs, wall:")
        for size in new.hits:
            ours, on = new.hits[size]["wall"], traced.hits[size]["wall"]
            ratio = statistics.median(on) / statistics.median(ours)
            print(f"  {int(size):>9,} stored: {_bm(on)} ({ratio:.2f}x this code without it)")
    ignored = figures.get("observations ignored")
    if ignored is not None:
        print(
            "hit overhead of this code with observations ignored (outputs not compared with the agent's "
            "runs), µs, wall:"
        )
        for size in new.hits:
            ours, blind = new.hits[size]["wall"], ignored.hits[size]["wall"]
            ratio = statistics.median(ours) / statistics.median(blind)
            print(f"  {int(size):>9,} stored: {_bm(blind)} (this code, comparing them, is {ratio:.2f}x it)")
    largest = max(new.hits, key=int)
    met = "met" if statistics.median(new.hits[largest]["wall"]) <= 25 else "NOT met"
    print(f"target <= 25 µs at the largest size (median batch): {met}")
    print("cyclic GC collections per 1,000 hits:")
    for size in new.hits:
        shown = [f"{name} {_per_thousand(f.hits[size]['gc'])}" for name, f in figures.items()]
        print(f"  {int(size):>9,} stored: " + " | ".join(shown))
    print("recording overhead per tool call, µs, best / median batch:")
    print(f"  this code {_bm(new.record)}" + (f" | baseline {_bm(old.record)}" if old else ""))
    print(f"  target <= 3 µs: {'met' if statistics.median(new.record) <= 3 else 'NOT met'}")
    print(
        "a miss's end-of-run cost (5 tool calls; the trajectory built, checked, stored), µs, best / median:"
    )
    print(f"  this code {_bm(new.miss)}" + (f" | baseline {_bm(old.miss)}" if old else ""))
    print(f"  target <= 100 µs: {'met' if statistics.median(new.miss) <= 100 else 'NOT met'}")
    if new.behind:
        print("  with write_behind=True (the store write on a background thread; flush() waits for it):")
        print(
            f"  this code {_bm(new.behind)}"
            + (f" | baseline {_bm(old.behind)}" if old and old.behind else "")
        )
        print(f"  target <= 100 µs: {'met' if statistics.median(new.behind) <= 100 else 'NOT met'}")
    print("profile of this code's hits (cProfile, smallest size, top functions by own time):")
    print(profile)


MissCosts = dict[str, dict[str, Samples]]
"""Per code base, per engine (``store size``): ``miss`` and ``hit`` µs per call."""
MissRun = list[tuple[int, float]]
"""Misses made so far and the seconds they took, after each chunk."""


def gather_misses(workers: dict[str, Worker], rounds: int, misses: int) -> MissCosts:
    """The cost of a miss and of the hit after it, in rounds alternating the code bases."""
    costs: MissCosts = {name: {} for name in workers}
    for _ in range(rounds):
        for name, w in workers.items():
            for engine, found in w.ask("misses", misses).items():
                kept = costs[name].setdefault(engine, {"miss": [], "hit": []})
                for kind, values in found.items():
                    kept[kind].extend(values)
    return costs


def run_misses(workers: dict[str, Worker], total: int, limit: float) -> dict[str, MissRun]:
    """``total`` misses of one task one after another per code base, in chunks alternating them; a
    code base stops once past ``limit`` seconds."""
    chunk = max(total // 20, 1)
    runs: dict[str, MissRun] = {name: [] for name in workers}
    done = 0
    while done < total:
        step = min(chunk, total - done)
        done += step
        for name, w in workers.items():
            run = runs[name]
            elapsed = run[-1][1] if run else 0.0
            if (run and run[-1][0] < done - step) or elapsed > limit:
                continue  # stopped
            run.append((done, elapsed + w.ask("miss run", step)))
    return runs


def _median_best(samples: list[float]) -> str:
    return f"{statistics.median(samples):8.0f} ({min(samples):6.0f})"


def report_misses(costs: MissCosts, runs: dict[str, MissRun], total: int, limit: float) -> None:
    new, old = costs["this code"], costs.get("baseline")
    print(
        "a miss at N stored of one task (recorded and stored), and the hit right after it, µs, median (best):"
    )
    print(
        f"{'store':>7} | {'stored':>8} | {'this code miss':>16} | {'hit after':>16} | "
        f"{'baseline miss':>16} | {'hit after':>16} | miss ours/base | hit ours/base"
    )
    for engine, ours in new.items():
        store, size = engine.split()
        base = old[engine] if old else None
        cells = [_median_best(ours["miss"]), _median_best(ours["hit"])]
        cells += [_median_best(base["miss"]), _median_best(base["hit"])] if base else ["-", "-"]
        ratios = [
            f"{statistics.median(ours[k]) / statistics.median(base[k]):.2f}x" if base else "-"
            for k in ("miss", "hit")
        ]
        print(
            f"{store:>7} | {int(size):>8,} | {cells[0]:>16} | {cells[1]:>16} | {cells[2]:>16} | "
            f"{cells[3]:>16} | {ratios[0]:>14} | {ratios[1]:>13}"
        )
    print("flatness: the largest size's median over the smallest's (target <= 1.2x):")
    for store in dict.fromkeys(engine.split()[0] for engine in new):
        for name, found in costs.items():
            sized = sorted((int(e.split()[1]), s) for e, s in found.items() if e.split()[0] == store)
            (low, smallest), (high, largest) = sized[0], sized[-1]
            shown = []
            for kind in ("miss", "hit"):
                ratio = statistics.median(largest[kind]) / statistics.median(smallest[kind])
                verdict = "" if name != "this code" else (" met" if ratio <= 1.2 else " NOT met")
                shown.append(f"{kind} {ratio:.2f}x{verdict}")
            print(f"  {store:>7}, {name}, {high:,} against {low:,} stored: " + ", ".join(shown))
    if runs:
        print(
            f"{total:,} misses of one task one after another (memory store), seconds elapsed (ms per miss since):"
        )
        for name, run in runs.items():
            marks, before = [], (0, 0.0)
            for done, elapsed in run:
                per = (elapsed - before[1]) / (done - before[0]) * 1e3
                marks.append(f"{done:,} in {elapsed:.0f} s ({per:.2f})")
                before = (done, elapsed)
            finished = run and run[-1][0] == total
            ending = f"all in {run[-1][1]:.0f} s" if finished else f"stopped past {limit:.0f} s"
            print(f"  {name}: " + ", ".join(marks[:: max(len(marks) // 5, 1)]) + f"; {ending}")
        this = runs["this code"]
        met = this and this[-1][0] == total and this[-1][1] <= 300
        print(f"  target: {total:,} within 300 s for this code: {'met' if met else 'NOT met'}")


def miss_main(args: argparse.Namespace, sources: dict[str, str]) -> None:
    """The cost of a miss at N stored of one task, side by side (``--miss-cost``)."""
    sizes = args.miss_sizes or ([1_000, 20_000] if args.quick else [1_000, 100_000])
    misses = args.misses or (40 if args.quick else 100)
    started = time.perf_counter()
    workers = {name: Worker(src, sizes, miss_stores=args.miss_stores) for name, src in sources.items()}
    try:
        for w in workers.values():
            w.ask("ready")
        print(f"filled {', '.join(args.miss_stores)} at {sizes} in {time.perf_counter() - started:.0f} s")
        costs = gather_misses(workers, args.rounds, misses)
        runs = run_misses(workers, args.miss_run, args.miss_run_limit) if args.miss_run else {}
    finally:
        for w in workers.values():
            w.close()
    report_misses(costs, runs, args.miss_run, args.miss_run_limit)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 100_000])
    parser.add_argument("--rounds", type=int, default=5, help="rounds alternating the code bases")
    parser.add_argument("--batches", type=int, default=10, help="batches of 100 hits per size and round")
    parser.add_argument("--baseline", help="the src directory of the code to compare with (a git worktree's)")
    parser.add_argument("--telemetry", action="store_true", help="also measure this code with telemetry on")
    parser.add_argument(
        "--observations-ignored",
        action="store_true",
        help='also measure this code with Engine(observations="ignored")',
    )
    parser.add_argument(
        "--signed-sqlite", action="store_true", help="the hits on a signed SQLite store, not in memory"
    )
    parser.add_argument(
        "--miss-cost", action="store_true", help="the cost of a miss at N stored, not the hits"
    )
    parser.add_argument("--miss-sizes", type=int, nargs="+", help="stored trajectories (default 1000 100000)")
    parser.add_argument(
        "--miss-stores", nargs="+", default=["memory", "sqlite"], choices=["memory", "sqlite"]
    )
    parser.add_argument("--misses", type=int, help="misses per engine and round (default 100)")
    parser.add_argument(
        "--miss-run", type=int, default=0, help="also time this many misses one after another"
    )
    parser.add_argument("--miss-run-limit", type=float, default=300.0, help="seconds a code base may take")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, fewer misses (a few minutes)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(
            args.sizes,
            args.telemetry,
            args.signed_sqlite,
            args.miss_stores if args.miss_cost else None,
            args.observations_ignored,
        )
        return
    print(f"machine reference: sum(range(1000)) takes {reference_loop():.1f} µs here")
    import muscle_mem

    here = str(Path(muscle_mem.__file__).resolve().parents[1])
    sources = {"this code": here} | ({"baseline": args.baseline} if args.baseline else {})
    if args.miss_cost:
        miss_main(args, sources)
        return
    started = time.perf_counter()
    workers = {name: Worker(src, args.sizes, signed=args.signed_sqlite) for name, src in sources.items()}
    if args.telemetry:
        workers["telemetry on"] = Worker(here, args.sizes, telemetry=True, signed=args.signed_sqlite)
    if args.observations_ignored:
        workers["observations ignored"] = Worker(
            here, args.sizes, observations_ignored=True, signed=args.signed_sqlite
        )
    try:
        for w in workers.values():
            w.ask("ready")
        print(f"filled in {time.perf_counter() - started:.0f} s (workers side by side)")
        figures = gather(workers, args.rounds, args.batches)
        profile = workers["this code"].ask("profile")
    finally:
        for w in workers.values():
            w.close()
    report(figures, profile)


if __name__ == "__main__":
    main()
