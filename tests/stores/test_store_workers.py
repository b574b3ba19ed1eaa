"""Durable stores under concurrent workers: an add and a removal racing in PostgreSQL, a store made
anew under a running worker, another worker evicting a trajectory being replayed."""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import await_change, trajectory
from muscle_mem.stores import PostgresStore, SQLiteStore, Store, StoreError

POSTGRES_URL = os.environ.get("MUSCLE_MEM_TEST_POSTGRES") or "postgresql://postgres@127.0.0.1:5432/test"


def _postgres_available() -> bool:
    try:
        import psycopg

        with psycopg.connect(POSTGRES_URL, connect_timeout=3):
            return True
    except Exception:
        return False


needs_postgres = pytest.mark.skipif(not _postgres_available(), reason=f"no PostgreSQL at {POSTGRES_URL}")


@pytest.fixture
def schema() -> Iterator[str]:
    name = f"rev_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        import psycopg

        with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def _in_thread(fn: Callable[[], Any], errors: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            fn()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


# -- 1. PostgreSQL: a removal and an add of one task at once -------------------------------------


@needs_postgres
def test_postgres_concurrent_add_and_remove_of_one_task_do_not_deadlock(
    schema: str, caplog: pytest.LogCaptureFixture
) -> None:
    """An add and a removal of the same task, run at once by two PostgreSQL workers, both complete: they
    take the ``state`` row and the task's ``tasks`` row in one order, so neither is aborted as a
    deadlock. A third connection holding the ``state`` row arranges the interleaving by hand, so
    every run meets it."""
    import psycopg

    keeper = PostgresStore(POSTGRES_URL, schema=schema, pool_size=2)
    adder = PostgresStore(POSTGRES_URL, schema=schema, pool_size=2)
    remover = PostgresStore(POSTGRES_URL, schema=schema, pool_size=2)
    victims = [trajectory("shared", n=n) for n in range(2)]
    keeper.add(trajectory("shared", n=100))  # the task keeps a trajectory: its tasks row stays
    for t in victims:
        keeper.add(t)
    errors: list[BaseException] = []
    threads: list[threading.Thread] = []
    state = f'"{schema}".state'

    def arrange(remove: Callable[[], Any]) -> None:
        """Hold the state row; queue an add of the task on it; then run ``remove`` (which locks the
        task's row, then queues on state behind the add); release the state row."""
        holder = psycopg.connect(POSTGRES_URL)
        holder.execute(f"SELECT * FROM {state} FOR UPDATE")
        n = len(threads)
        threads.append(_in_thread(lambda: adder.add(trajectory("shared", n=1000 + n)), errors))
        time.sleep(0.3)  # the add waits on the state row, holding nothing

        def release() -> None:
            time.sleep(0.3)  # the removal has locked the task's row and waits on the state row
            holder.commit()
            holder.close()

        threads.append(threading.Thread(target=release))
        threads[-1].start()
        remove()

    try:
        with caplog.at_level(logging.WARNING, logger="muscle_mem"):
            try:
                arrange(lambda: remover.remove([victims[0].id]))
                removal: BaseException | None = None
            except StoreError as exc:
                removal = exc
            for thread in threads:
                thread.join(30)
        deadlocks = [r.getMessage() for r in caplog.records if "deadlock" in r.getMessage()]
        assert removal is None, f"the removal was lost: {removal}"
        assert not deadlocks, f"add and remove deadlocked: {deadlocks[0]}"
        assert not errors
    finally:
        for store in (keeper, adder, remover):
            store.close()


# -- 2. A store whose revision went back (schema dropped and re-created) ------------------------------


def _counting_engine(store: Store, **options: Any) -> tuple[Any, list[str]]:
    from muscle_mem import Engine

    engine = Engine(store, **options)
    agent_runs: list[str] = []

    @engine.tool()
    def handle(task: str) -> str:
        return f"handled {task}"

    def agent(task: str) -> str:
        agent_runs.append(task)
        return handle(task)

    engine.set_agent(agent)
    return engine, agent_runs


@needs_postgres
def test_the_index_resets_when_the_store_is_made_anew(schema: str) -> None:
    """A running worker's index resets when the store's revision goes back (the schema dropped and
    re-created by another worker, as a SQLite file restored from a backup would be): once the change
    is notified, it never replays a trajectory the store no longer holds, and it replays the new one."""
    import psycopg

    worker = PostgresStore(POSTGRES_URL, schema=schema)
    engine, _ = _counting_engine(worker)
    for i in range(3):  # the schema's revision climbs to 3
        engine(f"ticket {i}")
    old = engine("ticket 0")
    assert old.hit
    key = next(k for k, text in worker.tasks().items() if text == "ticket 0")
    seen = worker.change_mark(key)
    with psycopg.connect(POSTGRES_URL, autocommit=True) as admin:
        admin.execute(f'DROP SCHEMA "{schema}" CASCADE')  # the cache is reset
    newcomer = PostgresStore(POSTGRES_URL, schema=schema)  # another worker starts: an empty schema
    other, _ = _counting_engine(newcomer)
    fresh = other("ticket 0")  # stored at revision 1
    assert fresh.stored and newcomer.get(old.trajectory_id) is None
    try:
        await_change(worker, key, seen)  # the store's notification reaches the running worker
        again = engine("ticket 0")
        assert again.trajectory_id != old.trajectory_id, "replayed a trajectory the store no longer holds"
        assert again.hit and again.trajectory_id == fresh.trajectory_id
    finally:
        worker.close()
        newcomer.close()


# -- 3. Eviction by another worker removes a trajectory this worker is replaying ----------------------


@pytest.mark.parametrize("bound", ["capacity", "ttl"])
def test_a_replay_completes_when_another_worker_evicts_its_trajectory(tmp_path: Path, bound: str) -> None:
    """docs/policies.md: protection from eviction is per process. Worker B (another engine on the same SQLite
    file) evicts, by capacity or TTL, the trajectory worker A is replaying at that moment: A's replay
    still completes from its index, with the right answer and no error (its use is not counted)."""
    from muscle_mem import Engine

    path = tmp_path / "shared.db"
    a_store, b_store = SQLiteStore(path), SQLiteStore(path)
    worker_a = Engine(a_store)
    hooks: list[Callable[[], None]] = []

    @worker_a.tool()
    def handle(task: str) -> str:
        for hook in hooks:
            hook()
        return f"handled {task}"

    worker_a.set_agent(lambda task: handle(task))
    options: dict[str, Any] = {"capacity": 1} if bound == "capacity" else {"ttl": 3600.0}
    worker_b, _ = _counting_engine(b_store, **options)

    first = worker_a("alpha task")
    assert first.stored
    if bound == "ttl":  # A's trajectory is older than B's TTL
        import sqlite3

        with sqlite3.connect(path) as db:
            db.execute("UPDATE trajectories SET created_at = created_at - 7200")
    errors: list[BaseException] = []
    still_stored: list[bool] = []

    def worker_b_runs_meanwhile() -> None:
        _in_thread(lambda: worker_b("bravo task"), errors).join(30)
        still_stored.append(a_store.get(first.trajectory_id) is not None)

    hooks.append(worker_b_runs_meanwhile)
    try:
        replay = worker_a("alpha task")
        assert replay.hit and replay.trajectory_id == first.trajectory_id
        assert replay.output == "handled alpha task"
        assert not errors and still_stored == [False]  # B did evict it, in the middle of A's replay
    finally:
        a_store.close()
        b_store.close()
