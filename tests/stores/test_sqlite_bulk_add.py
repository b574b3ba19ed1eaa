"""A large ``add_many`` into SQLite writes with a larger page cache; the next other write gets a new connection."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import trajectory
from muscle_mem.stores import SQLiteStore, StoreError, steps
from muscle_mem.stores import sqlite as sqlite_store


def cache_size(db: sqlite3.Connection) -> int:
    """The page cache setting of a connection."""
    (size,) = db.execute("PRAGMA cache_size").fetchone()
    return int(size)


def statements(db: sqlite3.Connection) -> list[str]:
    """The statements the connection runs from now on, as they run."""
    seen: list[str] = []
    db.set_trace_callback(seen.append)
    return seen


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[SQLiteStore]:
    """A SQLite store whose adds of 3 trajectories or more are bulk."""
    monkeypatch.setattr(sqlite_store, "BULK_ROWS", 3)
    opened = SQLiteStore(str(tmp_path / "cache.db"))
    yield opened
    opened.close()


def closed(db: sqlite3.Connection) -> bool:
    try:
        db.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False


def test_a_bulk_add_writes_with_a_large_cache_and_gives_it_back(store: SQLiteStore) -> None:
    """Past ``BULK_ROWS`` trajectories the write runs with ``BULK_CACHE_KIB``; the usual cache is set again after."""
    db = store._conn().db
    usual = cache_size(db)
    seen = statements(db)
    few, many = [trajectory(n=1) for _ in range(2)], [trajectory(n=2) for _ in range(3)]
    assert store.add_many((t, None) for t in few) == 2
    assert not any("cache_size" in s for s in seen)
    assert store.add_many((t, None) for t in many) == 3
    assert f"PRAGMA cache_size = -{sqlite_store.BULK_CACHE_KIB}" in seen
    assert cache_size(store._conn().db) == usual
    assert len(store) == 5
    rows = store.candidates_at(steps.root("task-a"), steps.step_rows(many[0])[0].signature, None)
    assert {c.trajectory_id for c in rows} == {t.id for t in many}


def test_the_write_after_bulk_adds_opens_a_new_connection(store: SQLiteStore) -> None:
    """Bulk adds in a row share the connection (an import in chunks); the next other write opens a new one,
    whose commits do not walk the page cache a bulk write grew."""
    store.add(trajectory(n=1))
    first = store._conn().db
    store.add(trajectory(n=1))
    assert store._conn().db is first, "writes that are not bulk keep their connection"
    for _ in range(2):
        store.add_many((trajectory(n=2), None) for _ in range(3))
        assert store._conn().db is first
    assert len(store) == 8, "reads go on with it too"
    store.add(trajectory(n=1))
    second = store._conn().db
    assert second is not first and closed(first)
    store.add(trajectory(n=1))
    assert store._conn().db is second
    assert len(store) == 10


def test_a_bulk_add_that_fails_leaves_the_next_write_a_new_connection(
    store: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk write that fails reports a store error and stores nothing; the next write opens a new connection."""
    before = store._conn().db
    seen = statements(before)
    original = sqlite_store._INSERT_STEPS
    monkeypatch.setattr(sqlite_store, "_INSERT_STEPS", original.replace("steps", "no_such_table"))
    with pytest.raises(StoreError, match="no_such_table"):
        store.add_many((trajectory(n=2), None) for _ in range(3))
    assert "ROLLBACK" in seen
    monkeypatch.setattr(sqlite_store, "_INSERT_STEPS", original)
    assert len(store) == 0
    store.add(trajectory(n=1))
    assert store._conn().db is not before and closed(before)
    assert len(store) == 1
