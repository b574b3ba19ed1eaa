"""A large ``add_many`` into SQLite writes with a larger page cache, on a connection closed after it."""

from __future__ import annotations

import sqlite3
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


def test_a_bulk_add_writes_with_a_large_cache_on_a_connection_it_then_closes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``BULK_ROWS`` trajectories the write runs with ``BULK_CACHE_KIB``; the thread then gets a
    new connection with the usual cache (the old one's grown page cache would slow every commit)."""
    monkeypatch.setattr(sqlite_store, "BULK_ROWS", 3)
    store = SQLiteStore(str(tmp_path / "cache.db"))
    before = store._conn().db
    usual = cache_size(before)
    seen = statements(before)
    few, many = [trajectory(n=1) for _ in range(2)], [trajectory(n=2) for _ in range(3)]
    assert store.add_many((t, None) for t in few) == 2
    assert store._conn().db is before, "a small add keeps the connection"
    assert not any("cache_size" in s for s in seen)
    assert store.add_many((t, None) for t in many) == 3
    assert f"PRAGMA cache_size = -{sqlite_store.BULK_CACHE_KIB}" in seen
    after = store._conn().db
    assert after is not before
    with pytest.raises(sqlite3.ProgrammingError):
        before.execute("SELECT 1")
    assert cache_size(after) == usual
    assert len(store) == 5
    rows = store.candidates_at(steps.root("task-a"), steps.step_rows(many[0])[0].signature, None)
    assert {c.trajectory_id for c in rows} == {t.id for t in many}
    store.close()


def test_a_bulk_add_that_fails_closes_its_connection_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bulk write that fails reports a store error, and the thread's next operation opens a new connection."""
    monkeypatch.setattr(sqlite_store, "BULK_ROWS", 3)
    store = SQLiteStore(str(tmp_path / "cache.db"))
    before = store._conn().db

    def broken(*_: object) -> None:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(store, "_own_change", broken)
    with pytest.raises(StoreError, match="disk I/O error"):
        store.add_many((trajectory(n=2), None) for _ in range(3))
    monkeypatch.undo()
    assert store._conn().db is not before
    assert cache_size(store._conn().db) == cache_size(sqlite3.connect(":memory:"))
    assert store.add(trajectory(n=1)) is None
    store.close()
