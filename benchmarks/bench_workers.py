"""Many worker processes on one store: calls/s, latency tails, store round trips and database CPU.

Each of 1, 2, 4, 8 and 16 worker processes runs an engine on one PostgreSQL schema (and on one SQLite
file): a pool of 20 tasks of 5 steps, each pre-checked with ``Check.equal``, recorded during a warm-up,
then for ``--seconds`` 90 % calls of a pool task (hits) and 10 % calls of a task never seen (misses,
recorded). It prints calls/s, p50/p99 per call, the store statements run per call and per hit on the
caller's path (counted by wrapping the driver's ``execute`` in each worker) and in all (the background
writer and the change listener included), and the PostgreSQL server's CPU per 1,000 hits (utime +
stime of the backends of the run, from ``/proc``, before and after). With ``--baseline SRC`` (a
checkout of the branch point: ``git worktree add /tmp/feed-base main``), the same workload runs with
``PYTHONPATH=SRC`` in alternation, on a store of its own, and both rows are printed side by side.

Target: at most 0.1 round trips per hit, and p99 at 16 processes within 2x of one.

Flat out (the default), every worker calls as fast as it can: that measures throughput, and on a
2-core machine 16 busy processes wait for the CPU, so their tails say more about the scheduler than
about the store. With ``--rate N`` the workers together offer N calls/s on a fixed schedule (open
loop) and a call's latency counts from when it was due, so queueing behind a slow call is counted:
at a load the machine can carry, the p99 ratio between 16 processes and one measures contention in
the store and the engine.

Run: python benchmarks/bench_workers.py [--baseline /tmp/feed-base/src] [--seconds 4] [--quick]
      [--workers 1,2,4,8,16] [--stores postgres,sqlite] [--postgres URL] [--rate 300]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
POOL = 20
NEW_SHARE = 0.1
STEPS = 5


# -- the worker ---------------------------------------------------------------------------------


class Statements:
    """Store statements counted per thread: the caller's path apart from the background threads."""

    def __init__(self) -> None:
        self.by_thread: dict[int, int] = {}
        self.local = 0
        """SQLite's ``PRAGMA data_version``: read from shared memory, no table, no lock."""

    def note(self, sql: object) -> None:
        if isinstance(sql, str) and sql.strip() == "PRAGMA data_version":
            self.local += 1
            return
        ident = threading.get_ident()
        self.by_thread[ident] = self.by_thread.get(ident, 0) + 1

    def mine(self) -> int:
        return self.by_thread.get(threading.get_ident(), 0)

    def total(self) -> int:
        return sum(self.by_thread.values())


def count_statements(counter: Statements) -> None:
    """Wrap the drivers so that every statement a store runs is counted (any muscle-mem version)."""
    import sqlite3

    class CountingConnection(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
            counter.note(sql)
            return super().execute(sql, *args)

        def executemany(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
            counter.note(sql)
            return super().executemany(sql, *args)

    connect = sqlite3.connect

    def counting_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        kwargs.setdefault("factory", CountingConnection)
        return connect(*args, **kwargs)

    sqlite3.connect = counting_connect  # type: ignore[assignment]
    try:
        import psycopg
    except ImportError:
        return
    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany

    def counting_execute(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        counter.note(query)
        return execute(self, query, *args, **kwargs)

    def counting_executemany(self: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
        counter.note(query)
        return executemany(self, query, *args, **kwargs)

    psycopg.Cursor.execute = counting_execute  # type: ignore[method-assign]
    psycopg.Cursor.executemany = counting_executemany  # type: ignore[method-assign]


def make_engine(url: str) -> Any:
    """An engine whose agent runs a 5-step task, each step pre-checked by value (as a real one reads a page)."""
    import inspect

    from muscle_mem import Check, Engine

    options = {"sync_interval": 0.5} if "sync_interval" in inspect.signature(Engine).parameters else {}
    engine = Engine(url, **options)
    world = {"page": "home", "cart": 0}

    def step(i: int) -> Any:
        @engine.tool(name=f"step{i}", pre_check=Check.equal(lambda *_: world["page"]))
        def tool(item: str) -> str:
            return f"{item}:{i}"

        return tool

    tools = [step(i) for i in range(STEPS)]

    def agent(task: str) -> str:
        return " ".join(tool(task) for tool in tools)

    engine.set_agent(agent)
    return engine


def worker(args: dict[str, Any]) -> None:
    """One worker process: warm up, say ready, run when told, print the figures, exit when told."""
    counter = Statements()
    count_statements(counter)
    engine = make_engine(args["url"])
    for i in range(POOL):  # recorded by the first worker to get there, hit by the others
        engine(f"pool task {i}")
    feed = getattr(engine.store, "change_mark", None)
    deadline = time.monotonic() + 10
    while feed is not None and feed("") is None and time.monotonic() < deadline:
        time.sleep(0.01)  # a PostgreSQL listener connecting
    for _ in range(2):
        for i in range(POOL):  # every step of every pool task loaded: the steady state
            engine(f"pool task {i}")
    print("ready", flush=True)
    sys.stdin.readline()
    rng = random.Random(args["seed"])
    latencies: list[float] = []
    hit_latencies: list[float] = []
    hit_statements = hits = calls = 0
    started = time.perf_counter()
    before, mine_before = counter.total(), counter.mine()
    new = 0
    gap = 1.0 / args["rate"] if args.get("rate") else 0.0
    due = started + rng.random() * gap  # workers' schedules interleave
    while time.perf_counter() - started < args["seconds"]:
        if gap:  # open loop: a call is due every ``gap`` s, its latency counted from when it was due
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
        if rng.random() < NEW_SHARE:
            new += 1
            task = f"new task {args['seed']}-{new}"
        else:
            task = f"pool task {rng.randrange(POOL)}"
        mine = counter.mine()
        t0 = due if gap else time.perf_counter()
        due += gap
        result = engine(task)
        latencies.append(time.perf_counter() - t0)
        calls += 1
        if result.hit:
            hit_latencies.append(latencies[-1])
            hits += 1
            hit_statements += counter.mine() - mine
    elapsed = time.perf_counter() - started
    caller = counter.mine() - mine_before  # the warm-up's statements left out
    print(
        json.dumps(
            {
                "calls": calls,
                "hits": hits,
                "elapsed": elapsed,
                "latencies": latencies,
                "hit_latencies": hit_latencies,
                "hit_statements": hit_statements,
                "caller_statements": caller,
                "all_statements": counter.total() - before,
                "local_checks": counter.local,
            }
        ),
        flush=True,
    )
    sys.stdin.readline()
    engine.close()


# -- the parent ---------------------------------------------------------------------------------


def backend_cpu(pg_url: str, application: str) -> float:
    """CPU seconds (user + system) used so far by the server backends named ``application``."""
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        pids = [
            r[0]
            for r in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (application,)
            )
        ]
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


def run(
    src: Path,
    url: str,
    workers: int,
    seconds: float,
    pg_url: str | None,
    application: str,
    rate: float = 0.0,
) -> dict[str, Any]:
    """One configuration: ``workers`` processes with ``PYTHONPATH=src`` on the store at ``url``.

    ``rate``: calls per second offered by all the workers together (0: each calls as fast as it can).
    """
    env = {**os.environ, "PYTHONPATH": str(src)}
    task = {"url": url, "seconds": seconds, "rate": rate / workers}
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker", json.dumps({**task, "seed": i})],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
        )
        for i in range(workers)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if line.strip() != "ready":
                raise RuntimeError(f"a worker failed to start: {line!r}")
        cpu_before = backend_cpu(pg_url, application) if pg_url else 0.0
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = []
        for proc in procs:
            assert proc.stdout is not None
            results.append(json.loads(proc.stdout.readline()))
        cpu = (backend_cpu(pg_url, application) - cpu_before) if pg_url else 0.0
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("exit\n")
            proc.stdin.flush()
        for proc in procs:
            proc.wait(120)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    latencies = sorted(x for r in results for x in r["latencies"])
    hit_latencies = sorted(x for r in results for x in r["hit_latencies"]) or [0.0]
    calls = sum(r["calls"] for r in results)
    hits = sum(r["hits"] for r in results)
    wall = max(r["elapsed"] for r in results)
    return {
        "calls_per_s": calls / wall,
        "p50_ms": 1000 * latencies[len(latencies) // 2],
        "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
        "hit_p99_ms": 1000 * hit_latencies[min(len(hit_latencies) - 1, int(len(hit_latencies) * 0.99))],
        "rt_per_call": sum(r["caller_statements"] for r in results) / max(calls, 1),
        "rt_per_hit": sum(r["hit_statements"] for r in results) / max(hits, 1),
        "rt_all_per_call": sum(r["all_statements"] for r in results) / max(calls, 1),
        "hit_share": hits / max(calls, 1),
        "cpu_ms_per_1k_hits": 1000 * 1000 * cpu / max(hits, 1) if pg_url else None,
    }


def fresh_store(kind: str, pg_url: str | None, tmp: Path, tag: str) -> tuple[str, str | None, str]:
    """A new store's URL, the admin URL to drop it (PostgreSQL), and its sessions' application name."""
    if kind == "sqlite":
        return f"sqlite:///{tmp / f'{tag}-{uuid.uuid4().hex[:8]}.db'}", None, ""
    schema = f"bench_workers_{tag}_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    return f"{pg_url}?schema={schema}", schema, f"muscle_mem:{schema}"


def drop(pg_url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def measure(
    kinds: list[str],
    counts: list[int],
    seconds: float,
    pg_url: str | None,
    baseline: Path | None,
    rate: float = 0.0,
) -> list[dict[str, Any]]:
    """Every configuration, this code and the baseline alternating; one row each."""
    rows = []
    variants = [("this", SRC)] + ([("base", baseline)] if baseline else [])
    with tempfile.TemporaryDirectory(prefix="bench_workers_") as tmp:
        for kind in kinds:
            for n in counts:
                for name, src in variants:
                    url, schema, application = fresh_store(kind, pg_url, Path(tmp), name)
                    try:
                        row = run(
                            src, url, n, seconds, pg_url if kind == "postgres" else None, application, rate
                        )
                    finally:
                        if schema is not None and pg_url:
                            drop(pg_url, schema)
                    rows.append({"store": kind, "workers": n, "code": name, **row})
                    print(format_row(rows[-1]), flush=True)
    return rows


PLAN_QUERIES = ("task_state", "changes", "candidates_pre")


def plans(pg_url: str, size: int) -> list[dict[str, Any]]:
    """Hot-path statements on a store where one task holds ``size`` trajectories, timed each way.

    Each runs prepared at once (``prepare_threshold=0``), first 10 times for a small task (so that a
    generic plan is made from those), then timed for the big one: with the server's default
    ``plan_cache_mode`` and with the store's ``force_custom_plan``, before and after ANALYZE.
    """
    import statistics

    import psycopg

    sys.path.insert(0, str(SRC))
    from muscle_mem.stores import PostgresStore

    schema = f"bench_plans_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    store = PostgresStore(pg_url, schema=schema)
    s = f'"{schema}"'
    rows = []
    try:
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute(f"ALTER TABLE {s}.trajectories SET (autovacuum_enabled = off)")
            conn.execute(f"ALTER TABLE {s}.steps SET (autovacuum_enabled = off)")
            conn.execute(f"ALTER TABLE {s}.usage SET (autovacuum_enabled = off)")
            conn.execute(
                f"INSERT INTO {s}.trajectories SELECT g, 't' || g, CASE WHEN g <= %s THEN 'big' ELSE 'small' END, "
                "'task', '[]', 1, 0, 2, '{{}}', g FROM generate_series(1, %s + 10) g",
                (size, size),
            )
            conn.execute(
                f"INSERT INTO {s}.usage SELECT 't' || g, g, 0, g, 0, 0, 0 FROM generate_series(1, %s + 10) g",
                (size,),
            )
            conn.execute(
                f"INSERT INTO {s}.steps SELECT 't' || g, 0, CASE WHEN g <= %s THEN 'root-big' ELSE 'root-small' "
                "END, 'sig' || (g %% 7), 'pre' || (g %% 1000), 'post' || g FROM generate_series(1, %s + 10) g",
                (size, size),
            )
            conn.execute(
                f"INSERT INTO {s}.tasks VALUES ('big', 'task', %s, %s), ('small', 'task', 10, %s)",
                (size, size, size + 10),
            )
            conn.execute(f"SELECT setval('{s}.revs', %s)", (size + 10,))
            args = {
                "task_state": (("small",), ("big",)),
                "changes": ({"key": "small", "since": size + 10}, {"key": "big", "since": size}),
                "candidates_pre": (("root-small", "sig1", "pre1"), ("root-big", "sig1", "pre1")),
            }
            for analyzed in (False, True):
                if analyzed:
                    conn.execute(f"ANALYZE {s}.trajectories, {s}.steps, {s}.usage, {s}.tasks, {s}.tombstones")
                for mode in ("auto", "force_custom_plan"):
                    for name in PLAN_QUERIES:
                        sql = store._sql[name]
                        with psycopg.connect(pg_url, autocommit=True, prepare_threshold=0) as prepared:
                            prepared.execute(f"SET plan_cache_mode = {mode}")
                            small, big = args[name]
                            for _ in range(10):
                                prepared.execute(sql, small).fetchall()
                            times = []
                            for _ in range(15):
                                t0 = time.perf_counter()
                                prepared.execute(sql, big).fetchall()
                                times.append(1000 * (time.perf_counter() - t0))
                        rows.append(
                            {
                                "query": name,
                                "analyzed": analyzed,
                                "mode": mode,
                                "ms": statistics.median(times),
                            }
                        )
    finally:
        store.close()
        drop(pg_url, schema)
    return rows


HEADER = (
    f"{'store':9} {'procs':>5} {'code':5} {'calls/s':>8} {'p50 ms':>7} {'p99 ms':>7} "
    f"{'hit p99':>7} {'rt/call':>8} {'rt/hit':>7} {'rt all':>7} {'hits':>5} {'pg cpu ms/1k hits':>18}"
)


def format_row(row: dict[str, Any]) -> str:
    cpu = row["cpu_ms_per_1k_hits"]
    return (
        f"{row['store']:9} {row['workers']:>5} {row['code']:5} {row['calls_per_s']:>8.0f} {row['p50_ms']:>7.2f} "
        f"{row['p99_ms']:>7.2f} {row['hit_p99_ms']:>7.2f} {row['rt_per_call']:>8.3f} {row['rt_per_hit']:>7.3f} {row['rt_all_per_call']:>7.3f} "
        f"{row['hit_share']:>5.0%} {'' if cpu is None else f'{cpu:.0f}':>18}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--baseline", type=Path, help="the src directory of the code to compare with")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--workers", default="1,2,4,8,16")
    parser.add_argument("--stores", default="postgres,sqlite")
    parser.add_argument("--postgres", default=os.environ.get("MUSCLE_MEM_TEST_POSTGRES"))
    parser.add_argument(
        "--rate",
        type=float,
        default=0.0,
        help="calls/s offered by all workers together, latency from when each call was due (0: flat out)",
    )
    parser.add_argument("--quick", action="store_true", help="1 and 2 workers, 1 s, SQLite only")
    parser.add_argument("--plans", type=int, default=0, metavar="SIZE", help="only time the hot-path plans")
    args = parser.parse_args()
    if args.worker:
        worker(json.loads(args.worker))
        return
    if args.plans:
        print(f"hot-path statements, one task of {args.plans:,} trajectories, prepared (median ms of 15):")
        print(f"{'query':15} {'statistics':11} {'auto':>8} {'force_custom_plan':>18}")
        found = plans(args.postgres, args.plans)
        for name in PLAN_QUERIES:
            for analyzed in (False, True):
                cells = {
                    r["mode"]: r["ms"] for r in found if r["query"] == name and r["analyzed"] == analyzed
                }
                print(
                    f"{name:15} {'ANALYZE' if analyzed else 'none':11} {cells['auto']:>8.3f} {cells['force_custom_plan']:>18.3f}"
                )
        return
    kinds = [k for k in args.stores.split(",") if k != "postgres" or args.postgres]
    counts = [int(n) for n in args.workers.split(",")]
    seconds = args.seconds
    if args.quick:
        kinds, counts, seconds = ["sqlite"], [1, 2], 1.0
    load = (
        f"{args.rate:g} calls/s offered in all (open loop)"
        if args.rate
        else "each worker flat out (closed loop)"
    )
    print(f"{load}; {seconds:g} s per row")
    print(HEADER)
    rows = measure(kinds, counts, seconds, args.postgres, args.baseline, args.rate)
    for kind in kinds:
        mine = {r["workers"]: r for r in rows if r["store"] == kind and r["code"] == "this"}
        if 1 in mine and max(mine) > 1:
            top = mine[max(mine)]
            print(
                f"{kind}: p99 at {max(mine)} processes is {top['p99_ms'] / mine[1]['p99_ms']:.1f}x one process's "
                f"(hits: {top['hit_p99_ms'] / max(mine[1]['hit_p99_ms'], 1e-9):.1f}x; target <= 2x); round trips per hit {max(r['rt_per_hit'] for r in mine.values()):.3f} "
                "at most (target <= 0.1)"
            )


if __name__ == "__main__":
    main()
