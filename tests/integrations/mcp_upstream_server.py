"""The MCP server the MCP tests talk to: a user desk that logs every tool call it serves.

``build(log)`` makes the server (in-process tests connect to it with ``mcp.Client``); run as
``python mcp_upstream_server.py LOG`` it serves over stdio. Each call appends one JSON line
``[tool, arguments]`` to LOG, so a test sees what reached the server. Ids are random: a replay
must pass on the one created in its own run.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError


def build(log: Path | str, *, welcome_text: str = "Send the welcome mail to a user.") -> MCPServer:
    """The desk: create_user (JSON text), send_welcome (async), tag_user (structured), export_user (progress)."""
    server = MCPServer("desk", log_level="WARNING")
    users: set[str] = set()

    def served(tool: str, arguments: dict[str, Any]) -> None:
        with open(log, "a", encoding="utf-8") as file:
            file.write(json.dumps([tool, arguments]) + "\n")

    def known(user_id: str) -> str:
        if user_id not in users:
            raise ToolError(f"no user {user_id}")
        return user_id

    @server.tool(structured_output=False)
    def create_user(name: str) -> dict[str, str]:
        """Create a user; returns its new id."""
        served("create_user", {"name": name})
        user_id = f"usr_{uuid.uuid4().hex[:8]}"
        users.add(user_id)
        return {"id": user_id, "name": name}

    @server.tool(description=welcome_text)
    async def send_welcome(user_id: str) -> str:
        await asyncio.sleep(0)
        served("send_welcome", {"user_id": user_id})
        return f"welcome sent to {known(user_id)}"

    @server.tool()
    def tag_user(user_id: str, tag: str) -> dict[str, Any]:
        """Tag a user."""
        served("tag_user", {"user_id": user_id, "tag": tag})
        return {"user_id": known(user_id), "tags": [tag]}

    @server.tool()
    async def export_user(user_id: str, ctx: Context) -> str:
        """Export a user's data, reporting progress."""
        served("export_user", {"user_id": user_id})
        await ctx.report_progress(1, 1, "exported")
        return f"export of {known(user_id)} ready"

    return server


def served_calls(log: Path) -> list[tuple[str, dict[str, Any]]]:
    """The calls the server served, in order."""
    if not log.exists():
        return []
    return [tuple(json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]  # type: ignore[misc]


if __name__ == "__main__":
    build(sys.argv[1]).run("stdio")
