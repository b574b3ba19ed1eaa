"""Hits written behind by several processes: each starts its priorities from the store's statistics."""

from __future__ import annotations

from pathlib import Path

from conftest import trajectory
from muscle_mem.cache._breaker import Breaker
from muscle_mem.cache._usage import UsageLog
from muscle_mem.eviction import LFU
from muscle_mem.metrics import Metrics
from muscle_mem.stores import SQLiteStore, StoreUnavailable


def _log(store: SQLiteStore) -> tuple[UsageLog, Breaker]:
    breaker = Breaker(store, Metrics(), timeout=5.0, retry=1.0)
    return UsageLog(store, LFU(), breaker, interval=3600.0), breaker


def test_each_flush_starts_from_every_process_hits(tmp_path: Path) -> None:
    """A usage log reads the stored use statistics at each flush, so another engine's hits count."""
    path = tmp_path / "shared.db"
    first, second = SQLiteStore(path), SQLiteStore(path)
    try:
        stored = trajectory("alpha")
        first.add(stored)
        (a, _), (b, _) = _log(first), _log(second)
        for log, now in ((a, 10.0), (b, 20.0), (a, 30.0)):
            log.hit("alpha", stored.id, now, 1.0, 1.0)
            log.flush()
        usage = first.usage(stored.id)
        assert usage is not None
        assert usage.hits == 3
        assert int(usage.priority) == 4  # LFU: one for the store and one per hit, all three seen
    finally:
        first.close()
        second.close()


def test_hits_kept_through_an_outage_still_count_once_written(tmp_path: Path, logs: object) -> None:
    """Hits applied but not written start the next flush's priorities, and are written with it."""
    store = SQLiteStore(tmp_path / "one.db")
    try:
        stored = trajectory("alpha")
        store.add(stored)
        log, breaker = _log(store)
        log.hit("alpha", stored.id, 10.0, 1.0, 1.0)
        real = store.touch_many

        def down(touches: object) -> None:
            raise StoreUnavailable("down")

        store.touch_many = down  # type: ignore[method-assign]
        log.flush()
        store.touch_many = real  # type: ignore[method-assign]
        assert breaker.probe()  # the store is back
        log.hit("alpha", stored.id, 20.0, 1.0, 1.0)
        log.flush()
        usage = store.usage(stored.id)
        assert usage is not None
        assert usage.hits == 2
        assert int(usage.priority) == 3
    finally:
        store.close()
