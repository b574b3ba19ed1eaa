"""A large ``add_many`` into SQLite writes with a larger page cache, and gives it back after."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from conftest import trajectory
from muscle_mem.stores import SQLiteStore, steps
from muscle_mem.stores import sqlite as sqlite_store


def cache_size(store: SQLiteStore) -> int:
    """The page cache setting of the store's connection on this thread."""
    (size,) = store._conn().db.execute("PRAGMA cache_size").fetchone()
    return int(size)


def test_a_bulk_add_gives_the_page_cache_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past ``BULK_ROWS`` trajectories the write runs with ``BULK_CACHE_KIB``; the usual cache is set again after."""
    monkeypatch.setattr(sqlite_store, "BULK_ROWS", 3)
    store = SQLiteStore(str(tmp_path / "cache.db"))
    usual = cache_size(store)
    seen: list[int] = []
    original = sqlite_store._page_cache

    @contextmanager
    def watched(db: sqlite3.Connection, bulk: bool) -> Iterator[None]:
        with original(db, bulk):
            seen.append(cache_size(store))
            yield

    monkeypatch.setattr(sqlite_store, "_page_cache", watched)
    few, many = [trajectory(n=1) for _ in range(2)], [trajectory(n=2) for _ in range(3)]
    assert store.add_many((t, None) for t in few) == 2
    assert store.add_many((t, None) for t in many) == 3
    assert seen == [usual, -sqlite_store.BULK_CACHE_KIB]
    assert cache_size(store) == usual
    assert len(store) == 5
    rows = store.candidates_at(steps.root("task-a"), steps.step_rows(many[0])[0].signature, None)
    assert {c.trajectory_id for c in rows} == {t.id for t in many}
    store.close()
