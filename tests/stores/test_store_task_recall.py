"""The recall a store shares with every process: tasks lately stored or replayed, and which were replayed;
and the eviction policy's tuning it shares beside it."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from typing import Any, cast

import pytest

from conftest import StoreSpec, open_spec, trajectory
from muscle_mem.model.trajectory import Usage
from muscle_mem.stores import SharedTuning, Store, TaskRecall, Touch, TunedRecall


def _hit(store: Store, trajectory_id: str) -> None:
    store.touch(trajectory_id, now=1.0, saved_seconds=1.0, priority=1.0, attention=0.5)


def test_a_stored_task_is_remembered_as_not_replayed(store: Store) -> None:
    """Storing a task's first trajectory remembers the task as not replayed; others are not remembered."""
    assert isinstance(store, TaskRecall)
    store.add(trajectory("alpha"))
    assert store.recalled("alpha") is False
    assert store.recalled("bravo") is None


def test_a_hit_remembers_its_task_as_replayed(store: Store) -> None:
    """A hit, one by one or in a batch, remembers the trajectory's task as replayed."""
    assert isinstance(store, TaskRecall)
    one, two = trajectory("alpha"), trajectory("bravo")
    store.add_many([(one, None), (two, None)])
    _hit(store, one.id)
    store.touch_many([Touch(two.id, 2, 1.0, 2.0, 1.0, 0.5), Touch("absent", 1, 1.0, 1.0, 1.0, 0.5)])
    assert store.recalled("alpha") is True
    assert store.recalled("bravo") is True


def test_a_task_stored_again_while_remembered_counts_as_replayed(store: Store) -> None:
    """A task stored again after its trajectory was removed is remembered, and as replayed."""
    assert isinstance(store, TaskRecall)
    first = trajectory("alpha")
    store.add(first)
    store.remove([first.id])
    assert store.recalled("alpha") is False  # the recall outlives the trajectory
    store.add(trajectory("alpha", n=1))
    assert store.recalled("alpha") is True


def test_forgetting_keeps_the_most_recently_remembered(store: Store) -> None:
    """``forget_recalled(keep)`` forgets all but the ``keep`` tasks stored or replayed last."""
    assert isinstance(store, TaskRecall)
    kept = [trajectory(f"task-{i}") for i in range(5)]
    for t in kept:
        store.add(t)
    _hit(store, kept[0].id)  # task-0 is now the latest remembered
    assert store.forget_recalled(3) == 2
    assert [store.recalled(f"task-{i}") for i in range(5)] == [True, None, None, False, False]
    assert store.forget_recalled(3) == 0
    assert store.forget_recalled(0) == 3
    assert store.recalled("task-0") is None


def test_clear_forgets_every_task(store: Store) -> None:
    """Clearing a store clears its recall too."""
    assert isinstance(store, TaskRecall)
    store.add(trajectory("alpha"))
    store.clear()
    assert store.recalled("alpha") is None


def test_every_handle_on_a_durable_store_shares_the_recall(opener: Callable[[], Store]) -> None:
    """What one process stores or replays, another recalls."""
    first, second = opener(), opener()
    assert isinstance(second, TaskRecall)
    stored = trajectory("alpha")
    first.add(stored)
    assert second.recalled("alpha") is False
    _hit(first, stored.id)
    assert second.recalled("alpha") is True


def test_the_shared_tuning_starts_from_the_first_reader_own_and_moves_by_each_change(store: Store) -> None:
    """A store without a tuning takes the reader's own; then every reader's change is added to it, clamped."""
    assert isinstance(store, SharedTuning)
    store.add(trajectory("alpha"))
    assert store.recalled_tuned("alpha", 0.8, 0.0) == TunedRecall(False, 0.8, (1, 0), 0.0)
    assert store.recalled_tuned("bravo", 0.3, 0.05).tuning == pytest.approx(0.85)  # the store's, moved
    assert store.recalled_tuned("alpha", 0.1, 0.0).tuning == pytest.approx(0.85)
    assert store.recalled_tuned("alpha", 0.1, 0.5).tuning == 1.0
    assert store.recalled_tuned("alpha", 0.1, -2.0).tuning == 0.0


def test_the_store_counts_the_two_kinds_of_remembered_tasks(store: Store) -> None:
    """Tasks remembered as never replayed and as replayed, counted as stores, hits and forgetting change them."""
    assert isinstance(store, SharedTuning) and isinstance(store, TaskRecall)
    kept = [trajectory(f"task-{i}") for i in range(4)]
    store.add_many([(t, None) for t in kept])
    assert store.recalled_tuned("task-0", 0.5, 0.0).kinds == (4, 0)
    _hit(store, kept[0].id)
    _hit(store, kept[0].id)  # already replayed: counted once
    store.touch_many([Touch(kept[1].id, 1, 1.0, 1.0, 1.0, 0.5)])
    store.add(trajectory("task-2", n=1))  # stored again: remembered as replayed
    store.add(trajectory("task-4"))
    assert store.recalled_tuned("task-0", 0.5, 0.0).kinds == (2, 3)
    store.add_many([(trajectory("task-3", n=1), None), (trajectory("task-5"), None)])  # one again, one new
    assert store.recalled_tuned("task-0", 0.5, 0.0).kinds == (2, 4)
    store.forget_recalled(2)
    assert sum(store.recalled_tuned("task-0", 0.5, 0.0).kinds or ()) == 2
    store.clear()
    assert store.recalled_tuned("task-0", 0.5, 0.0).kinds == (0, 0)


def test_the_recall_keeps_the_priority_each_task_was_last_written_with(store: Store) -> None:
    """Storing a trajectory and a hit, one by one or in a batch, leave the task's last priority in the recall."""
    assert isinstance(store, SharedTuning)
    one, two = trajectory("alpha"), trajectory("bravo")
    store.add_many([(one, Usage(priority=3.0)), (two, Usage(priority=-2.5))])
    assert [store.recalled_tuned(key, 0.5, 0.0).last for key in ("alpha", "bravo", "charlie")] == [
        3.0,
        -2.5,
        None,
    ]
    store.touch(one.id, now=1.0, saved_seconds=1.0, priority=7.5, attention=0.5)
    store.touch_many([Touch(two.id, 1, 1.0, 1.0, 11.0, 0.5), Touch("absent", 1, 1.0, 1.0, 99.0, 0.5)])
    assert store.recalled_tuned("alpha", 0.5, 0.0) == TunedRecall(True, 0.5, (0, 2), 7.5)
    assert store.recalled_tuned("bravo", 0.5, 0.0).last == 11.0
    store.remove([one.id])
    assert store.recalled_tuned("alpha", 0.5, 0.0).last == 7.5  # the recall outlives the trajectory
    store.add(trajectory("alpha", n=1), Usage(priority=4.0))
    assert store.recalled_tuned("alpha", 0.5, 0.0).last == 4.0
    store.forget_recalled(1)
    assert store.recalled_tuned("bravo", 0.5, 0.0).last is None


def test_every_handle_on_a_durable_store_shares_each_task_last_priority(opener: Callable[[], Store]) -> None:
    """A second process reads the priority the first last gave a task, as it stored or replayed it."""
    first, second = opener(), opener()
    assert isinstance(second, SharedTuning)
    stored = trajectory("alpha")
    first.add(stored, Usage(priority=12.0))
    assert second.recalled_tuned("alpha", 0.5, 0.0).last == 12.0
    first.touch_many([Touch(stored.id, 1, 2.0, 1.0, 30.0, 0.5)])
    assert second.recalled_tuned("alpha", 0.5, 0.0).last == 30.0


@pytest.mark.parametrize("value", ["'NaN'", "'Infinity'", "'-Infinity'", "NULL", "'abc'"])
def test_a_hostile_stored_last_priority_reads_as_unknown(durable: StoreSpec, value: str) -> None:
    """A last priority rewritten by SQL to what no finite number is reads as unknown (None)."""
    if durable[0] == "postgres" and value == "'abc'":
        pytest.skip("a PostgreSQL double precision column holds no text")
    store = open_spec(durable)
    try:
        assert isinstance(store, SharedTuning)
        store.add(trajectory("alpha"), Usage(priority=5.0))
        set_recall_priority(durable, value)
        assert store.recalled_tuned("alpha", 0.5, 0.0) == TunedRecall(False, 0.5, (1, 0), None)
    finally:
        store.close()


def set_recall_priority(spec: StoreSpec, value: str) -> None:
    """Overwrite every remembered task's last priority with an SQL literal."""
    kind, location, schema = spec
    if kind == "sqlite":
        literal = {"'NaN'": "NULL", "'Infinity'": "9e999", "'-Infinity'": "-9e999"}.get(value, value)
        with sqlite3.connect(location) as db:
            db.execute(f"UPDATE recall SET priority = {literal}")
        return
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        conn.execute(f'UPDATE "{schema}".recall SET priority = {value}')


def test_clear_forgets_the_shared_tuning(store: Store) -> None:
    assert isinstance(store, SharedTuning)
    store.recalled_tuned("alpha", 0.8, 0.0)
    store.clear()
    assert store.recalled_tuned("alpha", 0.4, 0.0) == TunedRecall(None, 0.4, (0, 0))


def test_every_handle_on_a_durable_store_shares_the_tuning(opener: Callable[[], Store]) -> None:
    """What one process moves the tuning by, and what it stores, another reads."""
    first, second = opener(), opener()
    assert isinstance(first, SharedTuning) and isinstance(second, SharedTuning)
    first.recalled_tuned("alpha", 0.5, 0.0)
    first.add(trajectory("alpha"))
    assert second.recalled_tuned("alpha", 0.9, -0.25) == TunedRecall(False, pytest.approx(0.25), (1, 0), 0.0)
    assert first.recalled_tuned("alpha", 0.9, 0.0).tuning == pytest.approx(0.25)


def test_no_change_to_the_shared_tuning_is_lost_to_another(opener: Callable[[], Store]) -> None:
    """Handles moving the tuning at once, each from its own thread: every change is added."""
    handles = [cast(SharedTuning, opener()) for _ in range(4)]
    handles[0].recalled_tuned("alpha", 0.2, 0.0)

    def move(handle: SharedTuning) -> None:
        for _ in range(25):
            handle.recalled_tuned("alpha", 0.9, 0.005)

    threads = [threading.Thread(target=move, args=(h,)) for h in handles]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert handles[0].recalled_tuned("alpha", 0.9, 0.0).tuning == pytest.approx(0.7)


@pytest.mark.parametrize("value", ["'NaN'", "'Infinity'", "'-Infinity'", "5.0", "-3.0", "NULL", "'abc'"])
def test_a_hostile_stored_tuning_reads_as_a_number_in_the_unit_interval(
    durable: StoreSpec, value: str
) -> None:
    """A tuning rewritten by SQL is clamped to [0, 1]; one that is not a finite number is replaced by the reader's own."""
    if durable[0] == "postgres" and value == "'abc'":
        pytest.skip("a PostgreSQL double precision column holds no text")
    store = open_spec(durable)
    try:
        assert isinstance(store, SharedTuning)
        store.recalled_tuned("alpha", 0.5, 0.0)
        set_tuning(durable, "value", value)
        expected = {"5.0": 1.0, "-3.0": 0.0}.get(value, 0.4)
        assert store.recalled_tuned("alpha", 0.4, 0.0).tuning == expected
        assert store.recalled_tuned("alpha", 0.9, 0.0).tuning == expected  # repaired as it was read
    finally:
        store.close()


@pytest.mark.parametrize("value", ["-5", "NULL", "'abc'"])
def test_hostile_stored_counts_read_as_unknown(durable: StoreSpec, value: str) -> None:
    """Counts of remembered tasks rewritten by SQL to what no count is, or deleted, are read as unknown (None)."""
    if durable[0] == "postgres" and value == "'abc'":
        pytest.skip("a PostgreSQL bigint column holds no text")
    store = open_spec(durable)
    try:
        assert isinstance(store, SharedTuning)
        store.add(trajectory("alpha"))
        set_tuning(durable, "never", value)
        assert store.recalled_tuned("alpha", 0.5, 0.0) == TunedRecall(False, 0.5, None, 0.0)
    finally:
        store.close()


def set_tuning(spec: StoreSpec, column: str, value: str) -> None:
    """Overwrite the tuning (``value``) or a count of remembered tasks (``never``) with an SQL literal."""
    kind, location, schema = spec
    if kind == "sqlite":
        literal = {"'NaN'": "NULL", "'Infinity'": "9e999", "'-Infinity'": "-9e999"}.get(value, value)
        with sqlite3.connect(location) as db:
            db.execute("PRAGMA ignore_check_constraints = ON")
            if column != "value" and value == "NULL":  # NOT NULL holds in SQLite: the row is deleted instead
                db.execute("DELETE FROM tuning")
            else:
                db.execute(f"UPDATE tuning SET {column} = {literal}")
        return
    import psycopg

    table = "tuning" if column == "value" else "recall_kinds"
    with psycopg.connect(location, autocommit=True) as conn:
        if value == "NULL":
            conn.execute(f'ALTER TABLE "{schema}".{table} ALTER COLUMN {column} DROP NOT NULL')
        conn.execute(f'UPDATE "{schema}".{table} SET {column} = {value}')


@pytest.mark.postgres
def test_postgres_reads_the_recall_and_moves_the_tuning_in_one_statement(
    postgres_spec: StoreSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recording's read of the recall, the tuning and the counts is one statement, moved or not."""
    import psycopg

    store = open_spec(postgres_spec)
    try:
        assert isinstance(store, SharedTuning)
        store.recalled_tuned("alpha", 0.5, 0.0)  # the first read writes the reader's own
        counted = [0]
        original = psycopg.Cursor.execute

        def execute(cursor: Any, *args: Any, **kwargs: Any) -> Any:
            counted[0] += 1
            return original(cursor, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", execute)
        assert store.recalled_tuned("alpha", 0.9, 0.0).tuning == 0.5
        assert store.recalled_tuned("alpha", 0.9, 0.25).tuning == 0.75
        assert counted[0] == 2
    finally:
        store.close()
