"""Eviction policies for the trajectory store.

A policy turns accesses into :class:`~muscle_mem.model.trajectory.Usage` (what the store keeps) and tells
the store how to rank victims (:class:`~muscle_mem.stores.base.Rank`). Order-invariant policies keep
their whole rank in ``Usage.priority``, so a store evicts by an index scan or heap pop (O(log n));
a :class:`TaskAwarePolicy` is also told the task key of each use, a :class:`RecallAware` one whether
a store shared by every process remembers a task it admits, a :class:`FrontierAware` one the
priority of each eviction's last victim;
``attention-lru`` ranks by a score that changes with time, which a store finds with the threshold
algorithm of :mod:`muscle_mem.stores.ranking` (two orders read side by side, a full scan at worst).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Literal, Protocol, runtime_checkable

from muscle_mem.model.trajectory import Usage
from muscle_mem.stores.base import Rank, SharedTuning, TaskRecall, TunedRecall, clamped_tuning, counted_kinds

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


@runtime_checkable
class RecallAware(TaskAwarePolicy, Protocol):
    """A task-aware policy that can take the recall a store shares (:class:`~muscle_mem.stores.TaskRecall`).

    The engine reads whether the store remembers the task, then calls :meth:`admit_recalled`
    instead of ``admit_task``, so every process sharing the store admits from the same recall.
    """

    @property
    def history(self) -> int:
        """How many task keys the recall should keep (the engine prunes the store's to it)."""
        ...

    def admit_recalled(self, task_key: str, now: float, relevance: float, recalled: bool | None) -> Usage:
        """As ``admit_task``, told whether the task is remembered as replayed (None: not remembered)."""
        ...


@runtime_checkable
class SharesTuning(RecallAware, Protocol):
    """A recall-aware policy that tunes itself together with every process sharing the store.

    With a store that shares a tuning (:class:`~muscle_mem.stores.SharedTuning`), the engine takes
    the change this process's tuning made since it last shared it (:meth:`unshared`), has the store
    add it to the shared tuning as it reads the recall, and admits with what it read
    (:meth:`admit_shared`): K processes tune as one would on all their traffic, not each on 1/K.
    """

    def unshared(self) -> tuple[float, float]:
        """This process's tuning, and the change it made since it was last shared (taken: shared once)."""
        ...

    def admit_shared(self, task_key: str, now: float, relevance: float, read: TunedRecall) -> Usage:
        """As ``admit_recalled``, tuned from what the store shares (``read``: this process's change included)."""
        ...


TaskHit = Callable[[str, Usage, float, float, float], Usage]
"""Scores a hit: (task key, usage, now, relevance, saved seconds) -> the new use statistics."""
TaskAdmit = Callable[[str, float, float], Usage]
"""Scores a new recording: (task key, now, relevance) -> its use statistics."""


def task_hit(policy: Policy) -> TaskHit:
    """How ``policy`` scores a hit of a task: its ``hit_task`` if it is task-aware, else its ``hit``."""
    if isinstance(policy, TaskAwarePolicy):
        return policy.hit_task
    return lambda task_key, usage, now, relevance, saved: policy.hit(usage, now, relevance, saved)


def task_admit(policy: Policy) -> TaskAdmit:
    """How ``policy`` scores a new recording of a task: its ``admit_task`` if task-aware, else ``admit``."""
    if isinstance(policy, TaskAwarePolicy):
        return policy.admit_task
    return lambda task_key, now, relevance: policy.admit(now, relevance)


def store_admit(policy: Policy, store: object) -> TaskAdmit:
    """How ``policy`` scores a new recording in ``store``: by the store's recall and tuning if both share them.

    A :class:`SharesTuning` policy in a store with a shared recall and tuning reads both and moves the
    tuning in one call (a change taken for a read that fails is dropped: one tuning step); a
    :class:`RecallAware` one in a store with a shared recall reads the recall; any other as
    :func:`task_admit`.
    """
    if isinstance(store, TaskRecall) and isinstance(policy, RecallAware):
        if isinstance(store, SharedTuning) and isinstance(policy, SharesTuning):
            return partial(_admit_shared, policy, store)
        return lambda task_key, now, relevance: policy.admit_recalled(
            task_key, now, relevance, store.recalled(task_key)
        )
    return task_admit(policy)


def _admit_shared(
    policy: SharesTuning, store: SharedTuning, task_key: str, now: float, relevance: float
) -> Usage:
    own, change = policy.unshared()
    return policy.admit_shared(task_key, now, relevance, store.recalled_tuned(task_key, own, change))


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
    """The Attention-LRU reference score, ``alpha / (1 + now - last_used) + beta * attention``, lowest first.

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


DEFAULT_KEPT = 1_000
"""The number of trajectories :class:`Adaptive` assumes a store keeps before it has seen an eviction."""

NEUTRAL_LIFE = 0.5
"""The life a replay adds beyond the probation, in units of the trajectories kept (see :class:`Adaptive`)."""


@runtime_checkable
class FrontierAware(Protocol):
    """A policy that is told the eviction frontier: :class:`~muscle_mem.eviction.Bounds` calls it."""

    def evicted(self, priority: float, kept: int) -> None:
        """Victims up to ``priority`` were just evicted, and the store keeps ``kept`` trajectories."""
        ...


@dataclass(eq=False)
class Adaptive:
    """A probation for new recordings, capped lives for replays, on a clock the store's evictions drive.

    The clock counts *slots*, not seconds: after each eviction it is the highest victim's priority
    plus the number of trajectories the store keeps, ``C`` (:meth:`evicted`, called by
    :class:`~muscle_mem.eviction.Bounds`). A trajectory given the clock's value is evicted once
    about ``C`` newer ones have pushed past it, whatever the wall clock says, so the same stream
    at one request a second or one in ten minutes evicts alike; every worker sharing a store
    evicts from the same frontier, so their clocks agree and their priorities compare.

    - A new recording starts ``probation * C`` slots in the past: it is evicted first unless it is
      replayed soon (at probation 1 it starts at the frontier, as a new entry of ARC's recency
      list when ARC's target gives that list nothing). ``probation`` (in [0, 1]) is tuned as ARC
      tunes its target: a task that is recorded again while remembered from a recording never
      replayed lowers it (probation was too long), one remembered as replayed raises it, each by
      one slot, scaled by the ratio of the two kinds remembered.
    - A replay adds :attr:`life` ``* C`` slots to the priority, never less than the clock and never
      more than that past it (a frequent trajectory banks at most one extra life). The life is
      ``0.5 + probation``: one turn of the store at the neutral probation, longer when the recall
      says replayed trajectories were evicted too soon, shorter when new ones were, so the same
      feedback that sizes the probation sizes the share replayed trajectories hold (as ARC's
      target sizes both of its lists).
    - Recall: the last ``history`` task keys stored or replayed in this process, each with the
      priority it was last given. A task stored again while remembered as replayed starts at the
      clock. One remembered as stored but never replayed resumes as if its evicted trajectory had
      been replayed now: its last priority plus a life, no lower than a new recording's start and
      no higher than the clock, so a task asked again soon after its eviction keeps most of a
      replay's place while one asked long after starts as a new one (ARC's directory remembers it
      only that long); halfway through probation when its priority is unknown. With a store that
      shares its recall (:class:`~muscle_mem.stores.TaskRecall`), the engine calls
      :meth:`admit_recalled` with the store's answer, so every worker sees every worker's tasks;
      this process's recall then weighs the two kinds for tuning ``probation`` and gives the last
      priority of the tasks it wrote.
    - Sharing the tuning: with a store that shares it too (:class:`~muscle_mem.stores.SharedTuning`),
      the probation lives in the store, and so do the counts of the two kinds and each remembered
      task's last priority, whoever gave it: each recording reads them with the recall
      (:meth:`admit_shared`), tunes from them, and hands what it changed to the next recording's
      read, which adds it to the store's (:meth:`unshared`). Every worker then
      tunes one probation on all the traffic, as one process would; a worker's own copy, which its
      replays' lives read, is at most its last recording old, and other workers see a change at the
      changer's next recording.
    """

    history: int = 5 * DEFAULT_KEPT
    """Task keys remembered (the engine makes it five times the capacity, when there is one)."""
    probation: float = 0.8
    """How far in the past a new recording starts, in units of the number of trajectories kept (tuned)."""
    kept: int = DEFAULT_KEPT
    """Trajectories the store keeps (then the count the last eviction reported)."""
    name: str = "adaptive"
    _clock: float = field(default=0.0, init=False, repr=False)
    _recent: OrderedDict[str, tuple[bool, float]] = field(default_factory=OrderedDict, init=False, repr=False)
    """Task key -> whether it was replayed (or recalled), and its last priority; least recently used first."""
    _kinds: list[int] = field(default_factory=lambda: [0, 0], init=False, repr=False)
    """How many remembered keys were never replayed, and how many were."""
    _unshared: float = field(default=0.0, init=False, repr=False)
    """The change tuning made to ``probation`` not yet added to the store's shared tuning."""
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.history, bool) or not isinstance(self.history, int) or self.history < 0:
            raise ValueError(f"history must be a whole number of task keys, not {self.history!r}")
        if isinstance(self.kept, bool) or not isinstance(self.kept, int) or self.kept < 1:
            raise ValueError(f"kept must be a positive whole number of trajectories, not {self.kept!r}")
        if not 0.0 <= self.probation <= 1.0:
            raise ValueError(f"probation must be in [0, 1], not {self.probation!r}")

    @property
    def clock(self) -> float:
        """The priority a trajectory used now is given (in slots)."""
        return self._clock

    @property
    def life(self) -> float:
        """Slots a replay adds now, in units of the trajectories kept: ``0.5 + probation``."""
        return NEUTRAL_LIFE + self.probation

    def evicted(self, priority: float, kept: int) -> None:
        """Advance the clock to ``priority + kept`` (never back) and note how many trajectories are kept."""
        if not math.isfinite(priority) or kept < 1:
            return
        with self._lock:
            self.kept = kept
            self._clock = max(self._clock, priority + kept)

    def admit(self, now: float, relevance: float) -> Usage:
        with self._lock:
            priority = self._clock - self.probation * self.kept
        return Usage(last_used=now, priority=priority, attention=_clip(relevance))

    def admit_task(self, task_key: str, now: float, relevance: float) -> Usage:
        with self._lock:
            remembered = self._forget(task_key)
            if remembered is None:
                return self._admit(task_key, now, relevance, None, None)
            return self._admit(task_key, now, relevance, *remembered)

    def admit_recalled(self, task_key: str, now: float, relevance: float, recalled: bool | None) -> Usage:
        """As :meth:`admit_task`, with the store's shared recall instead of this process's."""
        with self._lock:
            return self._admit(task_key, now, relevance, recalled, self._last(task_key))

    def unshared(self) -> tuple[float, float]:
        """The probation, and what tuning changed of it since it was last shared (now taken)."""
        with self._lock:
            change, self._unshared = self._unshared, 0.0
            return self.probation, change

    def admit_shared(self, task_key: str, now: float, relevance: float, read: TunedRecall) -> Usage:
        """As :meth:`admit_recalled`, from the probation, kinds and last priority the store shares.

        What tuning then changes of the probation is kept, to be added to the store's at the next recording.
        """
        with self._lock:
            self.probation = clamped_tuning(read.tuning, self.probation, self._unshared)
            before = self.probation
            kinds = None if read.kinds is None else counted_kinds(*read.kinds)
            own = self._last(task_key)  # forgotten here too: the store's recall is the one read
            last = own if read.last is None else read.last
            usage = self._admit(task_key, now, relevance, read.replayed, last, kinds)
            self._unshared += self.probation - before
            return usage

    def _admit(
        self,
        task_key: str,
        now: float,
        relevance: float,
        replayed: bool | None,
        last: float | None,
        kinds: tuple[int, int] | None = None,
    ) -> Usage:
        """Admit a recording of a task remembered as ``replayed`` (None: not remembered; lock held).

        ``last`` is the priority the task was last given (the store's, else this process's; None:
        unknown); ``kinds`` the two kinds of remembered tasks as the store counts them (None: as
        this process's recall does).
        """
        if replayed is not None:
            self._tune(replayed, self._kinds if kinds is None else kinds)
        start = self._clock - self.probation * self.kept
        if replayed is None:
            priority = start
        elif replayed:
            priority = self._clock
        elif last is None:
            priority = self._clock - self.probation * self.kept / 2
        else:  # as if its evicted trajectory were replayed now, but not ahead of a replayed task
            priority = min(max(last + self.life * self.kept, start), self._clock)
        self._remember(task_key, replayed is not None, priority)
        return Usage(last_used=now, priority=priority, attention=_clip(relevance))

    def hit(self, usage: Usage, now: float, relevance: float, saved_seconds: float) -> Usage:
        with self._lock:
            priority = self._replayed(usage.priority)
        return _hit(usage, now, saved_seconds, priority, _clip(relevance))

    def hit_task(
        self, task_key: str, usage: Usage, now: float, relevance: float, saved_seconds: float
    ) -> Usage:
        with self._lock:
            priority = self._replayed(usage.priority)
            self._forget(task_key)
            self._remember(task_key, True, priority)
        return _hit(usage, now, saved_seconds, priority, _clip(relevance))

    def rank(self, now: float) -> Rank:
        return Rank()

    def _replayed(self, priority: float) -> float:
        """The priority after a replay (lock held); a priority from ahead of this clock moves it on."""
        extra = self.life * self.kept
        if math.isfinite(priority):
            self._clock = max(self._clock, priority - extra)  # whoever wrote it had at least this clock
        else:
            priority = self._clock
        return max(priority, min(max(priority + extra, self._clock), self._clock + extra))

    def _tune(self, replayed: bool, kinds: Sequence[int]) -> None:
        """A remembered task is stored again: the probation of its kind was too long or too short.

        ``kinds``: how many remembered tasks were never replayed, and how many were.
        """
        never, used = max(kinds[0], 1), max(kinds[1], 1)
        if replayed:
            self.probation = min(1.0, self.probation + max(never / used, 1.0) / self.kept)
        else:
            self.probation = max(0.0, self.probation - max(used / never, 1.0) / self.kept)

    def _forget(self, task_key: str) -> tuple[bool, float] | None:
        """Forget a task key; whether it was replayed and its last priority, None if not remembered."""
        remembered = self._recent.pop(task_key, None)
        if remembered is not None:
            self._kinds[remembered[0]] -= 1
        return remembered

    def _last(self, task_key: str) -> float | None:
        """Forget a task key; the priority this process last gave it, None if not remembered (lock held)."""
        remembered = self._forget(task_key)
        return None if remembered is None else remembered[1]

    def _remember(self, task_key: str, replayed: bool, priority: float) -> None:
        """Remember a task key and its priority, forgetting the least recently used past ``history``."""
        if self.history:
            self._recent[task_key] = (replayed, priority)
            self._kinds[replayed] += 1
            if len(self._recent) > self.history:
                _, (old, _) = self._recent.popitem(last=False)
                self._kinds[old] -= 1


_FACTORIES = {"adaptive": Adaptive, "lru": LRU, "lfu": LFU, "attention-lru": AttentionLRU, "decayed": Decayed}

HISTORY_PER_CAPACITY = 5
"""Task keys :class:`Adaptive` remembers per trajectory of capacity (measured in docs/policies.md)."""


def make_policy(policy: str | Policy, capacity: int | None = None) -> Policy:
    """A policy by name (``adaptive``, ``lru``, ``lfu``, ``attention-lru``, ``decayed``), or an object as is.

    ``capacity`` (the store's bound, if any) sizes what ``adaptive`` remembers and its first clock
    steps; one that is not a
    positive whole number is left to :class:`~muscle_mem.eviction.Bounds` to refuse.
    """
    if isinstance(policy, str):
        name = policy.strip().lower()
        factory = _FACTORIES.get(name)
        if factory is None:
            raise ValueError(f"unknown eviction policy {policy!r}: expected one of {', '.join(_FACTORIES)}")
        if name == "adaptive" and type(capacity) is int and capacity > 0:  # Bounds rejects any other
            return Adaptive(history=HISTORY_PER_CAPACITY * capacity, kept=capacity)
        made: Policy = factory()
        return made
    if isinstance(policy, Policy):
        return policy
    raise TypeError(f"a policy must be a name or an object with admit, hit and rank, not {policy!r}")
