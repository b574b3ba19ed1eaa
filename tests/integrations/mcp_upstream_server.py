"""The MCP server the MCP tests talk to: a user desk that logs every tool call it serves.

``build(log)`` makes the server (in-process tests connect to it with ``mcp.Client``); run as
``python mcp_upstream_server.py LOG`` it serves over stdio. Each call appends one JSON line
``[tool, arguments]`` to LOG, so a test sees what reached the server. Ids are random: a replay
must pass on the one created in its own run. Besides tools it uses every other feature a proxy
must pass through: a version and instructions, resources and a resource template, a prompt,
completions, log messages, progress, a call that waits to be cancelled, and a tool list change.
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
from mcp.types import Completion, PromptReference, ResourceTemplateReference

INSTRUCTIONS = "Always look a user up before you welcome them."


def build(log: Path | str, *, welcome_text: str = "Send the welcome mail to a user.") -> MCPServer:
    """The desk: create_user (JSON text), send_welcome (async), tag_user (structured), export_user (progress)."""
    server = MCPServer("desk", version="3.1.4", instructions=INSTRUCTIONS, log_level="WARNING")
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

    @server.tool()
    async def audit(user_id: str, ctx: Context) -> str:
        """Audit a user, logging as it goes."""
        served("audit", {"user_id": user_id})
        await ctx.info(f"auditing {user_id}", logger_name="desk.audit")
        await ctx.warning({"user": user_id, "findings": 0})
        return f"{user_id} audited"

    @server.tool()
    async def wait_forever(ctx: Context) -> str:
        """Wait until cancelled."""
        served("wait_forever", {})
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            served("cancelled", {})
            raise
        return "never"

    @server.tool()
    async def open_archive(ctx: Context) -> str:
        """Add the archive tool, and say the tool list changed."""
        served("open_archive", {})
        server.add_tool(
            lambda user_id: f"{user_id} archived", name="archive_user", description="Archive a user."
        )
        await ctx.session.send_tool_list_changed()
        return "archive open"

    @server.resource("desk://policy", name="policy", mime_type="text/plain")
    def policy() -> str:
        """The desk's welcome policy."""
        return "Welcome every user within a day."

    @server.resource("desk://users/{user_id}", name="user", mime_type="application/json")
    def user(user_id: str) -> str:
        """A user's record."""
        return json.dumps({"id": user_id, "known": user_id in users})

    @server.prompt()
    def welcome_mail(name: str, tone: str = "warm") -> str:
        """Draft a welcome mail."""
        return f"Write a {tone} welcome mail to {name}."

    @server.completion()
    async def complete(
        ref: PromptReference | ResourceTemplateReference, argument: Any, context: Any
    ) -> Completion | None:
        if argument.name == "tone":
            return Completion(values=[t for t in ("warm", "formal", "brief") if t.startswith(argument.value)])
        return None

    return server


def served_calls(log: Path) -> list[tuple[str, dict[str, Any]]]:
    """The calls the server served, in order."""
    if not log.exists():
        return []
    return [tuple(json.loads(line)) for line in log.read_text(encoding="utf-8").splitlines()]  # type: ignore[misc]


if __name__ == "__main__":
    build(sys.argv[1]).run("stdio")
