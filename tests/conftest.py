"""Shared fixtures: stores of every kind (memory, a real SQLite file, a real PostgreSQL schema)."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from faultproxy import FaultProxy
from muscle_mem.model.provenance import Const, Output, Param
from muscle_mem.model.trajectory import Snapshot, Step, Trajectory
from muscle_mem.stores import MemoryStore, PostgresStore, SQLiteStore, Store, StoreUnavailable
from muscle_mem.stores.base import Browsable, CoreStore, EventLog, StepIndexed, TaskRecall, UsageBatched

# The same examples on every run, so a test run is reproducible (set MUSCLE_MEM_FUZZ_RANDOM=1 to explore).
settings.register_profile("repeatable", derandomize=True)
settings.register_profile("exploring", derandomize=False)
settings.load_profile("exploring" if os.environ.get("MUSCLE_MEM_FUZZ_RANDOM") else "repeatable")

pytest_plugins = ["skip_summary"]

POSTGRES_ENV = "MUSCLE_MEM_TEST_POSTGRES"
POSTGRES_URL = os.environ.get(POSTGRES_ENV, "")
SKIP_POSTGRES = f"PostgreSQL tests need {POSTGRES_ENV}, e.g. postgresql://postgres@127.0.0.1:5432/test"


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked ``postgres`` is skipped, with one reason, where no PostgreSQL server is named."""
    if not POSTGRES_URL and item.get_closest_marker("postgres") is not None:
        pytest.skip(SKIP_POSTGRES)


StoreSpec = tuple[str, str, str]
"""(kind, location, schema): enough to open the same durable store again, in any process."""


def open_spec(spec: StoreSpec) -> Store:
    """Open (another handle on) the store a spec names."""
    kind, location, schema = spec
    if kind == "sqlite":
        return SQLiteStore(location)
    return PostgresStore(location, schema=schema, pool_size=4)


class OutageStore(MemoryStore):
    """A memory store whose server can be down: while ``down``, every operation raises StoreUnavailable."""

    OPERATIONS = frozenset(
        name
        for protocol in (CoreStore, StepIndexed, UsageBatched, TaskRecall, EventLog, Browsable)
        for name, member in vars(protocol).items()
        if callable(member) and not name.startswith("_") and name != "close"
    )
    """Every operation that reaches the server (closing does not; change marks are read in process)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def __getattribute__(self, name: str) -> Any:
        if name in OutageStore.OPERATIONS and object.__getattribute__(self, "down"):
            raise StoreUnavailable("cannot connect to the test server: Connection refused")
        return object.__getattribute__(self, name)


def await_change(store: object, task_key: str, before: int | None, timeout: float = 10.0) -> None:
    """Wait until the store's change feed marks the task changed since ``before`` (a notification
    from another connection takes a moment to arrive); fail after ``timeout`` seconds."""
    import time

    from muscle_mem.stores import ChangeFeed

    assert isinstance(store, ChangeFeed)
    deadline = time.monotonic() + timeout
    while (mark := store.change_mark(task_key)) == before or mark is None:
        assert time.monotonic() < deadline, f"no change of {task_key!r} heard in {timeout} s"
        time.sleep(0.01)


def await_listening(store: object, task_key: str = "", timeout: float = 10.0) -> int:
    """Wait until the store's change feed can tell (a PostgreSQL listener is connected); its mark."""
    import time

    from muscle_mem.stores import ChangeFeed

    assert isinstance(store, ChangeFeed)
    deadline = time.monotonic() + timeout
    while (mark := store.change_mark(task_key)) is None:
        assert time.monotonic() < deadline, f"the store's change feed did not start in {timeout} s"
        time.sleep(0.01)
    return mark


def drop_schema(schema: str) -> None:
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def trajectory(
    task_key: str = "task-a",
    *,
    n: int = 0,
    steps: int = 3,
    created_at: float | None = None,
    tags: tuple[str, ...] = ("t",),
) -> Trajectory:
    """A small trajectory with equality pre-checks, its values depending on ``n``."""
    extra: dict[str, Any] = {} if created_at is None else {"created_at": created_at}
    return Trajectory(
        task_key=task_key,
        task=f"do {task_key}",
        tags=tags,
        steps=tuple(
            Step(
                tool=f"tool{i}",
                version="v1",
                args=(Const(n), Param("name")),
                kwargs=(("flag", Const([i, "x"])),),
                pre=Snapshot.capture({"state": n, "step": i}),
                post=Snapshot.capture(n + i),
                seconds=0.01,
            )
            for i in range(steps)
        ),
        result=Output(steps - 1),
        agent_seconds=1.5,
        **extra,
    )


def _spec(kind: str, tmp_path: Path) -> Iterator[StoreSpec]:
    if kind == "sqlite":
        yield ("sqlite", str(tmp_path / "store" / "cache.db"), "")
        return
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    schema = f"mm_test_{uuid.uuid4().hex[:12]}"
    try:
        yield ("postgres", POSTGRES_URL, schema)
    finally:
        drop_schema(schema)


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty store of each kind."""
    if request.param == "memory":
        memory = MemoryStore()
        yield memory
        memory.close()
        return
    for spec in _spec(request.param, tmp_path):
        durable = open_spec(spec)
        try:
            yield durable
        finally:
            durable.close()


@pytest.fixture(params=["memory", "sqlite"])
def local_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A fresh, empty in-process store: a memory store, then a SQLite file."""
    made: Store = MemoryStore() if request.param == "memory" else SQLiteStore(tmp_path / "cache.db")
    yield made
    made.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def durable(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreSpec]:
    """The spec of a fresh durable store (SQLite file or PostgreSQL schema), to open in any process."""
    yield from _spec(request.param, tmp_path)


@pytest.fixture
def postgres_spec() -> Iterator[StoreSpec]:
    """The spec of a fresh PostgreSQL schema."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    schema = f"mm_test_{uuid.uuid4().hex[:12]}"
    try:
        yield ("postgres", POSTGRES_URL, schema)
    finally:
        drop_schema(schema)


@pytest.fixture
def opener(durable: StoreSpec) -> Iterator[Callable[[], Store]]:
    """Opens handles on one durable store, closing them all at the end."""
    handles: list[Store] = []

    def open_handle() -> Store:
        handles.append(open_spec(durable))
        return handles[-1]

    yield open_handle
    for handle in handles:
        handle.close()


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """Captures every record of the ``muscle_mem`` loggers, debug included."""
    caplog.set_level(logging.DEBUG, logger="muscle_mem")
    return caplog


@pytest.fixture
def proxy() -> Iterator[FaultProxy]:
    """A proxy to the test PostgreSQL server, forwarding until told otherwise."""
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    from psycopg.conninfo import conninfo_to_dict

    info = conninfo_to_dict(POSTGRES_URL)
    with FaultProxy(str(info.get("host", "127.0.0.1")), int(info.get("port", 5432))) as running:
        yield running
