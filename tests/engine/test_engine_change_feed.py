"""Engines sharing a durable store: hot hits read nothing, yet each sees what the others change."""

from __future__ import annotations

import multiprocessing
import sqlite3
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import POSTGRES_URL, StoreSpec, await_change, await_listening, open_spec
from muscle_mem import Check, Engine
from muscle_mem.replay._stored_step_index import LazyIndex
from muscle_mem.stores import PostgresStore, SQLiteStore, Store

SPAWN = multiprocessing.get_context("spawn")
TASK = "read the counter"


def worker(store: Store | str, **options: Any) -> tuple[Engine, dict[str, int]]:
    """An engine whose agent reads a counter (pre-checked by value) and reports it."""
    engine = Engine(store, **options)
    state = {"v": 0}

    @engine.tool(pre_check=Check.equal(lambda: state["v"]))
    def read() -> int:
        return state["v"]

    @engine.tool()
    def report(text: str) -> str:
        return text

    engine.set_agent(lambda task: report(f"counter is {read()}"))
    return engine, state


def task_key(engine: Engine) -> str:
    index = engine._cache.index
    assert isinstance(index, LazyIndex)
    [key] = index._tasks
    return key


@pytest.fixture
def spec(durable: StoreSpec) -> Iterator[StoreSpec]:
    yield durable


def test_a_hot_hit_reads_nothing_from_the_store(spec: StoreSpec, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a task is loaded and nothing changed, hits run no statement on the caller's path."""
    engine, _ = worker(open_spec(spec))
    try:
        assert engine(TASK).stored
        assert engine(TASK).hit
        await_listening(engine.store, task_key(engine))
        assert engine(TASK).hit  # the task's state read once more, now that the feed can tell
        statements = _count_statements(engine.store, monkeypatch)
        for _ in range(20):
            assert engine(TASK).hit
        assert statements() == 0
        engine.flush()
        assert statements() >= 1  # the hits, written in one batch (and the events), by flush()
        usage = engine.store.usage(engine(TASK).trajectory_id or "")
        assert usage is not None and usage.hits >= 21
    finally:
        engine.close()


def _count_statements(store: Store, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A function returning how many statements the store ran on this thread since this call
    (the background writer's are not on a caller's path)."""
    counted = _ThreadCount(threading.get_ident())
    if isinstance(store, SQLiteStore):
        original_conn = store._conn

        def counting_conn() -> Any:
            conn = original_conn()
            return _CountedConn(conn, counted)

        monkeypatch.setattr(store, "_conn", counting_conn)
    else:
        import psycopg

        original = psycopg.Cursor.execute

        def execute(cursor: Any, *args: Any, **kwargs: Any) -> Any:
            counted[0] += 1
            return original(cursor, *args, **kwargs)

        original_many = psycopg.Cursor.executemany

        def executemany(cursor: Any, *args: Any, **kwargs: Any) -> Any:
            counted[0] += 1
            return original_many(cursor, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", execute)
        monkeypatch.setattr(psycopg.Cursor, "executemany", executemany)
    return lambda: counted[0]


class _ThreadCount(list[int]):
    """One count, moved only by statements run on one thread."""

    def __init__(self, thread: int) -> None:
        super().__init__([0])
        self.thread = thread

    def __setitem__(self, index: Any, value: Any) -> None:
        if threading.get_ident() == self.thread:
            super().__setitem__(index, value)


class _CountedConn:
    """A SQLite store connection whose statements are counted (``PRAGMA data_version`` is local: not)."""

    def __init__(self, conn: Any, counted: list[int]) -> None:
        self._conn = conn
        self._counted = counted
        self.db = _CountedDb(conn.db, counted)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("_conn", "_counted", "db"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._conn, name, value)


class _CountedDb:
    def __init__(self, db: sqlite3.Connection, counted: list[int]) -> None:
        self._db = db
        self._counted = counted

    def execute(self, sql: str, *args: Any) -> Any:
        if sql != "PRAGMA data_version":
            self._counted[0] += 1
        return self._db.execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:
        self._counted[0] += 1
        return self._db.executemany(sql, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._db, name)


def test_an_engine_sees_a_trajectory_another_process_added(spec: StoreSpec) -> None:
    """After the other process's add is heard (a notification, or data_version), the next call hits it."""
    engine, state = worker(open_spec(spec))
    try:
        state["v"] = 1
        assert engine(TASK).stored
        key = task_key(engine)
        before = await_listening(engine.store, key)
        process = SPAWN.Process(target=record_value, args=(spec, 50))
        process.start()
        process.join(60)
        assert process.exitcode == 0
        await_change(engine.store, key, before)
        state["v"] = 50
        result = engine(TASK)
        assert result.hit and result.output == "counter is 50"
    finally:
        engine.close()


def record_value(spec: StoreSpec, value: int) -> None:
    """In another process: record the task at a counter value."""
    engine, state = worker(open_spec(spec))
    state["v"] = value
    assert engine(TASK).stored
    engine.close()


def test_a_trajectory_another_engine_removed_is_not_replayed(spec: StoreSpec) -> None:
    """A removal elsewhere is heard; the trajectory is never replayed again (a miss, no store error)."""
    engine, _ = worker(open_spec(spec))
    other = open_spec(spec)
    try:
        stored = engine(TASK)
        assert engine(TASK).hit
        key = task_key(engine)
        before = await_listening(engine.store, key)
        other.remove([stored.trajectory_id or ""])
        await_change(engine.store, key, before)
        again = engine(TASK)
        assert not again.hit and again.trajectory_id != stored.trajectory_id
        assert engine.metrics.store_errors == 0
    finally:
        other.close()
        engine.close()


@pytest.mark.postgres
def test_a_killed_listener_reconnects_and_misses_nothing(postgres_spec: StoreSpec) -> None:
    """``pg_terminate_backend`` on the listener: it reconnects, and what was added meanwhile is seen."""
    import psycopg

    engine, state = worker(open_spec(postgres_spec))
    other = open_spec(postgres_spec)
    try:
        state["v"] = 1
        assert engine(TASK).stored
        key = task_key(engine)
        await_listening(engine.store, key)
        assert engine(TASK).hit
        store = engine.store
        assert isinstance(store, PostgresStore) and store._listener is not None
        listening = store._listener._conn.info.backend_pid
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            killed = admin.execute("SELECT pg_terminate_backend(%s)", (listening,)).fetchall()
        assert killed == [(True,)]
        writer, writer_state = worker(other)
        writer_state["v"] = 50
        assert writer(TASK).stored  # while the listener is down or reconnecting
        deadline = time.monotonic() + 10
        while store._listener.connections < 2 or store.change_mark(key) is None:
            assert time.monotonic() < deadline, "the listener did not reconnect"
            time.sleep(0.02)
        state["v"] = 50
        result = engine(TASK)
        assert result.hit and result.output == "counter is 50"
    finally:
        other.close()
        engine.close()


@pytest.mark.postgres
def test_without_listening_a_task_is_polled_once_per_interval(postgres_spec: StoreSpec) -> None:
    """``listen=off`` (a pooler in transaction mode): changes are seen within ``sync_interval``."""
    _, url, schema = postgres_spec
    engine, state = worker(f"{url}?schema={schema}&listen=off", sync_interval=0.2)
    other = open_spec(postgres_spec)
    try:
        assert engine.store.change_mark("x") is None  # type: ignore[attr-defined]
        state["v"] = 1
        assert engine(TASK).stored
        writer, writer_state = worker(other)
        writer_state["v"] = 50
        assert writer(TASK).stored
        time.sleep(0.25)
        state["v"] = 50
        assert engine(TASK).hit
    finally:
        other.close()
        engine.close()


def test_hits_of_two_processes_are_counted_exactly(spec: StoreSpec) -> None:
    """Two processes hitting one trajectory, written behind in batches: the stored hits are the sum."""
    engine, _ = worker(open_spec(spec))
    stored = engine(TASK)
    engine.close()
    processes = [SPAWN.Process(target=hit_times, args=(spec, 40)) for _ in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
        assert process.exitcode == 0
    reader = open_spec(spec)
    try:
        usage = reader.usage(stored.trajectory_id or "")
        assert usage is not None and usage.hits == 80
    finally:
        reader.close()


def hit_times(spec: StoreSpec, times: int) -> None:
    """In another process: hit the task ``times`` times, then close (which writes the hits)."""
    engine, _ = worker(open_spec(spec), sync_interval=0.05)
    for _ in range(times):
        assert engine(TASK).hit
        time.sleep(0.002)
    engine.close()


def test_flush_makes_hits_visible_to_another_handle(spec: StoreSpec) -> None:
    """Hits written behind are durable and visible elsewhere once ``flush()`` returned."""
    engine, _ = worker(open_spec(spec), sync_interval=3600.0)
    other = open_spec(spec)
    try:
        tid = engine(TASK).trajectory_id or ""
        for _ in range(3):
            assert engine(TASK).hit
        assert other.usage(tid).hits == 0  # type: ignore[union-attr]
        engine.flush()
        assert other.usage(tid).hits == 3  # type: ignore[union-attr]
    finally:
        other.close()
        engine.close()


def test_a_sqlite_hit_takes_no_writer_lock(tmp_path: Any) -> None:
    """A hit completes while another connection holds SQLite's write lock."""
    path = tmp_path / "cache.db"
    engine, _ = worker(f"sqlite:///{path}", store_timeout=0.5)
    try:
        assert engine(TASK).stored
        assert engine(TASK).hit
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:  # a hit that waited for the lock would meet the 0.5 s store timeout: a miss, store unavailable
            for _ in range(5):
                assert engine(TASK).hit
            assert engine.store_available
        finally:
            holder.execute("ROLLBACK")
            holder.close()
    finally:
        engine.close()


def test_sync_interval_must_be_seconds() -> None:
    """``sync_interval`` refuses negative, infinite and non-numbers; 0 writes every hit through."""
    for bad in (-1, float("inf"), "1", True):
        with pytest.raises(ValueError, match="sync_interval"):
            Engine(sync_interval=bad)  # type: ignore[arg-type]
    engine, _ = worker(Engine().store, sync_interval=0)
    tid = engine(TASK).trajectory_id or ""
    assert engine(TASK).hit
    assert engine.store.usage(tid).hits == 1  # type: ignore[union-attr]


def test_a_hit_written_through_starts_from_every_process_s_hits(tmp_path: Any) -> None:
    """With ``sync_interval=0`` each hit's priority is computed from the statistics as stored, so a
    worker's hits count in the priority another worker writes next (LFU: the use count)."""
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    first, _ = worker(url, sync_interval=0, policy="lfu")
    second, _ = worker(url, sync_interval=0, policy="lfu")
    try:
        tid = first(TASK).trajectory_id or ""
        assert second(TASK).hit  # this worker's view of the trajectory's statistics starts here
        for _ in range(3):
            assert first(TASK).hit
        assert second(TASK).hit
        usage = second.store.usage(tid)  # type: ignore[union-attr]
        assert usage is not None and usage.hits == 5
        assert int(usage.priority) == usage.hits + 1  # storing counts as one use
    finally:
        first.close()
        second.close()
