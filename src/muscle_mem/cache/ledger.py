"""The ledger: per task family, what the agent spent and what the cache saved, read from the store's events.

Every worker on a store writes its events there, so the ledger is shared and survives restarts; it
covers the events the store keeps (the latest 100,000). A hit saves what the family's recorded runs
spent: the median of the runs the agent made from the start (by tokens; their input and output
tokens, requests, model and price go with it), or, with none in the events, the tokens the replayed
trajectory's run reported.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from muscle_mem.model._spend import Prices, cost
from muscle_mem.reasons import NotStoredReason
from muscle_mem.stores.base import Event

ALL = "*"
"""The family name of the ledger's total row."""


def family_of(task_key: str) -> str:
    """The family a task counts in: its task key (the one place that decides the grouping)."""
    return task_key


@dataclass(frozen=True, slots=True)
class Spent:
    """What one call spent or saved: tokens (in, out, all), requests, agent seconds and money."""

    tokens: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    requests: int = 0
    seconds: float = 0.0
    money: float = 0.0

    def __add__(self, other: Spent) -> Spent:
        return Spent(
            self.tokens + other.tokens,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.requests + other.requests,
            self.seconds + other.seconds,
            self.money + other.money,
        )


@dataclass(frozen=True, slots=True)
class Family:
    """One family's figures in the ledger (or, named ``*``, the total of all)."""

    family: str
    task: str
    """The task text of the family's latest call (params shown by name); empty in the total."""
    calls: int
    hits: int
    partial_replays: int
    misses: int
    misses_by_reason: dict[str, int]
    spent: Spent
    saved: Spent
    unpriced: tuple[str, ...]
    """Models whose tokens were spent or saved here with no price set (they count no money)."""

    def as_dict(self) -> dict[str, Any]:
        """The figures as JSON-compatible data."""
        return dataclasses.asdict(self) | {"unpriced": list(self.unpriced)}


@dataclass(frozen=True, slots=True)
class Ledger:
    """Every family's figures, most saved first, and their total."""

    families: tuple[Family, ...]
    """Most saved first: money (when priced), then tokens, then agent time."""
    total: Family
    priced: bool
    """Whether prices were given (money figures are 0 without them)."""

    def top_savings(self, count: int) -> list[Family]:
        """The families that saved the most, those with hits only."""
        return [f for f in self.families if f.hits][:count]

    def top_misses(self, count: int) -> list[Family]:
        """The families that missed the most."""
        ranked = sorted(self.families, key=lambda f: f.misses, reverse=True)
        return [f for f in ranked if f.misses][:count]

    def as_dict(self) -> dict[str, Any]:
        """The ledger as JSON-compatible data."""
        return {
            "priced": self.priced,
            "total": self.total.as_dict(),
            "families": [f.as_dict() for f in self.families],
        }


def spent_by(event: Event, prices: Prices) -> tuple[Spent, set[str]]:
    """What a miss's agent spent, and the models it used that have no price."""
    money, unpriced = cost(event.usage, prices)
    spent = Spent(
        event.tokens_spent,
        event.input_tokens,
        event.output_tokens,
        event.requests,
        event.agent_seconds,
        money,
    )
    return spent, unpriced


def savings(events: Sequence[Event], prices: Prices) -> list[tuple[Spent, set[str]]]:
    """What each event saved (nothing for a miss), in order, and the unpriced models in it."""
    typical = _typical_runs(events, prices)
    saved: list[tuple[Spent, set[str]]] = []
    for event in events:
        if not event.hit:
            saved.append((Spent(), set()))
            continue
        run = typical.get(family_of(event.task_key))
        if run is None:
            saved.append((Spent(tokens=event.tokens_saved, seconds=event.saved_seconds), set()))
        else:
            spent, unpriced = run
            saved.append((dataclasses.replace(spent, seconds=event.saved_seconds), unpriced))
    return saved


def _typical_runs(events: Iterable[Event], prices: Prices) -> dict[str, tuple[Spent, set[str]]]:
    """Per family, the median of its runs the agent made from the start (the lower one of an even count)."""
    runs: dict[str, list[Event]] = {}
    for event in events:
        if _full_run(event):
            runs.setdefault(family_of(event.task_key), []).append(event)
    typical = {}
    for family, found in runs.items():
        found.sort(key=lambda e: e.tokens_spent)
        typical[family] = spent_by(found[(len(found) - 1) // 2], prices)
    return typical


def _full_run(event: Event) -> bool:
    """Whether an event is a run the agent made from the start to its end (what a hit avoids)."""
    return (
        not event.hit
        and event.steps_replayed == 0
        and event.not_stored_reason != NotStoredReason.AGENT_RAISED.value
    )


def ledger(events: Sequence[Event], prices: Prices, since: float = 0.0) -> Ledger:
    """The ledger of the events at or after ``since`` (the medians of a hit's savings use them all)."""
    saved = savings(events, prices)
    rows: dict[str, list[tuple[Event, Spent, Spent, set[str]]]] = {}
    for event, (save, unpriced_saved) in zip(events, saved, strict=True):
        if event.at < since:
            continue
        spent, unpriced = spent_by(event, prices) if not event.hit else (Spent(), set())
        rows.setdefault(family_of(event.task_key), []).append((event, spent, save, unpriced | unpriced_saved))
    families = tuple(_family(name, found, found[-1][0].task) for name, found in rows.items())
    everything = [row for found in rows.values() for row in found]
    return Ledger(
        tuple(sorted(families, key=_savings, reverse=True)), _family(ALL, everything, ""), bool(prices)
    )


def _savings(family: Family) -> tuple[float, int, float]:
    """How a family ranks by what it saved: money (when priced), then tokens, then agent time."""
    return family.saved.money, family.saved.tokens, family.saved.seconds


def _family(name: str, rows: Sequence[tuple[Event, Spent, Spent, set[str]]], task: str) -> Family:
    """A family's figures from its rows: each event, what it spent and saved, its unpriced models."""
    hits = sum(event.hit for event, *_ in rows)
    misses = [event for event, *_ in rows if not event.hit]
    reasons = Counter(e.miss_reason or "unclassified" for e in misses)
    spent, saved = Spent(), Spent()
    unpriced: set[str] = set()
    for _event, spend, save, models in rows:
        spent += spend
        saved += save
        unpriced |= models
    return Family(
        family=name,
        task=task,
        calls=len(rows),
        hits=hits,
        partial_replays=sum(1 for e in misses if e.steps_replayed),
        misses=len(misses),
        misses_by_reason=dict(reasons.most_common()),
        spent=spent,
        saved=saved,
        unpriced=tuple(sorted(unpriced)),
    )
