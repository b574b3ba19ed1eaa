"""Async agents under ``arun``: every tool call they make is replayed, or the run is not stored."""

from __future__ import annotations

import asyncio
from typing import Any

from muscle_mem import Check, Engine, NotStoredReason


def test_concurrent_async_tool_calls_are_each_recorded() -> None:
    """Tool calls an async agent runs together with ``asyncio.gather`` are each a step: the next call charges
    and sends the receipt."""
    engine = Engine()
    done: list[str] = []

    @engine.tool()
    async def charge_card(order_id: str) -> str:
        await asyncio.sleep(0.01)
        done.append("charge")
        return "charged"

    @engine.tool()
    async def send_receipt(order_id: str) -> str:
        await asyncio.sleep(0.01)
        done.append("receipt")
        return "sent"

    async def agent(task: str) -> str:
        await asyncio.gather(charge_card("ord_12345"), send_receipt("ord_12345"))
        return "order complete"

    engine.set_agent(agent)

    async def main() -> None:
        first = await engine.arun("complete order ord_12345")
        assert sorted(done) == ["charge", "receipt"]
        done.clear()
        second = await engine.arun("complete order ord_12345")
        assert sorted(done) == ["charge", "receipt"], (first.stored, second.hit, done)

    asyncio.run(main())


async def test_a_tool_call_still_in_flight_when_the_agent_returns_is_made_again_by_the_next_call() -> None:
    """A tool call an async agent started and did not await before returning is part of what the next call
    does: it notifies the second customer, replayed or not."""
    engine = Engine()
    done: list[str] = []

    @engine.tool()
    async def charge(customer: str) -> str:
        await asyncio.sleep(0.01)
        done.append(f"charge {customer}")
        return f"receipt-{customer}"

    @engine.tool()
    async def notify(customer: str) -> str:
        await asyncio.sleep(0.05)  # finishes after the agent has returned
        done.append(f"notify {customer}")
        return "sent"

    background: set[asyncio.Task[Any]] = set()

    async def agent(task: str, customer: str) -> str:
        background.add(asyncio.create_task(notify(customer)))  # fire and forget
        return await charge(customer)

    engine.set_agent(agent)
    await engine.arun("charge", "cust-1111", params={"customer": "cust-1111"})
    await asyncio.gather(*background)
    assert done == ["charge cust-1111", "notify cust-1111"]  # what the agent did

    done.clear()
    result = await engine.arun("charge", "cust-2222", params={"customer": "cust-2222"})
    await asyncio.sleep(0.1)
    await asyncio.gather(*background)
    # a replay must do what the agent did, or the agent must do it again
    assert "notify cust-2222" in done, f"replayed without the in-flight call: {result}, {done}"


async def test_a_tool_called_after_its_run_ended_removes_the_trajectory_it_missed() -> None:
    """A task the agent did not await calls a tool after the run was stored: that trajectory misses the
    call, so the engine removes it (and logs why); the next call is a miss, not a replay."""
    engine = Engine()
    sent: list[str] = []

    @engine.tool()
    async def close(ticket: str) -> str:
        return "closed"

    @engine.tool()
    async def notify(who: str) -> str:
        sent.append(who)
        return "ok"

    pending: list[asyncio.Task[str]] = []

    async def later() -> str:
        await asyncio.sleep(0.01)
        return await notify("ann")

    async def agent(task: str) -> str:
        await close("T-1")
        pending.append(asyncio.create_task(later()))
        return "done"

    engine.set_agent(agent)
    first = await engine.arun("close T-1")
    assert first.stored and first.trajectory_id is not None
    await pending.pop()  # notify runs after the run ended
    assert sent == ["ann"]
    assert engine.store.get(first.trajectory_id) is None
    assert engine.metrics.not_stored_by_reason == {NotStoredReason.CALLED_AFTER_RUN: 1}
    second = await engine.arun("close T-1")
    assert not second.hit
    await pending.pop()


async def test_a_sync_tool_with_an_async_pre_check_is_refused_or_cached_under_arun() -> None:
    """A sync tool whose check captures with a coroutine function is refused at registration with a
    TypeError; accepted, it would have to be cached and replayed under ``arun``."""
    engine = Engine()
    state = {"page": "home"}

    async def page(x: str) -> str:
        return state["page"]

    try:

        @engine.tool(pre_check=Check.equal(page))
        def click(x: str) -> str:
            return f"clicked-{x}"

    except TypeError:
        return  # refused up front, with a clear error: fine

    async def agent(task: str) -> str:
        return click("button-1")

    engine.set_agent(agent)
    first = await engine.arun("click it")
    assert first.stored, "a sync tool with an async pre-check is never cached under arun"
    second = await engine.arun("click it")
    assert second.hit
