"""Eviction policies for the trajectory store.

A policy turns accesses into :class:`~muscle_mem.trajectory.Usage` (what the store keeps) and tells
the store how to rank victims (:class:`~muscle_mem.stores.base.Rank`). Order-invariant policies keep
their whole rank in ``Usage.priority``, so a store evicts by an index scan or heap pop (O(log n));
a :class:`TaskAwarePolicy` is also told the task key of each use;
``attention-lru`` ranks by a score that changes with time, which a store finds with the threshold
algorithm of :mod:`muscle_mem.stores.ranking` (two orders read side by side, a full scan at worst).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from muscle_mem.stores.base import Rank
from muscle_mem.trajectory import Usage

PolicyName = Literal["adaptive", "lru", "lfu", "attention-lru", "decayed"]

MIN_WEIGHT = 1e-9
"""The weight of an irrelevant use when ``semantic`` is 1 (not 0: priorities stay finite)."""

TIE_SPAN = 2.0**32
"""LFU breaks ties by recency with ``now / TIE_SPAN`` in [0, 1): valid for clocks in [0, 2**32) s."""


@runtime_checkable
class Policy(Protocol):
    """What the engine asks of an eviction policy.

    ``relevance`` is in [0, 1]: the similarity of the trajectory's task to the recent task stream.
    """

    @property
    def name(self) -> str:
        """A short name for logs and reports."""
        ...

    def admit(self, now: float, relevance: float) -> Usage:
        """The use statistics of a trajectory stored now."""
        ...

    def hit(self, usage: Usage, now: float, relevance: float, saved_seconds: float) -> Usage:
        """The use statistics after a hit (the engine passes priority and attention to ``touch``)."""
        ...

    def rank(self, now: float) -> Rank:
        """How the store orders eviction victims now (lowest first)."""
        ...


@runtime_checkable
class TaskAwarePolicy(Policy, Protocol):
    """A policy that is also told which task each use is of (the engine then calls these instead)."""

    def admit_task(self, task_key: str, now: float, relevance: float) -> Usage:
        """The use statistics of a trajectory of ``task_key`` stored now."""
        ...

    def hit_task(
        self, task_key: str, usage: Usage, now: float, relevance: float, saved_seconds: float
    ) -> Usage:
        """The use statistics after a hit on a trajectory of ``task_key``."""
        ...


def _hit(usage: Usage, now: float, saved_seconds: float, priority: float, attention: float) -> Usage:
    return Usage(
        hits=usage.hits + 1,
        last_used=now,
        saved_seconds=usage.saved_seconds + saved_seconds,
        priority=priority,
        attention=attention,
    )


def _clip(relevance: float) -> float:
    return min(1.0, max(0.0, relevance))


@dataclass(frozen=True, slots=True)
class LRU:
    """Least recently used first: the priority is the time of last use."""

    name: str = "lru"

    def admit(self, now: float, relevance: float) -> Usage:
        return Usage(last_used=now, priority=now, attention=_clip(relevance))

    def hit(self, usage: Usage, now: float, relevance: float, saved_seconds: float) -> Usage:
        return _hit(usage, now, saved_seconds, now, _clip(relevance))

    def rank(self, now: float) -> Rank:
        return Rank()


@dataclass(frozen=True, slots=True)
class LFU:
    """Least frequently used first (storing counts as one use), ties least recently used first.

    The priority is ``uses + now / 2**32``: the use count, then recency in the fraction.
    """

    name: str = "lfu"

    def admit(self, now: float, relevance: float) -> Usage:
        return Usage(last_used=now, priority=1.0 + _recency_fraction(now), attention=_clip(relevance))

    def hit(self, usage: Usage, now: float, relevance: float, saved_seconds: float) -> Usage:
        priority = usage.hits + 2.0 + _recency_fraction(now)
        return _hit(usage, now, saved_seconds, priority, _clip(relevance))

    def rank(self, now: float) -> Rank:
        return Rank()


def _recency_fraction(now: float) -> float:
    return min(max(now, 0.0) / TIE_SPAN, math.nextafter(1.0, 0.0))


@dataclass(frozen=True, slots=True)
class AttentionLRU:
    """The product document's score, ``alpha / (1 + now - last_used) + beta * attention``, lowest first.

    The attention of a trajectory is the relevance given at its last store or hit.
    """

    alpha: float = 0.4
    beta: float = 0.6
    name: str = "attention-lru"

    def __post_init__(self) -> None:
        if not (self.alpha >= 0 and self.beta >= 0):
            raise ValueError(f"alpha and beta must not be negative: alpha={self.alpha!r}, beta={self.beta!r}")

    def admit(self, now: float, relevance: float) -> Usage:
        return Usage(last_used=now, priority=now, attention=_clip(relevance))

    def hit(self, usage: Usage, now: float, relevance: float, saved_seconds: float) -> Usage:
        return _hit(usage, now, saved_seconds, now, _clip(relevance))

    def rank(self, now: float) -> Rank:
        return Rank(kind="recency_attention", alpha=self.alpha, beta=self.beta, now=now)


@dataclass(frozen=True, slots=True)
class Decayed:
    """Forward-decayed utility: each use adds a weight, and every weight halves each ``half_life`` s.

    A use at time ``t`` adds ``w * 2**(t / half_life)`` (forward decay with landmark 0): ``w`` is
    ``admit_weight`` for storing the trajectory and 1 for each hit, times ``1 - semantic + semantic *
    relevance``. Dividing every item's sum by the same ``2**(now / half_life)`` gives its decayed
    utility now, so the order never changes with time and the store ranks by the stored priority,
    the natural log of the sum (accumulated with ``logaddexp``): eviction is an index scan or a heap
    pop. The defaults measured best in ``benchmarks/bench_policies.py`` (see docs/policies.md): a
    recording counts a tenth of a reuse, so a trajectory never replayed goes first, as in S3-FIFO's
    probation queue; relevance weighting is off, since it lowered the hit ratio there.
    """

    half_life: float = 3600.0
    semantic: float = 0.0
    """How much relevance scales a use's weight: 0 ignores it, 1 makes an irrelevant use worth 0."""
    admit_weight: float = 0.1
    """The weight of storing a trajectory, relative to a hit (a recording is not yet a reuse)."""
    name: str = "decayed"

    def __post_init__(self) -> None:
        if not self.half_life > 0.0:
            raise ValueError(f"half_life must be positive, not {self.half_life!r}")
        if not 0.0 <= self.semantic <= 1.0:
            raise ValueError(f"semantic must be in [0, 1], not {self.semantic!r}")
        if not 0.0 < self.admit_weight <= 1.0:
            raise ValueError(f"admit_weight must be in (0, 1], not {self.admit_weight!r}")

    def weight(self, now: float, relevance: float) -> float:
        """The log of the forward-decayed weight one use at ``now`` adds (a use weighs at least 1e-9)."""
        w = max(MIN_WEIGHT, 1.0 - self.semantic + self.semantic * _clip(relevance))
        return now * math.log(2.0) / self.half_life + math.log(w)

    def admit(self, now: float, relevance: float) -> Usage:
        priority = self.weight(now, relevance) + math.log(self.admit_weight)
        return Usage(last_used=now, priority=priority, attention=_clip(relevance))

    def hit(self, usage: Usage, now: float, relevance: float, saved_seconds: float) -> Usage:
        priority = _logaddexp(usage.priority, self.weight(now, relevance))
        return _hit(usage, now, saved_seconds, priority, _clip(relevance))

    def rank(self, now: float) -> Rank:
        return Rank()

    def utility(self, usage: Usage, now: float) -> float:
        """The decayed utility of a trajectory at ``now`` (the sum of its uses' decayed weights)."""
        return math.exp(usage.priority - now * math.log(2.0) / self.half_life)


def _logaddexp(a: float, b: float) -> float:
    high, low = (a, b) if a >= b else (b, a)
    return high + math.log1p(math.exp(low - high))


INITIAL_HALF_LIFE = 60.0
"""The half-life (s) of :class:`Adaptive` before it has seen a hit."""

MIN_GAP = 1e-3
"""Gaps between two uses shorter than this (s) count as this long (the log of 0 is not finite)."""


@dataclass(eq=False)
class Adaptive:
    """Decayed utility whose half-life follows the traffic, a probation for new recordings, and recall.

    Priorities are in seconds: storing a trajectory gives it ``now - half_life * log2(1 /
    admit_weight)`` (a recording counts ``admit_weight`` of a replay, so a trajectory never replayed
    goes first); each hit makes it ``half_life * log2(2**(priority / half_life) + 2**(now /
    half_life))``, the forward-decayed sum of its uses written as a time (one use now: ``now``;
    two uses now: ``now + half_life``). The order never changes with time, so the store evicts by an
    index scan or a heap pop.

    The half-life is not fixed: it is ``scale`` times the geometric mean of the time between a
    trajectory's last use and its hit (a moving average over recent hits). That gap is measured on
    ``Usage.last_used``, which every worker sharing a store writes, so each process estimates the
    same quantity; a slower agent, or a larger cache, gets a longer half-life. Priorities being times,
    two half-lives (two workers, or before and after a change of pace) order uses alike.

    Recall: the last ``history`` task keys stored or hit in this process, each with its last
    priority. A task stored again while remembered (its trajectory was evicted, or it has a variant)
    counts as reused: its new priority adds a use now to the remembered one, instead of starting on
    probation. Kept in process and bounded; a worker that never saw a task treats it as new.
    """

    history: int = 3_000
    """Task keys remembered (the engine makes it three times the capacity, when there is one)."""
    admit_weight: float = 0.1
    """The weight of storing a trajectory, relative to a hit (a recording is not yet a reuse)."""
    scale: float = 4.0
    """The half-life in mean gaps between uses (geometric mean over recent hits)."""
    smoothing: float = 0.02
    """The weight of each new gap in the moving average of log gaps."""
    name: str = "adaptive"
    _log_gap: float | None = field(default=None, init=False, repr=False)
    _recent: OrderedDict[str, float] = field(default_factory=OrderedDict, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.history, bool) or not isinstance(self.history, int) or self.history < 0:
            raise ValueError(f"history must be a whole number of task keys, not {self.history!r}")
        if not 0.0 < self.admit_weight <= 1.0:
            raise ValueError(f"admit_weight must be in (0, 1], not {self.admit_weight!r}")
        if not self.scale > 0.0:
            raise ValueError(f"scale must be positive, not {self.scale!r}")
        if not 0.0 < self.smoothing <= 1.0:
            raise ValueError(f"smoothing must be in (0, 1], not {self.smoothing!r}")

    @property
    def half_life(self) -> float:
        """The current half-life in seconds."""
        log_gap = self._log_gap
        return INITIAL_HALF_LIFE if log_gap is None else self.scale * math.exp(log_gap)

    def admit(self, now: float, relevance: float) -> Usage:
        priority = now - self.half_life * math.log2(1.0 / self.admit_weight)
        return Usage(last_used=now, priority=priority, attention=_clip(relevance))

    def admit_task(self, task_key: str, now: float, relevance: float) -> Usage:
        usage = self.admit(now, relevance)
        with self._lock:
            before = self._recent.pop(task_key, None)
            if before is not None:
                usage.priority = _soft_max(before, now, self.half_life)
            self._remember(task_key, usage.priority)
        return usage

    def hit(self, usage: Usage, now: float, relevance: float, saved_seconds: float) -> Usage:
        gap = math.log(max(now - usage.last_used, MIN_GAP))
        with self._lock:
            log_gap = self._log_gap
            self._log_gap = gap if log_gap is None else log_gap + self.smoothing * (gap - log_gap)
        priority = _soft_max(usage.priority, now, self.half_life)
        return _hit(usage, now, saved_seconds, priority, _clip(relevance))

    def hit_task(
        self, task_key: str, usage: Usage, now: float, relevance: float, saved_seconds: float
    ) -> Usage:
        updated = self.hit(usage, now, relevance, saved_seconds)
        with self._lock:
            self._recent.pop(task_key, None)
            self._remember(task_key, updated.priority)
        return updated

    def rank(self, now: float) -> Rank:
        return Rank()

    def _remember(self, task_key: str, priority: float) -> None:
        """Remember a task's last priority, forgetting the least recently used past ``history`` (lock held)."""
        if self.history:
            self._recent[task_key] = priority
            if len(self._recent) > self.history:
                self._recent.popitem(last=False)


def _soft_max(a: float, b: float, half_life: float) -> float:
    """``half_life * log2(2**(a / half_life) + 2**(b / half_life))``, without overflow."""
    high, low = (a, b) if a >= b else (b, a)
    return high + half_life * math.log2(1.0 + 2.0 ** ((low - high) / half_life))


_FACTORIES = {"adaptive": Adaptive, "lru": LRU, "lfu": LFU, "attention-lru": AttentionLRU, "decayed": Decayed}

HISTORY_PER_CAPACITY = 3
"""Task keys :class:`Adaptive` remembers per trajectory of capacity (measured in docs/policies.md)."""


def make_policy(policy: str | Policy, capacity: int | None = None) -> Policy:
    """A policy by name (``adaptive``, ``lru``, ``lfu``, ``attention-lru``, ``decayed``), or an object as is.

    ``capacity`` (the store's bound, if any) sizes what ``adaptive`` remembers; one that is not a
    positive whole number is left to :class:`~muscle_mem.eviction.Bounds` to refuse.
    """
    if isinstance(policy, str):
        name = policy.strip().lower()
        factory = _FACTORIES.get(name)
        if factory is None:
            raise ValueError(f"unknown eviction policy {policy!r}: expected one of {', '.join(_FACTORIES)}")
        if name == "adaptive" and type(capacity) is int and capacity > 0:  # Bounds rejects any other
            return Adaptive(history=HISTORY_PER_CAPACITY * capacity)
        made: Policy = factory()
        return made
    if isinstance(policy, Policy):
        return policy
    raise TypeError(f"a policy must be a name or an object with admit, hit and rank, not {policy!r}")
