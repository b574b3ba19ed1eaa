"""The change feed: a reader learns which tasks another handle changed without asking the store."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable

import pytest

from conftest import StoreSpec, await_change, await_listening, open_spec, trajectory
from muscle_mem.model.trajectory import Usage
from muscle_mem.stores import ChangeFeed, PostgresStore, Store, Touch, UsageBatched


def test_a_task_changed_by_another_handle_gets_a_new_mark(opener: Callable[[], Store]) -> None:
    """An add or a removal elsewhere moves that task's mark, and only that task's."""
    writer, reader = opener(), opener()
    assert isinstance(reader, ChangeFeed)
    writer.add(trajectory("task-b"))
    a_before = await_listening(reader, "task-a")
    b_before = reader.change_mark("task-b")
    t = trajectory("task-a")
    writer.add(t)
    await_change(reader, "task-a", a_before)
    assert reader.change_mark("task-b") == b_before
    a_added = reader.change_mark("task-a")
    writer.remove([t.id])
    await_change(reader, "task-a", a_added)
    assert reader.change_mark("task-b") == b_before


def test_marks_of_the_memory_store_move_with_its_changes(store: Store) -> None:
    """Every store of this package has a change feed; the memory store's is exact at once."""
    assert isinstance(store, ChangeFeed)
    if not isinstance(store, PostgresStore):
        before = store.change_mark("task-a")
        t = trajectory("task-a")
        store.add(t)
        added = store.change_mark("task-a")
        assert added != before
        store.remove([t.id])
        assert store.change_mark("task-a") != added


def test_task_state_tells_a_change_from_the_stamp_passed_back(store: Store) -> None:
    """``task_state(key, since)`` is unchanged while nothing was added to or removed from the task."""
    first = store.task_state("task-a", 0)
    assert not first.changed and first.size == 0
    t = trajectory("task-a")
    store.add(t)
    state = store.task_state("task-a", first.revision)  # type: ignore[attr-defined]
    assert state.changed and state.size == 1
    store.add(trajectory("task-b"))
    assert not store.task_state("task-a", state.revision).changed  # type: ignore[attr-defined]
    store.remove([t.id])
    gone = store.task_state("task-a", state.revision)  # type: ignore[attr-defined]
    assert gone.changed and gone.size == 0


def test_touch_many_adds_hits_and_keeps_the_later_use(store: Store) -> None:
    """Hits and saved seconds add up; last use is the later one; absent ids are ignored."""
    assert isinstance(store, UsageBatched)
    t, u = trajectory(n=1), trajectory(n=2)
    store.add(t, Usage(hits=1, last_used=100.0, saved_seconds=1.0))
    store.add(u, Usage(last_used=100.0))
    store.touch_many(
        [
            Touch(t.id, 3, 50.0, 2.5, 7.0, 0.5),
            Touch(u.id, 1, 200.0, 0.5, 1.0, 0.0),
            Touch("absent", 1, 1, 1, 1, 1),
        ]
    )
    assert store.usage(t.id) == Usage(hits=4, last_used=100.0, saved_seconds=3.5, priority=7.0, attention=0.5)
    assert store.usage(u.id) == Usage(hits=1, last_used=200.0, saved_seconds=0.5, priority=1.0, attention=0.0)
    assert store.usage_many([t.id, "absent", u.id]) == {t.id: store.usage(t.id), u.id: store.usage(u.id)}


def test_concurrent_touch_many_lose_no_hit(opener: Callable[[], Store]) -> None:
    """Several handles adding hits to the same trajectories at once: the sum is exact."""
    setup = opener()
    ids = [trajectory(n=i) for i in range(5)]
    for t in ids:
        setup.add(t, Usage(last_used=1.0))
    handles = [opener() for _ in range(3)]
    errors: list[BaseException] = []

    def hammer(handle: Store) -> None:
        try:
            for round_ in range(20):
                batch = [Touch(t.id, 2, float(round_), 1.0, 0.0, 0.0) for t in ids]
                handle.touch_many(batch[round_ % 5 :] + batch[: round_ % 5])  # type: ignore[attr-defined]
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(h,)) for h in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    for t in ids:
        usage = setup.usage(t.id)
        assert usage is not None and usage.hits == 3 * 20 * 2 and usage.saved_seconds == 60.0


@pytest.mark.postgres
def test_commits_out_of_stamp_order_are_not_missed(postgres_spec: StoreSpec) -> None:
    """Two transactions adding to one task commit in stamp order; a reader's stamp misses neither.

    The first holds the task's row (as an add does) while the second waits; a reader reads in between.
    """
    import psycopg

    store = open_spec(postgres_spec)
    try:
        store.add(trajectory("task-a", n=0))
        since = store.task_state("task-a", 0).revision  # type: ignore[attr-defined]
        seen = store.changes("task-a", since)
        schema = postgres_spec[2]
        with psycopg.connect(postgres_spec[1]) as holder:
            holder.execute(f'SELECT * FROM "{schema}".tasks WHERE task_key = %s FOR UPDATE', ("task-a",))
            other = threading.Thread(target=store.add, args=(trajectory("task-a", n=1),))
            other.start()  # draws its stamp only once the row is free
            time.sleep(0.2)
            store.add(trajectory("task-b", n=2))  # another task is not held up
            middle = store.changes("task-a", seen.revision)
            assert middle.added == ()
            holder.rollback()
        other.join(10)
        after = store.changes("task-a", middle.revision)
        assert [t.steps[0].args[0].value for t in after.added] == [1]  # type: ignore[attr-defined]
        assert store.task_state("task-a", middle.revision).changed  # type: ignore[attr-defined]
    finally:
        store.close()


def test_a_sqlite_read_takes_no_writer_lock(tmp_path: object) -> None:
    """While another connection holds the write lock, marks, states and the step index still read."""
    from pathlib import Path

    from muscle_mem.stores import SQLiteStore

    path = Path(str(tmp_path)) / "cache.db"
    store = SQLiteStore(path, timeout=0.5)
    try:
        t = trajectory("task-a")
        store.add(t)
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:  # a read that waited for the lock would fail after the store's 0.5 s timeout
            store.change_mark("task-a")
            assert store.task_state("task-a", 0).size == 1
            assert store.get(t.id) == t
        finally:
            holder.execute("ROLLBACK")
            holder.close()
    finally:
        store.close()


def test_rows_of_emptied_postgres_tasks_do_not_pile_up(postgres_spec: StoreSpec) -> None:
    """Removals drop the rows of tasks they emptied (a bounded number each), and a task stored again
    after its row went is a changed task with a new row."""
    import psycopg

    store = open_spec(postgres_spec)
    schema = postgres_spec[2]

    def emptied() -> int:
        with psycopg.connect(postgres_spec[1]) as conn:
            (count,) = conn.execute(f'SELECT count(*) FROM "{schema}".tasks WHERE n <= 0').fetchone()  # type: ignore[misc]
            return int(count)

    try:
        many = [trajectory(f"task-{i}", n=i) for i in range(150)]
        store.add_many((t, None) for t in many)
        store.remove([t.id for t in many])  # 150 emptied in one statement: 100 dropped at once
        assert emptied() == 50
        one = trajectory("task-x")
        store.add(one)
        store.remove([one.id])
        assert emptied() == 0
        seen = store.task_state("task-x", 0).revision  # type: ignore[attr-defined]
        again = trajectory("task-x", n=1)
        store.add(again)
        state = store.task_state("task-x", seen)  # type: ignore[attr-defined]
        assert state.changed and state.size == 1
        assert store.tasks() == {"task-x": again.task}
    finally:
        store.close()


def test_a_sqlite_handle_reads_the_revision_after_reading_marks(tmp_path: object) -> None:
    """Reading change marks after another handle's commit leaves ``revision()`` current, not stale."""
    from pathlib import Path

    from muscle_mem.stores import SQLiteStore

    path = Path(str(tmp_path)) / "cache.db"
    reader, writer = SQLiteStore(path), SQLiteStore(path)
    try:
        before = reader.revision()
        reader.change_mark("task-a")
        writer.add(trajectory("task-a"))
        reader.change_mark("task-a")  # sees the commit first
        assert reader.revision() == writer.revision() > before
    finally:
        reader.close()
        writer.close()
