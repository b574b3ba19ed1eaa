"""Durable stores (a real SQLite file, a real PostgreSQL schema): processes, faults and bad data."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import POSTGRES_URL, StoreSpec, open_spec, trajectory
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.stores import (
    Event,
    PostgresStore,
    SQLiteStore,
    Store,
    StoreError,
    _records,
    sqlite,
)

SPAWN = multiprocessing.get_context("spawn")


def raw_execute(spec: StoreSpec, sql: str, args: tuple[Any, ...] = ()) -> None:
    """Run SQL on the store's tables directly, bypassing the store (``{s}``: the schema prefix)."""
    kind, location, schema = spec
    if kind == "sqlite":
        with sqlite3.connect(location) as db:
            db.execute(sql.format(s="main").replace("%s", "?"), args)
        return
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        conn.execute(sql.format(s=f'"{schema}"'), args)


def add_many(spec: StoreSpec, task_key: str, start: int, count: int) -> None:
    store = open_spec(spec)
    try:
        for n in range(start, start + count):
            store.add(trajectory(task_key, n=n))
    finally:
        store.close()


def add_forever(spec: StoreSpec, progress: str) -> None:
    """Add trajectories until killed, logging "id n" once each add has returned."""
    store = open_spec(spec)
    with open(progress, "a") as log:
        n = 0
        while True:
            t = trajectory("victim", n=n, steps=20)
            store.add(t)
            store.touch(t.id, now=float(n), saved_seconds=1.0, priority=float(n), attention=0.5)
            log.write(f"{t.id} {n}\n")
            log.flush()
            n += 1


def run_processes(target: Callable[..., None], *arg_lists: tuple[Any, ...]) -> None:
    processes = [SPAWN.Process(target=target, args=args) for args in arg_lists]
    for process in processes:
        process.start()
    for process in processes:
        process.join(120)
        assert process.exitcode == 0, f"{target.__name__}{process.name} exited with {process.exitcode}"


def test_trajectories_survive_reopening(durable: StoreSpec) -> None:
    t = trajectory(n=3)
    first = open_spec(durable)
    first.add(t)
    first.close()
    again = open_spec(durable)
    try:
        assert again.get(t.id) == t
        assert [x.id for x in again.changes("task-a", 0).added] == [t.id]
    finally:
        again.close()


def test_another_handle_sees_adds_and_removals(opener: Callable[[], Store]) -> None:
    writer, reader = opener(), opener()
    since = reader.revision()
    t = trajectory()
    writer.add(t)
    assert reader.revision() > since
    changes = reader.changes("task-a", since)
    assert [x.id for x in changes.added] == [t.id]
    writer.remove([t.id])
    assert reader.changes("task-a", changes.revision).removed == {t.id}


def test_a_trajectory_added_by_another_process_is_seen_on_the_next_call(
    durable: StoreSpec, opener: Callable[[], Store]
) -> None:
    reader = opener()
    before = reader.changes("shared", 0)
    assert before.added == ()
    run_processes(add_many, (durable, "shared", 0, 2))
    assert reader.revision() > before.revision
    after = reader.changes("shared", before.revision)
    assert sorted(t.steps[0].args[0].value for t in after.added) == [0, 1]


@pytest.mark.slow
def test_four_writer_processes_lose_nothing(durable: StoreSpec, opener: Callable[[], Store]) -> None:
    per_worker = 30
    run_processes(add_many, *[(durable, f"task-{w}", w * 1000, per_worker) for w in range(4)])
    store = opener()
    assert len(store) == 4 * per_worker
    everything = []
    for w in range(4):
        added = store.changes(f"task-{w}", 0).added
        assert sorted(t.steps[0].args[0].value for t in added) == list(range(w * 1000, w * 1000 + per_worker))
        everything += added
    assert store.nbytes() == sum(len(_records.dumps(t).encode()) for t in everything)
    assert store.tasks() == {f"task-{w}": f"do task-{w}" for w in range(4)}


def add_same(spec: StoreSpec, batch: list[Trajectory]) -> None:
    store = open_spec(spec)
    try:
        for t in batch:
            store.add(t)
        assert isinstance(store, SQLiteStore | PostgresStore)
        store.add_many([(t, None) for t in reversed(batch)])
    finally:
        store.close()


@pytest.mark.slow
def test_writers_adding_the_same_trajectories_store_each_once(
    durable: StoreSpec, opener: Callable[[], Store]
) -> None:
    batch = [trajectory("same", n=i) for i in range(20)]
    run_processes(add_same, *[(durable, batch) for _ in range(3)])
    store = opener()
    assert len(store) == 20
    assert sorted(t.id for t in store.changes("same", 0).added) == sorted(t.id for t in batch)
    assert store.tasks() == {"same": "do same"}
    assert store.nbytes() == sum(len(_records.dumps(t)) for t in batch)


@pytest.mark.slow
def test_a_writer_killed_mid_run_leaves_the_store_consistent(
    durable: StoreSpec, opener: Callable[[], Store], tmp_path: Path
) -> None:
    progress = tmp_path / "progress.txt"
    progress.touch()
    process = SPAWN.Process(target=add_forever, args=(durable, str(progress)))
    process.start()
    deadline = time.monotonic() + 60
    while len(progress.read_text().splitlines()) < 25 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(process.pid or 0, signal.SIGKILL)
    process.join(10)
    assert process.exitcode == -signal.SIGKILL
    done = [line.split() for line in progress.read_text().splitlines()]
    assert len(done) >= 25

    store = opener()
    for tid, n in done:
        t = store.get(tid)
        assert t is not None and t.steps[0].args[0].value == int(n)
    stored = store.changes("victim", 0).added
    assert len(stored) == len(store) >= len(done)
    assert store.nbytes() == sum(len(_records.dumps(t).encode()) for t in stored)
    assert {s.id for s in store.summaries()} == {t.id for t in stored}
    if durable[0] == "sqlite":
        with sqlite3.connect(durable[1]) as db:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    fresh = trajectory("victim", n=-1)
    store.add(fresh)
    assert store.get(fresh.id) == fresh


def test_undecodable_rows_are_skipped_with_a_warning(
    durable: StoreSpec, opener: Callable[[], Store], caplog: pytest.LogCaptureFixture
) -> None:
    writer = opener()
    good, bad_json, bad_record = trajectory(n=1), trajectory(n=2), trajectory(n=3)
    for t in (good, bad_json, bad_record):
        writer.add(t)
    raw_execute(durable, "UPDATE {s}.trajectories SET record = %s WHERE id = %s", ("{not json", bad_json.id))
    raw_execute(
        durable, "UPDATE {s}.trajectories SET record = %s WHERE id = %s", ('{"format": 99}', bad_record.id)
    )
    reader = opener()
    with caplog.at_level(logging.WARNING, logger="muscle_mem"):
        changes = reader.changes("task-a", 0)
        assert reader.get(bad_json.id) is None
    assert [t.id for t in changes.added] == [good.id]
    warned = " ".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    assert bad_json.id in warned and bad_record.id in warned
    assert len(reader) == 3 and len(list(reader.summaries())) == 3
    assert reader.remove([bad_json.id, bad_record.id]) == 2
    assert [t.id for t in reader.changes("task-a", 0).added] == [good.id]


def test_a_store_written_by_a_newer_schema_is_refused(durable: StoreSpec) -> None:
    open_spec(durable).close()
    raw_execute(durable, "UPDATE {s}.meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="newer muscle-mem"):
        open_spec(durable)


def test_sqlite_refuses_files_that_are_not_its_stores(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable SQLite database"):
        SQLiteStore(garbage)
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as db:
        db.execute("CREATE TABLE people (name TEXT)")
    with pytest.raises(StoreError, match="not a muscle-mem store"):
        SQLiteStore(foreign)


def test_sqlite_is_in_wal_mode_with_a_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "cache.db"
    SQLiteStore(path).close()
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
        assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            str(sqlite.SCHEMA_VERSION),
        )


def open_and_add(spec: StoreSpec, n: int) -> None:
    add_many(spec, "racers", n, 1)


def test_workers_creating_the_schema_at_once_do_not_race(durable: StoreSpec) -> None:
    run_processes(open_and_add, *[(durable, n) for n in range(4)])
    store = open_spec(durable)
    try:
        assert len(store) == 4
    finally:
        store.close()


def fork_child_adds(store: Store, n: int) -> None:
    store.add(trajectory("forked", n=n))
    assert len(store.changes("forked", 0).added) == n + 1


def test_a_store_opened_before_fork_works_in_parent_and_child(
    opener: Callable[[], Store], caplog: pytest.LogCaptureFixture
) -> None:
    store = opener()
    store.add(trajectory("forked", n=0))
    with caplog.at_level(logging.WARNING, logger="muscle_mem"):
        child = multiprocessing.get_context("fork").Process(target=fork_child_adds, args=(store, 1))
        child.start()
        child.join(60)
        assert child.exitcode == 0
        store.add(trajectory("forked", n=2))
        assert sorted(t.steps[0].args[0].value for t in store.changes("forked", 0).added) == [0, 1, 2]
    assert not caplog.records  # the parent's connections were not disturbed by the child


@pytest.mark.postgres
def test_postgres_recovers_connections_dropped_by_the_server(
    postgres_spec: StoreSpec, caplog: pytest.LogCaptureFixture
) -> None:
    import psycopg

    _, url, schema = postgres_spec
    store = PostgresStore(url, schema=schema, pool_size=3)
    try:
        t = trajectory()
        store.add(t)
        with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
            killed = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
                (f"muscle_mem:{schema}",),
            ).fetchall()
        assert killed and all(row[0] for row in killed)
        with caplog.at_level(logging.INFO, logger="muscle_mem"):
            assert store.get(t.id) == t
        assert any("lost a connection" in r.getMessage() for r in caplog.records)
        store.add(trajectory(n=1))
        assert len(store) == 2
    finally:
        store.close()


def test_postgres_unreachable_server_is_a_clear_error() -> None:
    pytest.importorskip("psycopg", reason="needs psycopg: pip install 'muscle-mem[postgres]'")
    with pytest.raises(StoreError, match="cannot connect"):
        PostgresStore("postgresql://nobody@127.0.0.1:1/none", timeout=1.0)


def test_events_are_shared_between_handles(opener: Callable[[], Store]) -> None:
    writer, reader = opener(), opener()
    writer.log_events(
        [Event(at=5.0, task="t", task_key="k", hit=False, reason="a check failed", tool="click")]
    )
    assert reader.events() == [
        Event(at=5.0, task="t", task_key="k", hit=False, reason="a check failed", tool="click")
    ]
