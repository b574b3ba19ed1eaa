"""With ``write_behind``, a miss's store write is made behind the caller, in order, and flush() waits for it."""

from __future__ import annotations

import contextvars
import os
import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Engine
from muscle_mem.model.trajectory import Trajectory, Usage
from muscle_mem.reasons import NotStoredReason
from muscle_mem.stores import MemoryStore, SQLiteStore


class GatedStore(MemoryStore):
    """A memory store whose adds wait for ``gate`` and are listed in ``added`` in the order made."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.added: list[str] = []
        self.fail = False

    def add(self, trajectory: Trajectory, usage: Usage | None = None) -> None:
        self.gate.wait(10)
        if self.fail:
            raise RuntimeError("disk full")
        super().add(trajectory, usage)
        self.added.append(trajectory.task)


def _engine(store: Any) -> Engine:
    engine = Engine(store, write_behind=True)

    @engine.tool()
    def greet(name: str) -> str:
        return f"hello {name}"

    engine.set_agent(lambda task: greet(task.split()[-1]))
    return engine


def test_a_miss_returns_before_its_write_and_says_so() -> None:
    """The result says ``storing`` with the trajectory's id; after flush() it is stored and replayed."""
    store = GatedStore()
    engine = _engine(store)
    result = engine("greet ada")
    assert result.storing and not result.stored and result.trajectory_id is not None
    assert result.not_stored is None and len(store) == 0
    store.gate.set()
    engine.flush()
    assert len(store) == 1 and store.get(result.trajectory_id) is not None
    assert engine("greet ada").hit
    assert engine.metrics.stored == 1


def test_writes_are_made_in_the_order_the_runs_ended() -> None:
    """Trajectories handed over one after another reach the store in that order."""
    store = GatedStore()
    engine = _engine(store)
    tasks = [f"greet person{i}" for i in range(5)]
    for task in tasks:
        assert engine(task).storing
    store.gate.set()
    engine.flush()
    assert store.added == tasks


def test_a_late_tool_call_removes_the_trajectory_after_its_write() -> None:
    """A tool of the run called after it ended removes the trajectory, queued after the write it spoils."""
    store = GatedStore()
    engine = _engine(store)
    late: list[threading.Thread] = []

    @engine.tool()
    def note(text: str) -> str:
        return text

    def agent(task: str) -> str:
        context = contextvars.copy_context()  # the run's: a call made in it after the run ended is late
        late.append(threading.Thread(target=lambda: context.run(note, "late")))
        return note(task)

    engine.set_agent(agent)
    result = engine("write a note")
    assert result.storing
    late[0].start()  # the removal is queued while the write waits at the gate
    late[0].join()
    store.gate.set()
    engine.flush()
    assert store.added == ["write a note"] and len(store) == 0
    assert engine.metrics.not_stored_by_reason[NotStoredReason.CALLED_AFTER_RUN] == 1


def test_a_write_that_fails_is_counted_as_a_run_not_stored() -> None:
    """The failure cannot reach the returned result: it is logged and counted (``STORE_ERROR``)."""
    store = GatedStore()
    store.fail = True
    engine = _engine(store)
    assert engine("greet bob").storing
    store.gate.set()
    engine.flush()
    assert len(store) == 0
    assert engine.metrics.not_stored_by_reason[NotStoredReason.STORE_ERROR] == 1
    assert engine.metrics.store_errors == 1


def test_write_behind_must_be_a_bool() -> None:
    """A truthy non-bool is refused, as the other options are."""
    with pytest.raises(TypeError):
        Engine(write_behind="yes")  # type: ignore[arg-type]


_CHILD = textwrap.dedent(
    """
    import os, signal, sys, threading
    from muscle_mem import Engine
    from muscle_mem.stores import SQLiteStore

    path, flush, slow = sys.argv[1], sys.argv[2] == "flush", sys.argv[3] == "slow"
    store = SQLiteStore(path)
    if slow:  # the write is still in flight when the process dies
        add = store.add
        def held(*args, **kwargs):
            threading.Event().wait(30)
            add(*args, **kwargs)
        store.add = held
    engine = Engine(store, write_behind=True)
    greet = engine.register(lambda name: "hello " + name, name="greet")
    engine.set_agent(lambda task: greet(task.split()[-1]))
    result = engine("greet ada")
    assert result.storing, result
    if flush:
        engine.flush()
    print(result.trajectory_id, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def _killed_child(path: Path, *, flush: bool, slow: bool) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    args = [sys.executable, "-c", _CHILD, str(path), "flush" if flush else "-", "slow" if slow else "-"]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == -signal.SIGKILL, done.stderr
    return done.stdout.strip()


def test_a_trajectory_survives_a_crash_once_flush_returned(tmp_path: Path) -> None:
    """A process killed right after flush() returned has its trajectory in the store."""
    path = tmp_path / "cache.db"
    trajectory_id = _killed_child(path, flush=True, slow=False)
    store = SQLiteStore(str(path))
    try:
        assert store.get(trajectory_id) is not None
    finally:
        store.close()


def test_a_write_in_flight_at_a_crash_is_lost_whole(tmp_path: Path) -> None:
    """A process killed while its write is queued or in flight stores nothing of it; the store reads fine."""
    path = tmp_path / "cache.db"
    trajectory_id = _killed_child(path, flush=False, slow=True)
    engine = _engine(SQLiteStore(str(path)))
    try:
        assert engine.store.get(trajectory_id) is None and len(engine.store) == 0  # type: ignore[arg-type]
        assert engine("greet ada").storing  # the task is recorded anew
    finally:
        engine.close()
