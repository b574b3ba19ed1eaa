"""The MCP proxy is transparent: a client sees through it what it sees connected to the upstream directly.

Every test runs the same client session twice over real stdio, once against the upstream server
and once against ``muscle-mem mcp-proxy -- <upstream>``, and compares what the client saw: the
server's identity and capabilities, resources, templates, prompts, completions, tool results,
progress, log messages, list changes and cancellation. The clients are mcp 2.x here, mcp 1.x (a
venv of its own) and the MCP Inspector CLI (npm), each skipped when its setup is absent.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import PromptReference, TextContent
from mcp_upstream_server import INSTRUCTIONS, served_calls

from muscle_mem.integrations.mcp_proxy import BEGIN, END

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
UPSTREAM = HERE / "mcp_upstream_server.py"
MCP1_PYTHON = HERE / ".venv-mcp1" / "bin" / "python"
INSPECTOR = (
    HERE / ".inspector" / "node_modules" / "@modelcontextprotocol" / "inspector" / "cli" / "build" / "cli.js"
)
ENV = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}


def upstream_command(log: Path) -> list[str]:
    return [sys.executable, "-W", "ignore::DeprecationWarning", str(UPSTREAM), str(log)]


def proxy_command(log: Path, store: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "muscle_mem.cli",
        "mcp-proxy",
        "--store",
        f"sqlite:///{store}",
        *extra,
        "--",
        *upstream_command(log),
    ]


@asynccontextmanager
async def connected(
    command: list[str], errlog: Path, mode: Any = "legacy", **kw: Any
) -> AsyncIterator[Client]:
    """An mcp 2.x client over stdio; by default with the initialize handshake (the era everything is relayed in)."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=ENV)
    with errlog.open("a") as errors:
        async with Client(stdio_client(params, errlog=errors), mode=mode, **kw) as client:
            yield client


def text(result: Any) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def session_seen(
    command: list[str], errlog: Path, *, in_task: bool, mode: Any = "legacy"
) -> dict[str, Any]:
    """What one client session sees of every feature, with ids that vary from run to run masked."""
    notes: list[Any] = []

    async def on_message(message: Any) -> None:
        kind = type(message).__name__
        params = getattr(message, "params", None)
        dumped = params.model_dump(mode="json", exclude_none=True) if params is not None else None
        if isinstance(dumped, dict):
            dumped.pop("progress_token", None)  # the request's id: one more request inside a task
        notes.append([kind, dumped])

    async with connected(command, errlog, mode, message_handler=on_message) as client:
        info = client.server_info
        seen: dict[str, Any] = {
            "server": info.model_dump(mode="json") if info is not None else None,
            "instructions": client.instructions,
            "capabilities": client.server_capabilities.model_dump(mode="json", exclude_none=True),
            "tools": [
                t.model_dump(mode="json")
                for t in (await client.list_tools()).tools
                if t.name not in (BEGIN, END)
            ],
            "resources": (await client.list_resources()).model_dump(mode="json"),
            "templates": (await client.list_resource_templates()).model_dump(mode="json"),
            "policy": (await client.read_resource("desk://policy")).model_dump(mode="json"),
            "prompts": (await client.list_prompts()).model_dump(mode="json"),
            "prompt": (await client.get_prompt("welcome_mail", {"name": "Ada"})).model_dump(mode="json"),
            "completion": (
                await client.complete(
                    PromptReference(type="ref/prompt", name="welcome_mail"), {"name": "tone", "value": "f"}
                )
            ).model_dump(mode="json"),
        }
        if in_task:
            await client.call_tool(BEGIN, {"task": "onboard Ada", "params": {"name": "Ada"}})
        created = await client.call_tool("create_user", {"name": "Ada"})
        user_id = json.loads(text(created))["id"]
        progress: list[Any] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append([done, total, message])

        exported = await client.call_tool("export_user", {"user_id": user_id}, progress_callback=on_progress)
        audited = await client.call_tool("audit", {"user_id": user_id})
        user = await client.read_resource(f"desk://users/{user_id}")
        if in_task:
            await client.call_tool(END, {"answer": "all done"})
        opened = await client.call_tool("open_archive", {})
        await asyncio.sleep(0.2)  # the list change, sent before the result, reaches the client first
        after = sorted(t.name for t in (await client.list_tools()).tools if t.name not in (BEGIN, END))
        waiting = asyncio.create_task(client.call_tool("wait_forever", {}))
        await asyncio.sleep(0.5)
        waiting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiting
        await asyncio.sleep(0.5)
    mask = {user_id: "<user>"}
    seen |= {
        "results": [_masked(r.model_dump(mode="json"), mask) for r in (created, exported, audited, opened)],
        "user": _masked(user.model_dump(mode="json"), mask),
        "progress": progress,
        "notifications": _masked(notes, mask),
        "tools_after_change": after,
    }
    return seen


def _masked(value: Any, mask: dict[str, str]) -> Any:
    text = json.dumps(value)
    for real, shown in mask.items():
        text = text.replace(real, shown)
    return json.loads(text)


def _through_proxy(seen: dict[str, Any]) -> dict[str, Any]:
    """The proxied view with the one thing the proxy adds taken out: its paragraph after the instructions."""
    instructions = seen["instructions"]
    assert instructions.startswith(INSTRUCTIONS + "\n\n") and BEGIN in instructions
    return seen | {"instructions": INSTRUCTIONS}


@pytest.mark.slow
@pytest.mark.parametrize("in_task", [False, True], ids=["outside a task", "inside a task"])
async def test_an_mcp2_client_sees_the_same_server_through_the_proxy_as_directly(
    tmp_path: Path, in_task: bool
) -> None:
    direct_log, proxied_log, errlog = tmp_path / "direct.jsonl", tmp_path / "proxied.jsonl", tmp_path / "err"
    direct = await session_seen(upstream_command(direct_log), errlog, in_task=False)
    proxied = await session_seen(proxy_command(proxied_log, tmp_path / "cache.db"), errlog, in_task=in_task)
    assert _through_proxy(proxied) == direct
    assert (
        direct["progress"] == [[1.0, 1.0, "exported"]] and direct["tools_after_change"][0] == "archive_user"
    )
    assert [n[0] for n in direct["notifications"]] == [
        "ProgressNotification",
        "LoggingMessageNotification",
        "LoggingMessageNotification",
        "ToolListChangedNotification",
    ]
    assert served_calls(direct_log)[-1] == served_calls(proxied_log)[-1] == ("cancelled", {})
    assert "Traceback" not in errlog.read_text()


@pytest.mark.slow
async def test_an_mcp2_client_of_the_2026_protocol_sees_the_same_but_no_list_change_flags(
    tmp_path: Path,
) -> None:
    """The proxy serves no ``subscriptions/listen``, so it announces no list changes in that protocol."""
    errlog = tmp_path / "err"
    direct = await session_seen(upstream_command(tmp_path / "d.jsonl"), errlog, in_task=False, mode="auto")
    proxied = await session_seen(
        proxy_command(tmp_path / "p.jsonl", tmp_path / "c.db"), errlog, in_task=False, mode="auto"
    )
    flags = {"prompts": {"list_changed": False}, "tools": {"list_changed": False}, "completions": {}}
    assert proxied["capabilities"] == flags | {"resources": {"subscribe": False, "list_changed": False}}
    assert direct["capabilities"]["tools"] == {"list_changed": True}
    assert _through_proxy(proxied) | {"capabilities": None} == direct | {"capabilities": None}


@pytest.mark.slow
async def test_a_task_recorded_through_the_proxy_replays_with_the_upstream_features_left_alone(
    tmp_path: Path,
) -> None:
    """Resources and prompts read inside a task are never recorded: the replay makes only tool calls."""
    log, errlog = tmp_path / "served.jsonl", tmp_path / "err"
    command = proxy_command(log, tmp_path / "cache.db")
    await session_seen(command, errlog, in_task=True)
    async with connected(command, errlog) as client:
        replayed = await client.call_tool(BEGIN, {"task": "onboard Bo", "params": {"name": "Bo"}})
    assert text(replayed).startswith("done by replay: all done (3 steps)"), text(replayed)
    assert [tool for tool, _ in served_calls(log)][-3:] == ["create_user", "export_user", "audit"]


def _run_json(command: list[str], **kw: Any) -> Any:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, env={**os.environ, **ENV}, **kw
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.skipif(not MCP1_PYTHON.exists(), reason="the mcp 1.x client venv is set up by .ci/run")
def test_an_mcp1_client_sees_the_same_server_through_the_proxy_as_directly(tmp_path: Path) -> None:
    client = [str(MCP1_PYTHON), str(HERE / "mcp1_client.py")]
    direct = _run_json([*client, *upstream_command(tmp_path / "direct.jsonl")])
    proxied = _run_json([*client, *proxy_command(tmp_path / "proxied.jsonl", tmp_path / "cache.db")])
    assert _through_proxy(proxied) == direct
    assert direct["progress"] == [[1.0, 1.0, "exported"]] and len(direct["logs"]) == 2


INSPECTOR_METHODS: list[list[str]] = [
    ["--method", "tools/list"],
    ["--method", "resources/list"],
    ["--method", "resources/templates/list"],
    ["--method", "resources/read", "--uri", "desk://policy"],
    ["--method", "prompts/list"],
    ["--method", "prompts/get", "--prompt-name", "welcome_mail", "--prompt-args", "name=Ada"],
    ["--method", "tools/call", "--tool-name", "send_welcome", "--tool-arg", "user_id=usr_none"],
]


@pytest.mark.slow
@pytest.mark.skipif(
    not INSPECTOR.exists() or shutil.which("node") is None,
    reason="the MCP Inspector CLI (npm) is set up by .ci/run",
)
def test_the_mcp_inspector_sees_the_same_server_through_the_proxy_as_directly(tmp_path: Path) -> None:
    direct_command = upstream_command(tmp_path / "direct.jsonl")
    via_proxy = proxy_command(tmp_path / "proxied.jsonl", tmp_path / "cache.db")
    for method in INSPECTOR_METHODS:
        direct = _run_json(["node", str(INSPECTOR), "--cli", *direct_command, *method])
        proxied = _run_json(["node", str(INSPECTOR), "--cli", *via_proxy, *method])
        if method[1] == "tools/list":
            proxied["tools"] = [t for t in proxied["tools"] if t["name"] not in (BEGIN, END)]
        assert proxied == direct, method
