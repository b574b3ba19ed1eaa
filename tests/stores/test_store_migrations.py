"""Stores made by an older muscle-mem (built here by their SQL) are migrated forward on first use."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from conftest import StoreSpec, open_spec, trajectory
from muscle_mem.model.trajectory import Trajectory, Usage
from muscle_mem.stores import (
    Event,
    Rank,
    SharedTuning,
    StoreError,
    TunedRecall,
    _records,
    postgres,
    sqlite,
    steps,
)


def run_sql(spec: StoreSpec, statements: list[tuple[str, tuple[Any, ...]]]) -> None:
    """Run statements on the store's file or schema directly (``{s}``: the schema prefix, ``%s``: a value)."""
    kind, location, schema = spec
    if kind == "sqlite":
        Path(location).parent.mkdir(parents=True, exist_ok=True)
        with sqlite3.connect(location) as db:
            for sql, args in statements:
                db.execute(sql.format(s="main").replace("%s", "?"), args)
        return
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn, conn.transaction():
        conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        for sql, args in statements:
            conn.execute(sql.format(s=f'"{schema}"'), args or None)  # no values: a '%' is an operator


def make_old_store(spec: StoreSpec, version: int, stored: list[Trajectory]) -> None:
    """A store at schema ``version`` (1 to 4) holding ``stored``, as that version wrote it."""
    module = sqlite if spec[0] == "sqlite" else postgres
    prefix = "" if spec[0] == "sqlite" else "{s}."
    statements: list[tuple[str, tuple[Any, ...]]] = []
    for step in module.MIGRATIONS[:version]:
        statements += [(sql, ()) for sql in step]
    statements.append((f"INSERT INTO {prefix}meta VALUES ('schema_version', %s)", (str(version),)))
    size = 0
    for rev, t in enumerate(stored, start=1):
        text = _records.dumps(t)
        size += len(text.encode())
        statements += [
            (
                f"INSERT INTO {prefix}trajectories VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    rev,
                    t.id,
                    t.task_key,
                    t.task,
                    '["t"]',
                    len(t.steps),
                    t.created_at,
                    len(text.encode()),
                    text,
                ),
            ),
            (f"INSERT INTO {prefix}usage VALUES (%s, %s, 2, %s, 1.5, 0.25, 0.0)", (t.id, rev, t.created_at)),
            (
                f"INSERT INTO {prefix}tasks VALUES (%s, %s, 1) ON CONFLICT (task_key) DO UPDATE SET n = "
                + ("n" if spec[0] == "sqlite" else "tasks.n")
                + " + 1",
                (t.task_key, t.task),
            ),
        ]
        if version >= module.STEPS_VERSION:
            statements += [
                (f"INSERT INTO {prefix}steps VALUES (%s, %s, %s, %s, %s, %s)", row.values())
                for row in steps.step_rows(t)
            ]
    statements.append(
        (f"UPDATE {prefix}state SET revision = %s, count = %s, nbytes = %s", (len(stored), len(stored), size))
    )
    if spec[0] == "sqlite":
        statements = [(sql.replace("{s}.", ""), args) for sql, args in statements]
    run_sql(spec, statements)


@pytest.mark.parametrize("version", [1, 4])
def test_an_older_store_is_migrated_to_the_current_version(durable: StoreSpec, version: int) -> None:
    """Its trajectories, use statistics, counts and step index read back; it keeps working."""
    a, b, other = trajectory("task-a", n=1), trajectory("task-a", n=2), trajectory("task-b", n=3)
    make_old_store(durable, version, [a, b, other])
    store = open_spec(durable)
    try:
        assert [store.get(t.id) for t in (a, b, other)] == [a, b, other]
        assert store.usage(a.id) is not None and store.usage(a.id).hits == 2  # type: ignore[union-attr]
        assert len(store) == 3 and store.nbytes() == sum(
            len(_records.dumps(t).encode()) for t in (a, b, other)
        )
        assert store.tasks() == {"task-a": "do task-a", "task-b": "do task-b"}
        first = steps.step_rows(a)[0]
        assert {c.trajectory_id for _, c in store.heads_at(first.node)} == {a.id, b.id}  # the index is there
        assert [c.trajectory_id for c in store.candidates_at(first.node, first.signature, None)] == [a.id]
        state = store.task_state("task-a", 0)
        assert state.changed and state.size == 2
        assert not store.task_state("task-a", state.revision).changed
        seen = store.changes("task-a", 0)
        assert {t.id for t in seen.added} == {a.id, b.id}
        assert store.revision() >= 3
        newer = trajectory("task-a", n=4)
        store.add(newer)
        assert store.task_state("task-a", state.revision).changed
        assert [t.id for t in store.changes("task-a", seen.revision).added] == [newer.id]
        assert store.remove([a.id]) == 1
        assert store.changes("task-a", seen.revision).removed == {a.id}
        assert len(store) == 3
        store.log_events([Event(at=1.0, task="do task-a", task_key="task-a", hit=True)])
        assert [e.at for e in store.events()] == [1.0]
        assert store.victims(1, Rank(kind="recency_attention", now=1e12)) != []
        assert isinstance(store, SharedTuning)
        assert store.recalled_tuned("task-a", 0.25, 0.0) == TunedRecall(
            False, 0.25, (1, 0), 0.0
        )  # shared from now on
    finally:
        store.close()


def make_store_with_one_recalled_task(spec: StoreSpec, version: int, replayed: bool) -> None:
    """Make a store of schema ``version`` (5 or later) whose recall remembers ``task-a``."""
    module = sqlite if spec[0] == "sqlite" else postgres
    prefix = "" if spec[0] == "sqlite" else "{s}."
    statements: list[tuple[str, tuple[Any, ...]]] = [
        (sql, ()) for step in module.MIGRATIONS[:version] for sql in step
    ]
    statements.append((f"INSERT INTO {prefix}meta VALUES ('schema_version', %s)", (str(version),)))
    statements.append((f"INSERT INTO {prefix}recall VALUES ('task-a', %s, 1)", (replayed,)))
    if spec[0] == "sqlite":
        statements = [(sql.replace("{s}.", ""), args) for sql, args in statements]
    run_sql(spec, statements)


def test_a_store_with_a_recall_but_no_tuning_gets_a_shared_tuning(durable: StoreSpec) -> None:
    """A store of the last version before the shared tuning keeps its recall and starts sharing a tuning."""
    make_store_with_one_recalled_task(durable, 5, replayed=True)
    first, second = open_spec(durable), open_spec(durable)
    try:
        assert isinstance(first, SharedTuning) and isinstance(second, SharedTuning)
        assert first.recalled_tuned("task-a", 0.5, 0.0) == TunedRecall(
            True, 0.5, (0, 1)
        )  # the recall counted
        assert second.recalled_tuned("task-b", 0.9, 0.125) == TunedRecall(None, 0.625, (0, 1))
    finally:
        first.close()
        second.close()


def test_a_store_of_schema_6_keeps_its_recall_and_learns_each_task_last_priority(durable: StoreSpec) -> None:
    """A store made before the recall kept last priorities: its remembered tasks read as of unknown priority
    (as they were), and what is stored or replayed from now on is remembered with its priority."""
    make_store_with_one_recalled_task(durable, 6, replayed=False)
    first, second = open_spec(durable), open_spec(durable)
    try:
        assert isinstance(first, SharedTuning) and isinstance(second, SharedTuning)
        assert first.recalled_tuned("task-a", 0.5, 0.0) == TunedRecall(False, 0.5, (1, 0), None)
        again, other = trajectory("task-a", n=1), trajectory("task-b", n=2)
        first.add_many([(again, Usage(priority=4.0)), (other, Usage(priority=-1.0))])
        assert second.recalled_tuned("task-a", 0.5, 0.0) == TunedRecall(True, 0.5, (1, 1), 4.0)
        first.touch(other.id, now=1.0, saved_seconds=1.0, priority=9.0, attention=0.0)
        assert second.recalled_tuned("task-b", 0.5, 0.0) == TunedRecall(True, 0.5, (0, 2), 9.0)
        assert len(first) == 2
    finally:
        first.close()
        second.close()


def test_a_store_of_a_newer_version_is_refused(durable: StoreSpec) -> None:
    """A newer muscle-mem's store is never written by this one."""
    make_old_store(durable, 4, [trajectory()])
    open_spec(durable).close()
    newer = (sqlite if durable[0] == "sqlite" else postgres).SCHEMA_VERSION + 1
    prefix = "" if durable[0] == "sqlite" else "{s}."
    run_sql(durable, [(f"UPDATE {prefix}meta SET value = %s WHERE key = 'schema_version'", (str(newer),))])
    with pytest.raises(StoreError, match="newer"):
        open_spec(durable)
