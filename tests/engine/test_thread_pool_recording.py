"""Tool calls an agent makes from worker threads are recorded when the run they belong to is certain."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Check, Engine, NotStoredReason, current_run
from muscle_mem.model.trajectory import Trajectory, Usage
from muscle_mem.stores import MemoryStore

WAIT = 10.0
"""Seconds a test waits on an event or a barrier before it fails (instead of hanging)."""


class Restarts:
    """Engines on one store: a new engine each time on a SQLite file (as after a restart), the same
    engine in memory (a memory store lives as long as its engine)."""

    def __init__(self, url: str | None) -> None:
        self.url = url
        self.engine: Engine | None = None

    def engine_from(self, make: Callable[[str | None], Engine]) -> Engine:
        if self.engine is not None and self.url is None:
            return self.engine
        self.close()
        self.engine = make(self.url)
        return self.engine

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()


@pytest.fixture(params=["memory", "sqlite"])
def restarts(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Restarts]:
    """Engines on a store in memory, or on a real SQLite file."""
    found = Restarts(None if request.param == "memory" else f"sqlite:///{tmp_path}/cache.db")
    yield found
    found.close()


def stored(engine: Engine, trajectory_id: str | None) -> Trajectory:
    assert trajectory_id is not None
    trajectory = engine.store.get(trajectory_id)
    assert trajectory is not None
    return trajectory


class Crm:
    """Two lookups an agent runs side by side; ``together`` makes each wait for the other to start."""

    def __init__(self) -> None:
        self.looked_up: list[tuple[str, str]] = []
        self.together: threading.Barrier | None = threading.Barrier(2)

    def lookup(self, what: str, customer: str) -> str:
        if self.together is not None:
            self.together.wait(WAIT)  # both calls run at once, each in its own worker
        self.looked_up.append((what, customer))
        return f"{what} of {customer}"


def crm_engine(store_url: str | None, crm: Crm) -> Engine:
    """An engine whose agent looks a customer's profile and orders up from a thread pool."""
    engine = Engine(store_url)

    @engine.tool(name="profile")
    def profile(customer: str) -> str:
        return crm.lookup("profile", customer)

    @engine.tool(name="orders")
    def orders(customer: str) -> str:
        return crm.lookup("orders", customer)

    def agent(task: str, customer: str) -> str:
        with ThreadPoolExecutor(max_workers=2) as pool:
            found = list(pool.map(lambda tool: tool(customer), (profile, orders)))
        return " and ".join(found)

    return engine.set_agent(agent)


def test_calls_from_a_thread_pool_are_recorded_and_replayed_with_other_params(restarts: Restarts) -> None:
    """With one run in progress, calls from pool workers are its steps; the task then replays in full."""
    crm = Crm()
    first = restarts.engine_from(lambda url: crm_engine(url, crm))(
        "look up the customer", "cus_1001", params={"customer": "cus_1001"}
    )
    assert first.stored and first.output == "profile of cus_1001 and orders of cus_1001"
    assert sorted(crm.looked_up) == [("orders", "cus_1001"), ("profile", "cus_1001")]

    crm.looked_up.clear()
    crm.together = None  # a replay calls the tools one after the other
    second = restarts.engine_from(lambda url: crm_engine(url, crm))(
        "look up the customer", "cus_2002", params={"customer": "cus_2002"}
    )
    assert second.hit and second.steps_replayed == 2
    assert second.output == "profile of cus_2002 and orders of cus_2002"
    assert sorted(crm.looked_up) == [("orders", "cus_2002"), ("profile", "cus_2002")]


def test_concurrent_calls_are_stored_in_the_order_they_started() -> None:
    """The call that started first is the first step, even when it finishes last."""
    engine = Engine()
    first_started, second_done = threading.Event(), threading.Event()

    @engine.tool(name="slow")
    def slow(n: int) -> int:
        first_started.set()
        assert second_done.wait(WAIT)
        return n

    @engine.tool(name="fast")
    def fast(n: int) -> int:
        second_done.set()
        return n

    def agent(task: str) -> int:
        with ThreadPoolExecutor(max_workers=2) as pool:
            later = pool.submit(slow, 1)
            assert first_started.wait(WAIT)
            sooner = pool.submit(fast, 2)
            return later.result() + sooner.result()

    engine.set_agent(agent)
    result = engine("add two numbers")
    assert result.stored
    assert [s.tool for s in stored(engine, result.trajectory_id).steps] == ["slow", "fast"]


async def test_concurrent_async_calls_are_stored_in_the_order_they_started() -> None:
    """Side by side in ``asyncio.gather``, the first call started is the first step."""
    engine = Engine()
    second_done = asyncio.Event()

    @engine.tool(name="slow")
    async def slow(n: int) -> int:
        await asyncio.wait_for(second_done.wait(), WAIT)
        return n

    @engine.tool(name="fast")
    async def fast(n: int) -> int:
        second_done.set()
        return n

    async def agent(task: str) -> int:
        return sum(await asyncio.gather(slow(1), fast(2)))

    engine.set_agent(agent)
    result = await engine.arun("add two numbers")
    assert result.stored
    assert [s.tool for s in stored(engine, result.trajectory_id).steps] == ["slow", "fast"]


async def test_an_async_agent_records_calls_it_runs_in_threads(restarts: Restarts) -> None:
    """``asyncio.to_thread`` carries the run's context; ``run_in_executor`` does not, and its call is
    the run's as the only run in progress."""
    calls: list[tuple[str, str]] = []

    def make(store_url: str | None) -> Engine:
        engine = Engine(store_url)

        @engine.tool(name="geocode")
        def geocode(city: str) -> str:
            calls.append(("geocode", city))
            return f"geo:{city}"

        @engine.tool(name="forecast")
        def forecast(city: str) -> str:
            calls.append(("forecast", city))
            return f"sunny in {city}"

        async def agent(task: str, city: str) -> str:
            where = await asyncio.to_thread(geocode, city)
            weather = await asyncio.get_running_loop().run_in_executor(None, forecast, city)
            return f"{where}: {weather}"

        return engine.set_agent(agent)

    first = await restarts.engine_from(make).arun("weather", "Lyon", params={"city_name": "Lyon"})
    assert first.stored and calls == [("geocode", "Lyon"), ("forecast", "Lyon")]
    calls.clear()
    second = await restarts.engine_from(make).arun("weather", "Oslo", params={"city_name": "Oslo"})
    assert second.hit and second.output == "geo:Oslo: sunny in Oslo"
    assert calls == [("geocode", "Oslo"), ("forecast", "Oslo")]


def test_a_thread_call_during_two_runs_is_recorded_by_neither(caplog: pytest.LogCaptureFixture) -> None:
    """With two runs of the engine in progress, a call from a thread without a run in its context
    could be either's: neither records it, and neither is stored (the log says why)."""
    engine = Engine()
    inside, worker_done = threading.Barrier(2), threading.Barrier(2)
    notes: list[str] = []

    @engine.tool(name="note")
    def note(text: str) -> str:
        notes.append(text)
        return text

    def agent(task: str) -> str:
        note(task)
        inside.wait(WAIT)  # both runs are in progress
        if task == "first":
            worker = threading.Thread(target=note, args=("from a worker",))
            worker.start()
            worker.join(WAIT)
        worker_done.wait(WAIT)  # neither run ends before the worker's call
        return task

    engine.set_agent(agent)
    results: dict[str, Any] = {}
    runs = [threading.Thread(target=lambda t=t: results.update({t: engine(t)})) for t in ("first", "second")]
    for run in runs:
        run.start()
    for run in runs:
        run.join(WAIT)
    assert "from a worker" in notes
    assert not results["first"].stored and not results["second"].stored
    assert len(engine.store) == 0
    assert caplog.text.count("while 2 runs of the engine were in progress") == 2


def test_a_worker_still_running_when_the_agent_returns_keeps_the_run_from_being_stored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A call the agent started in a worker and did not wait for may change what the run did."""
    engine = Engine()
    started, release = threading.Event(), threading.Event()
    sent: list[str] = []

    @engine.tool(name="send")
    def send(to: str) -> str:
        started.set()
        assert release.wait(WAIT)
        sent.append(to)
        return "sent"

    pool = ThreadPoolExecutor(max_workers=1)

    def agent(task: str) -> str:
        pool.submit(send, "ann@example.com")
        assert started.wait(WAIT)
        return "queued"

    engine.set_agent(agent)
    try:
        result = engine("mail ann")
    finally:
        release.set()
        pool.shutdown(wait=True)
    assert sent == ["ann@example.com"]
    assert not result.stored and len(engine.store) == 0
    assert "1 tool call(s) were still running when the agent returned" in caplog.text


def test_a_thread_call_while_a_tool_of_the_run_runs_keeps_the_run_from_being_stored(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A tool that calls another tool from its own thread: that call may be part of the running tool
    (a replay would then make it twice), so the run is not stored."""
    engine = Engine()
    charged: list[str] = []

    @engine.tool(name="charge")
    def charge(order: str) -> str:
        charged.append(order)
        return "charged"

    @engine.tool(name="checkout")
    def checkout(order: str) -> str:
        worker = threading.Thread(target=charge, args=(order,))
        worker.start()
        worker.join(WAIT)
        return "paid"

    engine.set_agent(lambda task: checkout("ord_1001"))
    assert not engine("check out ord_1001").stored
    assert "while the run's call of tool 'checkout' was running" in caplog.text
    engine("check out ord_1001")
    assert charged == ["ord_1001", "ord_1001"]


def test_a_tool_called_by_a_tool_running_in_a_worker_is_part_of_that_call() -> None:
    """Inside a call made from a worker, the run is current: a tool it calls is not another step."""
    engine = Engine()
    charged: list[str] = []

    @engine.tool(name="charge")
    def charge(order: str) -> str:
        charged.append(order)
        return "charged"

    @engine.tool(name="checkout")
    def checkout(order: str) -> str:
        run = current_run()
        assert run is not None and run.engine is engine
        return charge(order)

    def agent(task: str) -> str:
        with ThreadPoolExecutor(max_workers=1) as pool:
            return pool.submit(checkout, "ord_1001").result()

    engine.set_agent(agent)
    first = engine("check out ord_1001")
    assert [s.tool for s in stored(engine, first.trajectory_id).steps] == ["checkout"]
    assert engine("check out ord_1001").hit
    assert charged == ["ord_1001", "ord_1001"]


def test_the_agent_resuming_after_a_partial_replay_records_its_pool_calls(restarts: Restarts) -> None:
    """After a replayed prefix, calls the agent makes from a pool are recorded, and the task replays."""
    state = {"orders": "v1"}
    calls: list[str] = []

    def make(store_url: str | None) -> Engine:
        engine = Engine(store_url)

        @engine.tool(name="find")
        def find(name: str) -> str:
            calls.append("find")
            return f"cus_{name.lower()}"

        @engine.tool(name="orders", pre_check=Check.equal(lambda customer: state["orders"]))
        def orders(customer: str) -> str:
            calls.append("orders")
            return f"orders of {customer}"

        @engine.tool(name="invoices", pre_check=Check.equal(lambda customer: state["orders"]))
        def invoices(customer: str) -> str:
            calls.append("invoices")
            return f"invoices of {customer}"

        def agent(task: str) -> str:
            run = current_run()
            assert run is not None
            done = run.steps
            customer = done[0].output if done else find("Ann")
            with ThreadPoolExecutor(max_workers=2) as pool:
                found = sorted(pool.map(lambda tool: tool(customer), (orders, invoices)))
            return "; ".join(found)

        return engine.set_agent(agent)

    assert restarts.engine_from(make)("summarise Ann").stored
    state["orders"] = "v2"  # the stored pre-checks of the pool calls fail now
    calls.clear()
    resumed = restarts.engine_from(make)("summarise Ann")
    assert resumed.steps_replayed == 1 and resumed.stored
    assert sorted(calls) == ["find", "invoices", "orders"]
    calls.clear()
    again = restarts.engine_from(make)("summarise Ann")
    assert again.hit and again.steps_replayed == 3
    assert again.output == "invoices of cus_ann; orders of cus_ann"


def test_a_call_from_a_worker_while_the_run_is_being_stored_removes_its_trajectory() -> None:
    """A worker the agent did not wait for calls a tool after the agent returned, as the run's
    trajectory is written: the trajectory misses that call, so it is not kept."""
    storing, called = threading.Event(), threading.Event()

    class SlowStore(MemoryStore):
        def add(self, trajectory: Trajectory, usage: Usage | None = None) -> None:
            storing.set()
            assert called.wait(WAIT)
            super().add(trajectory, usage)

    engine = Engine(SlowStore())
    sent: list[str] = []

    @engine.tool(name="send")
    def send(to: str) -> str:
        sent.append(to)
        return "sent"

    def late_send() -> None:
        assert storing.wait(WAIT)
        send("bob@example.com")
        called.set()

    pool = ThreadPoolExecutor(max_workers=1)

    def agent(task: str) -> str:
        send("ann@example.com")
        pool.submit(late_send)
        return "sent"

    engine.set_agent(agent)
    try:
        result = engine("mail ann and bob")
    finally:
        pool.shutdown(wait=True)
    assert sent == ["ann@example.com", "bob@example.com"]
    assert not result.stored and result.trajectory_id is None and len(engine.store) == 0


def test_worker_thread_tool_calls_are_made_again_by_the_next_call() -> None:
    """Tool calls an agent makes from a thread pool (outside the run's context) are part of what the next call
    does, replayed or not: never a trajectory stored without them."""
    from concurrent.futures import ThreadPoolExecutor

    engine = Engine()
    refunded: list[str] = []

    @engine.tool()
    def list_orders(customer: str) -> list[str]:
        return ["ord_1001", "ord_1002"]

    @engine.tool()
    def refund(order_id: str) -> str:
        refunded.append(order_id)
        return "refunded"

    def agent(task: str) -> str:
        orders = list_orders("cus_4471")
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(refund, orders))
        return "refunded all"

    engine.set_agent(agent)
    engine("refund every order of cus_4471")
    refunded.clear()
    result = engine("refund every order of cus_4471")
    assert sorted(refunded) == ["ord_1001", "ord_1002"], (result.hit, refunded)


def test_worker_thread_calls_in_a_copied_context_are_recorded() -> None:
    """Tool calls submitted to a thread pool with the run's context (the way docs/guide.md gives) are steps: the
    next call is a hit that refunds both orders."""
    import contextvars
    from concurrent.futures import ThreadPoolExecutor

    engine = Engine()
    refunded: list[str] = []

    @engine.tool()
    def refund(order_id: str) -> str:
        refunded.append(order_id)
        return "refunded"

    def agent(task: str) -> str:
        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [
                pool.submit(contextvars.copy_context().run, refund, o) for o in ("ord_1001", "ord_1002")
            ]
            return ", ".join(f.result() for f in futures)

    engine.set_agent(agent)
    assert engine("refund the two orders").stored
    refunded.clear()
    result = engine("refund the two orders")
    assert result.hit and sorted(refunded) == ["ord_1001", "ord_1002"]


async def test_a_call_from_an_asyncio_task_made_outside_the_run_is_not_adopted_and_the_run_is_not_stored() -> (
    None
):
    engine = Engine()
    released = asyncio.Event()

    @engine.tool()
    async def note(text: str) -> str:
        return text

    async def bystander() -> None:  # made before the run: it does not carry the run's context
        await released.wait()
        await note("from elsewhere")

    task = asyncio.create_task(bystander())

    async def agent(task_text: str) -> str:
        released.set()
        await asyncio.sleep(0.01)  # the bystander calls the tool while the run is in progress
        return await note("mine")

    engine.set_agent(agent)
    result = await engine.arun("write a note")
    await task
    assert [c.kwargs or c.args for c in result.calls] == [("mine",)]  # the bystander's call is not the run's
    assert not result.stored and result.not_stored_reason is NotStoredReason.CALL_OUTSIDE_RUN
    assert result.not_stored is not None and "from an asyncio task" in result.not_stored
