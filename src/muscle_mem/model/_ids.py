"""Trajectory ids: random (UUID version 4), their random bytes read for many ids at once."""

from __future__ import annotations

import os
import threading

_BYTES = 16
_BATCH = 256
"""Ids made per read of the operating system's random source.

Each read is a system call that lets the process's other threads take the interpreter: one per id
made a miss's caller wait, at random, for the background writer's work.
"""

_pool = bytearray()
_lock = threading.Lock()


def new_id() -> str:
    """A new trajectory id: the 32 hex digits of a random (version 4) UUID, as ``uuid.uuid4().hex`` gives them.

    The bytes come from :func:`os.urandom`, as ``uuid.uuid4``'s do, read :data:`_BATCH` ids at a time.
    """
    with _lock:
        if not _pool:
            _pool[:] = os.urandom(_BYTES * _BATCH)
        raw = _pool[-_BYTES:]
        del _pool[-_BYTES:]
    raw[6] = raw[6] & 0x0F | 0x40  # version 4
    raw[8] = raw[8] & 0x3F | 0x80  # the RFC 4122 variant
    return raw.hex()


def _forget_pool() -> None:
    """Drop the random bytes a forked child inherited: its parent makes its ids from them too."""
    _pool.clear()


os.register_at_fork(after_in_child=_forget_pool)
