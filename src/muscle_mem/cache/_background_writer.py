"""The process's background writer: one daemon thread that writes what engines keep behind.

Usage logs and journals register here (weakly: an engine per request leaves nothing behind); the
thread asks each, every :data:`TICK` seconds or when kicked, to write what is due, so no engine call
waits for those writes. Everything registered is flushed once more at interpreter exit. In a forked
child the thread is started anew at the next registration or kick.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import weakref
from typing import Protocol

logger = logging.getLogger(__name__)

TICK = 0.05
"""Seconds between two looks at what is due."""


class Behind(Protocol):
    """Something that keeps writes to do later."""

    def flush_due(self) -> None:
        """Write what is due now (never raises)."""

    def flush(self, *, at_exit: bool = False) -> None:
        """Write everything kept."""


_ITEMS: weakref.WeakSet[Behind] = weakref.WeakSet()
_wake = threading.Event()
_lock = threading.Lock()
_thread: threading.Thread | None = None


def register(item: Behind) -> None:
    """Have ``item`` flushed in the background and at exit (for as long as it lives)."""
    with _lock:
        _ITEMS.add(item)
    _start()


def kick() -> None:
    """Look at what is due now rather than at the next tick."""
    _start()
    _wake.set()


def _start() -> None:
    global _thread
    if _thread is not None and _thread.is_alive():
        return
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_run, name="muscle_mem writer", daemon=True)
            _thread.start()


def _run() -> None:
    while True:
        _wake.wait(TICK)
        _wake.clear()
        with _lock:
            items = list(_ITEMS)
        for item in items:
            try:
                item.flush_due()
            except Exception:
                logger.warning("a background write failed", exc_info=True)
        del items


@atexit.register
def _flush_at_exit() -> None:
    with _lock:
        items = list(_ITEMS)
    for item in items:
        try:
            item.flush(at_exit=True)
        except Exception:
            logger.debug("a write at exit failed", exc_info=True)


def _after_fork() -> None:
    global _thread, _lock, _wake
    _thread = None
    _lock = threading.Lock()
    _wake = threading.Event()


os.register_at_fork(after_in_child=_after_fork)
