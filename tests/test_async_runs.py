"""Async agents under ``arun``: every tool call they make is replayed, or the run is not stored."""

from __future__ import annotations

import asyncio

from muscle_mem import Engine


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
