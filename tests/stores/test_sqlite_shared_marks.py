"""SQLite's shared change marks: a reader learns which tasks other processes changed without a statement."""

from __future__ import annotations

import logging
import multiprocessing
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import trajectory
from muscle_mem.stores import SQLiteStore, Touch
from muscle_mem.stores import sqlite as sqlite_module
from muscle_mem.stores._shared_marks import SharedMarks
from muscle_mem.stores.base import Event


@pytest.fixture
def handles(tmp_path: Path) -> Iterator[tuple[SQLiteStore, SQLiteStore]]:
    """A reader and a writer on one file, as two processes would hold it."""
    path = tmp_path / "cache.db"
    reader, writer = SQLiteStore(path), SQLiteStore(path)
    yield reader, writer
    reader.close()
    writer.close()


def test_a_task_left_alone_is_checked_without_a_statement_while_others_commit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Recordings of other tasks, use statistics and events written elsewhere leave the task's mark
    as it was, and reading the mark runs no statement (not even ``PRAGMA data_version``)."""
    path = tmp_path / "cache.db"
    writer = SQLiteStore(path)
    read: list[str] = []
    connect = sqlite3.connect

    def counting(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        db = connect(*args, **kwargs)
        db.set_trace_callback(read.append)
        return db

    monkeypatch.setattr(sqlite3, "connect", counting)
    reader = SQLiteStore(path)
    try:
        t = trajectory("task-a")
        writer.add(t)
        before = reader.change_mark("task-a")
        del read[:]
        for n in range(20):
            writer.add(trajectory("task-b", n=n))
            writer.touch_many([Touch(t.id, 1, float(n), 0.1, 1.0, 0.0)])
            writer.log_events([Event(at=float(n), task="task a", task_key="task-a", hit=True)])
            assert reader.change_mark("task-a") == before
        assert read == []
        assert reader.change_mark("task-b") != before
    finally:
        reader.close()
        writer.close()


def _add_in_another_process(path: Path, task_key: str, n: int) -> None:
    store = SQLiteStore(path)
    store.add(trajectory(task_key, n=n))
    store.close()


def _remove_in_another_process(path: Path, task_key: str) -> None:
    store = SQLiteStore(path)
    store.remove([t.id for t in store.changes(task_key, 0).added])
    store.close()


def _clear_in_another_process(path: Path) -> None:
    store = SQLiteStore(path)
    store.clear()
    store.close()


def _in_process(target: Any, *args: Any) -> None:
    child = multiprocessing.get_context("spawn").Process(target=target, args=args)
    child.start()
    child.join(60)
    assert child.exitcode == 0


def test_another_process_s_add_removal_and_clear_move_the_marks_at_once(tmp_path: Path) -> None:
    """An add or removal in another process moves that task's mark by the reader's next call (no
    waiting for a fallback); clearing the store moves every task's."""
    path = tmp_path / "cache.db"
    reader = SQLiteStore(path)
    try:
        a, b = reader.change_mark("task-a"), reader.change_mark("task-b")
        _in_process(_add_in_another_process, path, "task-a", 1)
        added = reader.change_mark("task-a")
        assert added != a and reader.change_mark("task-b") == b
        _in_process(_remove_in_another_process, path, "task-a")
        removed = reader.change_mark("task-a")
        assert removed != added and reader.change_mark("task-b") == b
        _in_process(_clear_in_another_process, path)
        assert reader.change_mark("task-a") != removed and reader.change_mark("task-b") != b
    finally:
        reader.close()


def test_a_commit_whose_mark_was_never_bumped_is_seen_at_the_data_version_check(
    monkeypatch: pytest.MonkeyPatch, handles: tuple[SQLiteStore, SQLiteStore]
) -> None:
    """A writer killed between its commit and its bump: the reader trusts the marks for
    ``SHARED_MARKS_TRUSTED`` seconds, then sees the change from ``data_version``."""
    reader, writer = handles
    before = reader.change_mark("task-a")
    monkeypatch.setattr(SharedMarks, "bump", lambda self, keys: None)
    writer.add(trajectory("task-a"))
    assert reader.change_mark("task-a") == before  # within the window the marks are trusted
    monkeypatch.setattr(sqlite_module, "SHARED_MARKS_TRUSTED", 0.0)
    assert reader.change_mark("task-a") != before


def test_a_store_whose_marks_cannot_be_made_sees_each_change_from_data_version(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Where ``<file>-marks`` cannot be made, the store says so once and reads changes on every
    commit it sees, as it did before the marks."""
    path = tmp_path / "cache.db"
    (tmp_path / "cache.db-marks").mkdir()
    with caplog.at_level(logging.WARNING):
        reader, writer = SQLiteStore(path), SQLiteStore(path)
    assert "no shared change marks" in caplog.text
    try:
        before = reader.change_mark("task-a")
        writer.add(trajectory("task-a"))
        added = reader.change_mark("task-a")
        assert added != before
        writer.add(trajectory("task-b"))
        assert reader.change_mark("task-a") == added
    finally:
        reader.close()
        writer.close()


@pytest.mark.parametrize("damage", ["short", "scribbled", "removed"])
def test_a_damaged_marks_file_costs_reads_never_a_missed_change(damage: str, tmp_path: Path) -> None:
    """A marks file found cut short (it is made whole), overwritten with junk or deleted under running
    processes: each change is still seen at the reader's next call, and nothing raises."""
    path, marks = tmp_path / "cache.db", tmp_path / "cache.db-marks"
    if damage == "short":
        marks.write_bytes(b"\x01" * 10)
    reader, writer = SQLiteStore(path), SQLiteStore(path)
    try:
        before = reader.change_mark("task-a")
        if damage == "scribbled":
            marks.write_bytes(bytes(range(256)) * 256)
        elif damage == "removed":
            marks.unlink()
        writer.add(trajectory("task-a"))
        added = reader.change_mark("task-a")
        assert added != before
        writer.remove([t.id for t in writer.changes("task-a", 0).added])
        assert reader.change_mark("task-a") != added
    finally:
        reader.close()
        writer.close()


def test_a_closed_store_s_mark_is_a_store_error(handles: tuple[SQLiteStore, SQLiteStore]) -> None:
    """Reading a mark after ``close()`` fails as any other read of a closed store does."""
    reader, _ = handles
    reader.change_mark("task-a")
    reader.close()
    with pytest.raises(sqlite_module.StoreError, match="closed"):
        reader.change_mark("task-a")
