"""MCP with muscle memory: an agent's MCP tool calls replayed, then the same through the caching proxy.

An MCP server (in-process here; any server in practice) creates users and sends welcome mails. The
agent's "model" is scripted, so this runs offline. Onboarding Ada misses: the model drives the
calls, which are recorded. Onboarding Bob is a full hit: no model call, the same tool calls made
for Bob, and the id the server creates for Bob flows into the welcome mail.

The second half does the same through the caching proxy, as an MCP client (Claude Desktop, Cursor)
would see it: ``muscle_mem_begin``, the calls, ``muscle_mem_end``; then one ``muscle_mem_begin``
does Bob's task. From a shell: ``muscle-mem mcp-proxy --store sqlite:///cache.db -- python server.py``.

Run: python examples/mcp_agent.py
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from muscle_mem import Engine
from muscle_mem.integrations.mcp import CachedSession
from muscle_mem.integrations.mcp_proxy import BEGIN, END, CachingProxy

server = MCPServer("desk", log_level="WARNING")  # its default logs every call at INFO
ids = itertools.count(1001)


@server.tool(structured_output=False)
def create_user(name: str) -> dict[str, Any]:
    """Create a user; returns its new id."""
    return {"id": f"usr_{next(ids)}", "name": name}


@server.tool()
async def send_welcome(user_id: str) -> str:
    """Send the welcome mail to a user."""
    return f"welcome sent to {user_id}"


def text(result: CallToolResult) -> str:
    block = result.content[0]
    return block.text if isinstance(block, TextContent) else ""


class ScriptedModel:
    """The offline model: it plans the calls an LLM would, and counts how often it was asked."""

    calls = 0

    def next_step(self, name: str, seen: list[CallToolResult]) -> tuple[str, dict[str, Any]] | str:
        self.calls += 1
        if not seen:
            return "create_user", {"name": name}
        user_id = json.loads(text(seen[0]))["id"]
        if len(seen) == 1:
            return "send_welcome", {"user_id": user_id}
        return f"welcome sent to {user_id}"


async def with_cached_session(client: Client) -> None:
    engine, model = Engine(), ScriptedModel()
    session = CachedSession(engine, client)  # in place of the agent's ClientSession
    await session.refresh_tools()

    async def agent(task: str, name: str) -> str:
        seen: list[CallToolResult] = []
        while not isinstance(step := model.next_step(name, seen), str):
            seen.append(await session.call_tool(*step))
        return step

    engine.set_agent(agent)
    for name in ("Ada", "Bob"):
        asked = model.calls
        result = await engine.arun(f"onboard {name}", name, params={"name": name})
        print(
            f"CachedSession, onboard {name}: hit={result.hit} replayed={result.steps_replayed} "
            f"model calls={model.calls - asked} -> {result.output}"
        )


async def with_the_proxy(client: Client) -> None:
    proxy = CachingProxy(Engine(), client)
    async with Client(proxy.server) as remote:  # what the MCP client sees
        begun = await remote.call_tool(BEGIN, {"task": "onboard Ada", "params": {"name": "Ada"}})
        print(f"proxy, onboard Ada: {text(begun)}")
        created = await remote.call_tool("create_user", {"name": "Ada"})
        user_id = json.loads(text(created))["id"]
        await remote.call_tool("send_welcome", {"user_id": user_id})
        ended = await remote.call_tool(END, {"answer": f"welcome sent to {user_id}"})
        print(f"proxy, end: {text(ended)}")
        replayed = await remote.call_tool(BEGIN, {"task": "onboard Bob", "params": {"name": "Bob"}})
        print(f"proxy, onboard Bob: {text(replayed)}")


async def main() -> None:
    async with Client(server) as client:
        await with_cached_session(client)
        await with_the_proxy(client)


if __name__ == "__main__":
    asyncio.run(main())
