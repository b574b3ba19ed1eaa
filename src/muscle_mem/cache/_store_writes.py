"""Store writes made behind the caller, in the order they were handed over.

With ``Engine(write_behind=True)`` a miss hands the store write of its trajectory (and the removal of
one a late tool call spoiled) to a :class:`Writer` and returns: the trajectory is built and checked
on the caller's path as before, only the write moves. The process's background writer
(:mod:`muscle_mem.cache._background_writer`) makes the writes as soon as it is woken; :meth:`Writer.flush`
(``engine.flush()``, ``engine.close()``, and interpreter exit) makes those still queued on the
caller's thread, after any write in progress. A process that dies before then loses the writes still
queued: the store holds each trajectory whole or not at all (one write, one transaction), never half
of one.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

from muscle_mem.cache import _background_writer as writeback

logger = logging.getLogger(__name__)


class Writer:
    """A queue of store writes, made one at a time, in order, by whichever thread drains it."""

    def __init__(self) -> None:
        self._queue: deque[Callable[[], None]] = deque()
        self._draining = threading.Lock()
        """Held while writes are made: one drainer at a time keeps them in order."""
        writeback.register(self)

    def submit(self, write: Callable[[], None]) -> None:
        """Have ``write()`` made after the writes submitted before it, on the background writer.

        ``write`` handles its own failures; anything it raises is logged.
        """
        self._queue.append(write)
        writeback.kick()

    def flush_due(self) -> None:
        """Make every queued write (the background writer's turn)."""
        self._drain()

    def flush(self, *, at_exit: bool = False) -> None:
        """Return once every write submitted so far is made (waiting for one in progress)."""
        self._drain()

    def _drain(self) -> None:
        with self._draining:
            while self._queue:
                write = self._queue.popleft()
                try:
                    write()
                except Exception:
                    logger.exception("a background store write failed")
