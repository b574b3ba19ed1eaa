"""What framework integrations rely on: late tools, Result.calls, str subclasses, output views, sessions."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from muscle_mem import Engine, Result, Session, SessionAbandoned, source_version
from muscle_mem.record.tools import source_version as tools_source_version


class Text(str):
    """A str subclass, as LangChain's ``TextAccessor``."""


def test_an_engine_without_tools_runs_its_agent_and_tools_may_come_between_calls() -> None:
    engine = Engine()
    users = {"ada@x.io": "usr_ada", "bob@x.io": "usr_bob"}

    def lookup(email: str) -> str:
        return users[email]

    tools = {"lookup": lookup}  # a framework discovers its tools at run time
    engine.set_agent(lambda task, email: f"found {tools['lookup'](email)}")
    first = engine("find {email}", "ada@x.io", params={"email": "ada@x.io"})
    assert first.output == "found usr_ada" and not first.stored  # no tool yet: nothing to record

    tools["lookup"] = engine.register(lookup)
    second = engine("find {email}", "ada@x.io", params={"email": "ada@x.io"})
    assert second.stored and second.calls[0].tool == "lookup"
    third = engine("find {email}", "bob@x.io", params={"email": "bob@x.io"})
    assert third.hit and third.output == "found usr_bob"


def test_result_calls_list_replayed_then_recorded_calls_with_what_the_caller_got() -> None:
    engine = Engine()
    state = {"page": "form"}

    @engine.tool()
    def lookup(email: str) -> dict[str, str]:
        return {"id": "usr_" + email.split("@")[0]}

    @engine.tool()
    def send(user_id: str) -> str:
        return f"sent to {user_id} on {state['page']}"

    def agent(task: str, email: str) -> str:
        return send(lookup(email)["id"])

    engine.set_agent(agent)
    miss = engine("reset {email}", "ada@x.io", params={"email": "ada@x.io"})
    assert [(c.tool, dict(c.kwargs) or c.args, c.replayed) for c in miss.calls] == [
        ("lookup", ("ada@x.io",), False),
        ("send", ("usr_ada",), False),
    ]
    hit = engine("reset {email}", "bob@x.io", params={"email": "bob@x.io"})
    assert hit.hit
    assert [(c.tool, c.args, c.output, c.replayed) for c in hit.calls] == [
        ("lookup", ("bob@x.io",), {"id": "usr_bob"}, True),
        ("send", ("usr_bob",), "sent to usr_bob on form", True),
    ]


def test_a_str_subclass_output_is_recorded_as_str_and_flows_into_later_steps() -> None:
    engine = Engine()

    @engine.tool()
    def lookup(email: str) -> Text:
        return Text("usr_" + email.split("@")[0])

    @engine.tool()
    def send(user_id: str) -> str:
        return f"sent {user_id}"

    engine.set_agent(lambda task, email: Text(send(lookup(email))))
    miss = engine("reset {email}", "ada@x.io", params={"email": "ada@x.io"})
    assert miss.stored, miss.not_stored
    hit = engine("reset {email}", "bob@x.io", params={"email": "bob@x.io"})
    assert hit.hit and hit.output == "sent usr_bob" and type(hit.output) is str


def test_output_view_lets_ids_inside_json_text_flow_while_the_caller_gets_the_text() -> None:
    engine = Engine()
    created = iter(["usr_41", "usr_42"])

    def create(name: str) -> str:
        return json.dumps({"id": next(created), "name": name})  # what an MCP text result holds

    def parse(text: str) -> Any:
        return json.loads(text)

    create = engine.register(create, output_view=parse)  # type: ignore[assignment]
    got: list[Any] = []

    @engine.tool()
    def activate(user_id: str) -> str:
        return f"active {user_id}"

    def agent(task: str, name: str) -> str:
        text = create(name)
        got.append(text)
        return activate(json.loads(text)["id"])

    engine.set_agent(agent)
    miss = engine("add {name}", "Ada", params={"name": "Ada"})
    assert isinstance(got[0], str) and miss.calls[0].output == got[0]
    hit = engine("add {name}", "Bob", params={"name": "Bob"})
    assert hit.hit and hit.output == "active usr_42"  # the fresh id, not the recorded one
    assert hit.calls[0].output == json.dumps({"id": "usr_42", "name": "Bob"})


def test_output_view_that_raises_at_recording_keeps_the_run_out_of_the_store() -> None:
    engine = Engine()

    def fetch(key: str) -> str:
        return "not json"

    fetch = engine.register(fetch, output_view=json.loads)  # type: ignore[assignment]
    engine.set_agent(lambda task, key: fetch(key))
    result = engine("get {key}", "a", params={"key": "a"})
    assert result.output == "not json" and not result.stored
    assert result.not_stored is not None and "output_view of tool 'fetch' raised" in result.not_stored


def test_output_view_must_be_callable() -> None:
    with pytest.raises(TypeError, match="output_view must be callable"):
        Engine().register(lambda: 1, output_view="json")  # type: ignore[arg-type]


def test_source_version_is_public_and_tells_wrapped_callables_apart() -> None:
    def a(x: int) -> int:
        return x + 1

    def b(x: int) -> int:
        return x + 2

    assert source_version is tools_source_version
    assert source_version(a) != source_version(b) and source_version(a) == source_version(a)


def _session_engine() -> tuple[Engine, Any, Any, list[str]]:
    engine = Engine()
    ids = iter(f"usr_{n}" for n in range(100))
    log: list[str] = []

    @engine.tool()
    async def lookup(email: str) -> dict[str, str]:
        await asyncio.sleep(0)
        return {"id": next(ids), "email": email}

    @engine.tool()
    def send(user_id: str) -> str:
        log.append(user_id)
        return f"sent {user_id}"

    return engine, lookup, send, log


async def test_a_session_records_calls_made_from_other_tasks_then_replays_for_other_params() -> None:
    engine, lookup, send, log = _session_engine()
    session = engine.session("reset ada@x.io", params={"email": "ada@x.io"})
    assert await session.begin() is None  # nothing stored: the remote agent works

    async def remote_turn(coro: Any) -> Any:  # each request arrives in a task of its own
        return await asyncio.create_task(coro)

    user = await remote_turn(session.call(lookup, email="ada@x.io"))
    await remote_turn(session.call(send, user_id=user["id"]))
    session.end("done for " + user["id"])
    miss = await session.wait()
    assert miss is not None and miss.stored and [c.tool for c in miss.calls] == ["lookup", "send"]

    async with engine.session("reset bob@x.io", params={"email": "bob@x.io"}) as again:
        assert again.result is not None and again.result.hit  # replayed inside begin
    assert again.result.output == "done for usr_1" and log == ["usr_0", "usr_1"]
    assert [c.replayed for c in again.steps] == [True, True]


async def test_a_session_left_without_an_answer_stores_nothing() -> None:
    engine, lookup, _send, _log = _session_engine()
    async with engine.session("look up ada@x.io", params={"email": "ada@x.io"}) as session:
        await session.call(lookup, email="ada@x.io")
    assert session.result is None
    assert engine.metrics.not_stored_by_reason  # counted as a run whose agent gave up
    second = engine.session("look up bob@x.io", params={"email": "bob@x.io"})
    assert await second.begin() is None  # still nothing to replay
    second.abandon()
    assert await second.wait() is None


async def test_a_session_whose_block_raises_stores_nothing_and_the_error_propagates() -> None:
    engine, lookup, _send, _log = _session_engine()
    with pytest.raises(KeyError):
        async with engine.session("look up ada@x.io", params={"email": "ada@x.io"}) as session:
            await session.call(lookup, email="ada@x.io")
            raise KeyError("the remote agent failed")
    assert session.result is None


async def test_session_calls_outside_a_run_in_progress_are_refused() -> None:
    engine, lookup, send, _log = _session_engine()
    session = engine.session("reset ada@x.io", params={"email": "ada@x.io"})
    with pytest.raises(RuntimeError, match="no run in progress"):
        await session.call(lookup, email="ada@x.io")
    await session.begin()
    session.end("x")
    with pytest.raises(RuntimeError, match="ended already"):
        session.end("y")
    assert isinstance(await session.wait(), Result)
    with pytest.raises(RuntimeError, match="no run in progress"):
        await session.call(send, user_id="u")
    assert issubclass(SessionAbandoned, Exception) and isinstance(session, Session)


async def test_a_session_whose_replay_stops_hands_over_with_the_replayed_steps_and_is_recorded() -> None:
    from muscle_mem import Check

    engine = Engine()
    page = {"button": "Send"}

    @engine.tool()
    def fill(text: str) -> str:
        return f"filled {text}"

    @engine.tool(pre_check=Check.equal(lambda: page["button"]))
    def click() -> str:
        return f"clicked {page['button']}"

    async with engine.session("write to ada", params={"name": "ada"}) as first:
        await first.call(fill, "ada")
        await first.call(click)
        first.end("sent")
    assert first.result is not None and first.result.stored

    page["button"] = "Delete account"
    async with engine.session("write to bob", params={"name": "bob"}) as second:
        assert second.result is None
        assert [(s.tool, s.args, s.replayed) for s in second.steps] == [("fill", ("bob",), True)]
        second.end("stopped before the unknown button")
    assert second.result is not None and second.result.steps_replayed == 1
    assert second.result.reason is not None and "pre-check of tool 'click'" in second.result.reason
    assert second.result.stored
