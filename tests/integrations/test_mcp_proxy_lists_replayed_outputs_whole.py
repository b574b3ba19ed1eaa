"""The MCP caching proxy shows a resumed client each replayed step's output whole, never cut."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from muscle_mem import Engine
from muscle_mem.integrations.mcp_proxy import BEGIN, END, CachingProxy


def members() -> list[dict[str, str]]:
    listed = [{"name": f"member number {i:02d}", "tier": "basic"} for i in range(40)]
    return [*listed, {"name": "member number 40", "tier": "vip"}]


def text(result: CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


async def test_a_partly_replayed_task_lists_each_output_whole() -> None:
    """The member list is long and its VIP comes last: the client resuming the task reads it all."""
    world: dict[str, Any] = {"status": "open"}
    server = MCPServer("club", log_level="WARNING")

    @server.tool(structured_output=False)
    def list_members() -> str:
        return json.dumps(members())

    @server.tool(structured_output=False)
    def get_rate() -> str:
        return json.dumps({"rate": 5, "status": world["status"]})

    engine = Engine()
    async with Client(server) as upstream:
        proxy = CachingProxy(engine, upstream)
        async with Client(proxy.server) as client:

            async def call(tool: str, **arguments: Any) -> CallToolResult:
                return await asyncio.create_task(client.call_tool(tool, arguments))

            await call(BEGIN, task="send the member offer")
            await call("list_members")
            await call("get_rate")
            assert text(await call(END, answer="offer sent")).startswith("stored")

            world["status"] = "open since monday"
            said = text(await call(BEGIN, task="send the member offer"))
            await call(END, answer="offer sent")
    line = next(line for line in said.splitlines() if line.startswith("1. list_members"))
    assert json.loads(line.split(" -> ", 1)[1]) == members()
    assert "…" not in said
