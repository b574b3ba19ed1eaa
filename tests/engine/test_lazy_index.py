"""A store's step index read lazily: a restarted engine decodes what it follows, in bounded caches."""

from __future__ import annotations

import pytest

from conftest import StoreSpec, await_change, await_listening, open_spec
from muscle_mem import Check, Engine
from muscle_mem.lazy_index import LazyIndex
from muscle_mem.stores import Store

TASK = "read the counter"


def worker(store: Store, **options: object) -> tuple[Engine, dict[str, int], list[int]]:
    """An engine whose agent reads a counter (pre-checked by value) and reports it."""
    engine = Engine(store, **options)  # type: ignore[arg-type]
    state = {"v": 0}
    reads: list[int] = []

    @engine.tool(pre_check=Check.equal(lambda: state["v"]))
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
