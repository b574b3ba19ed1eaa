"""Counters and timings of an engine, read by the CLI and reports."""

from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field, fields

from muscle_mem.reasons import MissReason, NotStoredReason


@dataclass
class Metrics:
    """What an engine has done since it was made.

    Safe to update from several threads.
    """

    hits: int = 0
    misses: int = 0
    partial_replays: int = 0
    """Runs that replayed at least one step, then handed the task to the agent."""
    steps_replayed: int = 0
    agent_seconds: float = 0.0
    """Wall time spent in the agent."""
    saved_seconds: float = 0.0
    """Agent time avoided by hits, estimated from the recorded runs."""
    agent_tokens: int = 0
    """LLM tokens the agent reported spending (``current_run().tokens``)."""
    saved_tokens: int = 0
    """LLM tokens avoided by hits: what the replayed trajectories cost when recorded."""
    stored: int = 0
    store_errors: int = 0
    """Store operations that failed for another cause than an outage (those count in ``store_outages``)."""
    store_outages: int = 0
    """Times the store became unavailable; the calls served meanwhile count as misses and runs not stored
    of kind ``STORE_UNAVAILABLE``."""
    rejected_records: int = 0
    """Stored trajectories refused at load: not signed with a key of the engine (each counted once)."""
    evicted: int = 0
    similar_agreed: int = 0
    """Runs of a task semantic matching found similar to a stored one that made the same calls and answer."""
    similar_disagreed: int = 0
    """Runs of such a task that did not: a replay of the similar task would have been wrong for them."""
    misses_by_reason: Counter[MissReason] = field(default_factory=Counter)
    """Misses by the kind of their (first) cause."""
    not_stored_by_reason: Counter[NotStoredReason] = field(default_factory=Counter)
    """Runs of the agent that were not stored (or were removed after), by kind of cause."""
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def hit(self, steps: int, saved_seconds: float, saved_tokens: int) -> None:
        lock = self._lock
        lock.acquire()  # not ``with``: it costs a hit several times as much here
        try:
            self.hits += 1
            self.steps_replayed += steps
            self.saved_seconds += saved_seconds
            self.saved_tokens += saved_tokens
        finally:
            lock.release()

    def miss(self, steps: int, reason: MissReason | None, agent_seconds: float, tokens: int) -> None:
        with self._lock:
            self.misses += 1
            self.steps_replayed += steps
            self.agent_seconds += agent_seconds
            self.agent_tokens += tokens
            if steps:
                self.partial_replays += 1
            if reason is not None:
                self.misses_by_reason[reason] += 1

    def not_stored(self, reason: NotStoredReason) -> None:
        with self._lock:
            self.not_stored_by_reason[reason] += 1

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    @property
    def miss_reasons(self) -> Counter[str]:
        """:attr:`misses_by_reason` keyed by the kinds' values (a bounded set, not each miss's text)."""
        with self._lock:
            return Counter({kind.value: n for kind, n in self.misses_by_reason.items()})

    @property
    def hit_rate(self) -> float:
        """Hits as a share of calls, 0.0 before any call; a property: ``metrics.hit_rate``, no ``()``."""
        total = self.hits + self.misses
        return self.hits / total if total else 0.0

    def enable(self) -> None:
        """Nothing to switch on: an engine always counts (kept for code written for muscle-mem 0.1)."""

    def disable(self) -> None:
        """Nothing to switch off: counting costs a hit next to nothing (kept for muscle-mem 0.1 code)."""

    def report(self) -> str:
        """Every counter, the hit rate and the miss and not-stored reasons, as indented JSON text."""
        with self._lock:
            figures: dict[str, object] = {
                f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")
            }
            figures["misses_by_reason"] = {k.value: n for k, n in self.misses_by_reason.items()}
            figures["not_stored_by_reason"] = {k.value: n for k, n in self.not_stored_by_reason.items()}
        figures["hit_rate"] = self.hit_rate
        return json.dumps(figures, indent=4)
