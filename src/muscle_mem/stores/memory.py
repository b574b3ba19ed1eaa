"""The in-process store: dicts under a lock, and lazy-deletion heaps for expiry and eviction."""

from __future__ import annotations

import bisect
import heapq
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, replace

from muscle_mem.model.trajectory import Trajectory, Usage
from muscle_mem.stores import _records, ranking, steps
from muscle_mem.stores.base import (
    Changes,
    Event,
    Rank,
    StoreError,
    Summary,
    TaskState,
    Touch,
    TunedRecall,
    clamped_tuning,
    finite_number,
)
from muscle_mem.stores.ranking import LazyHeap


@dataclass(slots=True)
class _Entry:
    trajectory: Trajectory
    usage: Usage
    rev: int
    nbytes: int


_Rows = dict[str, dict[str, dict[str, dict[str, tuple[int, str]]]]]
"""Step rows: node → signature → pre key → trajectory id → (step number, post key)."""


@dataclass(slots=True)
class _Task:
    text: str
    order: list[tuple[int, str]]
    """(rev, id) in rev order; removed ids stay until there are more of them than live ones."""
    live: int = 0


def _rev(item: tuple[int, str]) -> int:
    return item[0]


class MemoryStore:
    """Trajectories in this process only, forgotten when it exits.

    Thread-safe.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False
        self._entries: dict[str, _Entry] = {}
        self._tasks: dict[str, _Task] = {}
        self._revision = 0
        self._floor = 0
        """Every removal after this revision is in ``_tombstones``."""
        self._tombstones: deque[tuple[int, str, str]] = deque()
        self._nbytes = 0
        self._by_priority = LazyHeap(self._current(_priority))
        self._by_age = LazyHeap(self._current(_created_at))
        self._by_last_used = LazyHeap(self._current(_last_used))
        self._by_attention = LazyHeap(self._current(_attention))
        self._events: deque[Event] = deque()
        self._steps: _Rows = {}
        self._marks: dict[str, int] = {}
        """The revision of each task's latest add or removal (its change mark)."""
        self._cleared = 0
        """The revision of the latest ``clear``: every task's mark is at least this."""
        self._recall: OrderedDict[str, tuple[bool, float]] = OrderedDict()
        """Task key -> whether it was replayed, and its last priority; least recently remembered first."""
        self._kinds = [0, 0]
        """How many remembered tasks were never replayed, and how many were."""
        self._tuning: float | None = None
        """The tuning every engine on this store moves (:class:`SharedTuning`; None: none yet)."""

    # -- writing --------------------------------------------------------------------------------

    def add(self, trajectory: Trajectory, usage: Usage | None = None) -> None:
        """Store a trajectory; adding an id that is already stored does nothing."""
        self.add_many([(trajectory, usage)])

    def add_many(self, items: Iterable[tuple[Trajectory, Usage | None]]) -> int:
        """Store many trajectories (ids already stored are skipped); returns how many were new."""
        prepared = _records.prepare(items, local=True)
        with self._lock:
            self._check_open()
            new = 0
            for p in prepared:
                t, tid, stats = p.trajectory, p.trajectory.id, _copied(p.usage)
                if tid in self._entries:
                    continue
                new += 1
                self._revision += 1
                rev = self._revision
                self._entries[tid] = _Entry(t, stats, rev, p.nbytes)
                task = self._tasks.get(t.task_key)
                if task is None:
                    task = self._tasks[t.task_key] = _Task(t.task, [])
                task.order.append((rev, tid))
                task.live += 1
                self._marks[t.task_key] = rev
                self._remember(t.task_key, t.task_key in self._recall, stats.priority)
                self._nbytes += p.nbytes
                self._by_priority.push(tid, stats.priority, rev)
                self._by_age.push(tid, t.created_at, rev)
                self._by_last_used.push(tid, stats.last_used, rev)
                self._by_attention.push(tid, stats.attention, rev)
                for row in p.steps:
                    at = self._steps.setdefault(row.node, {}).setdefault(row.signature, {})
                    at.setdefault(row.pre_key, {})[tid] = (row.step_no, row.post_key)
            return new

    def touch(
        self, trajectory_id: str, *, now: float, saved_seconds: float, priority: float, attention: float
    ) -> None:
        with self._lock:
            self._check_open()
            entry = self._entries.get(trajectory_id)
            if entry is not None:
                self._touch(
                    entry, Touch(trajectory_id, 1, now, saved_seconds, priority, attention), later=False
                )
                self._remember(entry.trajectory.task_key, True, priority)
                self._prune_heaps()

    def touch_many(self, touches: Sequence[Touch]) -> None:
        """Apply many trajectories' hits (added to theirs; the later last use kept)."""
        with self._lock:
            self._check_open()
            for t in touches:
                entry = self._entries.get(t.id)
                if entry is not None:
                    self._touch(entry, t, later=True)
                    self._remember(entry.trajectory.task_key, True, t.priority)
            self._prune_heaps()

    def usage_many(self, trajectory_ids: Sequence[str]) -> dict[str, Usage]:
        """The use statistics of the stored ones among ``trajectory_ids``."""
        with self._lock:
            self._check_open()
            return {tid: replace(e.usage) for tid in trajectory_ids if (e := self._entries.get(tid))}

    def recalled(self, task_key: str) -> bool | None:
        """Whether a remembered task was replayed; None if the task is not remembered."""
        with self._lock:
            self._check_open()
            found = self._recall.get(task_key)
            return None if found is None else found[0]

    def recalled_tuned(self, task_key: str, own: float, change: float) -> TunedRecall:
        """The task's recall and last priority, the tuning moved by ``change``, and the two kinds of remembered tasks."""
        with self._lock:
            self._check_open()
            self._tuning = clamped_tuning(self._tuning, own, change)
            replayed, last = self._recall.get(task_key, (None, None))
            return TunedRecall(replayed, self._tuning, (self._kinds[0], self._kinds[1]), finite_number(last))

    def forget_recalled(self, keep: int) -> int:
        """Forget all but the ``keep`` most recently remembered tasks; returns how many were forgotten."""
        with self._lock:
            self._check_open()
            gone = max(len(self._recall) - max(keep, 0), 0)
            for _ in range(gone):
                self._kinds[self._recall.popitem(last=False)[1][0]] -= 1
            return gone

    def remove(self, trajectory_ids: Iterable[str]) -> int:
        with self._lock:
            self._check_open()
            return self._remove(trajectory_ids)

    def expire(self, created_before: float, exclude: frozenset[str] = frozenset()) -> list[str]:
        with self._lock:
            self._check_open()
            ids: list[str] = []
            with closing(self._by_age.ascending()) as oldest_first:
                for created_at, _, tid in oldest_first:
                    if created_at >= created_before:
                        break
                    if tid not in exclude:
                        ids.append(tid)
            self._remove(ids)
            return ids

    def clear(self) -> None:
        with self._lock:
            self._check_open()
            self._revision += 1
            self._floor = self._cleared = self._revision
            self._marks.clear()
            self._recall.clear()
            self._kinds = [0, 0]
            self._tuning = None
            self._entries.clear()
            self._tasks.clear()
            self._tombstones.clear()
            self._steps.clear()
            self._nbytes = 0
            for heap in self._heaps():
                heap.clear()

    def log_events(self, events: Sequence[Event]) -> None:
        with self._lock:
            self._check_open()
            self._events.extend(events)
            while len(self._events) > _records.EVENTS_KEPT:
                self._events.popleft()

    def close(self) -> None:
        with self._lock:
            self._closed = True

    # -- reading --------------------------------------------------------------------------------

    def changes(self, task_key: str, since: int) -> Changes:
        with self._lock:
            self._check_open()
            reset = since < self._floor or since > self._revision
            task = self._tasks.get(task_key)
            added = []
            last_used: dict[str, float] = {}
            if task is not None:
                order = task.order
                for rev, tid in order[bisect.bisect_right(order, 0 if reset else since, key=_rev) :]:
                    entry = self._entries.get(tid)
                    if entry is not None and entry.rev == rev:
                        added.append(entry.trajectory)
                        last_used[tid] = entry.usage.last_used
            removed: set[str] = set()
            if not reset:
                for rev, key, tid in reversed(self._tombstones):
                    if rev <= since:
                        break
                    if key == task_key:
                        removed.add(tid)
            return Changes(self._revision, tuple(added), frozenset(removed), reset, last_used)

    def revision(self) -> int:
        return self._revision

    def change_mark(self, task_key: str) -> int | None:
        """The revision of the task's latest change (this process is the only writer)."""
        return self._marks.get(task_key, self._cleared)

    def task_state(self, task_key: str, since: int) -> TaskState:
        with self._lock:
            self._check_open()
            task = self._tasks.get(task_key)
            changed = since < self._floor or since > self._revision
            if task is not None and task.order and task.order[-1][0] > since:
                changed = True
            for rev, key, _ in reversed(self._tombstones):
                if changed or rev <= since:
                    break
                changed = key == task_key
            return TaskState(self._revision, changed, 0 if task is None else task.live)

    def heads_at(self, node: str) -> list[tuple[str, steps.Candidate]]:
        with self._lock:
            self._check_open()
            calls = {sig: by_pre for sig, by_pre in self._steps.get(node, {}).items() if sig != steps.END}
            heads = []
            for signature, by_pre in calls.items():
                rows = (
                    (tid, no, pre, post) for pre, found in by_pre.items() for tid, (no, post) in found.items()
                )
                if len(calls) == 1:  # one call: any of its rows (no order to keep), not a scan of them all
                    latest = next(rows, None)
                else:
                    latest = max(rows, key=lambda r: self._entries[r[0]].usage.last_used, default=None)
                if latest is not None:
                    used = self._entries[latest[0]].usage.last_used
                    heads.append((signature, steps.Candidate(*latest, used)))
            return heads

    def candidates_at(self, node: str, signature: str, pre_key: str | None) -> list[steps.Candidate]:
        with self._lock:
            self._check_open()
            by_pre = self._steps.get(node, {}).get(signature, {})
            found = [(pre_key, by_pre.get(pre_key, {}))] if pre_key is not None else list(by_pre.items())
            return [
                steps.Candidate(tid, no, pre, post, self._entries[tid].usage.last_used)
                for pre, rows in found
                for tid, (no, post) in rows.items()
            ]

    def get(self, trajectory_id: str) -> Trajectory | None:
        with self._lock:
            self._check_open()
            entry = self._entries.get(trajectory_id)
            return None if entry is None else entry.trajectory

    def usage(self, trajectory_id: str) -> Usage | None:
        with self._lock:
            self._check_open()
            entry = self._entries.get(trajectory_id)
            return None if entry is None else replace(entry.usage)

    def victims(self, count: int, rank: Rank, exclude: frozenset[str] = frozenset()) -> list[str]:
        with self._lock:
            self._check_open()
            if count <= 0:
                return []
            if rank.kind == "priority":
                return self._lowest_priority(count, exclude)
            with (
                closing(self._by_last_used.ascending()) as by_recency,
                closing(self._by_attention.ascending()) as by_attention,
            ):
                found = ranking.lowest(
                    count, rank.score, exclude, self._rows(by_recency), self._rows(by_attention)
                )
            if found is None:  # the two orders disagree too much: score every trajectory
                rows = ((tid, e.usage, e.rev) for tid, e in self._entries.items() if tid not in exclude)
                found = [
                    row[0]
                    for row in heapq.nsmallest(
                        count,
                        rows,
                        key=lambda r: (rank.score(r[1].last_used, r[1].attention), r[1].last_used, r[2]),
                    )
                ]
            return found

    def tasks(self) -> dict[str, str]:
        with self._lock:
            self._check_open()
            return {key: task.text for key, task in self._tasks.items()}

    def nbytes(self) -> int:
        return self._nbytes

    def summaries(self) -> Iterator[Summary]:
        with self._lock:
            self._check_open()
            rows = [
                Summary(
                    id=tid,
                    task=e.trajectory.task,
                    tags=e.trajectory.tags,
                    steps=len(e.trajectory.steps),
                    created_at=e.trajectory.created_at,
                    usage=replace(e.usage),
                )
                for tid, e in self._entries.items()
            ]
        rows.sort(key=lambda s: s.usage.last_used, reverse=True)
        return iter(rows)

    def events(self, since: float = 0.0) -> list[Event]:
        with self._lock:
            self._check_open()
            found = [e for e in self._events if e.at >= since]
        found.sort(key=lambda e: e.at)
        return found

    def __len__(self) -> int:
        return len(self._entries)

    # -- internals (lock held) ------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the memory store is closed")

    def _remove(self, ids: Iterable[str]) -> int:
        gone = [self._entries.pop(i) for i in dict.fromkeys(ids) if i in self._entries]
        if not gone:
            return 0
        self._revision += 1
        for entry in gone:
            key = entry.trajectory.task_key
            self._tombstones.append((self._revision, key, entry.trajectory.id))
            self._marks[key] = self._revision
            self._nbytes -= entry.nbytes
            self._forget_steps(entry.trajectory)
            task = self._tasks[key]
            task.live -= 1
            if task.live == 0:
                del self._tasks[key]
            elif 2 * task.live < len(task.order):
                task.order = [
                    (r, t) for r, t in task.order if t in self._entries and self._entries[t].rev == r
                ]
        cutoff = self._revision - _records.TOMBSTONE_REVISIONS
        while self._tombstones and self._tombstones[0][0] <= cutoff:
            self._floor = self._tombstones.popleft()[0]
        self._prune_heaps()
        return len(gone)

    def _touch(self, entry: _Entry, t: Touch, *, later: bool) -> None:
        """Apply hits; the last use becomes ``t.last_used`` (``later``: if it is later than the stored one)."""
        usage = entry.usage
        usage.hits += t.hits
        usage.saved_seconds += t.saved_seconds
        if t.last_used > usage.last_used if later else t.last_used != usage.last_used:
            usage.last_used = t.last_used
            self._by_last_used.push(t.id, t.last_used, entry.rev)
        if t.attention != usage.attention:
            usage.attention = t.attention
            self._by_attention.push(t.id, t.attention, entry.rev)
        if t.priority != usage.priority:
            usage.priority = t.priority
            self._by_priority.push(t.id, t.priority, entry.rev)

    def _remember(self, task_key: str, replayed: bool, priority: float) -> None:
        """Make a task the most recently remembered, as replayed or not, with its last priority (lock held)."""
        was = self._recall.pop(task_key, None)
        if was is not None:
            self._kinds[was[0]] -= 1
        self._recall[task_key] = (replayed, priority)
        self._kinds[replayed] += 1

    def _forget_steps(self, trajectory: Trajectory) -> None:
        for row in steps.step_rows(trajectory):
            by_signature = self._steps[row.node]
            by_pre = by_signature[row.signature]
            rows = by_pre[row.pre_key]
            del rows[trajectory.id]
            if not rows:
                del by_pre[row.pre_key]
                if not by_pre:
                    del by_signature[row.signature]
                    if not by_signature:
                        del self._steps[row.node]

    def _heaps(self) -> tuple[LazyHeap[str], ...]:
        return self._by_priority, self._by_age, self._by_last_used, self._by_attention

    def _prune_heaps(self) -> None:
        for heap in self._heaps():
            heap.prune(len(self._entries), self._entries)

    def _current(self, value: Callable[[_Entry], float]) -> Callable[[str], tuple[float, int] | None]:
        """A heap's view of a live id: its value and rev, or None once it is gone."""

        def current(tid: str) -> tuple[float, int] | None:
            entry = self._entries.get(tid)
            return None if entry is None else (value(entry), entry.rev)

        return current

    def _rows(self, items: Iterable[tuple[float, int, str]]) -> Iterator[ranking.Row[str]]:
        for _, rev, tid in items:
            usage = self._entries[tid].usage
            yield tid, usage.last_used, usage.attention, rev

    def _lowest_priority(self, count: int, exclude: frozenset[str]) -> list[str]:
        found: dict[str, None] = {}
        with closing(self._by_priority.ascending()) as rows:
            for _, _, tid in rows:
                if tid not in exclude:
                    found[tid] = None
                    if len(found) == count:
                        break
        return list(found)


def _priority(entry: _Entry) -> float:
    return entry.usage.priority


def _created_at(entry: _Entry) -> float:
    return entry.trajectory.created_at


def _last_used(entry: _Entry) -> float:
    return entry.usage.last_used


def _attention(entry: _Entry) -> float:
    return entry.usage.attention


def _copied(usage: Usage) -> Usage:
    """A copy of use statistics (as ``dataclasses.replace`` makes, without its field-by-field walk)."""
    return Usage(usage.hits, usage.last_used, usage.saved_seconds, usage.priority, usage.attention)
