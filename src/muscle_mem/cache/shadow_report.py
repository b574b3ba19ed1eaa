"""Shadow figures per task family, folded from the store's events (every worker's, across restarts).

A shadow run's event says how a replay would have compared with the agent (agreed, disagreed,
missed), where a disagreement parted, and what a replay would have saved. :class:`ShadowBook` keeps
the fold up to date in a process for ``Engine(mode="proven")``, reading the store's new events at
most once every ``sync_interval`` seconds.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from muscle_mem.cache.ledger import ALL, family_of
from muscle_mem.model.verdict import Verdict
from muscle_mem.stores.base import CoreStore, Event, EventLog

logger = logging.getLogger(__name__)

OVERLAP_SECONDS = 60.0
"""How far back each read reaches before the last one (events are written in batches, behind)."""


@dataclass(frozen=True, slots=True)
class Parting:
    """Where a replay would first have parted from the agent: the step, the replay's call, the agent's."""

    step: int | None
    expected: str
    actual: str
    at: float


@dataclass(frozen=True, slots=True)
class FamilyShadow:
    """One family's shadow figures (or, named ``*``, the total of all)."""

    family: str
    task: str
    """The task text of the family's latest shadow run; empty in the total."""
    runs: int
    agreements: int
    disagreements: int
    misses: int
    """Runs a replay would have handed to the agent (nothing stored yet, a check that failed…)."""
    streak: int
    """Agreements since the family's last disagreement (what ``mode="proven"`` counts)."""
    first_disagreement: Parting | None
    tokens_saved: int
    """The tokens the agent spent in the runs a replay agreed with (a replay would have saved them)."""
    seconds_saved: float
    """The agent's seconds outside its tool calls in those runs."""

    @property
    def agreement_rate(self) -> float:
        """Agreements per run (0.0 with no run)."""
        return self.agreements / self.runs if self.runs else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-compatible data."""
        return dataclasses.asdict(self) | {"agreement_rate": self.agreement_rate}


@dataclass(frozen=True, slots=True)
class ShadowReport:
    """Every family's shadow figures, most runs first, and their total."""

    families: tuple[FamilyShadow, ...]
    total: FamilyShadow

    def family(self, name: str) -> FamilyShadow | None:
        """One family's figures (a task key), or None if it had no shadow run."""
        return next((f for f in self.families if f.family == name), None)

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-compatible data."""
        return {"total": self.total.as_dict(), "families": [f.as_dict() for f in self.families]}


@dataclass(slots=True)
class _Tally:
    """One family's shadow runs, folded in any order (events arrive late from other workers)."""

    task: str = ""
    latest: float = -math.inf
    runs: int = 0
    agreements: int = 0
    disagreements: int = 0
    misses: int = 0
    last_disagreement: float = -math.inf
    agreed_at: list[float] = field(default_factory=list)
    """When each agreement since the last disagreement happened."""
    first: Parting | None = None
    tokens: int = 0
    seconds: float = 0.0

    def add(self, event: Event) -> None:
        self.runs += 1
        if event.at >= self.latest:
            self.latest, self.task = event.at, event.task
        if event.shadow == Verdict.AGREED.value:
            self.agreements += 1
            self.tokens += event.tokens_spent
            self.seconds += event.shadow_saved_seconds
            if event.at > self.last_disagreement:
                self.agreed_at.append(event.at)
        elif event.shadow == Verdict.DISAGREED.value:
            self.disagreements += 1
            if event.at > self.last_disagreement:
                self.last_disagreement = event.at
                self.agreed_at = [at for at in self.agreed_at if at > event.at]
            if self.first is None or event.at < self.first.at:
                parting = Parting(
                    event.shadow_step, event.shadow_expected or "", event.shadow_actual or "", event.at
                )
                self.first = parting
        else:
            self.misses += 1

    def figures(self, family: str) -> FamilyShadow:
        return FamilyShadow(
            family=family,
            task=self.task,
            runs=self.runs,
            agreements=self.agreements,
            disagreements=self.disagreements,
            misses=self.misses,
            streak=len(self.agreed_at),
            first_disagreement=self.first,
            tokens_saved=self.tokens,
            seconds_saved=self.seconds,
        )


def shadow_report(events: Iterable[Event]) -> ShadowReport:
    """The shadow figures of every family with shadow runs in ``events``."""
    tallies: dict[str, _Tally] = {}
    for event in events:
        if event.shadow is not None:
            tallies.setdefault(family_of(event.task_key), _Tally()).add(event)
    families = sorted((t.figures(name) for name, t in tallies.items()), key=lambda f: (-f.runs, f.family))
    return ShadowReport(tuple(families), _total(families))


def _total(families: Iterable[FamilyShadow]) -> FamilyShadow:
    found = list(families)
    parted = [f.first_disagreement for f in found if f.first_disagreement is not None]
    return FamilyShadow(
        family=ALL,
        task="",
        runs=sum(f.runs for f in found),
        agreements=sum(f.agreements for f in found),
        disagreements=sum(f.disagreements for f in found),
        misses=sum(f.misses for f in found),
        streak=sum(f.streak for f in found),
        first_disagreement=min(parted, key=lambda p: p.at) if parted else None,
        tokens_saved=sum(f.tokens_saved for f in found),
        seconds_saved=sum(f.seconds_saved for f in found),
    )


class ShadowBook:
    """Each family's agreements since its last disagreement, kept up to date from the store's events.

    The events this process makes are noted at once (:meth:`note`); every worker's are read from
    the store at most once every ``interval`` seconds (0: at every call), each event counted once.
    """

    def __init__(self, store: CoreStore, interval: float) -> None:
        self._store = store if isinstance(store, EventLog) else None
        self._interval = interval
        self._tallies: dict[str, _Tally] = {}
        self._seen: dict[tuple[float, str, str | None, float], float] = {}
        """The events counted lately (those a read may bring again), with their time."""
        self._read_at = -math.inf
        """The time (``time.time()``) the last read of the store began; -inf before the first."""
        self._next = 0.0
        """When (``time.monotonic()``) the store is read next."""
        self._lock = threading.Lock()

    def note(self, event: Event) -> None:
        """Count an event of this process (its shadow verdict), once."""
        with self._lock:
            self._add(event)

    def streak(self, task_key: str) -> int:
        """The agreements of the task's family since its last disagreement (the store read if due)."""
        if self._store is not None and time.monotonic() >= self._next:
            self._refresh(self._store)
        tally = self._tallies.get(family_of(task_key))
        return len(tally.agreed_at) if tally is not None else 0

    def _refresh(self, store: EventLog) -> None:
        self._next = time.monotonic() + self._interval
        started = time.time()
        since = self._read_at - OVERLAP_SECONDS if self._read_at > -math.inf else 0.0
        try:
            events = store.events(since)
        except Exception as exc:  # an outage: the book stays as it is until the next read
            logger.debug("could not read the shadow events: %r", exc)
            return
        with self._lock:
            for event in events:
                if event.shadow is not None:
                    self._add(event)
            self._read_at = started
            horizon = started - 2 * OVERLAP_SECONDS
            self._seen = {key: at for key, at in self._seen.items() if at >= horizon}

    def _add(self, event: Event) -> None:
        key = (event.at, event.task_key, event.shadow, event.elapsed)
        if key in self._seen:
            return
        self._seen[key] = event.at
        self._tallies.setdefault(family_of(event.task_key), _Tally()).add(event)
