"""Store writes made behind the caller: a background thread runs them in the order they were handed over.

With ``Engine(write_behind=True)`` a miss hands the store write of its trajectory (and the removal of
one a late tool call spoiled) to a :class:`Writer` and returns: the trajectory is built and checked
on the caller's path as before, only the write moves. :meth:`Writer.flush` (``engine.flush()``,
``engine.close()``, and interpreter exit) waits until every write handed over has been made. A
process that dies before then loses the writes still queued: the store holds each trajectory whole
or not at all (one write, one transaction), never half of one.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import weakref
from collections.abc import Callable

logger = logging.getLogger(__name__)


class Writer:
    """A queue of store writes and the thread that makes them, one at a time, in order."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._pending = 0
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None
        _WRITERS.add(self)

    def submit(self, write: Callable[[], None]) -> None:
        """Run ``write()`` on the writer's thread after the writes submitted before it.

        ``write`` handles its own failures; anything it raises is logged.
        """
        with self._changed:
            self._pending += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="muscle-mem-writer", daemon=True)
                self._thread.start()
        self._queue.put(write)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every write submitted so far is made; False if ``timeout`` seconds passed first."""
        with self._changed:
            return self._changed.wait_for(lambda: self._pending == 0, timeout)

    @property
    def pending(self) -> int:
        """Writes submitted and not made yet."""
        return self._pending

    def _run(self) -> None:
        while True:
            write = self._queue.get()
            try:
                write()
            except Exception:
                logger.exception("a background store write failed")
            finally:
                with self._changed:
                    self._pending -= 1
                    self._changed.notify_all()


_WRITERS: weakref.WeakSet[Writer] = weakref.WeakSet()
"""Every live writer, flushed at interpreter exit (its thread is a daemon: it would be cut off)."""


@atexit.register
def _flush_at_exit() -> None:
    for writer in list(_WRITERS):
        writer.flush()
