"""The event journal: batches events into the store; a failed write is logged, never raised."""

from __future__ import annotations

import logging

import pytest

from muscle_mem.cache._events import Journal
from muscle_mem.stores import MemoryStore
from muscle_mem.stores.base import Event


def event(n: int) -> Event:
    return Event(at=float(n), task=f"task {n}", task_key=f"k{n}", hit=n % 2 == 0)


def test_events_are_written_in_batches_and_on_flush() -> None:
    store = MemoryStore()
    journal = Journal(store, batch=3, interval=3600.0)
    journal.add(event(1))
    journal.add(event(2))
    assert store.events() == []
    journal.add(event(3))
    assert [e.task for e in store.events()] == ["task 1", "task 2", "task 3"]
    journal.add(event(4))
    journal.flush()
    assert len(store.events()) == 4


def test_a_failed_write_warns_but_is_quiet_at_exit(caplog: pytest.LogCaptureFixture) -> None:
    store = MemoryStore()
    journal = Journal(store, batch=100, interval=3600.0)
    store.close()
    caplog.set_level(logging.DEBUG, logger="muscle_mem")
    journal.add(event(1))
    journal.flush()
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    caplog.clear()
    journal.add(event(2))
    journal.flush(at_exit=True)
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]


def test_engines_made_per_request_add_no_exit_hooks() -> None:
    import atexit

    from muscle_mem import Engine

    before = atexit._ncallbacks()
    for _ in range(50):
        Engine().close()
    assert atexit._ncallbacks() == before
