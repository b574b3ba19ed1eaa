"""The MCP caching proxy: the upstream's tools forwarded, tasks framed by begin/end recorded and replayed."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent
from mcp_upstream_server import build, served_calls

from muscle_mem import Check, Engine, NotStoredReason
from muscle_mem.integrations.mcp_proxy import BEGIN, END, CachingProxy

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = Path(__file__).with_name("mcp_upstream_server.py")


@asynccontextmanager
async def proxied(engine: Engine, log: Path, **kw: Any) -> AsyncIterator[tuple[Client, CachingProxy]]:
    """A client connected in-process to a proxy in front of the desk server."""
    async with Client(build(log)) as upstream:
        proxy = CachingProxy(engine, upstream, **kw)
        async with Client(proxy.server) as client:
            yield client, proxy


async def call(client: Client, tool: str, **arguments: Any) -> CallToolResult:
    """One tool call from a task of its own, as each request of a remote client arrives."""
    return await asyncio.create_task(client.call_tool(tool, arguments))


def text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


async def onboard(client: Client, name: str) -> str:
    """What the remote model does for a new user: create, welcome, end; returns the new id."""
    created = await call(client, "create_user", name=name)
    user_id = str(json.loads(text(created))["id"])
    await call(client, "send_welcome", user_id=user_id)
    ended = await call(client, END, answer=f"welcome sent to {user_id}")
    assert text(ended).startswith("stored"), text(ended)
    return user_id


async def test_the_proxy_lists_the_upstream_tools_unchanged_plus_begin_and_end(tmp_path: Path) -> None:
    async with Client(build(tmp_path / "log")) as upstream:
        direct = {t.name: t for t in (await upstream.list_tools()).tools}
        proxy = CachingProxy(Engine(), upstream)
        async with Client(proxy.server) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert client.instructions is not None and BEGIN in client.instructions
    assert set(listed) == {*direct, BEGIN, END}
    assert all(listed[name] == tool for name, tool in direct.items())
    assert listed[BEGIN].input_schema["required"] == ["task"]


async def test_a_recorded_task_is_replayed_for_other_params_by_one_begin(tmp_path: Path) -> None:
    engine, log = Engine(), tmp_path / "log"
    async with proxied(engine, log) as (client, proxy):
        begun = await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"})
        assert text(begun).startswith("no recording")
        await onboard(client, "Ada")
        assert proxy.last_result is not None and proxy.last_result.stored
        replayed = await call(client, BEGIN, task="onboard Bob", params={"name": "Bob"})
        assert proxy.last_result.hit and proxy.last_result.steps_replayed == 2
        bob_id = proxy.last_result.calls[1].kwargs["user_id"]
        assert text(replayed) == f"done by replay: welcome sent to {bob_id} (2 steps)"
        ended = await call(client, END, answer="late")
    assert served_calls(log)[2:] == [("create_user", {"name": "Bob"}), ("send_welcome", {"user_id": bob_id})]
    assert text(ended).startswith("no task is open")


async def test_a_replay_stopped_by_a_check_lists_the_steps_done_and_the_rest_is_recorded(
    tmp_path: Path,
) -> None:
    engine, mailer = Engine(), {"status": "up"}
    checks = {"send_welcome": Check.equal(lambda user_id: mailer["status"])}
    async with proxied(engine, tmp_path / "log", checks=checks) as (client, proxy):
        await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"})
        await onboard(client, "Ada")
        mailer["status"] = "queued"
        begun = await call(client, BEGIN, task="onboard Bob", params={"name": "Bob"})
        assert proxy.last_result is not None and not proxy.last_result.hit
        assert text(begun).startswith("replayed 1 step,") and '1. create_user({"name": "Bob"})' in text(begun)
        bob_id = json.loads(text(begun).split(" -> ", 1)[1].split("\n", 1)[0])["id"]
        await call(client, "send_welcome", user_id=bob_id)  # the model goes on from the replayed step
        ended = await call(client, END, answer=f"welcome queued for {bob_id}")
        resumed = proxy.last_result
        assert text(ended).startswith("stored") and resumed.steps_replayed == 1
        assert [(c.tool, c.replayed) for c in resumed.calls] == [
            ("create_user", True),
            ("send_welcome", False),
        ]
        again = await call(client, BEGIN, task="onboard Cy", params={"name": "Cy"})
    assert text(again).startswith("done by replay: welcome queued for usr_")


async def test_calls_outside_a_task_are_forwarded_unrecorded(tmp_path: Path) -> None:
    engine, log = Engine(), tmp_path / "log"
    async with proxied(engine, log) as (client, proxy):
        created = await call(client, "create_user", name="Ada")
        assert json.loads(text(created))["name"] == "Ada" and proxy.last_result is None
        begun = await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"})
    assert text(begun).startswith("no recording") and served_calls(log) == [("create_user", {"name": "Ada"})]


async def test_an_error_result_in_a_task_reaches_the_client_and_the_task_is_not_stored(
    tmp_path: Path,
) -> None:
    engine = Engine()
    async with proxied(engine, tmp_path / "log") as (client, proxy):
        await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"})
        failed = await call(client, "send_welcome", user_id="usr_guess")
        assert failed.is_error and "no user usr_guess" in text(failed)
        created = await call(client, "create_user", name="Ada")
        await call(client, "send_welcome", user_id=str(json.loads(text(created))["id"]))
        ended = await call(client, END, answer="welcome sent")
        assert text(ended).startswith("not stored") and "'send_welcome' raised" in text(ended), text(ended)
        result = proxy.last_result
        assert result is not None
        assert [c.tool for c in result.calls] == ["create_user", "send_welcome"]
        assert not result.stored and result.not_stored_reason is NotStoredReason.TOOL_RAISED


async def test_bad_begin_and_end_calls_get_clear_answers(tmp_path: Path) -> None:
    async with proxied(Engine(), tmp_path / "log") as (client, _proxy):
        no_task = await call(client, BEGIN, params={"name": "Ada"})
        bad_params = await call(client, BEGIN, task="onboard Ada", params=["Ada"])
        nothing_open = await call(client, END, answer="done")
        first = await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"})
        second = await call(client, BEGIN, task="onboard Bob", params={"name": "Bob"})
    assert no_task.is_error and "non-empty string" in text(no_task)
    assert bad_params.is_error and "params must be an object" in text(bad_params)
    assert not nothing_open.is_error and text(nothing_open).startswith("no task is open")
    assert not first.is_error and second.is_error and "a task is open already" in text(second)


async def test_a_connection_closed_with_a_task_open_stores_nothing(tmp_path: Path) -> None:
    engine = Engine()
    async with proxied(engine, tmp_path / "log") as (client, _proxy):
        await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"})
        await call(client, "create_user", name="Ada")
    assert len(engine.store) == 0 and engine.metrics.not_stored_by_reason


async def test_the_proxy_over_real_stdio_records_a_task_then_replays_it_in_one_begin(tmp_path: Path) -> None:
    """Upstream server and proxy are subprocesses; the store is a SQLite file a second proxy reuses."""
    log, errors = tmp_path / "served.jsonl", tmp_path / "proxy.err"
    store = f"sqlite:///{tmp_path / 'cache.db'}"
    proxy_command = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "muscle_mem.cli",
            "mcp-proxy",
            "--store",
            store,
            "--",
            sys.executable,
            str(UPSTREAM),
            str(log),
        ],
        env={"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])},
    )
    with errors.open("w") as errlog:
        async with Client(stdio_client(proxy_command, errlog=errlog)) as client:
            assert {t.name for t in (await client.list_tools()).tools} >= {BEGIN, END, "create_user"}
            begun = await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"})
            assert text(begun).startswith("no recording"), text(begun)
            ada_id = await onboard(client, "Ada")
            replayed = await call(client, BEGIN, task="onboard Bob", params={"name": "Bob"})
        async with Client(
            stdio_client(proxy_command, errlog=errlog)
        ) as again:  # a new process, the same store
            later = await call(again, BEGIN, task="onboard Cy", params={"name": "Cy"})
    served = served_calls(log)
    assert served[:2] == [("create_user", {"name": "Ada"}), ("send_welcome", {"user_id": ada_id})]
    assert [s[0] for s in served[2:]] == ["create_user", "send_welcome", "create_user", "send_welcome"]
    bob_id, cy_id = served[3][1]["user_id"], served[5][1]["user_id"]
    assert served[2][1] == {"name": "Bob"} and served[4][1] == {"name": "Cy"}
    assert len({ada_id, bob_id, cy_id}) == 3  # each replay passed on the id created in its own run
    assert text(replayed) == f"done by replay: welcome sent to {bob_id} (2 steps)"
    assert text(later) == f"done by replay: welcome sent to {cy_id} (2 steps)"
    assert "Traceback" not in errors.read_text()


async def test_begin_tags_keep_tasks_apart(tmp_path: Path) -> None:
    async with proxied(Engine(), tmp_path / "log") as (client, _proxy):
        await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"}, tags=["eu"])
        await onboard(client, "Ada")
        other_tags = await call(client, BEGIN, task="onboard Bob", params={"name": "Bob"}, tags=["us"])
        await call(client, END, answer="left to the model")
        same_tags = await call(client, BEGIN, task="onboard Cy", params={"name": "Cy"}, tags=["eu"])
        bad_tags = await call(client, BEGIN, task="onboard Di", params={"name": "Di"}, tags="eu")
    assert text(other_tags).startswith("no recording") and text(same_tags).startswith("done by replay")
    assert bad_tags.is_error and "tags must be a sequence of strings" in text(bad_tags)


CHECKS_MODULE = """
from pathlib import Path

from muscle_mem import Check

CHECKS = {"send_welcome": Check.equal(lambda user_id: Path("mailer").read_text())}
"""


async def test_the_proxy_command_takes_checks_that_hand_a_changed_task_back_to_the_client(
    tmp_path: Path,
) -> None:
    """``--checks module:attr`` over real stdio: the check passes for Bob, and stops the replay for Cy."""
    (tmp_path / "desk_checks.py").write_text(CHECKS_MODULE, encoding="utf-8")
    mailer = tmp_path / "mailer"
    mailer.write_text("up", encoding="utf-8")
    log, errors = tmp_path / "served.jsonl", tmp_path / "proxy.err"
    proxy_command = StdioServerParameters(
        command=sys.executable,
        args=[
            *("-m", "muscle_mem.cli", "mcp-proxy", "--store", "sqlite:///cache.db"),
            *("--checks", "desk_checks:CHECKS", "--", sys.executable, str(UPSTREAM), str(log)),
        ],
        env={"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])},
        cwd=tmp_path,
    )
    with errors.open("w") as errlog:
        async with Client(stdio_client(proxy_command, errlog=errlog)) as client:
            await call(client, BEGIN, task="onboard Ada", params={"name": "Ada"})
            await onboard(client, "Ada")
            bob = await call(client, BEGIN, task="onboard Bob", params={"name": "Bob"})
            mailer.write_text("queued", encoding="utf-8")
            cy = await call(client, BEGIN, task="onboard Cy", params={"name": "Cy"})
    assert text(bob).startswith("done by replay: welcome sent to usr_"), text(bob)
    assert text(cy).startswith("replayed 1 step, then the recording stopped fitting"), text(cy)
    assert [tool for tool, _ in served_calls(log)] == [
        "create_user",
        "send_welcome",
        "create_user",
        "send_welcome",
        "create_user",
    ]
    assert "Traceback" not in errors.read_text()
