"""An mcp 1.x client session (run by the mcp 1.x venv): prints what it sees of a stdio server as JSON.

``python mcp1_client.py COMMAND...`` starts the server, uses each feature the desk server has
(identity, resources, prompts, completions, a tool with progress, one with log messages, a list
change, a cancelled call) and prints one JSON object, with the user id it created masked.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from datetime import timedelta
from typing import Any

import anyio
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

HIDDEN = ("muscle_mem_begin", "muscle_mem_end")


async def seen(command: list[str]) -> dict[str, Any]:
    logs: list[Any] = []
    changes: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.model_dump(mode="json", exclude_none=True))

    async def on_message(message: Any) -> None:
        root = getattr(message, "root", None)
        if isinstance(root, types.ToolListChangedNotification):
            changes.append(root.method)

    server = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    out: dict[str, Any] = {}
    try:
        await _session(server, out, on_log, on_message, logs, changes)
    except Exception as exc:  # mcp 1.x: a message read as the session closes breaks its stream
        if "timed_out" not in out or not _broken_stream(exc):
            raise
    return out


def _broken_stream(exc: BaseException) -> bool:
    """Whether an error (a group of them) is only the closed stream's."""
    inner = getattr(exc, "exceptions", None)
    if inner:
        return all(_broken_stream(e) for e in inner)
    return isinstance(exc, anyio.BrokenResourceError)


async def _session(
    server: StdioServerParameters, out: dict[str, Any], on_log: Any, on_message: Any, logs: Any, changes: Any
) -> None:
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write, logging_callback=on_log, message_handler=on_message) as session,
    ):
        init = await session.initialize()
        tools = [
            t.model_dump(mode="json") for t in (await session.list_tools()).tools if t.name not in HIDDEN
        ]
        out |= {
            "server": init.serverInfo.model_dump(mode="json"),
            "instructions": init.instructions,
            "capabilities": init.capabilities.model_dump(mode="json", exclude_none=True),
            "tools": tools,
            "resources": (await session.list_resources()).model_dump(mode="json"),
            "templates": (await session.list_resource_templates()).model_dump(mode="json"),
            "policy": (await session.read_resource("desk://policy")).model_dump(mode="json"),  # type: ignore[arg-type]
            "prompts": (await session.list_prompts()).model_dump(mode="json"),
            "prompt": (await session.get_prompt("welcome_mail", {"name": "Ada"})).model_dump(mode="json"),
            "completion": (
                await session.complete(
                    types.PromptReference(type="ref/prompt", name="welcome_mail"),
                    {"name": "tone", "value": "f"},
                )
            ).model_dump(mode="json"),
        }
        created = await session.call_tool("create_user", {"name": "Ada"})
        user_id = json.loads(created.content[0].text)["id"]  # type: ignore[union-attr]
        progress: list[Any] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append([done, total, message])

        exported = await session.call_tool("export_user", {"user_id": user_id}, progress_callback=on_progress)
        audited = await session.call_tool("audit", {"user_id": user_id})
        await session.call_tool("open_archive", {})
        await asyncio.sleep(0.2)
        after = sorted(t.name for t in (await session.list_tools()).tools if t.name not in HIDDEN)
        try:
            await session.call_tool("wait_forever", {}, read_timeout_seconds=timedelta(seconds=0.5))
            cancelled = False
        except Exception:  # the read timeout: the session sends a cancellation
            cancelled = True
        await asyncio.sleep(0.5)  # the cancellation reaches the server before the session closes
        out |= {
            "results": [r.model_dump(mode="json") for r in (created, exported, audited)],
            "progress": progress,
            "logs": logs,
            "changes": changes,
            "tools_after_change": after,
        }
        out.update(json.loads(json.dumps(out).replace(user_id, "<user>")))
        out["timed_out"] = cancelled


if __name__ == "__main__":
    print(json.dumps(asyncio.run(seen(sys.argv[1:]))))
