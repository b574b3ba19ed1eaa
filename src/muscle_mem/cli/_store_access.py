"""What the cache-inspecting commands share: opening the store, finding trajectories by id, formatting."""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from urllib.parse import urlsplit, urlunsplit

from muscle_mem.cli.common import STORE_ENV, UsageError, store_url
from muscle_mem.cli.untrusted import finite
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.record._task_templates import template_run_id
from muscle_mem.stores import NoStore, Store, open_store

MIN_PREFIX = 4
"""The fewest characters of an id that may name a trajectory."""


@contextmanager
def opened(args: argparse.Namespace, *, create: bool = False) -> Iterator[Store]:
    """The store a command works on, closed afterwards.

    A store that does not exist (a SQLite file, a PostgreSQL schema) is an error unless ``create``:
    reading commands never leave an empty cache behind because of a typo in ``--store`` (one line,
    exit status 2, as for a PostgreSQL database that does not exist).
    """
    url = store_url(args)
    try:
        store = open_store(url, create=create)
    except NoStore as exc:
        raise UsageError(
            f"{exc}: run `muscle-mem demo`, or name one with --store URL or ${STORE_ENV}"
        ) from None
    try:
        yield store
    finally:
        store.close()


def display_url(url: str) -> str:
    """A store URL safe to print: any password is masked."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}{port}"))


def resolve_id(store: Store, ref: str) -> str:
    """The full id that ``ref`` names: an id, or a unique prefix of at least :data:`MIN_PREFIX` characters."""
    if store.usage(ref) is not None:
        return ref
    if len(ref) < MIN_PREFIX:
        raise UsageError(f"no trajectory {ref!r} (an id prefix needs at least {MIN_PREFIX} characters)")
    matches = [s.id for s in store.summaries() if isinstance(s.id, str) and s.id.startswith(ref)]
    if not matches:
        raise UsageError(f"no trajectory {ref!r} in this store (see `muscle-mem ls`)")
    if len(matches) == 2 and template_run_id(min(matches, key=len)) == max(matches, key=len):
        return min(matches, key=len)  # a run and its template copy: the run
    if len(matches) > 1:
        raise UsageError(f"{ref!r} is ambiguous: {len(matches)} trajectory ids start with it")
    return matches[0]


def load(store: Store, ref: str) -> Trajectory:
    """The trajectory ``ref`` names (see :func:`resolve_id`)."""
    tid = resolve_id(store, ref)
    trajectory = store.get(tid)
    if trajectory is None:
        raise UsageError(f"trajectory {tid} is stored but cannot be decoded (see the warning above)")
    return trajectory


_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def since_arg(text: str) -> float:
    """``--since`` values: a duration back from now (``90m``, ``24h``, ``7d``, ``2w``); returns a time."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (examples: 30m, 24h, 7d, 2w)")
    return time.time() - float(match[1]) * _UNIT_SECONDS[match[2]]


def short_id(tid: str) -> str:
    return tid[:12]


def clip(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters (an ellipsis marks a cut)."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


UNKNOWN = "?"
"""What a figure that is not a finite number (read from a store) is shown as."""


def seconds(value: float) -> str:
    """A duration for people: ``2.7 ms``, ``0.35 s``, ``12.3 s``, ``4 min 12 s``, ``2 h 05 min``."""
    if not finite(value):
        return UNKNOWN
    if 0 < value < 0.001:
        return f"{value * 1000:.2f} ms"
    if 0 < value < 0.1:
        return f"{value * 1000:.1f} ms"
    if value < 1:
        return f"{value:.2f} s"
    if value < 60:
        return f"{value:.1f} s"
    if value < 3600:
        return f"{int(value // 60)} min {int(value % 60):02d} s"
    return f"{int(value // 3600)} h {int(value % 3600 // 60):02d} min"


def ago(when: float, now: float | None = None) -> str:
    """How long ago a time was: ``5 s ago``, ``3 min ago``, ``2 h ago``, ``4 d ago``."""
    if not finite(when):
        return UNKNOWN
    delta = max(0.0, (time.time() if now is None else now) - when)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if delta >= size:
            return f"{int(delta // size)} {unit} ago"
    return f"{int(delta)} s ago"


def timestamp(when: float) -> str:
    """A local date and time, to the second."""
    if not finite(when):
        return UNKNOWN
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(when))
    except (OverflowError, OSError, ValueError):  # beyond the platform's calendar
        return UNKNOWN


def zoned_timestamp(when: float) -> str:
    """A local date and time with its UTC offset: ``2023-11-14 23:13:20+01:00``.

    For text read later or elsewhere, where a relative time would be wrong.
    """
    if not finite(when):
        return UNKNOWN
    try:
        return datetime.fromtimestamp(when).astimezone().isoformat(sep=" ", timespec="seconds")
    except (OverflowError, OSError, ValueError):  # beyond the platform's calendar
        return UNKNOWN


def count(value: float) -> str:
    """A large count for people: ``950``, ``12.3k``, ``4.5M``."""
    if not finite(value):
        return UNKNOWN
    if abs(value) >= 1e6:
        return f"{value / 1e6:.1f}M"
    if abs(value) >= 1e4:
        return f"{value / 1e3:.1f}k"
    return f"{value:,.0f}"


def size(nbytes: int) -> str:
    """A byte size: ``812 B``, ``1.2 KB``, ``3.4 MB``."""
    value = float(nbytes)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "-"
