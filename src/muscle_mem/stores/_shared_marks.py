"""Per-task change counters that every process opening a SQLite store shares through a mapped file.

SQLite says that *something* was committed by another connection (``PRAGMA data_version``), not what.
Each process's use statistics and each new task's recording are commits, so with many workers a
reader would read the store's changed tasks on nearly every call. Beside the database (``<file>-marks``,
as SQLite keeps ``<file>-shm``) lies a small file of counters: one per slot, a task key hashed to a
slot (clearing the store bumps them all). A writer bumps the slots of the tasks it changed *after*
its commit, under an exclusive ``flock`` of the file (and a lock of its own threads), so a reader
that sees a new count and then reads the database sees the commit. The file is mapped into memory,
so a reader's check is one 8-byte load: no statement, no system call, and the GIL is not let go
(a ``pread`` would let the background writer in, and a hit would wait for it: 10-20 µs a hit here).

What it cannot guard against, the store's ``data_version`` fallback covers (at most every
:data:`~muscle_mem.stores.sqlite.SHARED_MARKS_TRUSTED` seconds): a writer killed between its commit
and its bump, a writer that cannot open the file, a hand edit. The file holds counters only: one
written by someone hostile can cause extra reads or delay a notice until that fallback, never a
wrong read. Like SQLite's own ``-shm``, which is mapped the same way, it must not be truncated under
running processes (a read of a mapped page past the end of the file stops the process: whoever may
write these files may as well delete the database). Where the file cannot be made (no ``fcntl``, a
read-only directory, a full disk) the store goes without it. Its pages are allocated when it is
made (or opened, if an older version made it sparse), so a full disk never meets a mapped page.
"""

from __future__ import annotations

import logging
import mmap
import os
import threading
import zlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - not on POSIX
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

SLOTS = 8192
"""Task slots: two busy tasks share one with odds of one in this (a shared slot costs extra reads only)."""
_SIZE = 8 * SLOTS


def allocate(fd: int, size: int) -> None:
    """Give the first ``size`` bytes of a file their disk blocks now (zeros where none were written).

    A mapped page with no block behind it gets one when it is first written, and on a full disk
    that write stops the process (``SIGBUS``); allocated up front, a full disk is an ``OSError`` here.
    """
    if hasattr(os, "posix_fallocate"):
        os.posix_fallocate(fd, 0, size)
    else:  # pragma: no cover - macOS: write the zeros that are missing
        present = os.fstat(fd).st_size
        if present < size:
            os.pwrite(fd, bytes(size - present), present)


class SharedMarks:
    """Change counters of tasks, hashed to slots, in a file every process that opens the store reads."""

    def __init__(self, path: Path, mode: int) -> None:
        if fcntl is None:  # pragma: no cover - not on POSIX
            raise OSError("fcntl is not available here")
        self.path = path
        self._threads = threading.Lock()
        self._file = os.fdopen(os.open(path, os.O_RDWR | os.O_CREAT, mode), "r+b", buffering=0)
        self._fd = self._file.fileno()
        try:
            stat = os.fstat(self._fd)
            if stat.st_size < _SIZE or stat.st_blocks * 512 < _SIZE:
                with self._locked():
                    allocate(self._fd, _SIZE)
            self._map = mmap.mmap(self._fd, _SIZE)
        except BaseException:
            self._file.close()
            raise
        self._counts = memoryview(self._map).cast("Q")

    @classmethod
    def beside(cls, database: Path) -> SharedMarks | None:
        """The marks of the store in ``database`` (made if need be), or None if they cannot be had."""
        path = database.with_name(database.name + "-marks")
        try:
            return cls(path, os.stat(database).st_mode & 0o666)
        except (OSError, ValueError) as exc:
            log.warning("%s: no shared change marks (%s); changes are read on each commit seen", path, exc)
            return None

    def mark(self, task_key: str) -> int | None:
        """A number that moves whenever a writer bumped the task's slot; None once closed."""
        try:
            return self._counts[zlib.crc32(task_key.encode()) % SLOTS]
        except ValueError:  # closed meanwhile
            return None

    def bump(self, task_keys: Iterable[str]) -> None:
        """Tell every process that these tasks changed (call after the change was committed)."""
        self._bump({zlib.crc32(key.encode()) % SLOTS for key in task_keys})

    def bump_all(self) -> None:
        """Tell every process that every task changed (call after the change was committed)."""
        self._bump(set(range(SLOTS)))

    def _bump(self, slots: set[int]) -> None:
        try:
            with self._locked():
                counts = self._counts
                for slot in slots:
                    counts[slot] = (counts[slot] + 1) % 2**64
        except (OSError, ValueError) as exc:  # the others see the change at their fallback read
            log.warning("%s: could not bump change marks: %s", self.path, exc)

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the file against the other processes' writers, and against this process's threads."""
        with self._threads:
            fcntl.flock(self._fd, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(self._fd, fcntl.LOCK_UN)

    def close(self) -> None:
        """Unmap and close the file (the counters stay for the other processes)."""
        self._counts.release()
        self._map.close()
        self._file.close()
