"""A fourth backend needs only the core of the store protocol: events and listing are optional."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from muscle_mem import Engine
from muscle_mem.model.trajectory import Trajectory, Usage
from muscle_mem.stores import Browsable, CoreStore, EventLog, MemoryStore, Store
from muscle_mem.stores.base import Changes, Rank

CORE = [
    "add",
    "add_many",
    "changes",
    "revision",
    "get",
    "touch",
    "victims",
    "expire",
    "tasks",
    "nbytes",
    "usage",
    "remove",
    "__len__",
    "clear",
    "close",
]


class CoreOnly:
    """A backend with the core methods only (it keeps its trajectories in a memory store)."""

    def __init__(self) -> None:
        self._inner = MemoryStore()

    def add(self, trajectory: Trajectory, usage: Usage | None = None) -> None:
        self._inner.add(trajectory, usage)

    def add_many(self, items: Iterable[tuple[Trajectory, Usage | None]]) -> int:
        return self._inner.add_many(items)

    def changes(self, task_key: str, since: int) -> Changes:
        return self._inner.changes(task_key, since)

    def revision(self) -> int:
        return self._inner.revision()

    def get(self, trajectory_id: str) -> Trajectory | None:
        return self._inner.get(trajectory_id)

    def touch(self, trajectory_id: str, **stats: Any) -> None:
        self._inner.touch(trajectory_id, **stats)

    def victims(self, count: int, rank: Rank, exclude: frozenset[str] = frozenset()) -> list[str]:
        return self._inner.victims(count, rank, exclude)

    def expire(self, created_before: float, exclude: frozenset[str] = frozenset()) -> list[str]:
        return self._inner.expire(created_before, exclude)

    def tasks(self) -> dict[str, str]:
        return self._inner.tasks()

    def nbytes(self) -> int:
        return self._inner.nbytes()

    def usage(self, trajectory_id: str) -> Usage | None:
        return self._inner.usage(trajectory_id)

    def remove(self, trajectory_ids: Iterable[str]) -> int:
        return self._inner.remove(trajectory_ids)

    def __len__(self) -> int:
        return len(self._inner)

    def clear(self) -> None:
        self._inner.clear()

    def close(self) -> None:
        self._inner.close()


def test_the_core_protocol_is_the_methods_an_engine_calls() -> None:
    store = CoreOnly()
    assert isinstance(store, CoreStore)
    assert not isinstance(store, EventLog | Browsable | Store)
    assert all(callable(getattr(store, name)) for name in CORE)
    assert isinstance(MemoryStore(), Store)


def test_an_engine_on_a_core_only_store_records_replays_and_evicts() -> None:
    store = CoreOnly()
    engine = Engine(store, capacity=1)
    numbers = iter(range(100, 200))

    @engine.tool()
    def create(title: str) -> int:
        return next(numbers)

    @engine.tool()
    def close(ticket: int) -> str:
        return f"closed {ticket}"

    engine.set_agent(lambda task, title: close(create(title)))
    assert engine("open and close", "printer jam", params={"title": "printer jam"}).stored
    replayed = engine("open and close", "scanner jam", params={"title": "scanner jam"})
    assert replayed.hit and replayed.output == "closed 101"
    engine("another task", "x", params={"title": "x"})
    assert len(store) == 1  # the bound holds
    engine.close()  # the journal has nowhere to write events: nothing is raised
