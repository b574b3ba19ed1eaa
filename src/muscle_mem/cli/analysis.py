"""Figures from the engine's events, shared by ``stats`` and ``report``."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from muscle_mem.stores.base import Event

UNCLASSIFIED = "unclassified"
"""The kind of a miss recorded before events kept one."""


@dataclass(frozen=True, slots=True)
class Totals:
    """What a run of events adds up to."""

    calls: int
    hits: int
    misses: int
    partial: int
    """Misses that replayed some steps before the agent took over."""
    steps_replayed: int
    saved_seconds: float
    agent_seconds: float
    tokens_saved: int
    tokens_spent: int
    first: float | None
    last: float | None

    @property
    def hit_rate(self) -> float:
        return self.hits / self.calls if self.calls else 0.0


def totals(events: Sequence[Event]) -> Totals:
    hits = [e for e in events if e.hit]
    misses = [e for e in events if not e.hit]
    return Totals(
        calls=len(events),
        hits=len(hits),
        misses=len(misses),
        partial=sum(1 for e in misses if e.steps_replayed),
        steps_replayed=sum(e.steps_replayed for e in events),
        saved_seconds=sum(e.saved_seconds for e in events),
        agent_seconds=sum(e.agent_seconds for e in events),
        tokens_saved=sum(e.tokens_saved for e in events),
        tokens_spent=sum(e.tokens_spent for e in events),
        first=min((e.at for e in events), default=None),
        last=max((e.at for e in events), default=None),
    )


def miss_reasons(events: Sequence[Event]) -> Counter[str]:
    """Misses by the kind of their cause, a :class:`~muscle_mem.reasons.MissReason` value.

    Events written before kinds were kept count as ``unclassified``.
    """
    return Counter(e.miss_reason or UNCLASSIFIED for e in events if not e.hit)


def not_stored_reasons(events: Sequence[Event]) -> Counter[str]:
    """Runs of the agent that were not stored, by the kind of their cause.

    The kind is a :class:`~muscle_mem.reasons.NotStoredReason` value.
    """
    return Counter(e.not_stored_reason for e in events if not e.hit and e.not_stored_reason)


def miss_tools(events: Sequence[Event]) -> Counter[str]:
    """Misses by the tool to blame, for the misses that have one."""
    return Counter(e.tool for e in events if not e.hit and e.tool)


@dataclass(frozen=True, slots=True)
class Bucket:
    start: float
    end: float
    calls: int
    hits: int

    @property
    def hit_rate(self) -> float:
        return self.hits / self.calls if self.calls else 0.0


def buckets(events: Sequence[Event], count: int = 40) -> list[Bucket]:
    """Events (oldest first) in up to ``count`` equal spans of time; spans without events are left out."""
    if not events:
        return []
    first, last = events[0].at, events[-1].at
    width = (last - first) / count if last > first else 1.0
    calls = [0] * count
    hits = [0] * count
    for event in events:
        i = min(count - 1, max(0, math.floor((event.at - first) / width)))
        calls[i] += 1
        hits[i] += event.hit
    return [
        Bucket(first + i * width, first + (i + 1) * width, calls[i], hits[i])
        for i in range(count)
        if calls[i]
    ]


def cumulative(
    events: Sequence[Event], values: Sequence[float], points: int = 400
) -> list[tuple[float, float]]:
    """The running sum of ``values`` as (time, total), at most ``points`` of them.

    ``values`` holds one value per event, oldest first.
    """
    series: list[tuple[float, float]] = []
    total = 0.0
    step = max(1, math.ceil(len(events) / points))
    for i, (event, value) in enumerate(zip(events, values, strict=True)):
        total += value
        if i % step == step - 1 or i == len(events) - 1:
            series.append((event.at, total))
    return series


def running_hit_rate(events: Sequence[Event], points: int = 400) -> list[tuple[float, float]]:
    """The hit rate of all calls so far, after each event (oldest first), at most ``points`` of them."""
    series: list[tuple[float, float]] = []
    hits = 0
    step = max(1, math.ceil(len(events) / points))
    for i, event in enumerate(events):
        hits += event.hit
        if i % step == step - 1 or i == len(events) - 1:
            series.append((event.at, hits / (i + 1)))
    return series
