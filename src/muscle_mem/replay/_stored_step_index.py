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

import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from itertools import pairwise
from typing import Any

from muscle_mem.model.trajectory import Trajectory
from muscle_mem.replay._decoded_trajectories import Decoded
from muscle_mem.replay._step_index import last_used
from muscle_mem.replay._stored_nodes import IndexedStore, LazyNode
from muscle_mem.stores.base import ChangeFeed, Changes, StoreUnavailable, TaskState
from muscle_mem.stores.steps import END, root, step_rows

logger = logging.getLogger(__name__)

INDEX_SIZE = 100_000
"""Default bound on the edges of loaded nodes kept per engine."""

CATCH_UP_LIMIT = 64
"""Most trajectories added plus removed that a task's cached nodes take in place; past it they are dropped."""


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
        self.params_passed: dict[Any, tuple[object, dict[frozenset[str], str]]] = {}
        """Per set of params values, what replays with them start from (see ``params_passed``)."""

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
