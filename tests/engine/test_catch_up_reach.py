"""A task's catch-up reads only the cached nodes its change passes through, however many are cached.

Counts, not times: the node look-ups of the call after a miss, and the nodes told of a removal, are
the same with 10 or 60 trajectories of the task stored and replayed.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest
from test_lazy_index import TASK, call, index_of, key_of, recorded, worker

from muscle_mem import Engine
from muscle_mem.replay._stored_nodes import LazyNode
from muscle_mem.stores import MemoryStore
from muscle_mem.stores.steps import root


class CountedNodes(OrderedDict[str, LazyNode]):
    """The index's node cache, counting the look-ups made in it."""

    def __init__(self, nodes: OrderedDict[str, LazyNode]) -> None:
        super().__init__(nodes)
        self.lookups = 0

    def get(self, key: str, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(key, default)

    def __getitem__(self, key: str) -> LazyNode:
        self.lookups += 1
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.lookups += 1
        return super().__contains__(key)


def served(stored: int) -> tuple[Engine, dict[str, int]]:
    """An engine that recorded ``stored`` counter values of one task, then replayed each (nodes cached)."""
    engine, state, _ = worker(MemoryStore())
    recorded(engine, state, range(stored))
    for value in range(stored):
        assert call(engine, state, value)
    return engine, state


def lookups_after_a_miss(stored: int) -> int:
    """The node look-ups of the hit that follows a miss (it catches up with the recorded trajectory)."""
    engine, state = served(stored)
    assert not call(engine, state, 1_000)
    index = index_of(engine)
    counted = index._nodes = CountedNodes(index._nodes)
    assert call(engine, state, 1_000)
    engine.close()
    return counted.lookups


def test_the_hit_after_a_miss_looks_up_the_same_nodes_at_any_size() -> None:
    """10 or 60 trajectories stored and replayed: the hit after a miss makes as many node look-ups."""
    few, many = lookups_after_a_miss(10), lookups_after_a_miss(60)
    assert few == many
    assert many < 60  # not one per cached node


def dropped_by_a_removal(stored: int, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the nodes told of one trajectory's removal by the next call's catch-up."""
    engine, state = served(stored)
    store = engine.store
    state["v"] = 3
    replayed = engine(TASK)
    assert replayed.hit and replayed.trajectory_id is not None
    told: list[str] = []
    original = LazyNode.drop

    def drop(node: LazyNode, *args: Any) -> None:
        told.append(node.id)
        original(node, *args)

    monkeypatch.setattr(LazyNode, "drop", drop)
    store.remove([replayed.trajectory_id])
    assert call(engine, state, 5)  # caught up with the removal: another trajectory still hits
    assert not call(engine, state, 3)  # the removed one misses
    engine.close()
    return told


def test_a_removal_reaches_only_the_nodes_that_name_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """10 or 60 trajectories cached: a removal is applied to the same few nodes, those on its path."""
    few = dropped_by_a_removal(10, monkeypatch)
    monkeypatch.undo()
    many = dropped_by_a_removal(60, monkeypatch)
    assert 0 < len(few) == len(many) <= 3  # its first node, the node its read led to, its end


def test_an_evicted_node_is_forgotten_by_the_removal_map() -> None:
    """With a small ``index_size``, where trajectories are named is remembered for cached nodes only."""
    engine, state, _ = worker(MemoryStore(), index_size=5)
    recorded(engine, state, range(30))
    for value in range(30):
        assert call(engine, state, value)
    index = index_of(engine)
    held = index._held[key_of(engine)]
    places = {place for named in held.values() for place in named}
    assert places and {node_id for node_id, _, _ in places} <= set(index._nodes)
    assert len(held) <= index.edges + len(index._nodes)  # bounded by what is cached, not by the 30 stored
    engine.close()


def test_a_removed_trajectory_is_not_replayed_after_its_nodes_were_evicted() -> None:
    """Nodes evicted and loaded again still learn of a removal: the removed trajectory misses."""
    store = MemoryStore()
    engine, state, _ = worker(store, index_size=5)
    recorded(engine, state, range(12))
    state["v"] = 4
    replayed = engine(TASK)
    assert replayed.hit and replayed.trajectory_id is not None
    for value in range(12):
        assert call(engine, state, value)
    assert call(engine, state, 4)
    store.remove([replayed.trajectory_id])
    assert not call(engine, state, 4)
    engine.close()


def test_pre_keys_of_removed_trajectories_do_not_pile_up() -> None:
    """An engine keeping 3 trajectories records 30 states: its first node keeps edge lists for a few pre keys."""
    engine, state, _ = worker(MemoryStore(), capacity=3)
    recorded(engine, state, range(30))
    assert call(engine, state, 29)
    index = index_of(engine)
    first = index.cached(root(key_of(engine)))
    assert first is not None
    [group] = (first.loaded_groups() or {}).values()
    assert len(group._edges) <= 3 + 2  # the stored ones' keys, the one just missed, all edges
    engine.close()
