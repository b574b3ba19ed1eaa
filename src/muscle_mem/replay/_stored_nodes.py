"""The nodes of a stored step index: a node's calls, a call's edges and a node's ends, each read from the store on first use."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, overload

from muscle_mem.model.provenance import direct_arguments
from muscle_mem.model.trajectory import Step, Trajectory
from muscle_mem.replay._decoded_trajectories import Decoded
from muscle_mem.replay._step_index import NOT_RENEWED
from muscle_mem.stores.base import CoreStore, StepIndexed
from muscle_mem.stores.steps import END, NONE, Candidate, StepRow, child

logger = logging.getLogger(__name__)


class IndexedStore(CoreStore, StepIndexed, Protocol):
    """A store with a step index."""


class NodeIndex(Protocol):
    """What a node asks of the index that keeps it: the store, the decoded records, its bounds and its notes."""

    store: IndexedStore
    decoded: Decoded

    def node(self, task_key: str, node_id: str) -> LazyNode:
        """The node of a task, cached or made."""
        ...

    def hold(self, node: LazyNode, signature: str, pre_key: str, trajectory_ids: Iterable[str]) -> None:
        """Note that a cached node names trajectories at a call (signature and pre key), or ``END``."""
        ...

    def charge(self, node: LazyNode, edges: int) -> None:
        """Count edges loaded under a node, then drop the least recently used nodes past the bound."""
        ...


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

    def known(self, pre_key: str | None) -> Iterator[LazyEdge]:
        """The loaded edges made in the state ``pre_key`` names (None: no pre snapshot), none read for it."""
        keyed = self._edges.get(NONE if pre_key is None else pre_key)
        if keyed is not None:
            return iter(keyed)
        every = self._edges.get(None, [])
        return (e for e in every if (e.step.pre.key if e.step.pre is not None else None) == pre_key)

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

    index: NodeIndex
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
