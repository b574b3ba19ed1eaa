"""Bounds.enforce against real stores: TTL, capacity, bytes, protected ids, concurrent writers."""

from __future__ import annotations

import multiprocessing
import os
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import SKIP_POSTGRES
from muscle_mem.eviction import Bounds, Decayed, Policy, make_policy
from muscle_mem.model.trajectory import Step, Trajectory
from muscle_mem.stores import MemoryStore, PostgresStore, SQLiteStore, Store

POSTGRES = os.environ.get("MUSCLE_MEM_TEST_POSTGRES")
POLICIES = ["adaptive", "lru", "lfu", "attention-lru", "decayed"]


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "memory":
        made: Store = MemoryStore()
    elif request.param == "sqlite":
        made = SQLiteStore(tmp_path / "cache.db")
    else:
        if not POSTGRES:
            pytest.skip(SKIP_POSTGRES)
        schema = f"test_bounds_{uuid.uuid4().hex[:12]}"
        made = PostgresStore(POSTGRES, schema=schema)
    yield made
    made.close()
    if request.param == "postgres":
        import psycopg

        with psycopg.connect(POSTGRES, autocommit=True) as conn:  # type: ignore[arg-type]
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def trajectory(name: str, created_at: float, steps: int = 1) -> Trajectory:
    return Trajectory(
        task_key=f"task {name}",
        task=f"task {name}",
        steps=tuple(Step("tool", "v1", kwargs=(("n", _static(i)),)) for i in range(steps)),
        created_at=created_at,
        id=name,
    )


def _static(value: object) -> object:
    from muscle_mem.model.provenance import Const

    return Const(value)


def add(
    store: Store, bounds: Bounds, name: str, now: float, protected: frozenset[str] = frozenset()
) -> list[str]:
    store.add(trajectory(name, now), bounds.policy.admit(now, 0.5))
    return bounds.enforce(store, now, protected)


def ids(store: Store) -> set[str]:
    return {s.id for s in store.summaries()}


@pytest.mark.parametrize("policy", POLICIES)
def test_capacity_holds_for_every_policy(store: Store, policy: str) -> None:
    bounds = Bounds(capacity=3, max_bytes=None, ttl=None, policy=make_policy(policy))
    removed: list[str] = []
    for i in range(6):
        removed += add(store, bounds, f"t{i}", 100.0 + i)
    assert len(store) == 3
    assert len(removed) == 3 and not set(removed) & ids(store)
    assert ids(store) | set(removed) == {f"t{i}" for i in range(6)}


def test_policy_chooses_the_victims(store: Store) -> None:
    bounds = Bounds(capacity=3, max_bytes=None, ttl=None, policy=make_policy("lru"))
    for i in range(3):
        add(store, bounds, f"t{i}", float(i))
    usage = store.usage("t0")
    assert usage is not None
    hit = bounds.policy.hit(usage, 5.0, 0.5, 1.0)
    store.touch("t0", now=5.0, saved_seconds=1.0, priority=hit.priority, attention=hit.attention)
    assert add(store, bounds, "t3", 6.0) == ["t1"]
    assert ids(store) == {"t0", "t2", "t3"}


def test_protected_ids_are_never_evicted(store: Store) -> None:
    bounds = Bounds(capacity=2, max_bytes=None, ttl=None, policy=make_policy("lru"))
    add(store, bounds, "replaying", 1.0)
    add(store, bounds, "b", 2.0)
    assert add(store, bounds, "c", 3.0, protected=frozenset({"replaying"})) == ["b"]
    assert ids(store) == {"replaying", "c"}
    # Everything protected: the store stays above capacity rather than evict a replayed trajectory.
    assert add(store, bounds, "d", 4.0, protected=frozenset({"replaying", "c", "d"})) == []
    assert len(store) == 3
    assert bounds.enforce(store, 5.0, frozenset()) == ["replaying"]


def test_ttl_expires_regardless_of_policy(store: Store) -> None:
    bounds = Bounds(capacity=None, max_bytes=None, ttl=10.0, policy=Decayed())
    add(store, bounds, "old", 100.0)
    usage = store.usage("old")
    assert usage is not None
    for t in (101.0, 102.0, 103.0):  # a busy trajectory still expires
        usage = bounds.policy.hit(usage, t, 1.0, 1.0)
        store.touch("old", now=t, saved_seconds=1.0, priority=usage.priority, attention=usage.attention)
    add(store, bounds, "new", 105.0)
    assert ids(store) == {"old", "new"}
    assert bounds.enforce(store, 110.5, frozenset()) == ["old"]
    assert ids(store) == {"new"}
    assert bounds.enforce(store, 114.0, frozenset()) == []


def test_ttl_spares_protected_ids_until_they_are_released(store: Store) -> None:
    bounds = Bounds(capacity=None, max_bytes=None, ttl=10.0, policy=make_policy("lru"))
    add(store, bounds, "replaying", 100.0)
    add(store, bounds, "idle", 100.0)
    assert bounds.enforce(store, 120.0, frozenset({"replaying"})) == ["idle"]
    assert ids(store) == {"replaying"}
    assert bounds.enforce(store, 121.0, frozenset()) == ["replaying"]
    assert ids(store) == set()


def test_byte_bound_evicts_until_within(store: Store) -> None:
    probe = MemoryStore()
    probe.add(trajectory("probe", 0.0, steps=20))
    size = probe.nbytes()
    bounds = Bounds(capacity=None, max_bytes=int(size * 4.5), ttl=None, policy=make_policy("lru"))
    for i in range(10):
        store.add(trajectory(f"t{i}", float(i), steps=20), bounds.policy.admit(float(i), 0.0))
        bounds.enforce(store, float(i), frozenset())
        assert store.nbytes() <= bounds.max_bytes  # type: ignore[operator]
    assert ids(store) == {"t6", "t7", "t8", "t9"}


def test_byte_and_count_bounds_together(store: Store) -> None:
    bounds = Bounds(capacity=5, max_bytes=10**9, ttl=None, policy=make_policy("lfu"))
    for i in range(8):
        add(store, bounds, f"t{i}", float(i))
    assert len(store) == 5


def test_bounds_validate() -> None:
    policy: Policy = make_policy("lru")
    with pytest.raises(ValueError, match="capacity"):
        Bounds(capacity=0, max_bytes=None, ttl=None, policy=policy)
    with pytest.raises(ValueError, match="max_bytes"):
        Bounds(capacity=None, max_bytes=-1, ttl=None, policy=policy)
    with pytest.raises(ValueError, match="ttl"):
        Bounds(capacity=None, max_bytes=None, ttl=0.0, policy=policy)


@pytest.mark.parametrize("policy", ["lru", "attention-lru"])
def test_capacity_holds_under_concurrent_threads(store: Store, policy: str) -> None:
    bounds = Bounds(capacity=20, max_bytes=None, ttl=None, policy=make_policy(policy))
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for i in range(40):
                add(store, bounds, f"w{w}-{i}", 1000.0 + i + w / 10)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store) <= 20
    assert {f"w{w}-39" for w in range(4)} <= ids(store)  # the newest of every writer survives


def _process_writer(path: str, writer: int, count: int) -> None:
    store = SQLiteStore(path)
    bounds = Bounds(capacity=25, max_bytes=None, ttl=None, policy=Decayed(half_life=60.0))
    for i in range(count):
        add(store, bounds, f"p{writer}-{i}", 1000.0 + i)
    store.close()


@pytest.mark.slow
def test_capacity_holds_with_concurrent_processes_on_sqlite(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    SQLiteStore(path).close()
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_process_writer, args=(path, w, 60)) for w in range(3)]
    for p in workers:
        p.start()
    for p in workers:
        p.join(120)
    assert [p.exitcode for p in workers] == [0, 0, 0]
    store = SQLiteStore(path)
    try:
        assert 0 < len(store) <= 25
    finally:
        store.close()
