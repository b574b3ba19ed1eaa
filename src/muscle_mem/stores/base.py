"""The ``Store`` protocol: where trajectories live between runs and between processes."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from muscle_mem.errors import MuscleMemError
from muscle_mem.model.trajectory import Trajectory, Usage
from muscle_mem.stores.signing import Signer
from muscle_mem.stores.steps import Candidate


class StoreError(MuscleMemError, RuntimeError):
    """A store cannot be opened or used (wrong URL, newer schema, unreachable server)."""


class StoreUnavailable(StoreError):
    """The store's server cannot be reached now; trying again later may succeed.

    Raised for a refused or lost connection, a connection or statement that took longer than allowed,
    or a server shutting down or starting up; never for a wrong URL, role or password.
    """


class StoreDamaged(StoreUnavailable):
    """The store cannot be used as it stands: a damaged, foreign or newer schema, a failed migration, a full disk.

    An engine treats it as an outage (the agent serves every call) until a probe finds the store usable.
    """


class NoStore(StoreError):
    """A store opened only to be read does not exist (a SQLite file, a PostgreSQL schema)."""


@dataclass(frozen=True, slots=True)
class Changes:
    """What changed for one task key since a revision: the engine's index applies it incrementally."""

    revision: int
    """The revision these changes bring the reader up to, for this task: pass it back as ``since``."""
    added: tuple[Trajectory, ...] = ()
    removed: frozenset[str] = field(default_factory=frozenset)
    reset: bool = False
    """True when ``since`` cannot be answered incrementally (too old, or newer than the store: a store
    made anew): ``added`` is then the full set."""
    last_used: Mapping[str, float] = field(default_factory=dict)
    """When each added trajectory was last used (stored or hit), so a reader can order them by it."""
    skipped: tuple[str, ...] = ()
    """Ids of rows added that could not be read (each named in a warning, never raised)."""


@dataclass(frozen=True, slots=True)
class Summary:
    """One line of a listing (the CLI's ``ls``), without loading the steps' values."""

    id: str
    task: str
    tags: tuple[str, ...]
    steps: int
    created_at: float
    usage: Usage


@dataclass(frozen=True)
class Event:
    """One engine call, as kept for reports: a hit, or a miss and why."""

    at: float
    """When the call ended (``time.time()``)."""
    task: str
    task_key: str
    hit: bool
    steps_replayed: int = 0
    reason: str | None = None
    tool: str | None = None
    """On a miss: the tool whose check failed, or that raised, if one is to blame."""
    trajectory_id: str | None = None
    elapsed: float = 0.0
    agent_seconds: float = 0.0
    saved_seconds: float = 0.0
    tokens_spent: int = 0
    tokens_saved: int = 0
    miss_reason: str | None = None
    """On a miss: the :class:`~muscle_mem.reasons.MissReason` value of its cause."""
    not_stored: str | None = None
    """On a miss whose run was not stored: why."""
    not_stored_reason: str | None = None
    """The :class:`~muscle_mem.reasons.NotStoredReason` value of ``not_stored``."""
    usage: tuple[tuple[str, int, int, int], ...] = ()
    """On a miss: what the agent's model calls spent, per model ``(model, input tokens, output tokens,
    requests)`` (empty when the agent reported tokens without a split, or none)."""
    shadow: str | None = None
    """On a shadow run: how a replay would have compared with the agent
    (a :class:`~muscle_mem.replay._shadow.Verdict` value: agreed, disagreed or missed)."""
    shadow_step: int | None = None
    """On a shadow run that disagreed: the step where the replay and the agent parted."""
    shadow_expected: str | None = None
    """On a shadow run that disagreed: the call (or answer) a replay would have made there."""
    shadow_actual: str | None = None
    """On a shadow run that disagreed: what the agent did there."""
    shadow_saved_seconds: float = 0.0
    """On a shadow run that agreed: the agent's seconds outside its tool calls (what a replay saves)."""

    @property
    def input_tokens(self) -> int:
        return sum(row[1] for row in self.usage)

    @property
    def output_tokens(self) -> int:
        return sum(row[2] for row in self.usage)

    @property
    def requests(self) -> int:
        """Model requests the agent made (on a miss)."""
        return sum(row[3] for row in self.usage)


@dataclass(frozen=True, slots=True)
class Rank:
    """How a store orders eviction victims (lowest first).

    ``priority``: by the stored ``Usage.priority`` (an index scan, O(log n)).
    ``recency_attention``: by :meth:`score` (the score of the Attention-LRU reference code;
    it reorders as time passes, so stores read their ``last_used`` and ``attention`` orders side by
    side until the lowest are known, the threshold algorithm of :mod:`muscle_mem.stores.ranking`).
    """

    kind: Literal["priority", "recency_attention"] = "priority"
    alpha: float = 0.5
    beta: float = 0.5
    now: float = 0.0

    def __post_init__(self) -> None:
        if not (self.alpha >= 0 and self.beta >= 0):
            raise ValueError(f"rank weights must not be negative: alpha={self.alpha!r}, beta={self.beta!r}")

    def score(self, last_used: float, attention: float) -> float:
        """``alpha / (1 + now - last_used) + beta * attention``; a use in the future counts as now."""
        return self.alpha / (1.0 + max(self.now - last_used, 0.0)) + self.beta * attention


@runtime_checkable
class CoreStore(Protocol):
    """What an engine needs of a store: trajectories by task key, their use statistics, eviction.

    A new backend implements this; :class:`EventLog` and :class:`Browsable` are optional (without
    them the engine keeps no events, and the CLI cannot list or report). Implementations must be
    safe to use from several threads; the durable ones from several processes too. Nothing read from
    a store is ever unpickled or evaluated.
    """

    def add(self, trajectory: Trajectory, usage: Usage | None = None) -> None:
        """Store a new trajectory (its id is new) with its initial use statistics."""

    def add_many(self, items: Iterable[tuple[Trajectory, Usage | None]]) -> int:
        """Store many trajectories in one transaction and return how many were new.

        Ids already stored are skipped.
        """
        ...

    def changes(self, task_key: str, since: int) -> Changes:
        """Trajectories of ``task_key`` added, and ids removed, after revision ``since`` (0: all)."""
        ...

    def revision(self) -> int:
        """A number that grows whenever any trajectory is added or removed, by any process."""
        ...

    def get(self, trajectory_id: str) -> Trajectory | None:
        """One trajectory by id, or None."""
        ...

    def touch(
        self, trajectory_id: str, *, now: float, saved_seconds: float, priority: float, attention: float
    ) -> None:
        """Record a hit: hits += 1, last_used = now, saved += saved_seconds, set priority and attention.

        Use statistics only (a small update); the trajectory itself is not rewritten. No-op if absent.
        """

    def victims(self, count: int, rank: Rank, exclude: frozenset[str] = frozenset()) -> list[str]:
        """The ids of the ``count`` lowest-ranked trajectories, skipping ``exclude``."""
        ...

    def expire(self, created_before: float, exclude: frozenset[str] = frozenset()) -> list[str]:
        """Delete the trajectories created before a time (TTL), but those in ``exclude``; returns their ids."""
        ...

    def tasks(self) -> dict[str, str]:
        """Every stored task key with its task text (for semantic matching)."""
        ...

    def nbytes(self) -> int:
        """The stored size of all trajectories' records, in bytes (for byte capacity)."""
        ...

    def usage(self, trajectory_id: str) -> Usage | None:
        """The use statistics of one trajectory, or None if it is not stored."""
        ...

    def remove(self, trajectory_ids: Iterable[str]) -> int:
        """Delete trajectories; returns how many existed."""
        ...

    def __len__(self) -> int:
        """How many trajectories are stored."""
        ...

    def clear(self) -> None:
        """Delete every trajectory."""

    def close(self) -> None:
        """Release connections and files; the store is unusable afterwards."""


@dataclass(frozen=True, slots=True)
class TaskState:
    """Where one task stands in a store: its stamp, whether the task changed since, its size."""

    revision: int
    """The task's stamp: passed back as ``since``, it says whether the task changed after this read.

    It is a revision of the store, but not necessarily the latest (PostgreSQL stamps each task apart,
    so that writers of different tasks do not wait on each other)."""
    changed: bool
    """True if a trajectory of the task was added or removed after ``since`` (or that cannot be told)."""
    size: int
    """How many trajectories the task has."""


@runtime_checkable
class StepIndexed(Protocol):
    """The optional part of a store that keeps the step index (:mod:`muscle_mem.stores.steps`).

    With it, an engine loads a task's steps node by node as a replay reaches them, and decodes only
    the trajectories it follows; without it, an engine reads every trajectory of a task at once.
    """

    def task_state(self, task_key: str, since: int) -> TaskState:
        """The store's revision, whether ``task_key`` changed after revision ``since``, and its size."""
        ...

    def heads_at(self, node: str) -> list[tuple[str, Candidate]]:
        """Each call stored as leaving ``node`` (end rows left out): its signature and one of its rows.

        With several calls, each one's latest used row; with one, any of its rows (no order to keep).
        """
        ...

    def candidates_at(self, node: str, signature: str, pre_key: str | None) -> list[Candidate]:
        """The step rows at ``node`` with ``signature`` (and pre snapshot key ``pre_key``, unless None)."""
        ...


@runtime_checkable
class ChangeFeed(Protocol):
    """The optional part of a store that says, without a round trip, which tasks may have changed.

    A reader remembers the mark a task had when it last read the task's state; while the mark is the
    same, nothing was added to or removed from the task, by any process, and the reader answers from
    memory. PostgreSQL learns of changes by ``LISTEN/NOTIFY``, SQLite by ``PRAGMA data_version``,
    the memory store by its own counters.
    """

    def change_mark(self, task_key: str) -> int | None:
        """A number that changes whenever ``task_key`` may have changed; None when this cannot be told now.

        None (a listener not connected yet, or lost): the reader reads the task's state itself, at
        most as often as it accepts to be stale.
        """
        ...


@dataclass(frozen=True, slots=True)
class Touch:
    """The hits of one trajectory since the last write, as :meth:`UsageBatched.touch_many` applies them."""

    id: str
    hits: int
    """Added to the stored hits (never overwrites them: several processes add theirs)."""
    last_used: float
    """The stored last use becomes the later of the two."""
    saved_seconds: float
    """Added to the stored saved seconds."""
    priority: float
    attention: float


@runtime_checkable
class UsageBatched(Protocol):
    """The optional part of a store that reads and writes use statistics in batches (hits written behind)."""

    def touch_many(self, touches: Sequence[Touch]) -> None:
        """Apply many trajectories' hits in one statement; absent ids are ignored."""

    def usage_many(self, trajectory_ids: Sequence[str]) -> dict[str, Usage]:
        """The use statistics of the stored ones among ``trajectory_ids``."""
        ...


@runtime_checkable
class TaskRecall(Protocol):
    """The optional part of a store that remembers, for every process, the tasks lately stored or replayed.

    Kept by the writes themselves: storing a trajectory remembers its task as not replayed (as
    replayed if it was remembered already: a task stored again), a hit (``touch``, ``touch_many``)
    as replayed; either makes the task the most recently remembered. An eviction policy reads it
    when it admits a new recording (:class:`~muscle_mem.eviction.policies.RecallAware`).
    """

    def recalled(self, task_key: str) -> bool | None:
        """Whether a remembered task was replayed; None if the task is not remembered."""
        ...

    def forget_recalled(self, keep: int) -> int:
        """Forget all but the ``keep`` most recently remembered tasks; returns how many were forgotten."""
        ...


@dataclass(frozen=True, slots=True)
class TunedRecall:
    """What a recording reads of a store's shared recall and tuning (:class:`SharedTuning`)."""

    replayed: bool | None
    """Whether the task is remembered as replayed; None if it is not remembered."""
    tuning: float
    """The shared tuning, in [0, 1], after the reader's change was added to it."""
    kinds: tuple[int, int] | None
    """How many remembered tasks were never replayed, and how many were; None if they cannot be told."""
    last: float | None = None
    """The priority the task was last stored or replayed with, by any process; None if not known."""


@runtime_checkable
class SharedTuning(Protocol):
    """The optional part of a :class:`TaskRecall` store that shares an eviction policy's tuning too.

    One tuning in [0, 1] (``adaptive``'s probation) that every process moves, the two kinds of
    remembered tasks counted, and each remembered task's last priority (all kept by the same writes
    that keep the recall: a trajectory's insert and a hit carry its priority), read with the recall
    when a process admits a new recording; the process adds to the tuning the change its own made
    since (:class:`~muscle_mem.eviction.policies.SharesTuning`) in the same call: a recording makes
    no more round trips than with the recall alone, and no process's change is lost to another's.
    """

    def recalled_tuned(self, task_key: str, own: float, change: float) -> TunedRecall:
        """As :meth:`TaskRecall.recalled`, with the shared tuning after ``change`` was added to it.

        The tuning is the stored one, clamped to [0, 1], plus ``change``, clamped again; ``own``
        (clamped) when the store holds none yet, or holds a value that is not a finite number. The
        task's last priority is the one its latest stored trajectory or hit was written with.
        """
        ...


def finite_number(stored: object) -> float | None:
    """A stored number as a float, or None unless it is one and finite (a hostile or corrupt value is unknown)."""
    if isinstance(stored, bool) or not isinstance(stored, int | float) or not math.isfinite(stored):
        return None
    return float(stored)


def clamped_tuning(stored: object, own: float, change: float = 0.0) -> float:
    """A stored tuning plus ``change``, in [0, 1]; from ``own`` if ``stored`` is not a finite number.

    ``own`` must itself be finite (a policy's own tuning, already checked); a store uses this on
    whatever it read, so a hostile or corrupt value never reaches a policy.
    """
    value = finite_number(stored)
    if value is None:
        return min(1.0, max(0.0, own))
    return min(1.0, max(0.0, min(1.0, max(0.0, value)) + change))


def counted_kinds(never: object, used: object) -> tuple[int, int] | None:
    """Two stored counts of remembered tasks, or None unless both are numbers, finite and not negative."""
    counts = []
    for stored in (never, used):
        value = finite_number(stored)
        if value is None or value < 0:
            return None
        counts.append(int(value))
    return counts[0], counts[1]


@runtime_checkable
class EventLog(Protocol):
    """The optional part of a store that keeps the engine's events (for ``stats`` and ``report``)."""

    def log_events(self, events: Sequence[Event]) -> None:
        """Append engine events (kept for reports; the oldest are pruned past a bound)."""

    def events(self, since: float = 0.0) -> list[Event]:
        """The kept events at or after a time, oldest first."""
        ...


@runtime_checkable
class Browsable(Protocol):
    """The optional part of a store that lists its trajectories (for the CLI)."""

    def summaries(self) -> Iterator[Summary]:
        """Every stored trajectory, briefly, most recently used first."""
        ...


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A trajectory's record as stored: its row's id and task key, and its JSON text."""

    id: str
    task_key: str
    text: str
    removed: bool = False
    """Whether the store lists the id as removed (the row was put back after its removal)."""


@runtime_checkable
class Signable(Protocol):
    """The optional part of a durable store that signs its records (the CLI's ``verify`` and ``sign``).

    With a ``signer``, records are written signed and a record not signed for where it is filed is
    never loaded (see :mod:`muscle_mem.stores.signing`).
    """

    signer: Signer | None

    def records(self) -> Iterator[StoredRecord]:
        """Every stored record, undecoded."""
        ...

    def replace_records(self, replacements: Sequence[tuple[StoredRecord, str]]) -> int:
        """Rewrite records with new texts (same trajectory, signed); returns how many were rewritten.

        A record whose text changed meanwhile is left as it is.
        """
        ...


@runtime_checkable
class Store(CoreStore, EventLog, Browsable, Protocol):
    """A store with every part: the three stores of this package (memory, SQLite, PostgreSQL)."""
