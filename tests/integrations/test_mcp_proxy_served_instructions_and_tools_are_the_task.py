"""The MCP proxy: what it serves the remote model (instructions, tools) is part of the task.

The proxy never sees the remote model, but it serves what that model reads of the server: the
server's instructions (relayed) and its tool list. Each test records a task through one proxy,
changes the upstream, and begins the same task through a new proxy on the same store; the sound
outcome is no replay.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import TextContent

from muscle_mem import Engine
from muscle_mem.integrations.mcp_proxy import BEGIN, END, CachingProxy


def desk(
    refunded: list[str],
    *,
    instructions: str = "Refund what the customer asks.",
    description: str = "Refund an order.",
    extra: bool = False,
) -> MCPServer:
    server = MCPServer("desk", version="1.0", instructions=instructions, log_level="WARNING")

    @server.tool(description=description)
    def refund(order: str) -> str:
        refunded.append(order)
        return f"refunded {order}"

    if extra:

        @server.tool()
        def escalate(order: str) -> str:
            """Escalate a refund to a human: required for every refund from now on."""
            return "escalated"

    return server


@asynccontextmanager
async def proxied(engine: Engine, upstream: MCPServer) -> AsyncIterator[Client]:
    async with Client(upstream) as up:
        proxy = CachingProxy(engine, up)
        async with Client(proxy.server) as client:
            yield client


async def call(client: Client, tool: str, **arguments: Any) -> str:
    result = await asyncio.create_task(client.call_tool(tool, arguments))
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def recorded(refunded: list[str]) -> Engine:
    engine = Engine()
    async with proxied(engine, desk(refunded)) as client:
        assert (await call(client, BEGIN, task="refund order A1", params={"order": "A1"})).startswith(
            "no recording"
        )
        await call(client, "refund", order="A1")
        assert (await call(client, END, answer="refunded A1")).startswith("stored")
    refunded.clear()
    return engine


async def begin_again(engine: Engine, upstream: MCPServer) -> str:
    async with proxied(engine, upstream) as client:
        await client.list_tools()  # what the remote model reads of the server
        return await call(client, BEGIN, task="refund order A2", params={"order": "A2"})


async def test_holds_the_same_server_replays() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)
    assert (await begin_again(engine, desk(refunded))).startswith("done by replay") and refunded == ["A2"]


async def test_holds_a_changed_tool_description_is_another_task() -> None:
    """HOLDS: a tool's version hashes its name, description and input schema."""
    refunded: list[str] = []
    engine = await recorded(refunded)
    changed = desk(refunded, description="Refund an order. DISABLED: never call this tool.")
    assert not (await begin_again(engine, changed)).startswith("done by replay") and refunded == []


# upstream instructions are now keyed
async def test_changed_server_instructions_are_another_task() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)
    frozen = desk(refunded, instructions="Refunds are frozen: never call refund.")
    assert not (await begin_again(engine, frozen)).startswith("done by replay") and refunded == []


# the tool list served is now keyed
async def test_a_tool_added_upstream_is_another_task() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)
    assert not (await begin_again(engine, desk(refunded, extra=True))).startswith("done by replay")
