"""The in-process store: dicts under a lock, and lazy-deletion heaps for expiry and eviction."""

from __future__ import annotations

import bisect
import heapq
import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, replace

from muscle_mem.stores import _ranking, _records
from muscle_mem.stores.base import Changes, Event, Rank, StoreError, Summary
from muscle_mem.trajectory import Trajectory, Usage


@dataclass(slots=True)
class _Entry:
    trajectory: Trajectory
    usage: Usage
    rev: int
    nbytes: int


@dataclass(slots=True)
class _Task:
    text: str
    order: list[tuple[int, str]]
    """(rev, id) in rev order; removed ids stay until there are more of them than live ones."""
    live: int = 0


def _rev(item: tuple[int, str]) -> int:
    return item[0]


class MemoryStore:
    """Trajectories in this process only; forgotten when it exits. Thread-safe."""

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
        self._by_priority: list[tuple[float, int, str]] = []
        """Heap of (priority, rev, id); an item is stale once its id's priority or rev differs."""
        self._by_age: list[tuple[float, int, str]] = []
        """Heap of (created_at, rev, id); an item is stale once its id is gone."""
        self._by_last_used: list[tuple[float, int, str]] = []
        """Heap of (last_used, rev, id); stale once its id's last use or rev differs."""
        self._by_attention: list[tuple[float, int, str]] = []
        """Heap of (attention, rev, id); stale once its id's attention or rev differs."""
        self._events: deque[Event] = deque()

    # -- writing --------------------------------------------------------------------------------

    def add(self, trajectory: Trajectory, usage: Usage | None = None) -> None:
        """Store a trajectory; adding an id that is already stored does nothing."""
        self.add_many([(trajectory, usage)])

    def add_many(self, items: Iterable[tuple[Trajectory, Usage | None]]) -> int:
        """Store many trajectories (ids already stored are skipped); returns how many were new."""
        prepared = _records.prepare(items)
        with self._lock:
            self._check_open()
            new = 0
            for p in prepared:
                t, tid, stats = p.trajectory, p.trajectory.id, replace(p.usage)
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
                self._nbytes += p.nbytes
                heapq.heappush(self._by_priority, (stats.priority, rev, tid))
                heapq.heappush(self._by_age, (t.created_at, rev, tid))
                heapq.heappush(self._by_last_used, (stats.last_used, rev, tid))
                heapq.heappush(self._by_attention, (stats.attention, rev, tid))
            return new

    def touch(
        self, trajectory_id: str, *, now: float, saved_seconds: float, priority: float, attention: float
    ) -> None:
        with self._lock:
            self._check_open()
            entry = self._entries.get(trajectory_id)
            if entry is None:
                return
            usage = entry.usage
            usage.hits += 1
            usage.saved_seconds += saved_seconds
            if now != usage.last_used:
                usage.last_used = now
                heapq.heappush(self._by_last_used, (now, entry.rev, trajectory_id))
            if attention != usage.attention:
                usage.attention = attention
                heapq.heappush(self._by_attention, (attention, entry.rev, trajectory_id))
            if priority != usage.priority:
                usage.priority = priority
                heapq.heappush(self._by_priority, (priority, entry.rev, trajectory_id))
            self._prune_heaps()

    def remove(self, trajectory_ids: Iterable[str]) -> int:
        with self._lock:
            self._check_open()
            return self._remove(trajectory_ids)

    def expire(self, created_before: float, exclude: frozenset[str] = frozenset()) -> list[str]:
        with self._lock:
            self._check_open()
            ids: list[str] = []
            spared: list[tuple[float, int, str]] = []
            while self._by_age and self._by_age[0][0] < created_before:
                item = heapq.heappop(self._by_age)
                entry = self._entries.get(item[2])
                if entry is None or entry.rev != item[1]:
                    continue  # stale heap item
                if item[2] in exclude:
                    spared.append(item)
                else:
                    ids.append(item[2])
            for item in spared:
                heapq.heappush(self._by_age, item)
            self._remove(ids)
            return ids

    def clear(self) -> None:
        with self._lock:
            self._check_open()
            self._revision += 1
            self._floor = self._revision
            self._entries.clear()
            self._tasks.clear()
            self._tombstones.clear()
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
            reset = since < self._floor
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
                closing(self._ascending(self._by_last_used, _last_used)) as by_recency,
                closing(self._ascending(self._by_attention, _attention)) as by_attention,
            ):
                return _ranking.lowest(count, rank, exclude, by_recency, by_attention)

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
            self._nbytes -= entry.nbytes
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

    def _heaps(self) -> tuple[list[tuple[float, int, str]], ...]:
        return self._by_priority, self._by_age, self._by_last_used, self._by_attention

    def _prune_heaps(self) -> None:
        """Rebuild a heap once its stale items outnumber the live ones (amortised O(1) per change)."""
        limit = 2 * len(self._entries) + 64
        for heap, value in zip(self._heaps(), (_priority, _created_at, _last_used, _attention), strict=True):
            if len(heap) > limit:
                heap[:] = [(value(e), e.rev, tid) for tid, e in self._entries.items()]
                heapq.heapify(heap)

    def _ascending(
        self, heap: list[tuple[float, int, str]], value: Callable[[_Entry], float]
    ) -> Generator[_ranking.Row, None, None]:
        """The live rows in the order of a heap, popped as they are read and pushed back on close."""
        popped: list[tuple[float, int, str]] = []
        try:
            while heap:
                item = heapq.heappop(heap)
                entry = self._entries.get(item[2])
                if entry is None or entry.rev != item[1] or value(entry) != item[0]:
                    continue  # stale: dropped for good
                popped.append(item)
                yield item[2], entry.usage.last_used, entry.usage.attention, entry.rev
        finally:
            for item in popped:
                heapq.heappush(heap, item)

    def _lowest_priority(self, count: int, exclude: frozenset[str]) -> list[str]:
        found: dict[str, None] = {}
        with closing(self._ascending(self._by_priority, _priority)) as rows:
            for row in rows:
                if row[0] not in exclude:
                    found[row[0]] = None
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
