"""A store's step index read lazily: a restarted engine decodes what it follows, in bounded caches.

A task changed in the store catches up: its cached nodes take in a few added or removed trajectories.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from conftest import StoreSpec, await_change, await_listening, open_spec
from muscle_mem import Check, Engine
from muscle_mem.replay._stored_step_index import CATCH_UP_LIMIT, LazyIndex
from muscle_mem.stores import MemoryStore, Store
from muscle_mem.stores.base import Changes
from muscle_mem.stores.steps import root

TASK = "read the counter"


def worker(
    store: Store, *, plain: bool = False, **options: object
) -> tuple[Engine, dict[str, int], list[int]]:
    """An engine whose agent reads a counter (pre-checked by value) and reports it.

    ``plain``: the pre-check is a plain compare, so every stored snapshot is tried (not found by hash).
    """
    engine = Engine(store, **options)  # type: ignore[arg-type]
    state = {"v": 0}
    reads: list[int] = []
    capture = lambda: state["v"]  # noqa: E731
    check = Check(capture, lambda now, then: now == then) if plain else Check.equal(capture)

    @engine.tool(pre_check=check)
    def read() -> int:
        reads.append(state["v"])
        return state["v"]

    @engine.tool()
    def report(text: str) -> str:
        return text

    engine.set_agent(lambda task: report(f"counter is {read()}"))
    return engine, state, reads


def index_of(engine: Engine) -> LazyIndex:
    """The engine's step index (the lazy one, for the stores of this package)."""
    index = engine._cache.index
    assert isinstance(index, LazyIndex)
    return index


def fill(spec: StoreSpec, count: int) -> None:
    """Record ``count`` trajectories of the task, one per counter value."""
    engine, state, _ = worker(open_spec(spec))
    for value in range(count):
        state["v"] = value
        assert engine(TASK).stored
    engine.close()


def test_a_first_call_decodes_the_trajectories_it_follows_not_the_task(durable: StoreSpec) -> None:
    """A new engine on 60 trajectories of one task hits while decoding at most one per step and end."""
    fill(durable, 60)
    engine, state, reads = worker(open_spec(durable))
    state["v"] = 17
    result = engine(TASK)
    assert result.hit and result.output == "counter is 17" and reads == [17]
    decoded = index_of(engine).decoded
    assert decoded.count <= 3  # the newest (the group's step), then the one whose pre-check matched
    assert len(decoded) == decoded.count
    engine.close()


def test_the_caches_never_exceed_their_settings(durable: StoreSpec) -> None:
    """With ``index_size=3`` and ``decoded_size=2``, hits on many trajectories keep both caches bounded."""
    fill(durable, 12)
    engine, state, reads = worker(open_spec(durable), index_size=3, decoded_size=2)
    index = index_of(engine)
    for value in [*range(12), 3, 7, 3]:
        state["v"] = value
        result = engine(TASK)
        assert result.hit and result.output == f"counter is {value}"
        assert len(index.decoded) <= 2
        assert index.edges <= 3
    assert reads == [*range(12), 3, 7, 3]
    assert index.decoded.count > 2  # bounded by evicting, not by decoding less
    engine.close()


def test_a_task_changed_by_another_process_is_seen(durable: StoreSpec) -> None:
    """Another handle adds and removes trajectories of the task: the lazy engine replays what is stored."""
    fill(durable, 3)
    engine, state, _ = worker(open_spec(durable))
    state["v"] = 1
    assert engine(TASK).hit
    [key] = index_of(engine)._tasks
    before = await_listening(engine.store, key)
    other, other_state, _ = worker(open_spec(durable))
    other_state["v"] = 50
    added = other(TASK)
    assert added.stored
    await_change(engine.store, key, before)  # PostgreSQL: the notification arrives
    state["v"] = 50
    assert engine(TASK).hit  # added elsewhere, seen here
    before = await_listening(engine.store, key)
    other.store.remove([added.trajectory_id])
    await_change(engine.store, key, before)
    assert not engine(TASK).hit  # removed elsewhere: a miss (the agent runs and records it again)
    other.close()
    engine.close()


@pytest.mark.parametrize("size", [0, -1, 1.5, True])
def test_cache_settings_must_be_positive_ints(size: object) -> None:
    """``index_size`` and ``decoded_size`` refuse anything but a positive int."""
    for name in ("index_size", "decoded_size"):
        with pytest.raises(ValueError, match=name):
            Engine(**{name: size})  # type: ignore[arg-type]


def plain_worker(store: Store) -> tuple[Engine, dict[str, int], list[int]]:
    """The counter-reading engine with a plain compare: every stored snapshot is tried, none found by hash."""
    return worker(store, plain=True)


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


def key_of(engine: Engine) -> str:
    """The key of the one task the engine has looked up."""
    [task_key] = index_of(engine)._tasks
    return task_key


def first_node(engine: Engine) -> str:
    """The id of the task's first node: where every trajectory of it starts (one edge each here)."""
    return root(key_of(engine))


def warmed(store: Store) -> tuple[Engine, dict[str, int]]:
    """A plain-compare engine that recorded counter values 0-3, then replayed 1 (its first node loaded)."""
    engine, state, _ = plain_worker(store)
    recorded(engine, state, range(4))
    assert call(engine, state, 1)
    return engine, state


def loaded(durable: StoreSpec) -> tuple[Engine, dict[str, int], int]:
    """A :func:`warmed` engine on a durable store, and the store's change mark of its task."""
    engine, state = warmed(open_spec(durable))
    return engine, state, await_listening(engine.store, key_of(engine))


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
    engine, state, reads = plain_worker(MemoryStore())
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
    engine, state, before = loaded(durable)
    other, other_state, _ = plain_worker(open_spec(durable))
    assert not call(other, other_state, 50)
    await_change(engine.store, key_of(engine), before)
    index_reads = count_reads(monkeypatch, engine.store)
    assert call(engine, state, 50) and call(engine, state, 1)
    assert first_node(engine) not in index_reads  # only the new trajectory's later nodes load
    other.close()
    engine.close()


def test_a_trajectory_removed_elsewhere_is_not_replayed(
    durable: StoreSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another handle removes one trajectory: it misses here, the others still hit from the cached nodes."""
    engine, state, before = loaded(durable)
    other = open_spec(durable)
    removed = next(iter(other.summaries())).id
    gone = other.get(removed)
    assert gone is not None and gone.steps[0].pre is not None
    missing: int = gone.steps[0].pre.value
    other.remove([removed])
    await_change(engine.store, key_of(engine), before)
    index_reads = count_reads(monkeypatch, engine.store)
    assert call(engine, state, (missing + 1) % 4)  # one that is left: a hit, from the cached nodes
    assert first_node(engine) not in index_reads
    assert not call(engine, state, missing)  # the removed one: a miss (the agent records it again)
    other.close()
    engine.close()


def test_many_changes_drop_the_cached_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """More changes than :data:`CATCH_UP_LIMIT` at once: the nodes are read again, and replays are right."""
    store = MemoryStore()
    engine, state = warmed(store)
    other, other_state, _ = plain_worker(store)
    recorded(other, other_state, range(100, 101 + CATCH_UP_LIMIT))
    index_reads = count_reads(monkeypatch, store)
    assert call(engine, state, 100 + CATCH_UP_LIMIT) and call(engine, state, 1)
    assert first_node(engine) in index_reads  # read again, not caught up
    engine.close()


def test_a_change_the_store_cannot_list_whole_drops_the_cached_nodes(monkeypatch: pytest.MonkeyPatch) -> None:
    """Changes with rows the store could not read (``skipped``): the nodes are read again, nothing raises."""
    store = MemoryStore()
    engine, state = warmed(store)
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


def test_a_store_that_fails_to_list_changes_drops_the_cached_nodes(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """``changes`` raising is logged and the nodes are read again: the caller sees right replays."""
    store = MemoryStore()
    engine, state = warmed(store)

    def failing(task_key: str, since: int) -> Changes:
        raise OSError("the store went away for a moment")

    monkeypatch.setattr(store, "changes", failing)
    assert not call(engine, state, 7)
    index_reads = count_reads(monkeypatch, store)
    with caplog.at_level(logging.WARNING, logger="muscle_mem.replay._stored_step_index"):
        assert call(engine, state, 7) and call(engine, state, 0)
    assert "the changes of a task could not be read" in caplog.text
    assert first_node(engine) in index_reads
    engine.close()


def test_a_trajectory_removed_elsewhere_is_not_finished_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A trajectory removed elsewhere after this engine finished on it is not finished on again: the agent runs."""
    store = MemoryStore()

    def recorder() -> tuple[Engine, dict[str, bool]]:
        engine = Engine(store)
        state = {"long": True, "noted": True}

        @engine.tool(pre_check=Check.equal(lambda: 1))
        def read() -> int:
            return 1

        @engine.tool(pre_check=Check.equal(lambda: state["noted"]))
        def note() -> bool:
            return True

        def agent(task: str) -> str:
            read()
            if state["long"]:
                note()
                return "long"
            return "short"

        engine.set_agent(agent)
        return engine, state

    first, state = recorder()
    assert first(TASK).stored  # read, note: "long"
    state.update(long=False, noted=False)
    short = first(TASK)  # read replayed, note's check fails: the agent ends it "short"
    assert not short.hit and short.stored
    engine, state = recorder()  # a new engine: its nodes load with "short" the latest
    state.update(long=False, noted=False)
    assert engine(TASK).hit  # finished on "short"
    store.remove([short.trajectory_id])
    result = engine(TASK)
    assert not result.hit and result.output == "short"  # the agent ran; "short" was not replayed
    first.close()
    engine.close()


def test_a_removed_trajectory_is_forgotten_by_the_nodes_it_reached() -> None:
    """After catching up with a removal, no cached node offers the removed trajectory as an end to fall back on."""
    store = MemoryStore()
    engine, state = warmed(store)
    state["v"] = 1
    replayed = engine(TASK)
    assert replayed.hit and replayed.trajectory_id is not None
    index = index_of(engine)
    assert any(replayed.trajectory_id in node.reached_by for node in index._nodes.values())
    store.remove([replayed.trajectory_id])
    assert call(engine, state, 2)  # caught up with the removal
    assert not any(replayed.trajectory_id in node.reached_by for node in index._nodes.values())
    engine.close()
