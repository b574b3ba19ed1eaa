"""A task changed in the store catches up: its cached nodes take in a few added or removed trajectories."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from conftest import StoreSpec, await_change, await_listening, open_spec
from muscle_mem import Check, Engine
from muscle_mem.lazy_index import CATCH_UP_LIMIT, LazyIndex
from muscle_mem.stores import MemoryStore, Store
from muscle_mem.stores.base import Changes
from muscle_mem.stores.steps import root

TASK = "read the counter"


def worker(store: Store) -> tuple[Engine, dict[str, int], list[int]]:
    """An engine whose agent reads a counter, pre-checked by a plain compare (every snapshot is tried)."""
    engine = Engine(store)
    state = {"v": 0}
    reads: list[int] = []

    @engine.tool(pre_check=Check(lambda: state["v"], lambda now, then: now == then))
    def read() -> int:
        reads.append(state["v"])
        return state["v"]

    @engine.tool()
    def report(text: str) -> str:
        return text

    engine.set_agent(lambda task: report(f"counter is {read()}"))
    return engine, state, reads


def index_of(engine: Engine) -> LazyIndex:
    index = engine._cache.index
    assert isinstance(index, LazyIndex)
    return index


def count_reads(monkeypatch: pytest.MonkeyPatch, store: object) -> list[str]:
    """Note the node of every read of the store's step index (a node reads its calls when it loads)."""
    reads: list[str] = []
    for name in ("heads_at", "candidates_at"):
        method: Callable[..., Any] = getattr(store, name)

        def counted(node: str, *args: Any, _method: Callable[..., Any] = method) -> Any:
            reads.append(node)
            return _method(node, *args)

        monkeypatch.setattr(store, name, counted)
    return reads


def first_node(engine: Engine) -> str:
    """The id of the task's first node: where every trajectory of it starts (one edge each here)."""
    [task_key] = index_of(engine)._tasks
    return root(task_key)


def call(engine: Engine, state: dict[str, int], value: int) -> bool:
    """Run the task with the counter at ``value``; whether it was a hit (the output is always right)."""
    state["v"] = value
    result = engine(TASK)
    assert result.output == f"counter is {value}"
    return result.hit


def recorded(engine: Engine, state: dict[str, int], values: range) -> None:
    for value in values:
        assert not call(engine, state, value)


def test_a_miss_recorded_here_joins_the_cached_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """After this engine records a new counter value, hits old and new read nothing of the index again."""
    engine, state, reads = worker(MemoryStore())
    recorded(engine, state, range(5))
    assert call(engine, state, 2)
    index_reads = count_reads(monkeypatch, engine.store)
    assert not call(engine, state, 9)  # recorded: the task changed here
    assert call(engine, state, 9) and call(engine, state, 2) and call(engine, state, 4)
    assert first_node(engine) not in index_reads  # only nodes never reached before (9's, 4's) load
    assert reads == [0, 1, 2, 3, 4, 2, 9, 9, 2, 4]
    engine.close()


def test_a_trajectory_added_elsewhere_is_replayed_without_reloading(
    durable: StoreSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another handle records a new counter value: this engine replays it from its cached nodes."""
    engine, state, _ = worker(open_spec(durable))
    recorded(engine, state, range(4))
    assert call(engine, state, 1)
    [key] = index_of(engine)._tasks
    before = await_listening(engine.store, key)
    other, other_state, _ = worker(open_spec(durable))
    assert not call(other, other_state, 50)
    await_change(engine.store, key, before)
    index_reads = count_reads(monkeypatch, engine.store)
    assert call(engine, state, 50) and call(engine, state, 1)
    assert first_node(engine) not in index_reads  # only the new trajectory's later nodes load
    other.close()
    engine.close()


def test_a_trajectory_removed_elsewhere_is_not_replayed(
    durable: StoreSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another handle removes one trajectory: it misses here, the others still hit from the cached nodes."""
    engine, state, _ = worker(open_spec(durable))
    recorded(engine, state, range(4))
    assert call(engine, state, 1)
    [key] = index_of(engine)._tasks
    before = await_listening(engine.store, key)
    other = open_spec(durable)
    removed = next(iter(other.summaries())).id
    gone = other.get(removed)
    assert gone is not None and gone.steps[0].pre is not None
    missing: int = gone.steps[0].pre.value
    other.remove([removed])
    await_change(engine.store, key, before)
    index_reads = count_reads(monkeypatch, engine.store)
    assert call(engine, state, (missing + 1) % 4)  # one that is left: a hit, from the cached nodes
    assert first_node(engine) not in index_reads
    assert not call(engine, state, missing)  # the removed one: a miss (the agent records it again)
    other.close()
    engine.close()


def test_many_changes_drop_the_cached_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """More changes than :data:`CATCH_UP_LIMIT` at once: the nodes are read again, and replays are right."""
    store = MemoryStore()
    engine, state, _ = worker(store)
    recorded(engine, state, range(3))
    assert call(engine, state, 1)
    other, other_state, _ = worker(store)
    recorded(other, other_state, range(100, 101 + CATCH_UP_LIMIT))
    index_reads = count_reads(monkeypatch, store)
    assert call(engine, state, 100 + CATCH_UP_LIMIT) and call(engine, state, 1)
    assert first_node(engine) in index_reads  # read again, not caught up
    engine.close()


def test_a_change_the_store_cannot_list_whole_drops_the_cached_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Changes with rows the store could not read (``skipped``): the nodes are read again, nothing raises."""
    store = MemoryStore()
    engine, state, _ = worker(store)
    recorded(engine, state, range(3))
    assert call(engine, state, 1)
    listed = store.changes

    def with_skipped(task_key: str, since: int) -> Changes:
        found = listed(task_key, since)
        return Changes(
            found.revision, found.added, found.removed, found.reset, found.last_used, ("unreadable",)
        )

    monkeypatch.setattr(store, "changes", with_skipped)
    assert not call(engine, state, 7)
    index_reads = count_reads(monkeypatch, store)
    assert call(engine, state, 7) and call(engine, state, 2)
    assert first_node(engine) in index_reads
    engine.close()


def test_a_store_that_fails_to_list_changes_drops_the_cached_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """``changes`` raising is logged and the nodes are read again: the caller sees right replays."""
    store = MemoryStore()
    engine, state, _ = worker(store)
    recorded(engine, state, range(3))
    assert call(engine, state, 1)

    def failing(task_key: str, since: int) -> Changes:
        raise OSError("the store went away for a moment")

    monkeypatch.setattr(store, "changes", failing)
    assert not call(engine, state, 7)
    assert call(engine, state, 7) and call(engine, state, 0)
    engine.close()
