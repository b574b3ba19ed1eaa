"""The step index read from the store node by node: only what a replay reaches, in bounded caches.

A task's node loads its calls (one query for the distinct signatures) when a replay first reaches
it, a call's candidate edges load by the pre snapshot key just captured, and a trajectory is decoded
only when one of its steps is about to be trusted (the call to make, a post snapshot, the answer).
Every decoded record is checked against the rows that led to it: a row that disagrees with its
signed record is ignored, so the rows can route a replay but never change what it does.
Nodes are kept in a least-recently-used cache of ``index_size`` edges, decoded trajectories in one
of ``decoded_size`` entries. A task that changed in the store catches up: a few trajectories added
or removed (by this process or another) are applied to its cached nodes, from their signed records;
more, or a change the store cannot list, drop its nodes.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Generic, Protocol, TypeVar, overload

from muscle_mem.model.provenance import direct_arguments
from muscle_mem.model.trajectory import Step, Trajectory
from muscle_mem.replay._step_index import NOT_RENEWED, Skipped, last_used
from muscle_mem.stores.base import (
    ChangeFeed,
    Changes,
    CoreStore,
    Signable,
    StepIndexed,
    StoreUnavailable,
    TaskState,
)
from muscle_mem.stores.steps import END, NONE, Candidate, StepRow, child, root, step_rows

logger = logging.getLogger(__name__)

INDEX_SIZE = 100_000
"""Default bound on the edges of loaded nodes kept per engine."""
DECODED_SIZE = 1_000
"""Default bound on the decoded trajectories kept per engine."""
BAD_KEPT = 4_096
"""Records a process remembers to have left out (it would read and name them again once forgotten)."""
CATCH_UP_LIMIT = 64
"""Most trajectories added plus removed that a task's cached nodes take in place; past it they are dropped."""


class Ages:
    """When each trajectory a process decoded was created (by its record), to expire it by that time."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []
        self._noted: set[str] = set()
        self._lock = threading.Lock()

    def note(self, trajectory: Trajectory) -> None:
        """Remember a trajectory's creation time (once)."""
        with self._lock:
            if trajectory.id not in self._noted:
                self._noted.add(trajectory.id)
                heapq.heappush(self._heap, (trajectory.created_at, trajectory.id))

    def before(self, oldest: float, keep: frozenset[str] = frozenset()) -> list[str]:
        """The ids of the trajectories created before ``oldest``, forgotten here (but those in ``keep``)."""
        found: list[tuple[float, str]] = []
        kept: list[tuple[float, str]] = []
        with self._lock:
            heap = self._heap
            while heap and heap[0][0] < oldest:
                entry = heapq.heappop(heap)
                (kept if entry[1] in keep else found).append(entry)
            for entry in kept:  # asked again at the next expiry
                heapq.heappush(heap, entry)
            self._noted.difference_update(tid for _, tid in found)
        return [tid for _, tid in found]


class IndexedStore(CoreStore, StepIndexed, Protocol):
    """A store with a step index."""


class Decoded:
    """A bounded LRU of decoded trajectories with their step rows.

    With a signed store, a row's time (its trajectory's creation, which orders the rows) must be the
    signed record's, and a record older than :attr:`oldest` (the TTL, by the record's own time) is
    never used.
    """

    def __init__(self, store: CoreStore, size: int, skipped: Skipped = lambda ids, why: None) -> None:
        self.store = store
        self.size = size
        self.count = 0
        """How many records were decoded (for tests and benchmarks)."""
        self._signer = store.signer if isinstance(store, Signable) else None
        self.signed = self._signer is not None
        """Whether rows carry their trajectory's creation time (checked) instead of its last use."""
        self.oldest = -math.inf
        """Records created before this time (by their own signed time) are past the TTL: never used."""
        self.ages = Ages()
        """The creation time of every trajectory decoded while a TTL applies, oldest first."""
        self._items: OrderedDict[str, tuple[Trajectory, list[StepRow]]] = OrderedDict()
        self._bad: OrderedDict[str, None] = OrderedDict()
        """Records left out (unreadable, or disagreeing with their rows): never read again (bounded)."""
        self._skipped = skipped
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, trajectory_id: str) -> tuple[Trajectory, list[StepRow]] | None:
        """The trajectory and its rows, decoded from the store if not cached (None if gone or unreadable)."""
        with self._lock:
            found = self._items.get(trajectory_id)
            if found is not None:
                if self._signer is None or not self._signer.was_removed(trajectory_id):
                    self._items.move_to_end(trajectory_id)
                    return found
                del self._items[trajectory_id]  # removed since: read again (refused if put back)
            if trajectory_id in self._bad:
                return None
        trajectory = self.store.get(trajectory_id)
        if trajectory is not None and trajectory.created_at < self.oldest:
            self.ages.note(trajectory)  # removed by the next expiry
            return None
        if trajectory is None:
            if (
                self.store.usage(trajectory_id) is not None
            ):  # its row is there: unreadable (the store named it)
                self.leave_out(trajectory_id, None)
            return None
        found = (trajectory, step_rows(trajectory))
        with self._lock:
            self.count += 1
            self._keep(trajectory_id, found)
        if self.oldest > -math.inf:
            self.ages.note(trajectory)
        return found

    def put(self, trajectory: Trajectory, rows: list[StepRow]) -> None:
        """Keep a trajectory read from the store with the rows made from its record."""
        with self._lock:
            self._keep(trajectory.id, (trajectory, rows))
        if self.oldest > -math.inf:
            self.ages.note(trajectory)

    def expire(self, oldest: float, keep: frozenset[str] = frozenset()) -> list[str]:
        """Forget the trajectories created before ``oldest`` (by their records), but ``keep``; their ids.

        From now on a record created before ``oldest`` is never decoded.
        """
        self.oldest = oldest
        expired = self.ages.before(oldest, keep)
        with self._lock:
            for tid in expired:
                self._items.pop(tid, None)
        return expired

    def timed(self, candidate: Candidate, trajectory: Trajectory) -> bool:
        """Whether a row's time agrees with its record's (always, unless rows carry creation times)."""
        return not self.signed or candidate.last_used == trajectory.created_at

    def _keep(self, trajectory_id: str, found: tuple[Trajectory, list[StepRow]]) -> None:
        """Keep a decoded trajectory as the most recently used, dropping the least past the bound (lock held)."""
        self._items[trajectory_id] = found
        self._items.move_to_end(trajectory_id)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def leave_out(self, trajectory_id: str, why: str | None) -> None:
        """Never use this record again in this process; count it (``store_errors``) and name it once."""
        with self._lock:
            if trajectory_id in self._bad:
                return
            self._bad[trajectory_id] = None
            while len(self._bad) > BAD_KEPT:
                self._bad.popitem(last=False)
        self._skipped([trajectory_id], why)

    def peek(self, trajectory_id: str) -> tuple[Trajectory, list[StepRow]] | None:
        """The trajectory and its rows if they are cached (the store is not read)."""
        with self._lock:
            return self._items.get(trajectory_id)

    def first_step(
        self, candidates: list[Candidate], node: str, signature: str
    ) -> tuple[Step, Candidate] | None:
        """The step of the most recently used row whose record agrees with it, and that row."""
        for candidate in sorted(candidates, key=lambda c: c.last_used, reverse=True):
            step = self.step(candidate, node, signature)
            if step is not None:
                return step, candidate
        return None

    def step(self, candidate: Candidate, node: str, signature: str) -> Step | None:
        """The step a row names, if its decoded record agrees with the row (else None, logged)."""
        found = self.get(candidate.trajectory_id)
        if found is not None:
            trajectory, rows = found
            no = candidate.step_no
            if (
                no < len(trajectory.steps)
                and rows[no]
                == StepRow(
                    candidate.trajectory_id, no, node, signature, candidate.pre_key, candidate.post_key
                )
                and self.timed(candidate, trajectory)
            ):
                return trajectory.steps[no]
            self.leave_out(candidate.trajectory_id, "its step index row disagrees with its record")
        return None


@dataclass(eq=False, slots=True)
class LazyEdge:
    """One recorded way of making a call, read from the store; ``stamp`` is its latest use."""

    step: Step
    node: LazyNode
    trajectories: frozenset[str]
    stamp: float
    renewed: Any = NOT_RENEWED
    """The pre snapshot of this process's latest full hit through the edge (see :attr:`Check.renew`)."""
    passed: Any = None
    """The last output a replay's comparison passed here, with what it saw before and after (see :mod:`muscle_mem.replay`)."""


class LazyGroup:
    """The edges that make one call at a node, loaded by pre snapshot key as they are asked for."""

    def __init__(self, node: LazyNode, signature: str, step: Step, latest: float) -> None:
        self.node = node
        self.signature = signature
        self.step = step
        self.direct = direct_arguments(step.args, step.kwargs)
        """How to pass the call's arguments if none needs evaluating (constant scalars, whole outputs)."""
        self.latest = latest
        """The latest use of any trajectory making this call here."""
        self._edges: dict[str | None, list[LazyEdge]] = {}

    def ordered(self, pre_key: str | None = None, *, keyed: bool = False) -> Iterator[LazyEdge]:
        """Edges, most recent first: all of them, or (``keyed``) those whose pre snapshot hashes to a key."""
        key = (NONE if pre_key is None else pre_key) if keyed else None
        edges = self._edges.get(key)
        if edges is None:
            try:
                edges = self._edges[key] = self._load(key)
            except Exception:
                logger.warning("the recorded ways of a call could not be read from the store", exc_info=True)
                return iter(())
            self.node.index.charge(self.node, len(edges))
        return iter(edges)

    def loaded_edges(self) -> Iterator[LazyEdge]:
        """Every loaded edge (one may appear in several lists)."""
        for edges in list(self._edges.values()):
            yield from edges

    def latest_stamp(self) -> float:
        """The latest use of any trajectory making this call here (groups are walked by it)."""
        return self.latest

    def add(self, row: StepRow, target: str, step: Step, stamp: float) -> None:
        """Take in a trajectory's step made here: into the loaded edges it belongs to (all, its pre key)."""
        self.latest = max(self.latest, stamp)
        for key in {None, row.pre_key}:
            edges = self._edges.get(key)
            if edges is None:
                continue
            taken = [edge for edge in edges if edge.node.id != target]
            if len(taken) < len(edges):  # an edge to the same node: one more trajectory took it
                edge = next(edge for edge in edges if edge.node.id == target)
                self.node.index.hold(self.node, self.signature, row.pre_key, (row.trajectory_id,))
                taken.append(
                    LazyEdge(
                        edge.step,
                        edge.node,
                        edge.trajectories | {row.trajectory_id},
                        max(edge.stamp, stamp),
                        edge.renewed,
                    )
                )
            else:
                node = self.node.index.node(self.node.task, target)
                node.reached_by[row.trajectory_id] = None
                self.node.index.hold(node, END, NONE, (row.trajectory_id,))
                self.node.index.hold(self.node, self.signature, row.pre_key, (row.trajectory_id,))
                taken.append(LazyEdge(step, node, frozenset((row.trajectory_id,)), stamp))
                self.node.index.charge(self.node, 1)
            taken.sort(key=_stamp, reverse=True)
            self._edges[key] = taken  # a new list: a replay walking the old one is not disturbed

    def drop(self, removed: frozenset[str], pre_key: str) -> bool:
        """Forget removed trajectories made here from a pre key; False if the call is known to have none left.

        Only the lists that can hold them are read: all edges, and the pre key's.
        """
        for key in {None, pre_key}:
            edges = self._edges.get(key)
            if edges is not None and any(not edge.trajectories.isdisjoint(removed) for edge in edges):
                kept = [
                    LazyEdge(edge.step, edge.node, edge.trajectories - removed, edge.stamp, edge.renewed)
                    for edge in edges
                    if not edge.trajectories <= removed
                ]
                if kept or key is None:
                    self._edges[key] = kept
                else:  # read again if asked: a call's pre keys do not pile up as trajectories come and go
                    del self._edges[key]
        return self._edges.get(None) != []

    def promote(self, row: StepRow, now: float) -> None:
        """Make the edge a trajectory took the latest success among loaded edges."""
        self.latest = max(self.latest, now)
        for key in {None, row.pre_key}:  # the only lists that can hold it: all edges, and its pre key's
            edges = self._edges.get(key)
            if edges is None:
                continue
            for edge in edges:
                if row.trajectory_id in edge.trajectories:
                    edge.stamp = now
            edges.sort(key=_stamp, reverse=True)

    def _load(self, pre_key: str | None) -> list[LazyEdge]:
        node = self.node
        rows = node.index.store.candidates_at(node.id, self.signature, pre_key)
        by_keys: dict[tuple[str, str], list[Candidate]] = {}
        for row in rows:
            by_keys.setdefault((row.pre_key, row.post_key), []).append(row)
        edges = []
        for (pre, post), found in by_keys.items():
            first = node.index.decoded.first_step(found, node.id, self.signature)
            if first is not None:
                step, followed = first
                target = node.index.node(node.task, child(node.id, self.signature, pre, post))
                target.reached_by[followed.trajectory_id] = None
                ids = frozenset(c.trajectory_id for c in found)
                node.index.hold(target, END, NONE, (followed.trajectory_id,))
                node.index.hold(node, self.signature, pre, ids)
                edges.append(LazyEdge(step, target, ids, followed.last_used))
        edges.sort(key=_stamp, reverse=True)
        return edges


def _stamp(edge: LazyEdge) -> float:
    return edge.stamp


_T = TypeVar("_T")


class _OnFirstUse(Generic[_T]):
    """A node's part read from the store on first use: ``load`` keeps it in the node's ``__dict__``
    under the same name, where later reads find it as a plain attribute, without a call (a property
    would cost one at every step of every replay)."""

    def __init__(self, load: Callable[[LazyNode], _T]) -> None:
        self.load = load
        self.__doc__ = load.__doc__

    @overload
    def __get__(self, node: None, owner: type) -> _OnFirstUse[_T]: ...
    @overload
    def __get__(self, node: LazyNode, owner: type | None = None) -> _T: ...
    def __get__(self, node: LazyNode | None, owner: type | None = None) -> _T | _OnFirstUse[_T]:
        return self if node is None else self.load(node)


@dataclass(eq=False)
class LazyNode:
    """A point reached after some steps of a task; its calls and ends load on first use."""

    index: LazyIndex
    task: str
    id: str
    edges: int = field(default=0)
    """The edges loaded under this node (its charge against the index's bound)."""
    reached_by: dict[str, None] = field(default_factory=dict)
    """The trajectories decoded on the way here, in order (an end is found among them if the store
    lost its row meanwhile: a replay in flight completes when another worker evicts its trajectory,
    unless this process has caught up with the removal: see :meth:`drop`)."""

    def _first_groups(self) -> dict[str, LazyGroup]:
        """The calls that may come next, by signature (loaded on first use)."""
        try:
            return self.load()
        except Exception:
            logger.warning("the next steps of a task could not be read from the store", exc_info=True)
            return {}  # a miss, not cached: the next call reads again

    def load(self) -> dict[str, LazyGroup]:
        """The calls that may come next, read from the store unless loaded; what fails is raised."""
        groups: dict[str, LazyGroup] | None = self.__dict__.get("groups")
        if groups is None:
            groups = self.__dict__["groups"] = self._load_groups()
            self.index.charge(self, len(groups))
        return groups

    groups = _OnFirstUse(_first_groups)

    def loaded_groups(self) -> dict[str, LazyGroup] | None:
        """The groups if they are loaded (the store is not read)."""
        return self.__dict__.get("groups")

    def _load_groups(self) -> dict[str, LazyGroup]:
        """The groups, least recently used first (a replay walks them newest first and stops early)."""
        groups = []
        store = self.index.store
        for signature, head in store.heads_at(self.id):
            step, latest = self.index.decoded.step(head, self.id, signature), head.last_used
            if step is None:  # the latest row disagrees with its record: the others may not
                candidates = store.candidates_at(self.id, signature, None)
                first = self.index.decoded.first_step(candidates, self.id, signature)
                if first is not None:
                    step, latest = first[0], first[1].last_used
            if step is not None:
                groups.append(LazyGroup(self, signature, step, latest))
        groups.sort(key=LazyGroup.latest_stamp)
        return {group.signature: group for group in groups}

    def _first_ends(self) -> dict[str, Trajectory]:
        """The most recently used trajectory that ends here, if any (loaded on first use)."""
        try:
            ends = self.__dict__["ends"] = self._load_ends()
            self.index.hold(self, END, NONE, ends)
        except Exception:
            logger.warning(
                "the trajectories ending at a step could not be read from the store", exc_info=True
            )
            return {}
        return ends

    ends = _OnFirstUse(_first_ends)

    def end_with(self, trajectory_id: str, trajectory: Trajectory) -> None:
        """Make a trajectory the one that ends here."""
        self.__dict__["ends"] = {trajectory_id: trajectory}
        self.index.hold(self, END, NONE, (trajectory_id,))

    def take(self, row: StepRow, target: str, step: Step, stamp: float) -> None:
        """Take in a new trajectory's step made here, if this node's calls are loaded."""
        groups = self.loaded_groups()
        if groups is None:
            return
        group = groups.get(row.signature)
        if group is None:
            group = LazyGroup(self, row.signature, step, stamp)  # its edges load from the store
            self.index.charge(self, 1)
        else:
            group.add(row, target, step, stamp)
        others = {signature: g for signature, g in groups.items() if signature != row.signature}
        if row.signature not in groups or all(group.latest >= g.latest for g in others.values()):
            self.__dict__["groups"] = {**others, row.signature: group}  # the newest last; a new dict

    def drop(self, removed: frozenset[str], places: Iterable[tuple[str, str]]) -> None:
        """Forget removed trajectories in what is loaded here, and in the ones that reached it.

        ``places``: the calls (signature, pre key) where this node's edges name them.
        A removed trajectory can be one that missed a call (``stray_call``): no replay may end on it,
        so a replay in flight that followed it here misses at its end instead of finishing on it.
        """
        groups = self.loaded_groups()
        if groups is not None:
            emptied = {
                signature
                for signature, pre_key in places
                if (group := groups.get(signature)) is not None and not group.drop(removed, pre_key)
            }
            if emptied:
                self.__dict__["groups"] = {s: g for s, g in groups.items() if s not in emptied}
        ends = self.__dict__.get("ends")
        if ends is not None and not removed.isdisjoint(ends):
            del self.__dict__["ends"]  # the next read finds the latest that is left
        if not removed.isdisjoint(self.reached_by):
            self.reached_by = {t: None for t in self.reached_by if t not in removed}

    def _load_ends(self) -> dict[str, Trajectory]:
        rows = self.index.store.candidates_at(self.id, END, None)
        for candidate in sorted(rows, key=lambda c: c.last_used, reverse=True):
            found = self.index.decoded.get(candidate.trajectory_id)
            if (
                found is not None
                and found[1][-1]
                == StepRow(candidate.trajectory_id, candidate.step_no, self.id, END, NONE, NONE)
                and self.index.decoded.timed(candidate, found[0])
            ):
                return {candidate.trajectory_id: found[0]}
        for trajectory_id in reversed(self.reached_by):
            found = self.index.decoded.peek(trajectory_id)
            if found is not None and (found[1][-1].node, found[1][-1].signature) == (self.id, END):
                return {trajectory_id: found[0]}
        return {}


class LazyTaskIndex:
    """One task's step index in the store, as a replay walks it."""

    def __init__(self, index: LazyIndex, task_key: str) -> None:
        self.index = index
        self.task_key = task_key
        self._root = root(task_key)
        self.revision = 0
        """The task's stamp when its state was last read (passed back as ``since``)."""
        self.size = 0
        self.mark: int | None = None
        """The store's change mark of the task when its state was last read."""
        self.checked = -math.inf
        """When its state was last read (``time.monotonic()``)."""
        self.generation = -1
        """The index's generation at that read (this process's own changes move it)."""
        self.lock = threading.Lock()
        self.latest: str | None = None
        """The trajectory promoted last (promoting it again changes nothing)."""

    def __len__(self) -> int:
        return self.size

    @property
    def root(self) -> LazyNode:
        """The task's first node."""
        return self.index.node(self.task_key, self._root)

    @property
    def tags(self) -> frozenset[str]:
        """The tags of the task (part of its key, so the same for all its trajectories)."""
        found = self._recorded()
        return frozenset() if found is None else frozenset(found.tags)

    @property
    def text(self) -> str:
        """The task's text, as one of its trajectories recorded it (signed with it, in a signed store)."""
        found = self._recorded()
        return "" if found is None else found.task

    def _recorded(self) -> Trajectory | None:
        """One decoded trajectory of the task, if it has any."""
        for group in self.root.groups.values():
            for edge in group.ordered():
                found = self.index.decoded.get(next(iter(edge.trajectories)))
                if found is not None:
                    return found[0]
        return None

    def promote(self, trajectory_id: str) -> None:
        """Mark a trajectory as the most recently successful one along its loaded path."""
        if trajectory_id == self.latest:
            return
        self.latest = trajectory_id
        now = time.time()
        found = self.index.decoded.get(trajectory_id)
        if found is None:
            return
        for row in found[1]:
            node = self.index.cached(row.node)
            if node is None:
                continue
            groups = node.loaded_groups()
            if row.signature == END:
                node.end_with(trajectory_id, found[0])
            elif groups is not None and (group := groups.get(row.signature)) is not None:
                group.promote(row, now)
                if next(reversed(groups)) != row.signature:
                    groups[row.signature] = groups.pop(row.signature)


class LazyIndex:
    """Task step indexes read from a :class:`~muscle_mem.stores.StepIndexed` store, nodes in a bounded LRU."""

    def __init__(
        self, store: IndexedStore, decoded: Decoded, index_size: int = INDEX_SIZE, sync_interval: float = 0.0
    ) -> None:
        self.store = store
        self.feed = store if isinstance(store, ChangeFeed) else None
        self.sync_interval = sync_interval
        """The most seconds a task's state may go unread while the store cannot say what changed."""
        self.decoded = decoded
        self.index_size = index_size
        self._tasks: dict[str, LazyTaskIndex] = {}
        self._nodes: OrderedDict[str, LazyNode] = OrderedDict()
        self._by_task: dict[str, set[str]] = {}
        self._held: dict[str, dict[str, set[tuple[str, str, str]]]] = {}
        """Task key → trajectory id → where cached nodes name it (node id, signature, pre key; the
        signature ``END`` for its end or its arrival at the node): a removal reads only those."""
        self.edges = 0
        """The edges held by cached nodes (at most ``index_size``, but for the nodes of one replay)."""
        self._generation = 0
        """Moved by :meth:`invalidate` with no task: every task's state is read again."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._nodes)

    def lookup(self, task_key: str) -> LazyTaskIndex:
        """The task's index; its cached nodes are dropped if the task changed in the store.

        With a :class:`~muscle_mem.stores.ChangeFeed`, a task whose change mark is the one seen at
        its last read is answered from memory (nothing is read from the store); while the store cannot
        tell (a listener not connected), the task's state is read at most every ``sync_interval``
        seconds. Without one, the store's revision is read on every call.
        """
        task = self._tasks.get(task_key)  # one C call: no lock to read
        if task is None:
            with self._lock:
                task = self._tasks.get(task_key)
                if task is None:
                    task = self._tasks[task_key] = LazyTaskIndex(self, task_key)
        mark = None
        generation = self._generation
        if self.feed is not None:
            mark = self.feed.change_mark(task_key)
            if task.generation == generation and (
                mark == task.mark
                if mark is not None
                else time.monotonic() - task.checked < self.sync_interval
            ):
                return task
        elif task.revision and self.store.revision() == task.revision:
            return task
        checked = time.monotonic()
        state = self.store.task_state(task_key, task.revision)
        with task.lock:
            revision = state.revision
            if state.changed:
                revision = self._catch_up(task, state)
                task.latest = None
            task.revision, task.size = revision, state.size
            task.mark, task.checked, task.generation = mark, checked, generation
        if state.size:
            try:  # now, so that a store that cannot be read is the caller's outage
                task.root.load()
            except StoreUnavailable:
                raise
            except Exception:  # a row's fault: read again, and named, when the replay reaches it
                logger.debug("the first steps of task %r could not be read", task_key, exc_info=True)
        return task

    def _catch_up(self, task: LazyTaskIndex, state: TaskState) -> int:
        """Apply a changed task's few changes to its cached nodes, or drop them; the revision read up to.

        A replay loading a node's edges while this runs may keep what it read before the change: a
        trajectory added meanwhile is then missed there, or one removed still routes a replay, whose
        every step is checked as always, until the task's next change.
        """
        with self._lock:
            cached = bool(self._by_task.get(task.task_key))
        if not cached or not task.revision or abs(state.size - task.size) > CATCH_UP_LIMIT:
            self._forget(task.task_key)
            return state.revision
        try:
            changes = self.store.changes(task.task_key, task.revision)
        except Exception:
            logger.warning("the changes of a task could not be read; its steps are read again", exc_info=True)
            self._forget(task.task_key)
            return state.revision
        if changes.reset or changes.skipped or len(changes.added) + len(changes.removed) > CATCH_UP_LIMIT:
            self._forget(task.task_key)
            return changes.revision
        self._apply(task.task_key, changes)
        return changes.revision

    def _apply(self, task_key: str, changes: Changes) -> None:
        """Remove, then add, each changed trajectory in the cached nodes it passes through.

        Nodes are looked up one by one, so a change costs the same however many nodes are cached.
        """
        if changes.removed:
            for holder, places in self._holding(task_key, changes.removed):
                holder.drop(changes.removed, places)
        for trajectory in changes.added:
            if trajectory.created_at < self.decoded.oldest:
                continue  # past the TTL by its own time: removed by the next expiry
            rows = step_rows(trajectory)
            self.decoded.put(trajectory, rows)
            stamp = last_used(changes, trajectory)
            for row, following in pairwise(rows):
                if (node := self.cached(row.node)) is not None:
                    node.take(row, following.node, trajectory.steps[row.step_no], stamp)
            if (end := self.cached(rows[-1].node)) is not None and "ends" in end.__dict__:
                end.end_with(trajectory.id, trajectory)

    def invalidate(self, task_key: str | None = None) -> None:
        """Read the state of a task (None: of every task) at its next lookup: this process changed it.

        The store's feed tells of this process's changes too, but not necessarily before its next call.
        """
        if task_key is None:
            self._generation += 1
            return
        with self._lock:
            task = self._tasks.get(task_key)
        if task is not None:
            task.generation = -1

    def node(self, task_key: str, node_id: str) -> LazyNode:
        """The node with this id, cached or new (not loaded yet)."""
        lock = self._lock
        lock.acquire()  # not ``with``: it would cost a hit several times as much here
        try:
            node = self._nodes.get(node_id)
            if node is not None:
                self._nodes.move_to_end(node_id)
                return node
            node = self._nodes[node_id] = LazyNode(self, task_key, node_id)
            self._by_task.setdefault(task_key, set()).add(node_id)
            return node
        finally:
            lock.release()

    def hold(self, node: LazyNode, signature: str, pre_key: str, trajectory_ids: Iterable[str]) -> None:
        """Note that a cached node names trajectories at a call (signature and pre key), or ``END``."""
        place = (node.id, signature, pre_key)
        with self._lock:
            if self._nodes.get(node.id) is not node:
                return  # not cached (evicted meanwhile): no removal reads it
            held = self._held.setdefault(node.task, {})
            for trajectory_id in trajectory_ids:
                places = held.get(trajectory_id)
                if places is None:
                    held[trajectory_id] = {place}
                else:
                    places.add(place)

    def _holding(
        self, task_key: str, removed: frozenset[str]
    ) -> list[tuple[LazyNode, list[tuple[str, str]]]]:
        """The cached nodes that name removed trajectories, with where (forgotten here)."""
        at: dict[str, list[tuple[str, str]]] = {}
        with self._lock:
            held = self._held.get(task_key, {})
            for trajectory_id in removed:
                for node_id, signature, pre_key in held.pop(trajectory_id, ()):
                    at.setdefault(node_id, []).append((signature, pre_key))
            found = [(node, at[node_id]) for node_id in at if (node := self._nodes.get(node_id))]
        return found

    def _release(self, node: LazyNode) -> None:
        """Forget where an evicted node names trajectories (lock held)."""
        held = self._held.get(node.task)
        if not held:
            return
        named: set[str] = set(node.reached_by)
        named.update(node.__dict__.get("ends", ()))
        for group in (node.loaded_groups() or {}).values():
            for edge in group.loaded_edges():
                named.update(edge.trajectories)
        for trajectory_id in named:
            places = held.get(trajectory_id)
            if places is not None:
                places.difference_update([p for p in places if p[0] == node.id])
                if not places:
                    del held[trajectory_id]

    def cached(self, node_id: str) -> LazyNode | None:
        """The node with this id if it is cached."""
        with self._lock:
            return self._nodes.get(node_id)

    def charge(self, node: LazyNode, edges: int) -> None:
        """Count edges loaded under a node, then drop the least recently used nodes past the bound."""
        with self._lock:
            node.edges += edges
            if self._nodes.get(node.id) is node:
                self.edges += edges
            while self.edges > self.index_size and len(self._nodes) > 1:
                _, oldest = self._nodes.popitem(last=False)
                self.edges -= oldest.edges
                self._by_task.get(oldest.task, set()).discard(oldest.id)
                self._release(oldest)

    def _forget(self, task_key: str) -> None:
        with self._lock:
            self._held.pop(task_key, None)
            for node_id in self._by_task.pop(task_key, set()):
                node = self._nodes.pop(node_id, None)
                if node is not None:
                    self.edges -= node.edges
