"""Bounded memory through the engine: capacity and every policy on every store, TTL, protection of
trajectories being replayed, and semantic task matching."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest

from muscle_mem import Check, Engine, MissReason
from muscle_mem.cache import _trajectories as cache
from muscle_mem.eviction import Adaptive
from muscle_mem.stores import Store, TaskRecall

POLICIES = ["adaptive", "lru", "lfu", "attention-lru", "decayed"]


def counting_engine(store: Store | str | None = None, **options: object) -> tuple[Engine, list[str]]:
    engine = Engine(store, **options)  # type: ignore[arg-type]
    agent_runs: list[str] = []

    @engine.tool()
    def handle(task: str) -> str:
        return f"handled {task}"

    def agent(task: str) -> str:
        agent_runs.append(task)
        return handle(task)

    engine.set_agent(agent)
    return engine, agent_runs


@pytest.mark.parametrize("policy", POLICIES)
def test_capacity_holds_on_every_store_with_every_policy(store: Store, policy: str) -> None:
    engine, agent_runs = counting_engine(store, capacity=3, policy=policy)
    for i in range(8):
        assert not engine(f"ticket {i:04d}").hit
        assert len(store) <= 3
    assert engine.metrics.evicted == 5
    survivors = {s.task for s in store.summaries()}
    assert len(survivors) == 3
    for task in survivors:  # what is kept still replays
        runs = len(agent_runs)
        assert engine(task).hit
        assert len(agent_runs) == runs


def test_lru_keeps_the_task_in_use(store: Store) -> None:
    engine, _ = counting_engine(store, capacity=2, policy="lru")
    engine("alpha task")
    engine("bravo task")
    assert engine("alpha task").hit  # alpha is now the most recently used
    engine("charlie task")  # evicts bravo
    tasks = {s.task for s in store.summaries()}
    assert tasks == {"alpha task", "charlie task"}


def test_adaptive_default_recalls_a_task_recorded_again_after_its_eviction(store: Store) -> None:
    """The engine tells the default policy each task: a task back after its eviction is kept over a new one."""
    engine, _ = counting_engine(store, capacity=2)
    assert engine.policy.name == "adaptive" and engine.policy.history == 10  # type: ignore[attr-defined]
    engine("alpha task")
    assert engine("alpha task").hit
    engine("bravo task")
    engine("charlie task")  # bravo, never replayed, goes first
    engine("delta task")  # then alpha or charlie: the store holds two
    engine("alpha task")  # recorded again if evicted; remembered as replayed either way
    engine("echo task")
    assert "alpha task" in {s.task for s in store.summaries()}


def test_a_task_replayed_by_one_engine_is_recalled_by_another_sharing_the_store(store: Store) -> None:
    """Engines sharing a store share its recall: one admits at the clock a task another replayed."""
    first, _ = counting_engine(store, capacity=3)
    first("alpha task")
    assert first("alpha task").hit
    first.flush()
    store.remove([s.id for s in store.summaries()])
    second, _ = counting_engine(store, capacity=3)
    assert not second("alpha task").hit
    (stored,) = store.summaries()
    assert stored.usage.priority == second.policy.clock  # type: ignore[attr-defined]
    second("bravo task")  # a task no engine stored: on probation, below the clock
    bravo = next(s for s in store.summaries() if s.task == "bravo task")
    assert bravo.usage.priority < second.policy.clock  # type: ignore[attr-defined]
    first.close()
    second.close()


def test_engines_sharing_a_store_tune_one_probation(store: Store) -> None:
    """The default policy's probation lives in the store: one engine's tuning is the next one's to start from."""
    first, _ = counting_engine(store, capacity=2)
    first("alpha task")
    store.remove([s.id for s in store.summaries()])
    first("alpha task")  # recorded again, never replayed: the probation was too long
    tuned = first.policy.probation  # type: ignore[attr-defined]
    assert tuned < Adaptive().probation
    first("charlie task")  # the change is added to the store's as this recording reads it
    second, _ = counting_engine(store, capacity=2)
    second("bravo task")
    assert second.policy.probation == pytest.approx(tuned)  # type: ignore[attr-defined]
    first.close()
    second.close()


def test_the_store_recall_is_kept_to_the_policy_history(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine prunes the store's shared recall to ``history`` task keys (a tenth more between prunes),
    and to ``RECALL_KEPT`` with a policy that does not read it."""
    assert isinstance(store, TaskRecall)
    engine, _ = counting_engine(store, capacity=2)  # history: 10
    for i in range(25):
        engine(f"ticket {i:04d}")
    assert store.forget_recalled(11) == 0
    latest = next(key for key, text in store.tasks().items() if text == "ticket 0024")
    assert store.recalled(latest) is False  # the latest are kept
    store.clear()
    monkeypatch.setattr(cache, "RECALL_KEPT", 3)
    lru, _ = counting_engine(store, capacity=2, policy="lru")
    for i in range(10):
        lru(f"ticket {i:04d}")
    assert store.forget_recalled(4) == 0
    engine.close()
    lru.close()


class ShiftedTime:
    """The ``time`` module as the engine sees it, moved forward on demand (no sleeping in tests)."""

    def __init__(self) -> None:
        self.shift = 0.0

    def time(self) -> float:
        return time.time() + self.shift

    def monotonic(self) -> float:
        return time.monotonic() + self.shift

    def perf_counter(self) -> float:
        return time.perf_counter()


def test_ttl_expires_trajectories_even_without_new_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = ShiftedTime()
    monkeypatch.setattr("muscle_mem.engine.time", clock)
    monkeypatch.setattr("muscle_mem.cache._trajectories.time", clock)
    engine, agent_runs = counting_engine(ttl=60.0)
    engine("short lived")
    assert engine("short lived").hit
    clock.shift = 30.0
    assert engine("short lived").hit  # not expired yet, however slow the machine
    clock.shift = 61.0
    result = engine("short lived")
    assert not result.hit and result.reason == "no trajectory is stored for this task"
    assert agent_runs == ["short lived", "short lived"]


def test_a_trajectory_being_replayed_is_never_evicted() -> None:
    engine = Engine(capacity=1)
    entered, release = threading.Event(), threading.Event()
    blocking = {"on": False}

    @engine.tool()
    def slow_step(task: str) -> str:
        if blocking["on"]:
            entered.set()
            assert release.wait(5)
        return task

    @engine.tool()
    def final_step(task: str) -> str:
        return task

    def agent(task: str) -> str:
        slow_step(task)
        return final_step(task)

    engine.set_agent(agent)
    engine("replayed task")
    replayed_id = next(engine.store.summaries()).id
    blocking["on"] = True
    results: list[bool] = []
    worker = threading.Thread(target=lambda: results.append(engine("replayed task").hit))
    worker.start()
    assert entered.wait(5)  # the replay is inside slow_step: its trajectory is in use
    blocking["on"] = False
    assert not engine("another task").hit  # stored, then the store is over capacity
    assert engine.store.get(replayed_id) is not None
    release.set()
    worker.join(5)
    assert results == [True]


def test_activate_and_deactivate_never_share_a_trajectory() -> None:
    for options in ({}, {"match": "semantic"}, {"match": "semantic", "similarity": 0.8}):
        engine, agent_runs = counting_engine(**options)
        engine("activate user 4471")
        result = engine("deactivate user 4471")
        assert not result.hit and agent_runs == ["activate user 4471", "deactivate user 4471"], options
        assert engine("activate user 4471").hit


def test_semantic_matching_never_crosses_tags() -> None:
    """Tags partition the cache: a paraphrase recorded under other tags is not even a candidate."""
    engine, agent_runs = counting_engine(match="semantic")
    engine("please restart the web server", tags=["staging"])
    other_tags = engine("restart the web server", tags=["prod"])
    assert not other_tags.hit and other_tags.reason == "no trajectory is stored for this task"
    engine("please restart the web server", tags=["prod", "eu"])
    same_tags = engine("restart the web server", tags=["eu", "prod"])
    assert same_tags.miss_reason is MissReason.SIMILAR_TASK
    assert engine("restart the web server", tags=["staging"]).miss_reason is MissReason.SIMILAR_TASK
    assert agent_runs == [
        "please restart the web server",
        "restart the web server",
        "please restart the web server",
        "restart the web server",
        "restart the web server",
    ]


def test_a_new_process_keeps_the_most_recently_successful_order(
    opener: Callable[[], Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most recently successful first holds across restarts: the index is built in order of last use."""
    clock = ShiftedTime()
    monkeypatch.setattr("muscle_mem.engine.time", clock)
    monkeypatch.setattr("muscle_mem.cache._trajectories.time", clock)
    env = {"mode": "a"}
    ran: list[str] = []

    def make_engine() -> Engine:
        engine = Engine(opener())
        either = Check(lambda: env["mode"], lambda cur, cand: cur == "both" or cur == cand)

        @engine.tool(pre_check=either, name="route_a")
        def route_a() -> None:
            ran.append("a")

        @engine.tool(pre_check=either, name="route_b")
        def route_b() -> None:
            ran.append("b")

        engine.set_agent(lambda task: route_a() if env["mode"] == "a" else route_b())
        return engine

    first = make_engine()
    first("route it")  # recorded in mode a
    env["mode"] = "b"
    first("route it")  # recorded in mode b: the newest trajectory
    env["mode"] = "a"
    clock.shift += 1.0  # a later use, on any clock resolution
    assert first("route it").hit  # route a succeeds again: now the most recently successful
    env["mode"] = "both"
    ran.clear()
    assert first("route it").hit and ran == ["a"]
    ran.clear()
    first.flush()  # what a process does at exit: its hits are written behind
    restarted = make_engine()  # another process: its index is built from the store
    assert restarted("route it").hit and ran == ["a"]
