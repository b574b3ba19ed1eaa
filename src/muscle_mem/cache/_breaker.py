"""The circuit breaker between an engine and its store: while the store is unavailable, calls skip it.

The first operation that finds the store unavailable (:class:`StoreUnavailable`: refused, timed out,
connection lost) opens the breaker; from then on every store operation of the engine fails at once,
and the agent serves each call uncached. At most every ``retry`` seconds, a call that finds the
breaker open starts a probe in a thread of its own (the call does not wait for it); the first probe
that reads the store closes the breaker. Each outage is logged once when it begins and once when it
ends, and counted in ``Metrics.store_outages``; one with the cause of the last outage logged, within
:data:`RELOGGED_AFTER` seconds, is logged at DEBUG only (a full disk opens the breaker at each write
that fails, and the reads of the probe close it).
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
import weakref
from collections.abc import Callable
from types import TracebackType

from muscle_mem.metrics import Metrics
from muscle_mem.stores import CoreStore, StoreUnavailable, budget

logger = logging.getLogger(__name__)

RELOGGED_AFTER = 600.0
"""Seconds after which an outage with the same cause as the last one logged is logged again."""


class Breaker:
    """Whether an engine's store is available, and the probe that finds out when it is back.

    Used as a context manager around store operations: entering raises :class:`StoreUnavailable` at
    once while the breaker is open; a :class:`StoreUnavailable` raised inside opens it. The hit path
    does the same inline (``if breaker.cause is not None: breaker.refuse()``, then :meth:`trip`).
    """

    def __init__(self, store: CoreStore, metrics: Metrics, *, timeout: float, retry: float) -> None:
        self.store = store
        self.timeout = float(timeout)
        """The most seconds one engine call waits for the store, in total."""
        self.retry = float(retry)
        """The fewest seconds between two probes of an unavailable store."""
        self._metrics = metrics
        self.before_resuming: list[Callable[[], None]] = []
        """Run by a probe that read the store, before the breaker closes; one that raises keeps it open."""
        self.cause: StoreUnavailable | None = None
        """Why the store is unavailable; None while it is available (read it, never set it)."""
        self._since = 0.0
        self._logged: tuple[str, float] | None = None
        """The cause of the last outage logged at WARNING, and when (``time.monotonic()``)."""
        self._quiet = False
        """Whether the outage in progress repeats the last one logged (its end is not logged either)."""
        self._next_probe = 0.0
        self._probe: threading.Thread | None = None
        self._lock = threading.Lock()
        _BREAKERS.add(self)

    def start(self) -> None:
        """Read the store once, now: an unavailable store opens the breaker, another error is raised."""
        token = budget.start(self.timeout)
        try:
            self.store.revision()
        except StoreUnavailable as exc:
            self.trip(exc)
        finally:
            budget.stop(token)

    @property
    def available(self) -> bool:
        """False from the start of an outage until a probe reads the store again."""
        return self.cause is None

    def __enter__(self) -> None:
        if self.cause is not None:
            self.refuse()

    def refuse(self) -> None:
        """Raise :class:`StoreUnavailable` for the outage in progress (starting a probe if one is due)."""
        cause = self.cause
        self._maybe_probe()
        raise StoreUnavailable(str(cause))

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(exc, StoreUnavailable):
            self.trip(exc)

    def trip(self, cause: StoreUnavailable) -> None:
        """Open the breaker (logged and counted once per outage)."""
        with self._lock:
            if self.cause is not None:
                return
            self.cause = cause
            self._since = time.monotonic()
            self._next_probe = self._since + self.retry
            logged = self._logged
            self._quiet = (
                logged is not None and logged[0] == str(cause) and self._since - logged[1] < RELOGGED_AFTER
            )
            if not self._quiet:
                self._logged = (str(cause), self._since)
        self._metrics.add("store_outages")
        logger.log(
            logging.DEBUG if self._quiet else logging.WARNING,
            "the store is unavailable (%s): the agent serves every call, uncached, until it is back "
            "(tried again every %g s)",
            cause,
            self.retry,
        )

    def _maybe_probe(self) -> None:
        """Start a probe if the last one has ended and ``retry`` seconds have passed since it started."""
        now = time.monotonic()
        if now < self._next_probe:
            return
        with self._lock:
            if now < self._next_probe or (self._probe is not None and self._probe.is_alive()):
                return
            self._next_probe = now + self.retry
            self._probe = threading.Thread(target=self.probe, name="muscle_mem store probe", daemon=True)
            self._probe.start()

    def probe(self) -> bool:
        """Read the store's revision within ``timeout``; close the breaker if that worked."""
        token = budget.start(self.timeout)
        try:
            self.store.revision()
            for catch_up in self.before_resuming:
                catch_up()
        except Exception as exc:
            logger.debug("the store is still unavailable: %s", exc)
            return False
        finally:
            budget.stop(token)
        with self._lock:
            if self.cause is None:
                return True
            self.cause = None
            down = time.monotonic() - self._since
        level = logging.DEBUG if self._quiet else logging.WARNING
        logger.log(level, "the store is back after %.1f s: calls use the cache again", down)
        return True

    def _after_fork(self) -> None:
        """In a forked child: a lock of its own (the parent's may have been held by its probe)."""
        self._lock = threading.Lock()
        self._probe = None


def check_seconds(name: str, value: object) -> None:
    """Raise ValueError unless ``value`` is a positive, finite number of seconds."""
    if isinstance(value, bool) or not (isinstance(value, int | float) and 0 < value < math.inf):
        raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")


_BREAKERS: weakref.WeakSet[Breaker] = weakref.WeakSet()


def _reset_after_fork() -> None:
    for breaker in list(_BREAKERS):
        breaker._after_fork()


os.register_at_fork(after_in_child=_reset_after_fork)
