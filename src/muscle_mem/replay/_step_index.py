"""The in-process index: the trajectories of each task merged into a prefix tree of steps.

At each node, the possible next calls are grouped by signature (tool, version, arguments), so a
pre-check is captured once per distinct call; within a group, snapshots of equality Checks are found
by hash, so a hit costs the same with one stored trajectory or a hundred thousand. Every ordered
mapping here keeps the most recently successful entry last.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, cast

from muscle_mem.model.provenance import DirectArguments, direct_arguments
from muscle_mem.model.trajectory import Step, Trajectory
from muscle_mem.stores.base import Changes, CoreStore

_V = TypeVar("_V")

NOT_RENEWED: Any = object()
"""An edge no full hit in this process has renewed the pre snapshot of."""


class StepEdge(Protocol):
    """What a replay reads of an edge (this module's, or :mod:`muscle_mem.replay._stored_step_index`'s)."""

    @property
    def step(self) -> Step: ...
    @property
    def node(self) -> StepNode: ...
    @property
    def trajectories(self) -> Set[str]: ...
    @property
    def stamp(self) -> float: ...

    renewed: Any
    """The pre snapshot of this process's latest full hit through the edge (:data:`NOT_RENEWED` if none)."""
    passed: Any
    """The last output a replay's comparison passed here, with what it saw before and after (None if none)."""


class StepGroup(Protocol):
    """What a replay reads of a group of edges making the same call."""

    @property
    def step(self) -> Step: ...
    @property
    def direct(self) -> DirectArguments | None:
        """How to pass the call's arguments if none needs evaluating (constant scalars, whole outputs)."""

    def ordered(self, pre_key: str | None = None, *, keyed: bool = False) -> Iterator[StepEdge]: ...
    def known(self, pre_key: str | None) -> Iterator[StepEdge]:
        """The edges in memory of the call made in the state a pre snapshot key names (None: none), none read for it."""

    def latest_stamp(self) -> float: ...


class StepNode(Protocol):
    """What a replay reads of a node: the calls that may come next, the trajectories ending here."""

    @property
    def groups(self) -> Mapping[str, StepGroup]: ...
    @property
    def ends(self) -> dict[str, Trajectory]: ...


class TaskSteps(Protocol):
    """A task's steps as the engine uses them: walked by a replay, promoted by a hit."""

    @property
    def root(self) -> StepNode: ...
    @property
    def tags(self) -> frozenset[str]: ...
    @property
    def text(self) -> str:
        """The task's text, as its trajectories recorded it."""
        ...

    params_passed: dict[Any, tuple[object, dict[frozenset[str], str]]]
    """Per set of params values, what replays with them start from (this process's; see ``params_passed``)."""

    def __len__(self) -> int: ...
    def promote(self, trajectory_id: str) -> None: ...


@dataclass(eq=False, slots=True)
class Node:
    """A point reached after some steps: calls that may come next, and trajectories that end here."""

    groups: dict[str, Group] = field(default_factory=dict)
    ends: dict[str, Trajectory] = field(default_factory=dict)
    """The trajectories complete at this node, by id."""


@dataclass(eq=False, slots=True)
class Edge:
    """One recorded way of making a call: the step with its snapshots, leading to a node."""

    step: Step
    node: Node
    signature: str
    trajectories: set[str] = field(default_factory=set)
    stamp: int = 0
    """When a trajectory through this edge last succeeded (recorded or replayed), on the index's clock."""
    renewed: Any = NOT_RENEWED
    """The pre snapshot of this process's latest full hit through the edge (see :attr:`Check.renew`)."""
    passed: Any = None
    """The last output a replay's comparison passed here, with what it saw before and after (see :mod:`muscle_mem.replay`)."""


@dataclass(eq=False, slots=True)
class Group:
    """Edges that make the same call; they differ only in their snapshots."""

    step: Step
    edges: dict[tuple[str | None, str | None], Edge] = field(default_factory=dict)
    by_pre: dict[str | None, dict[str | None, Edge]] = field(default_factory=dict)
    direct: DirectArguments | None = field(init=False)

    def __post_init__(self) -> None:
        self.direct = direct_arguments(self.step.args, self.step.kwargs)

    def ordered(self, pre_key: str | None = None, *, keyed: bool = False) -> Iterator[Edge]:
        """Edges, most recent first: all of them, or (``keyed``) those whose pre snapshot hashes to a key.

        Lazy, so a hit found among the newest edges does not walk the others.
        """
        return newest_first(self.by_pre.get(pre_key, {}) if keyed else self.edges)

    def known(self, pre_key: str | None) -> Iterator[Edge]:
        """The edges made in the state ``pre_key`` names, newest first (all of them are in memory)."""
        return newest_first(self.by_pre.get(pre_key, {}))

    def latest_stamp(self) -> int:
        """The stamp of the group's most recently successful edge."""
        return next(reversed(self.edges.values())).stamp


def newest_first(source: Mapping[Any, _V]) -> Iterator[_V]:
    """The values, newest first.

    If another thread changes the mapping meanwhile, the walk goes on over a copy from about where
    it was (an edge may then be skipped or seen twice: a miss at worst).
    """
    values = cast("dict[Any, _V]", source).values()  # a mapping that keeps its order, dicts here
    done = 0
    try:
        for edge in reversed(values):
            yield edge
            done += 1
    except RuntimeError:
        yield from list(reversed(values))[done:]


def _keys(step: Step) -> tuple[str | None, str | None]:
    route = step.route
    return (step.pre.key if step.pre else None, route or None)


def _make_latest(parent: Node, edge: Edge, stamp: int) -> None:
    """Move an edge and its group last in the ordered mappings of ``parent`` (the latest success)."""
    edge.stamp = stamp
    groups = parent.groups
    if next(reversed(groups)) != edge.signature:
        groups[edge.signature] = groups.pop(edge.signature)
    group = groups[edge.signature]
    keys = _keys(edge.step)
    if next(reversed(group.edges)) != keys:
        group.edges[keys] = group.edges.pop(keys)
    if next(reversed(group.by_pre)) != keys[0]:
        group.by_pre[keys[0]] = group.by_pre.pop(keys[0])
    siblings = group.by_pre[keys[0]]
    if next(reversed(siblings)) != keys[1]:
        siblings[keys[1]] = siblings.pop(keys[1])


class TaskIndex:
    """The prefix tree of one task key, kept in step with the store through ``Store.changes``."""

    def __init__(self) -> None:
        self.root = Node()
        self.revision = 0
        self._latest: str | None = None
        self.lock = threading.Lock()
        self._paths: dict[str, tuple[list[Edge], Node]] = {}
        self._clock = 0
        self.tags: frozenset[str] = frozenset()
        """The tags of the task (part of its key, so the same for all its trajectories)."""
        self.text = ""
        """The task's text, as its latest trajectory recorded it."""
        self.params_passed: dict[Any, tuple[object, dict[frozenset[str], str]]] = {}

    def __len__(self) -> int:
        return len(self._paths)

    def _tick(self) -> int:
        self._clock += 1
        return self._clock

    def add(self, trajectory: Trajectory) -> None:
        """Merge a trajectory in; if it cannot be (it raises), the index is left as it was."""
        if trajectory.id in self._paths:
            return
        calls = [(step, step.signature, _keys(step)) for step in trajectory.steps]
        self._latest = trajectory.id
        self.tags = frozenset(trajectory.tags)
        self.text = trajectory.task
        stamp = self._tick()
        node, path = self.root, []
        for step, signature, keys in calls:
            group = node.groups.get(signature)
            if group is None:
                group = node.groups[signature] = Group(step)
            edge = group.edges.get(keys)
            if edge is None:
                edge = group.edges[keys] = Edge(step, Node(), signature)
                group.by_pre.setdefault(keys[0], {})[keys[1]] = edge
            _make_latest(node, edge, stamp)  # a trajectory just recorded is the latest success on its path
            edge.trajectories.add(trajectory.id)
            path.append(edge)
            node = edge.node
        node.ends[trajectory.id] = trajectory
        self._paths[trajectory.id] = (path, node)

    def remove(self, trajectory_id: str) -> None:
        if trajectory_id == self._latest:
            self._latest = None
        found = self._paths.pop(trajectory_id, None)
        if found is None:
            return
        path, end = found
        end.ends.pop(trajectory_id, None)
        parent = self.root
        for edge in path:
            edge.trajectories.discard(trajectory_id)
            if not edge.trajectories:
                group = parent.groups[edge.signature]
                keys = _keys(edge.step)
                del group.edges[keys]
                siblings = group.by_pre[keys[0]]
                del siblings[keys[1]]
                if not siblings:
                    del group.by_pre[keys[0]]
                if not group.edges:
                    del parent.groups[edge.signature]
                return
            parent = edge.node

    def clear(self) -> None:
        """Forget every trajectory (the store answered with all of them again)."""
        self.root = Node()
        self._paths.clear()
        self._latest = None

    def promote(self, trajectory_id: str) -> None:
        """Mark a trajectory as the most recently successful one along its path."""
        if trajectory_id == self._latest:
            return
        with self.lock:
            self._latest = trajectory_id
            found = self._paths.get(trajectory_id)
            if found is None:
                return
            path, end = found
            parent = self.root
            stamp = self._tick()
            for edge in path:
                _make_latest(parent, edge, stamp)
                parent = edge.node
            end.ends[trajectory_id] = end.ends.pop(trajectory_id)


Skipped = Callable[[Iterable[str], str | None], None]
"""Told of trajectories left out (ids, and why, or None when the store has named them already)."""


class Index:
    """Task indexes by task key, synchronised lazily with a store.

    A trajectory that cannot be read or merged is left out and reported to ``skipped``, never raised:
    the task's other trajectories are still found.
    """

    def __init__(self, store: CoreStore, skipped: Skipped = lambda ids, why: None) -> None:
        self.store = store
        self._skipped = skipped
        self._tasks: dict[str, TaskIndex] = {}
        self._lock = threading.Lock()

    def lookup(self, task_key: str) -> TaskIndex:
        """The task's index, brought up to date with the store (other processes' writes included)."""
        with self._lock:
            task = self._tasks.get(task_key)
            if task is None:
                task = self._tasks[task_key] = TaskIndex()
        revision = self.store.revision()
        if task.revision == revision:
            return task
        with task.lock, _collector_paused():
            if task.revision != revision:
                changes = self.store.changes(task_key, task.revision)
                if changes.reset:
                    task.clear()
                for trajectory_id in changes.removed:
                    task.remove(trajectory_id)
                if changes.skipped:
                    self._skipped(changes.skipped, None)
                for trajectory in sorted(changes.added, key=lambda t: last_used(changes, t)):
                    try:
                        task.add(trajectory)
                    except Exception as exc:
                        self._skipped((trajectory.id,), f"it cannot be indexed ({exc!r})")
                task.revision = changes.revision if changes.reset else max(task.revision, changes.revision)
        return task


def last_used(changes: Changes, trajectory: Trajectory) -> float:
    """When a trajectory was last used (its creation, if the store's figure is not a number)."""
    used = changes.last_used.get(trajectory.id)
    return used if type(used) is float or type(used) is int else trajectory.created_at


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while trajectories are read into the index.

    Reading makes many long-lived objects, and the collections they trigger rescan the growing index
    again and again: half the time of reading 100,000 trajectories. Nothing read here is garbage.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
