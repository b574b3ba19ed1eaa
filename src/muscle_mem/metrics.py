"""Counters and timings of an engine, read by the CLI and reports."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Metrics:
    """What an engine has done since it was made. Safe to update from several threads."""

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
    evicted: int = 0
    miss_reasons: Counter[str] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def hit(self, steps: int, saved_seconds: float, saved_tokens: int) -> None:
        with self._lock:
            self.hits += 1
            self.steps_replayed += steps
            self.saved_seconds += saved_seconds
            self.saved_tokens += saved_tokens

    def miss(self, steps: int, reason: str | None, agent_seconds: float, tokens: int) -> None:
        with self._lock:
            self.misses += 1
            self.steps_replayed += steps
            self.agent_seconds += agent_seconds
            self.agent_tokens += tokens
            if steps:
                self.partial_replays += 1
            if reason:
                self.miss_reasons[reason] += 1

    def add(self, name: str, amount: int = 1) -> None:
        with self._lock:
            setattr(self, name, getattr(self, name) + amount)

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0
