"""The engine's event journal: hits and misses, written to the store in batches for reports."""

from __future__ import annotations

import logging
import math
import threading
import time

from muscle_mem.cache import _background_writer as writeback
from muscle_mem.cache._breaker import Breaker
from muscle_mem.model._frozen_instances import fast_instance
from muscle_mem.model._spend import usage_rows
from muscle_mem.model.verdict import Shadow
from muscle_mem.reasons import Problem
from muscle_mem.record._run import Run
from muscle_mem.replay._drivers import Ending
from muscle_mem.secrecy.patterns import scrub
from muscle_mem.stores import budget
from muscle_mem.stores.base import CoreStore, Event, EventLog, StoreUnavailable

logger = logging.getLogger(__name__)

KEPT_IN_OUTAGE = 4096
"""Events kept while the store is unavailable (the oldest are dropped past it)."""


class Journal:
    """Buffers events and writes them with ``Store.log_events``.

    It writes every ``batch`` events, every ``interval`` seconds, on :meth:`flush`, and at
    interpreter exit. ``behind``: those writes are made by the background writer
    (:mod:`muscle_mem.cache._background_writer`), never on the caller's path (an engine's :meth:`flush` still
    writes at once). A write that fails is logged and its events dropped (they are statistics; the
    cache itself is not affected). While the ``breaker`` says the store is unavailable, the latest
    :data:`KEPT_IN_OUTAGE` events wait for it to come back.
    """

    def __init__(
        self,
        store: CoreStore,
        *,
        breaker: Breaker | None = None,
        batch: int = 64,
        interval: float = 1.0,
        behind: bool = False,
    ) -> None:
        self._store = store if isinstance(store, EventLog) else None
        """None for a store that keeps no events: they are dropped."""
        self._breaker = breaker
        self._batch = batch
        self._interval = interval
        self._pending: list[Event] = []
        self._last_flush = time.monotonic()
        self._lock = threading.Lock()
        self._flushing = threading.Lock()
        self._behind = behind
        self._kicked = -math.inf
        """When the background writer was last asked to write (``time.monotonic()``; -inf once it wrote)."""
        writeback.register(self)

    def add(self, event: Event) -> None:
        if self._store is None:
            return
        lock = self._lock
        lock.acquire()  # not ``with``, and ``_due`` inline: a hit adds an event
        try:
            pending = self._pending
            pending.append(event)
            due = len(pending) >= self._batch or time.monotonic() - self._last_flush >= self._interval
            if due and self._behind:  # the writer is woken once a tick, not at every event until it writes
                now = time.monotonic()
                due = now - self._kicked >= writeback.TICK
                if due:
                    self._kicked = now
        finally:
            lock.release()
        if due:
            writeback.kick() if self._behind else self.flush()

    def _due(self) -> bool:
        return len(self._pending) >= self._batch or (
            bool(self._pending) and time.monotonic() - self._last_flush >= self._interval
        )

    def flush_due(self) -> None:
        """Write the pending events if a batch is full or ``interval`` seconds passed (in the background)."""
        if self._behind and self._due():
            self.flush()

    def flush(self, *, at_exit: bool = False) -> None:
        """Write the pending events (at interpreter exit, a store already closed is not an error)."""
        with self._flushing:
            self._flush(at_exit)

    def _flush(self, at_exit: bool) -> None:
        breaker = self._breaker
        if breaker is not None and not breaker.available:
            with self._lock:
                del self._pending[:-KEPT_IN_OUTAGE]
            return
        with self._lock:
            pending, self._pending = self._pending, []
            self._last_flush = time.monotonic()
            self._kicked = -math.inf
        if not pending or self._store is None:
            return
        token = budget.start(breaker.timeout) if breaker is not None else None
        try:
            if breaker is None:
                self._store.log_events(pending)
            else:
                with breaker:
                    self._store.log_events(pending)
        except StoreUnavailable:
            with self._lock:
                self._pending[:0] = pending
                del self._pending[:-KEPT_IN_OUTAGE]
        except Exception:
            level = logging.DEBUG if at_exit else logging.WARNING
            logger.log(level, "%d events could not be written to the store", len(pending), exc_info=True)
        finally:
            if token is not None:
                budget.stop(token)


def hit_event(run: Run, trajectory_id: str, steps: int, elapsed: float, saved: float, tokens: int) -> Event:
    """The event of a full hit."""
    return fast_instance(
        Event,
        at=time.time(),
        task=run.task,
        task_key=run.task_key,
        hit=True,
        steps_replayed=steps,
        trajectory_id=trajectory_id,
        elapsed=elapsed,
        saved_seconds=saved,
        tokens_saved=tokens,
    )


def miss_event(
    run: Run,
    ending: Ending,
    replayed: int,
    elapsed: float,
    agent_seconds: float,
    stored_id: str | None,
    refused: Problem | None,
    shadow: Shadow | None = None,
) -> Event:
    """The event of a miss: why the replay stopped, whether the agent's run was stored, and its shadow verdict.

    Its texts are redacted of secret-looking texts (an exception a tool raised may quote a key).
    """
    return fast_instance(
        Event,
        at=time.time(),
        task=run.task,
        task_key=run.task_key,
        hit=False,
        steps_replayed=replayed,
        reason=scrub(ending.reason) if ending.reason is not None else None,
        tool=ending.tool,
        trajectory_id=stored_id,
        elapsed=elapsed,
        agent_seconds=agent_seconds,
        tokens_spent=run.tokens,
        miss_reason=ending.kind.value if ending.kind else None,
        not_stored=scrub(str(refused)) if refused is not None else None,
        not_stored_reason=refused.kind.value if refused is not None else None,
        usage=usage_rows(run.usage),
        **(_shadow_fields(run, shadow, agent_seconds) if shadow is not None else {}),
    )


def _shadow_fields(run: Run, shadow: Shadow, agent_seconds: float) -> dict[str, object]:
    """A shadow run's verdict as event fields; an agreement saves the agent's seconds outside its tools."""
    tool_seconds = sum(call.seconds for call in run.calls)
    return {
        "shadow": shadow.verdict.value,
        "shadow_step": shadow.step,
        "shadow_expected": shadow.expected,
        "shadow_actual": shadow.actual,
        "shadow_saved_seconds": max(agent_seconds - tool_seconds, 0.0) if shadow.agreed else 0.0,
    }
