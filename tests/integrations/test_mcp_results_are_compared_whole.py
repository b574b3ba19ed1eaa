"""MCP: a replay compares everything a model reads of a tool result: text beside structured content, image bytes."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, ImageContent, TextContent

from muscle_mem import Engine
from muscle_mem.integrations.mcp import CachedSession, result_view

Agent = Callable[[CachedSession, str], Awaitable[str]]


async def solve(engine: Engine, server: MCPServer, agent: Agent, task: str) -> Any:
    async with Client(server) as client:
        session = CachedSession(engine, client)
        await session.refresh_tools()
        engine.set_agent(lambda text: agent(session, text))
        return await engine.arun(task)


async def test_a_changed_text_beside_the_same_structured_content_is_seen() -> None:
    """The text a model reads changed (the account is frozen) while the structured content did not: no replay."""
    world: dict[str, Any] = {"summary": "u1 on pro, in good standing", "upgraded": []}
    server = MCPServer("billing", log_level="WARNING")

    @server.tool()
    def account(user: str) -> CallToolResult:
        return CallToolResult(
            content=[TextContent(type="text", text=world["summary"])],
            structured_content={"user": user, "plan": "pro"},
        )

    @server.tool()
    def upgrade(user: str) -> str:
        world["upgraded"].append(user)
        return "upgraded"

    async def agent(session: CachedSession, task: str) -> str:
        found = await session.call_tool("account", {"user": "u1"})
        if any("FROZEN" in getattr(block, "text", "") for block in found.content):
            return "account frozen"
        await session.call_tool("upgrade", {"user": "u1"})
        return "upgraded"

    engine = Engine()
    assert (await solve(engine, server, agent, "upgrade u1")).stored
    world.update(summary="u1 on pro, account FROZEN by billing", upgraded=[])
    result = await solve(engine, server, agent, "upgrade u1")
    assert not result.hit and result.output == "account frozen" and world["upgraded"] == []


async def test_changed_image_bytes_are_seen_and_never_stored() -> None:
    """An image block is compared by a digest of its data: other pixels stop the replay, no bytes are kept."""
    world: dict[str, Any] = {"png": b"PNG..SAVE..", "clicks": []}
    server = MCPServer("screen", log_level="WARNING")

    @server.tool()
    def screenshot() -> CallToolResult:
        data = base64.b64encode(world["png"]).decode()
        return CallToolResult(content=[ImageContent(type="image", mime_type="image/png", data=data)])

    @server.tool()
    def click(x: int, y: int) -> str:
        world["clicks"].append((x, y))
        return "clicked"

    async def agent(session: CachedSession, task: str) -> str:
        shot = (await session.call_tool("screenshot", {})).content[0]
        assert isinstance(shot, ImageContent)
        if b"DELETE" in base64.b64decode(shot.data):
            return "refused: the button is Delete account"
        await session.call_tool("click", {"x": 10, "y": 20})
        return "clicked Save"

    engine = Engine()
    assert (await solve(engine, server, agent, "press save")).stored
    world.update(png=b"PNG..DELETE..", clicks=[])
    result = await solve(engine, server, agent, "press save")
    assert not result.hit and world["clicks"] == []
    view = result_view(
        CallToolResult(content=[ImageContent(type="image", mime_type="image/png", data="UE5H")])
    )
    assert view["data_sha256"] and "UE5H" not in str(view)


def test_text_that_repeats_the_structured_content_is_seen_as_the_structured_content() -> None:
    """A server's JSON rendering of its structured content adds nothing: the view is the structured content."""
    result = CallToolResult(
        content=[TextContent(type="text", text='{"id": "usr_ada"}')], structured_content={"id": "usr_ada"}
    )
    assert result_view(result) == {"id": "usr_ada"}
