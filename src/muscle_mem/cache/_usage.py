"""Use statistics written behind: hits kept in the process and written in batches, off the hit path.

A hit only notes itself here. Every ``interval`` seconds (in the background, see
:mod:`muscle_mem.cache._background_writer`), at ``engine.flush()``, ``engine.close()`` and interpreter exit, the log
reads the current use statistics of every trajectory hit (one statement: so the priorities it computes
start from every process's hits, not only its own), applies each hit in order with the
eviction policy's ``hit``/``hit_task`` (the priorities are those a write-through engine computes), and
writes them all with one ``touch_many``: each trajectory's hits and saved seconds are added to the
stored ones in SQL, so several processes never lose or double count each other's. A crash loses the
hits of the last interval (statistics only: the trajectories themselves are written at once). While
the store is unavailable, the hits wait (the latest :data:`KEPT` trajectories' worth).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field

from muscle_mem.cache import _background_writer as writeback
from muscle_mem.cache._breaker import Breaker
from muscle_mem.eviction.policies import Policy, task_hit
from muscle_mem.model.trajectory import Usage
from muscle_mem.stores import StoreUnavailable, Touch, UsageBatched, budget

logger = logging.getLogger(__name__)

KEPT = 10_000
"""Trajectories whose hits (or use statistics) a log keeps at most; past it, the oldest are dropped."""
HITS_PENDING = 100_000
"""Hits kept before the background writer is asked to write them at once."""


@dataclass(slots=True)
class _Hits:
    task_key: str
    calls: list[float] = field(default_factory=list)
    """now, relevance, saved seconds of each hit, in order, one after the other: floats are no
    objects the cyclic GC tracks, so hits waiting for their write do not make it run."""

    def each(self) -> Iterator[tuple[float, float, float]]:
        """(now, relevance, saved seconds) of each hit, in order."""
        calls = self.calls
        return zip(calls[0::3], calls[1::3], calls[2::3], strict=True)

    def count(self) -> int:
        """How many hits."""
        return len(self.calls) // 3


class UsageLog:
    """The hits of one engine, written to its store in batches at most every ``interval`` seconds."""

    def __init__(self, store: UsageBatched, policy: Policy, breaker: Breaker, interval: float) -> None:
        self._store = store
        self._hit_task = task_hit(policy)
        self._breaker = breaker
        self.interval = interval
        self._pending: dict[str, _Hits] = {}
        self._count = 0
        self._unwritten: OrderedDict[str, Touch] = OrderedDict()
        """Hits applied to the policy but not written yet (the store was unavailable)."""
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self._flushing = threading.Lock()
        writeback.register(self)

    def hit(self, task_key: str, trajectory_id: str, now: float, relevance: float, saved: float) -> None:
        """Note a hit (nothing is read or written now)."""
        lock = self._lock
        lock.acquire()  # not ``with``: a hit notes itself here
        try:
            hits = self._pending.get(trajectory_id)
            if hits is None:
                hits = self._pending[trajectory_id] = _Hits(task_key)
            calls = hits.calls
            calls.append(now)
            calls.append(relevance)
            calls.append(saved)
            self._count += 1
            full = self._count >= HITS_PENDING
        finally:
            lock.release()
        if full:
            writeback.kick()

    def flush_due(self) -> None:
        """Write if ``interval`` seconds passed since the last write (or too many hits wait)."""
        if (self._pending or self._unwritten) and (
            time.monotonic() - self._last >= self.interval or self._count >= HITS_PENDING
        ):
            self.flush()

    def flush(self, *, at_exit: bool = False) -> None:
        """Write every hit noted so far (kept for later while the store is unavailable)."""
        with self._flushing:
            self._last = time.monotonic()
            with self._lock:
                pending, self._pending, self._count = self._pending, {}, 0
            if not pending and not self._unwritten:
                return
            breaker = self._breaker
            if not breaker.available:
                self._keep(pending)
                return
            token = budget.start(breaker.timeout)
            try:
                with breaker:
                    self._write(pending)
            except StoreUnavailable:
                pass  # kept by _write; the outage is logged once, by the breaker
            except Exception:
                level = logging.DEBUG if at_exit else logging.WARNING
                logger.log(
                    level,
                    "the use statistics of %d trajectories were not written",
                    len(pending),
                    exc_info=True,
                )
            finally:
                budget.stop(token)

    def _write(self, pending: dict[str, _Hits]) -> None:
        try:
            fetched = self._store.usage_many(list(pending)) if pending else {}
        except StoreUnavailable:
            self._keep(pending)
            raise
        for tid, hits in pending.items():
            usage = fetched.get(tid)
            if usage is None:
                continue  # removed meanwhile
            before = self._unwritten.get(tid)
            if before is not None:  # hits applied but not written yet: start from them
                usage = _after(usage, before)
            for now, relevance, saved in hits.each():
                usage = self._hit_task(hits.task_key, usage, now, relevance, saved)
            touch = Touch(
                tid,
                hits.count(),
                max(hits.calls[0::3]),
                sum(hits.calls[2::3]),
                usage.priority,
                usage.attention,
            )
            before = self._unwritten.pop(tid, None)
            if before is not None:
                touch = Touch(
                    tid,
                    before.hits + touch.hits,
                    max(before.last_used, touch.last_used),
                    before.saved_seconds + touch.saved_seconds,
                    touch.priority,
                    touch.attention,
                )
            self._unwritten[tid] = touch
            if len(self._unwritten) > KEPT:
                self._unwritten.popitem(last=False)
        touches = list(self._unwritten.values())
        self._store.touch_many(touches)  # raises StoreUnavailable: they stay unwritten
        self._unwritten.clear()

    def _keep(self, pending: dict[str, _Hits]) -> None:
        """Put hits not written back in front of the newer ones (the oldest dropped past :data:`KEPT`)."""
        with self._lock:
            for tid, hits in self._pending.items():
                older = pending.get(tid)
                if older is None:
                    pending[tid] = hits
                else:
                    older.calls.extend(hits.calls)
            while len(pending) > KEPT:
                del pending[next(iter(pending))]
            self._pending = pending
            self._count = sum(h.count() for h in pending.values())


def _after(usage: Usage, touch: Touch) -> Usage:
    """The use statistics ``usage`` would be once ``touch`` is written."""
    return Usage(
        hits=usage.hits + touch.hits,
        last_used=max(usage.last_used, touch.last_used),
        saved_seconds=usage.saved_seconds + touch.saved_seconds,
        priority=touch.priority,
        attention=touch.attention,
    )
