"""A restarted worker's first call on a task with many stored trajectories: seconds and added RSS.

The store holds ``--size`` trajectories (100,000 by default) of one 5-step task, each recorded in a
different environment state (as in ``bench_stores.py``). A fresh subprocess opens the store, builds
the engine and answers one call whose state matches a trajectory in the middle of the history; it
reports the seconds of that first call and the RSS it added (resident after, and peak, minus resident
before opening the store). The same is run with the code at the branch point (``--base``, a checkout
such as ``git worktree add /tmp/restart-base <commit>``) side by side, each on a store it built itself
(the two schemas differ). Stores are built once and kept in a temp dir (SQLite) or schema
(PostgreSQL, with ``--postgres URL`` or ``MUSCLE_MEM_TEST_POSTGRES``) for the next runs.

Target: under 0.5 s and under 100 MiB added on 100,000 trajectories.

Run: python benchmarks/bench_restart.py [--size 100000] [--base /tmp/restart-base] [--quick]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from muscle_mem.model.trajectory import Trajectory

HERE = Path(__file__).resolve().parent
SRC = HERE.parent / "src"
QUICK = 2_000
TARGET_SECONDS = 0.5
TARGET_MIB = 100.0


def rss_kib(field: str = "VmRSS") -> int:
    """A memory figure of this process from /proc/self/status, in KiB (0 where there is none)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def recorded(state: int) -> Trajectory:
    """What the engine records for the task in ``state`` (built once, then varied by state)."""
    from bench_engine import build_engine
    from bench_stores import TASK

    from muscle_mem.stores import MemoryStore

    engine, env, _ = build_engine(MemoryStore())
    env["state"] = state
    result = engine(TASK)
    assert result.stored and result.trajectory_id is not None
    found = engine.store.get(result.trajectory_id)
    assert found is not None
    engine.close()
    return found


def for_state(base: Trajectory, state: int) -> Trajectory:
    """The template's steps with the pre snapshots of ``state``, stored as the engine stores them."""
    from _lib.layout import trajectory_module

    Snapshot = trajectory_module().Snapshot
    pre = base.steps[0].pre
    snapshot = Snapshot.capture(state) if pre is None or pre.kept else Snapshot.digest(state)
    steps = tuple(dataclasses.replace(s, pre=snapshot) for s in base.steps)
    return dataclasses.replace(base, steps=steps, id=uuid.uuid4().hex, created_at=base.created_at + state)


def build(url: str, size: int) -> dict[str, Any]:
    """Fill the store at ``url`` with ``size`` trajectories of the task, unless it already has them."""
    from bench_stores import _comparable, fill

    from muscle_mem.stores import open_store

    store = open_store(url)
    try:
        if len(store) == size:
            return {"built": False}
        store.clear()
        started = time.perf_counter()
        base = recorded(0)
        assert _comparable(for_state(base, 1)) == _comparable(recorded(1))
        fill(store, [for_state(base, state) for state in range(size)])
        return {"built": True, "seconds": time.perf_counter() - started}
    finally:
        store.close()


def first_call(url: str, size: int) -> dict[str, Any]:
    """Open the store, answer one call in a state from the middle of its history; figures as a dict."""
    from bench_engine import build_engine
    from bench_stores import TASK

    before = rss_kib()
    started = time.perf_counter()
    engine, env, _ = build_engine(url)
    opened = time.perf_counter()
    env["state"] = size // 2
    result = engine(TASK)
    done = time.perf_counter()
    after, peak = rss_kib(), rss_kib("VmHWM")
    engine.close()
    return {
        "hit": result.hit,
        "open": opened - started,
        "first_call": done - opened,
        "added_mib": (after - before) / 1024,
        "peak_added_mib": (peak - before) / 1024,
    }


def in_subprocess(src: Path, job: str, url: str, size: int) -> dict[str, Any]:
    """Run ``job`` in a fresh interpreter importing muscle_mem from ``src``; its JSON answer."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HERE)])}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--job", job, "--url", url, "--size", str(size)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{job} with {src} failed:\n{done.stderr[-3000:]}")
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


def urls(label: str, size: int, postgres: str | None) -> list[tuple[str, str]]:
    """The (store kind, url) pairs a code version is measured on."""
    folder = Path(tempfile.gettempdir()) / "muscle-mem-bench-restart"
    folder.mkdir(exist_ok=True)
    found = [("sqlite", f"sqlite:///{folder / f'{label}-{size}.db'}")]
    if postgres:
        sep = "&" if "?" in postgres else "?"
        found.append(("postgres", f"{postgres}{sep}schema=bench_restart_{label}_{size}"))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help=f"a smoke test on {QUICK:,} trajectories")
    parser.add_argument("--base", type=Path, help="a checkout of the code to compare with")
    parser.add_argument("--postgres", default=os.environ.get("MUSCLE_MEM_TEST_POSTGRES"))
    parser.add_argument("--repeat", type=int, default=1, help="fresh processes per version and store")
    parser.add_argument("--job", choices=["build", "first_call"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    size = QUICK if args.quick else args.size
    if args.job:
        job = build if args.job == "build" else first_call
        print(json.dumps(job(args.url, size)))
        return
    versions = [("branch", SRC)] + ([("base", args.base / "src")] if args.base else [])
    print(f"first call of a restarted worker, {size:,} trajectories of one task (5 steps)")
    rows = []
    for label, src in versions:
        for kind, url in urls(label, size, args.postgres):
            built = in_subprocess(src, "build", url, size)
            if built["built"]:
                print(f"  built the {kind} store for {label} in {built['seconds']:.1f} s")
            for _ in range(args.repeat):
                rows.append((label, kind, in_subprocess(src, "first_call", url, size)))
    print(
        f"{'code':<8} {'store':<9} {'hit':<5} {'open s':>8} {'first call s':>13} {'added MiB':>10} {'peak MiB':>9}"
    )
    for label, kind, row in rows:
        print(
            f"{label:<8} {kind:<9} {row['hit']!s:<5} {row['open']:>8.3f} {row['first_call']:>13.3f} "
            f"{row['added_mib']:>10.1f} {row['peak_added_mib']:>9.1f}"
        )
    print(f"target: first call < {TARGET_SECONDS} s and < {TARGET_MIB:.0f} MiB added")


if __name__ == "__main__":
    main()
