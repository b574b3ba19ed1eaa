"""CachedSession: an agent's MCP tool calls recorded and replayed, the server's own results returned."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("mcp")

from mcp import Client
from mcp.server.lowlevel import Server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from mcp_upstream_server import build, served_calls

from muscle_mem import Check, Engine, MissReason, NotStoredReason, current_run
from muscle_mem.integrations.mcp import CachedSession, result_view

Turn = list[tuple[str, dict[str, Any]]] | str


class ScriptedModel:
    """The offline model: each turn, the tool calls to make (several at once) or the final answer."""

    def __init__(self, *turns: Callable[[list[list[CallToolResult]]], Turn]) -> None:
        self._turns = list(turns)
        self.calls = 0

    def __call__(self, seen: list[list[CallToolResult]]) -> Turn:
        self.calls += 1
        return self._turns.pop(0)(seen)


def onboarding(name: str) -> ScriptedModel:
    """Create the user, then welcome and tag it in one turn (parallel calls), then answer."""
    return ScriptedModel(
        lambda seen: [("create_user", {"name": name})],
        lambda seen: [
            ("send_welcome", {"user_id": _id(seen[0][0])}),
            ("tag_user", {"user_id": _id(seen[0][0]), "tag": "new"}),
        ],
        lambda seen: f"welcome sent to {_id(seen[0][0])}",
    )


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def _id(result: CallToolResult) -> str:
    return str(json.loads(text_of(result))["id"])


def agent_over(session: CachedSession, models: dict[str, ScriptedModel]) -> Callable[..., Any]:
    """An agent loop over an MCP session, its model picked by task."""

    async def agent(task: str) -> str:
        model, seen = models[task], []
        while True:
            turn = model(seen)
            if isinstance(turn, str):
                return turn
            seen.append(list(await asyncio.gather(*(session.call_tool(n, a) for n, a in turn))))

    return agent


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "served.jsonl"


async def _cached(
    engine: Engine, client: Client, models: dict[str, ScriptedModel], **kw: Any
) -> CachedSession:
    session = CachedSession(engine, client, **kw)
    await session.refresh_tools()
    engine.set_agent(agent_over(session, models))
    return session


async def test_a_first_task_misses_and_records_sync_async_and_parallel_calls(log: Path) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        models = {"onboard Ada": onboarding("Ada")}
        await _cached(engine, client, models)
        result = await engine.arun("onboard Ada", params={"name": "Ada"})
        assert not result.hit and result.stored, result.not_stored
        assert models["onboard Ada"].calls == 3
        assert [c.tool for c in result.calls] == ["create_user", "send_welcome", "tag_user"]
        assert served_calls(log)[0] == ("create_user", {"name": "Ada"})
        user_id = _id(result.calls[0].output)
        assert {c.tool: dict(c.kwargs) for c in result.calls[1:]} == {
            "send_welcome": {"user_id": user_id},
            "tag_user": {"user_id": user_id, "tag": "new"},
        }
        assert result.output == f"welcome sent to {user_id}"


async def test_another_name_is_a_full_hit_without_the_model_and_the_fresh_id_flows(log: Path) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        models = {"onboard Ada": onboarding("Ada"), "onboard Bob": onboarding("Bob")}
        await _cached(engine, client, models)
        await engine.arun("onboard Ada", params={"name": "Ada"})
        hit = await engine.arun("onboard Bob", params={"name": "Bob"})
        assert hit.hit and hit.steps_replayed == 3 and models["onboard Bob"].calls == 0
        served = served_calls(log)[3:]
        assert served[0] == ("create_user", {"name": "Bob"})
        bob_id = _id(hit.calls[0].output)
        assert sorted(served[1:]) == [
            ("send_welcome", {"user_id": bob_id}),
            ("tag_user", {"tag": "new", "user_id": bob_id}),
        ]
        assert hit.output == f"welcome sent to {bob_id}"


async def test_a_hit_returns_the_servers_own_call_tool_results(log: Path) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        models = {"onboard Ada": onboarding("Ada"), "onboard Bob": onboarding("Bob")}
        await _cached(engine, client, models)
        await engine.arun("onboard Ada", params={"name": "Ada"})
        hit = await engine.arun("onboard Bob", params={"name": "Bob"})
        created, welcomed, tagged = (c.output for c in hit.calls)
        assert all(isinstance(r, CallToolResult) and not r.is_error for r in (created, welcomed, tagged))
        assert json.loads(created.content[0].text)["name"] == "Bob" and created.structured_content is None
        assert welcomed.structured_content == {"result": welcomed.content[0].text}
        assert tagged.structured_content == {"user_id": _id(created), "tags": ["new"]}
        assert all(c.replayed for c in hit.calls)


async def test_two_engine_calls_at_once_keep_their_own_calls(log: Path) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        models = {f"onboard {n}": onboarding(n) for n in ("Ada", "Bob", "Cy")}
        await _cached(engine, client, models)
        ada, bob = await asyncio.gather(
            engine.arun("onboard Ada", params={"name": "Ada"}),
            engine.arun("onboard Bob", params={"name": "Bob"}),
        )
        for result, name in ((ada, "Ada"), (bob, "Bob")):
            assert result.stored and result.calls[0].kwargs == {"name": name}
            assert result.output == f"welcome sent to {_id(result.calls[0].output)}"
        cy = await engine.arun("onboard Cy", params={"name": "Cy"})
        assert cy.hit and models["onboard Cy"].calls == 0


async def test_an_error_result_reaches_the_caller_and_the_run_that_went_on_from_it_is_not_stored(
    log: Path,
) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        session = CachedSession(engine, client)
        await session.refresh_tools()
        got: list[CallToolResult] = []

        async def agent(task: str, name: str) -> str:
            got.append(await session.call_tool("send_welcome", {"user_id": "usr_missing"}))  # a wrong guess
            created = await session.call_tool("create_user", {"name": name})
            welcomed = await session.call_tool("send_welcome", {"user_id": _id(created)})
            return str(welcomed.content[0].text)

        engine.set_agent(agent)
        miss = await engine.arun("welcome Ada", "Ada", params={"name": "Ada"})
        assert got[0].is_error and "no user usr_missing" in got[0].content[0].text
        assert [c.tool for c in miss.calls] == ["create_user", "send_welcome"]
        # the agent created the user because the guess failed: stored, the run would create one anyway
        assert not miss.stored and miss.not_stored_reason is NotStoredReason.TOOL_RAISED
        assert len(engine.store) == 0


async def test_an_error_result_at_replay_hands_over_to_the_agent(log: Path) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        session = CachedSession(engine, client)
        await session.refresh_tools()
        agent_saw: list[tuple[str, ...]] = []

        async def agent(task: str, user_id: str) -> str:
            run = current_run()
            assert run is not None
            agent_saw.append(tuple(s.tool for s in run.steps))
            tagged = await session.call_tool("tag_user", {"user_id": user_id, "tag": "vip"})
            if tagged.is_error:
                return "no such user"
            welcomed = await session.call_tool("send_welcome", {"user_id": user_id})
            return str(welcomed.content[0].text)

        engine.set_agent(agent)
        ada = _id(await session.call_tool("create_user", {"name": "Ada"}))  # outside a run: not recorded
        assert (await engine.arun(f"welcome {ada}", ada, params={"user_id": ada})).stored
        gone = await engine.arun("welcome usr_9999", "usr_9999", params={"user_id": "usr_9999"})
        assert not gone.hit and gone.miss_reason is MissReason.TOOL_RAISED and gone.miss_tool == "tag_user"
        assert agent_saw == [(), ()] and gone.output == "no such user"
        assert gone.calls == () and not gone.stored  # neither the replayed error nor the agent's is a step


async def test_a_failed_check_hands_over_to_the_agent_which_finishes_from_the_replayed_steps(
    log: Path,
) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        mailer = {"status": "up"}
        session = CachedSession(
            engine, client, checks={"send_welcome": Check.equal(lambda user_id: mailer["status"])}
        )
        await session.refresh_tools()
        resumed_with: list[tuple[str, ...]] = []

        async def agent(task: str, name: str) -> str:
            run = current_run()
            assert run is not None
            done = {s.tool: s.output for s in run.steps}
            resumed_with.append(tuple(done))
            created = done.get("create_user") or await session.call_tool("create_user", {"name": name})
            if mailer["status"] == "up":
                await session.call_tool("send_welcome", {"user_id": _id(created)})
                return f"{_id(created)} welcomed"
            return f"{_id(created)} created, mail later"

        engine.set_agent(agent)
        assert (await engine.arun("welcome Ada", "Ada", params={"name": "Ada"})).stored
        mailer["status"] = "down"
        handed = await engine.arun("welcome Bob", "Bob", params={"name": "Bob"})
        assert not handed.hit and handed.steps_replayed == 1 and handed.miss_tool == "send_welcome"
        assert resumed_with == [(), ("create_user",)]  # the agent saw the replayed step and did not repeat it
        assert handed.stored and handed.output == f"{_id(handed.calls[0].output)} created, mail later"
        again = await engine.arun("welcome Cy", "Cy", params={"name": "Cy"})
        assert again.hit and again.output.endswith("created, mail later")


async def test_tool_versions_hash_name_description_and_schema(tmp_path: Path) -> None:
    engine = Engine()
    models = {"onboard Ada": onboarding("Ada"), "onboard Bob": onboarding("Bob")}
    async with Client(build(tmp_path / "a.jsonl")) as first:
        await _cached(engine, first, models)
        assert (await engine.arun("onboard Ada", params={"name": "Ada"})).stored
    changed = build(tmp_path / "b.jsonl", welcome_text="Send the welcome mail, and subscribe the user.")
    async with Client(changed) as second:
        await _cached(engine, second, models)
        result = await engine.arun("onboard Bob", params={"name": "Bob"})
    assert not result.hit and result.steps_replayed == 1  # create_user is unchanged; send_welcome is not
    assert result.miss_reason is MissReason.VERSION_CHANGED and result.miss_tool == "send_welcome"
    assert models["onboard Bob"].calls == 3


async def test_call_options_reach_the_server_and_are_not_recorded(log: Path) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        session = CachedSession(engine, client)
        await session.refresh_tools()
        progress: list[float] = []

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            progress.append(done)

        async def agent(task: str, name: str) -> str:
            created = await session.call_tool(
                "create_user", {"name": name}, read_timeout_seconds=30, meta={"trace": "t-1"}
            )
            exported = await session.call_tool(
                "export_user", {"user_id": _id(created)}, progress_callback=on_progress
            )
            return str(exported.content[0].text)

        engine.set_agent(agent)
        miss = await engine.arun("export Ada", "Ada", params={"name": "Ada"})
        assert progress == [1] and miss.stored
        assert [dict(c.kwargs) for c in miss.calls] == [
            {"name": "Ada"},
            {"user_id": _id(miss.calls[0].output)},
        ]
        hit = await engine.arun("export Bob", "Bob", params={"name": "Bob"})
        assert hit.hit and progress == [1]  # at replay no caller's callback is around


async def test_checks_must_name_tools_the_server_has(log: Path) -> None:
    async with Client(build(log)) as client:
        session = CachedSession(Engine(), client, checks={"send_welcom": Check.equal(lambda user_id: 1)})
        with pytest.raises(ValueError, match="'send_welcom'"):
            await session.refresh_tools()


async def test_list_tools_returns_the_servers_listing_and_registers_under_the_prefix(log: Path) -> None:
    async with Client(build(log)) as client:
        engine = Engine()
        session = CachedSession(engine, client, prefix="desk.")
        listed = await session.list_tools()
        direct = await client.list_tools()
        assert [t.name for t in listed.tools] == [t.name for t in direct.tools]
        assert {"create_user", "send_welcome", "tag_user", "export_user"} <= {t.name for t in listed.tools}

        async def agent(task: str, name: str) -> str:
            return str((await session.call_tool("create_user", {"name": name})).content[0].text)

        engine.set_agent(agent)
        result = await engine.arun("add Ada", "Ada", params={"name": "Ada"})
        assert [c.tool for c in result.calls] == ["desk.create_user"]


def test_result_view_reads_structured_content_json_text_and_mcp_1_field_names() -> None:
    text = CallToolResult(content=[TextContent(type="text", text='{"id": "usr_1"}')])
    plain = CallToolResult(content=[TextContent(type="text", text="NaN")])
    several = CallToolResult(
        content=[TextContent(type="text", text="a"), TextContent(type="text", text="[1]")]
    )
    structured = CallToolResult(content=[], structured_content={"id": "usr_2"})
    legacy = SimpleNamespace(content=[], structuredContent={"id": "usr_3"})  # mcp 1.x spells it so
    assert result_view(text) == {"id": "usr_1"} and result_view(plain) == "NaN"
    assert result_view(several) == ["a", [1]] and result_view(structured) == {"id": "usr_2"}
    assert result_view(legacy) == {"id": "usr_3"}  # type: ignore[arg-type]


async def test_refresh_tools_reads_every_page_of_the_listing_through_client_or_client_session() -> None:
    pages = {None: (["first"], "page-2"), "page-2": (["second"], None)}

    async def list_tools(ctx: Any, params: PaginatedRequestParams | None) -> ListToolsResult:
        names, next_cursor = pages[params.cursor if params else None]
        tools = [Tool(name=n, input_schema={"type": "object"}) for n in names]
        return ListToolsResult(tools=tools, next_cursor=next_cursor)

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> CallToolResult:
        return CallToolResult(content=[TextContent(type="text", text=f"ran {params.name}")])

    server = Server("paged", on_list_tools=list_tools, on_call_tool=call_tool)
    async with Client(server) as client:
        for session in (CachedSession(Engine(), client), CachedSession(Engine(), client.session)):
            await session.refresh_tools()
            assert [t.name for t in session.tools] == ["first", "second"]
            assert text_of(await session.call_tool("second")) == "ran second"
