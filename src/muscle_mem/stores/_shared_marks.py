"""Per-task change counters that every process opening a SQLite store shares through a mapped file.

SQLite says that *something* was committed by another connection (``PRAGMA data_version``), not what.
Each process's use statistics and each new task's recording are commits, so with many workers a
reader would read the store's changed tasks on nearly every call. Beside the database (``<file>-marks``,
as SQLite keeps ``<file>-shm``) lies a small file of counters: one per slot, a task key hashed to a
slot (clearing the store bumps them all). A writer bumps the slots of the tasks it changed *after* its
commit, under an exclusive ``flock`` of the file (and a lock of its own threads), so a reader that sees a new count and then
reads the database sees the commit. A reader's check is one 8-byte ``pread`` (the page cache
answers it: no statement, no lock). The file is read, not mapped into memory: one truncated by
someone else would make a mapped read kill the process (``SIGBUS``); a short read only makes the
store fall back to ``data_version``.

What it cannot guard against, the store's ``data_version`` fallback covers (at most every
:data:`~muscle_mem.stores.sqlite.SHARED_MARKS_TRUSTED` seconds): a writer killed between its commit
and its bump, a writer that cannot open the file, a hand edit. The file holds counters only: one
written by someone hostile can cause extra reads or delay a notice until that fallback, never a
wrong read. Where the file cannot be made (no ``fcntl``, a read-only directory) the store goes
without it.
"""

from __future__ import annotations

import logging
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
            if os.fstat(self._fd).st_size < _SIZE:
                with self._locked():
                    if os.fstat(self._fd).st_size < _SIZE:
                        os.ftruncate(self._fd, _SIZE)  # zeros: every count starts at 0
        except BaseException:
            self._file.close()
            raise

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
        """A number that moves whenever a writer bumped the task's slot; None if it cannot be read."""
        try:
            raw = os.pread(self._fd, 8, _offset(task_key))
        except (OSError, ValueError):  # closed meanwhile, or the file gone bad
            return None
        return int.from_bytes(raw, "little") if len(raw) == 8 else None

    def bump(self, task_keys: Iterable[str]) -> None:
        """Tell every process that these tasks changed (call after the change was committed)."""
        offsets = sorted({_offset(key) for key in task_keys})
        try:
            with self._locked():
                for offset in offsets:
                    raw = os.pread(self._fd, 8, offset).ljust(8, b"\0")
                    count = (int.from_bytes(raw, "little") + 1) % 2**64
                    os.pwrite(self._fd, count.to_bytes(8, "little"), offset)
        except (OSError, ValueError) as exc:  # the others see the change at their fallback read
            log.warning("%s: could not bump change marks: %s", self.path, exc)

    def bump_all(self) -> None:
        """Tell every process that every task changed (call after the change was committed)."""
        try:
            with self._locked():
                raw = os.pread(self._fd, _SIZE, 0).ljust(_SIZE, b"\0")
                counts = [(int.from_bytes(raw[i : i + 8], "little") + 1) % 2**64 for i in range(0, _SIZE, 8)]
                os.pwrite(self._fd, b"".join(c.to_bytes(8, "little") for c in counts), 0)
        except (OSError, ValueError) as exc:
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
        """Close the file (the counters stay for the other processes)."""
        self._file.close()


def _offset(task_key: str) -> int:
    return 8 * (zlib.crc32(task_key.encode()) % SLOTS)
