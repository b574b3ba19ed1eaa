"""The OpenAI Agents SDK integration: agents built with the SDK, run offline by its ScriptedModel."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    HandoffCallItem,
    HandoffOutputItem,
    ItemHelpers,
    MessageOutputItem,
    RunContextWrapper,
    Runner,
    RunResult,
    RunResultStreaming,
    SQLiteSession,
    ToolCallItem,
    ToolCallOutputItem,
    WebSearchTool,
    function_tool,
    handoff,
    set_tracing_disabled,
)
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from openai.types.responses import ResponseFunctionWebSearch
from openai.types.responses.response_function_web_search import ActionSearch
from pydantic import BaseModel

from muscle_mem import Check, Engine, MissReason, Secret
from muscle_mem.integrations.openai_agents import CachedRunner, CachedStreamingResult, wrap_agent

set_tracing_disabled(True)

TOOL_ERROR = "An error occurred while running the tool. Please try again."


class Desk:
    """A support desk: users, tickets with fresh ids, a queue the tickets go to."""

    def __init__(self) -> None:
        self.tickets: list[tuple[str, str]] = []
        self.notified: list[str] = []
        self.call_ids: list[str] = []
        self.queue = "support"
        self.failures = 0
        self.agent: Any = None
        """The user's agent the desk runner was given."""

    def tools(self) -> list[Any]:
        desk = self

        @function_tool
        def lookup_user(email: str) -> dict[str, str]:
            """Find a user by email."""
            return {"id": "usr_" + email.split("@")[0], "email": email}

        @function_tool
        async def get_plan(email: str) -> str:
            """The plan of a user."""
            await asyncio.sleep(0)
            return "pro"

        @function_tool
        async def create_ticket(user_id: str, title: str) -> str:
            """Open a ticket; returns it as JSON text."""
            if desk.failures:
                desk.failures -= 1
                raise RuntimeError("the ticket system is down")
            ticket = f"T-{len(desk.tickets) + 1}"
            desk.tickets.append((ticket, user_id))
            return json.dumps({"ticket": ticket, "queue": desk.queue})

        @function_tool
        def notify(ctx: RunContextWrapper[Any], ticket: str) -> str:
            """Tell the user about a ticket."""
            desk.call_ids.append(getattr(ctx, "tool_call_id", ""))
            desk.notified.append(ticket)
            return f"notified about {ticket}"

        return [lookup_user, get_plan, create_ticket, notify]


def script(email: str, ticket: str = "T-1") -> list[Any]:
    """What the model does for a reset: two lookups at once, a ticket, a notice, an answer."""
    user = "usr_" + email.split("@")[0]
    return [
        [
            function_call("lookup_user", {"email": email}, call_id="call_1"),
            function_call("get_plan", {"email": email}, call_id="call_2"),
        ],
        [function_call("create_ticket", {"user_id": user, "title": "Password reset"}, call_id="call_3")],
        [function_call("notify", {"ticket": ticket}, call_id="call_4")],
        [assistant_message(f"Opened {ticket} for {user}")],
    ]


def task(email: str) -> str:
    return f"reset the password of {email}"


def desk_runner(**kwargs: Any) -> tuple[Desk, ScriptedModel, CachedRunner]:
    desk = Desk()
    model = ScriptedModel(script("ada@x.io"))
    desk.agent = Agent(name="desk", instructions="Help users.", model=model, tools=desk.tools())
    return desk, model, CachedRunner(Engine(), desk.agent, **kwargs)


async def recorded(**kwargs: Any) -> tuple[Desk, ScriptedModel, CachedRunner]:
    """A runner whose engine holds the reset task, recorded for ada."""
    desk, model, runner = desk_runner(**kwargs)
    await runner.run(task("ada@x.io"), params={"email": "ada@x.io"})
    assert runner.last_result is not None and runner.last_result.stored
    return desk, model, runner


async def test_a_first_task_misses_and_records_sync_async_and_parallel_tool_calls() -> None:
    desk, model, runner = desk_runner()
    result = await runner.run(task("ada@x.io"), params={"email": "ada@x.io"})
    assert isinstance(result, RunResult) and result.final_output == "Opened T-1 for usr_ada"
    assert len(model.calls) == 4 and desk.tickets == [("T-1", "usr_ada")]
    mm = runner.last_result
    assert mm is not None and not mm.hit and mm.stored and mm.miss_reason is MissReason.NO_TRAJECTORY
    assert [(c.tool, dict(c.kwargs), c.replayed) for c in mm.calls] == [
        ("lookup_user", {"email": "ada@x.io"}, False),  # sync, in the same turn as get_plan
        ("get_plan", {"email": "ada@x.io"}, False),  # async
        ("create_ticket", {"user_id": "usr_ada", "title": "Password reset"}, False),
        ("notify", {"ticket": "T-1"}, False),
    ]
    assert desk.call_ids == ["call_4"]  # on a miss the SDK's own call ids


async def test_a_second_task_with_other_params_is_a_full_hit_without_the_model() -> None:
    desk, model, runner = await recorded()
    result = await runner.run(task("bob@x.io"), params={"email": "bob@x.io"})
    assert runner.last_result is not None and runner.last_result.hit
    assert runner.last_result.steps_replayed == 4
    assert len(model.calls) == 4 and model.remaining_steps == 0  # the model was not called
    assert desk.tickets[-1] == ("T-2", "usr_bob")  # looked up in this run
    assert desk.notified == ["T-1", "T-2"]  # the fresh ticket id flowed out of JSON text into notify
    assert result.final_output == "Opened T-2 for usr_bob"


async def test_a_hit_returns_a_run_result_whose_items_and_input_list_work() -> None:
    desk, _, runner = await recorded()
    result = await runner.run(task("bob@x.io"), params={"email": "bob@x.io"})
    assert isinstance(result, RunResult) and result.last_agent is desk.agent
    assert [
        type(item) for item in result.new_items
    ] == [  # as the SDK makes them: a turn's calls, then their outputs
        *[ToolCallItem, ToolCallItem, ToolCallOutputItem, ToolCallOutputItem],
        *[ToolCallItem, ToolCallOutputItem] * 2,
        MessageOutputItem,
    ]
    calls = [item for item in result.new_items if isinstance(item, ToolCallItem)]
    outputs = [item for item in result.new_items if isinstance(item, ToolCallOutputItem)]
    assert [c.tool_name for c in calls] == ["lookup_user", "get_plan", "create_ticket", "notify"]
    assert outputs[0].output == {"id": "usr_bob", "email": "bob@x.io"}
    assert json.loads(outputs[2].output) == {"ticket": "T-2", "queue": "support"}
    ids = [c.call_id for c in calls]
    assert all(i and i.startswith("mm_") for i in ids) and len(set(ids)) == 4
    assert [o.call_id for o in outputs] == ids
    assert desk.call_ids[-1] == ids[3]  # the tool's ToolContext had the call id of its item
    items = result.to_input_list()
    assert items[0] == {"content": task("bob@x.io"), "role": "user"}
    assert [i.get("type") for i in items[1:-1]] == [
        *["function_call", "function_call", "function_call_output", "function_call_output"],
        *["function_call", "function_call_output"] * 2,
    ]
    assert items[-1]["role"] == "assistant" and "Opened T-2 for usr_bob" in json.dumps(items[-1])
    again = await runner.run(task("eve@x.io"), params={"email": "eve@x.io"})
    again_ids = {item.call_id for item in again.new_items if isinstance(item, ToolCallItem)}
    assert not again_ids & set(ids)  # fresh on every hit


async def test_a_failed_check_hands_over_to_the_agent_which_resumes_from_the_replayed_calls() -> None:
    desk = Desk()
    model = ScriptedModel(script("ada@x.io"))
    agent = Agent(name="desk", model=model, tools=desk.tools())
    queue_check = Check.equal(lambda **_: desk.queue)
    runner = CachedRunner(Engine(), agent, checks={"create_ticket": queue_check})
    await runner.run(task("ada@x.io"), params={"email": "ada@x.io"})

    desk.queue = "billing"  # the ticket would go elsewhere now: create_ticket must not replay
    model.extend(script("bob@x.io", ticket="T-2")[1:])
    result = await runner.run(task("bob@x.io"), params={"email": "bob@x.io"})
    mm = runner.last_result
    assert mm is not None and not mm.hit and mm.steps_replayed == 2 and mm.stored
    assert mm.miss_reason is MissReason.PRE_CHECK_FAILED
    seen = model.calls[4].input  # the resumed agent's first model call
    assert seen[0] == {"content": task("bob@x.io"), "role": "user"}
    assert [(i["type"], i.get("name")) for i in seen[1:5]] == [  # the turn of two look-ups, whole
        ("function_call", "lookup_user"),
        ("function_call", "get_plan"),
        ("function_call_output", None),
        ("function_call_output", None),
    ]
    assert seen[1]["call_id"].startswith("mm_") and "usr_bob" in seen[3]["output"]
    assert result.final_output == "Opened T-2 for usr_bob" and desk.tickets[-1] == ("T-2", "usr_bob")
    assert len(result.to_input_list()) == 5 + 4 + 1  # replayed history, the agent's calls, the answer

    third = await runner.run(task("eve@x.io"), params={"email": "eve@x.io"})  # the same situation again
    assert runner.last_result is not None and runner.last_result.hit
    assert third.final_output == "Opened T-3 for usr_eve" and len(model.calls) == 7


async def test_prior_history_bypasses_the_cache_by_default_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, model, runner = await recorded()
    model.extend(script("bob@x.io", ticket="T-2"))
    caplog.set_level(logging.INFO, logger="muscle_mem")
    result = await runner.run(
        task("bob@x.io"), params={"email": "bob@x.io"}, session=SQLiteSession("conversation")
    )
    assert runner.last_result is None and len(model.calls) == 8  # the agent ran, uncached
    assert result.final_output == "Opened T-2 for usr_bob"
    assert "carries earlier conversation" in caplog.text and "cache_followups=True" in caplog.text

    model.extend(script("eve@x.io", ticket="T-3"))
    await runner.run(task("eve@x.io"), params={"email": "eve@x.io"}, previous_response_id="resp_1")
    assert runner.last_result is None and len(model.calls) == 12
    earlier = [{"content": "hello", "role": "user"}, {"content": task("eve@x.io"), "role": "user"}]
    model.extend(script("eve@x.io", ticket="T-4"))
    await runner.run(earlier, params={"email": "eve@x.io"})
    assert runner.last_result is None and len(model.calls) == 16


async def test_cache_followups_replays_a_session_run_and_adds_its_items_to_the_session() -> None:
    _, model, runner = desk_runner(cache_followups=True)
    memory = SQLiteSession("conversation")
    await runner.run(task("ada@x.io"), params={"email": "ada@x.io"}, session=memory)
    assert runner.last_result is not None and runner.last_result.stored
    before = len(await memory.get_items())

    result = await runner.run(task("bob@x.io"), params={"email": "bob@x.io"}, session=memory)
    assert runner.last_result is not None and runner.last_result.hit and len(model.calls) == 4
    added = (await memory.get_items())[before:]
    assert added == result.to_input_list()
    assert added[0] == {"content": task("bob@x.io"), "role": "user"} and len(added) == 10


async def test_a_tool_error_reaches_the_model_as_the_sdks_message_and_is_not_recorded() -> None:
    desk = Desk()
    desk.failures = 1
    model = ScriptedModel(
        [
            [function_call("lookup_user", {"email": "ada@x.io"}, call_id="call_1")],
            [function_call("create_ticket", {"user_id": "usr_ada", "title": "Reset"}, call_id="call_2")],
            [assistant_message("Sorry, no ticket could be opened")],
        ]
    )
    runner = CachedRunner(Engine(), Agent(name="desk", model=model, tools=desk.tools()))
    result = await runner.run(task("ada@x.io"), params={"email": "ada@x.io"})
    outputs = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
    assert outputs[1].output == TOOL_ERROR  # the framework's usual error string, seen by the model
    assert model.calls[2].input[-1] == {
        "call_id": "call_2",
        "output": TOOL_ERROR,
        "type": "function_call_output",
    }
    assert runner.last_result is None  # the failure is not stored as a run a replay could repeat

    model.extend(script("bob@x.io", ticket="T-1"))  # the ticket system is back: the agent runs again
    second = await runner.run(task("bob@x.io"), params={"email": "bob@x.io"})
    assert runner.last_result is not None and not runner.last_result.hit and runner.last_result.stored
    assert second.final_output == "Opened T-1 for usr_bob" and desk.tickets == [("T-1", "usr_bob")]


async def test_tool_versions_come_from_the_decorated_function_not_the_shared_shim(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"

    def agent_with(reply: str, model: ScriptedModel) -> Agent[Any]:
        if reply == "pong":

            @function_tool
            def ping(host: str) -> str:
                """Ping a host."""
                return f"pong from {host}"

        else:

            @function_tool
            def ping(host: str) -> str:
                """Ping a host."""
                return f"PONG from {host}"

        return Agent(name="ops", model=model, tools=[ping])

    def ping_script(host: str) -> list[Any]:
        return [[function_call("ping", {"host": host}, call_id="c1")], [assistant_message(f"{host} is up")]]

    with Engine(url) as engine:
        runner = CachedRunner(engine, agent_with("pong", ScriptedModel(ping_script("a.io"))))
        await runner.run("ping a.io", params={"host": "a.io"})
    with Engine(url) as engine:  # the same code, wrapped anew: the same version
        runner = CachedRunner(engine, agent_with("pong", ScriptedModel([])))
        await runner.run("ping b.io", params={"host": "b.io"})
        assert runner.last_result is not None and runner.last_result.hit
    with Engine(url) as engine:  # other code behind the same shim: another version
        runner = CachedRunner(engine, agent_with("PONG", ScriptedModel(ping_script("c.io"))))
        await runner.run("ping c.io", params={"host": "c.io"})
        assert runner.last_result is not None and runner.last_result.miss_reason is MissReason.VERSION_CHANGED


async def test_the_injected_context_is_not_recorded_and_a_replay_uses_this_calls_context() -> None:
    @function_tool
    def open_ticket(ctx: RunContextWrapper[Desk], user_id: str) -> str:
        """Open a ticket on the desk of the run's context."""
        desk = ctx.context
        desk.tickets.append((f"T-{len(desk.tickets) + 1}", user_id))
        return desk.tickets[-1][0]

    model = ScriptedModel(
        [
            [function_call("open_ticket", {"user_id": "usr_ada"}, call_id="c1")],
            [assistant_message("Opened T-1")],
        ]
    )
    runner = CachedRunner(Engine(), Agent(name="desk", model=model, tools=[open_ticket]))
    first, second = Desk(), Desk()
    second.tickets.append(("T-1", "usr_old"))
    await runner.run("open a ticket for usr_ada", params={"user": "usr_ada"}, context=first)
    assert runner.last_result is not None
    assert [dict(c.kwargs) for c in runner.last_result.calls] == [{"user_id": "usr_ada"}]
    result = await runner.run("open a ticket for usr_bob", params={"user": "usr_bob"}, context=second)
    assert runner.last_result is not None and runner.last_result.hit
    assert second.tickets == [("T-1", "usr_old"), ("T-2", "usr_bob")] and first.tickets == [
        ("T-1", "usr_ada")
    ]
    assert result.final_output == "Opened T-2" and result.context_wrapper.context is second


async def test_run_streamed_records_a_miss_and_streams_a_hit_from_the_cache() -> None:
    desk, model, runner = desk_runner()
    streamed = await runner.run_streamed(task("ada@x.io"), params={"email": "ada@x.io"})
    assert isinstance(streamed, RunResultStreaming)
    names = [e.name async for e in streamed.stream_events() if e.type == "run_item_stream_event"]
    assert names.count("tool_called") == 4 and names[-1] == "message_output_created"
    assert runner.last_result is not None and runner.last_result.stored  # set once the stream is done

    hit = await runner.run_streamed(task("bob@x.io"), params={"email": "bob@x.io"})
    assert isinstance(hit, CachedStreamingResult) and hit.is_complete and len(model.calls) == 4
    events = [e async for e in hit.stream_events()]
    assert events[0].type == "agent_updated_stream_event"
    assert [getattr(e, "name", None) for e in events[1:]] == [
        *["tool_called", "tool_called", "tool_output", "tool_output"],
        *["tool_called", "tool_output"] * 2,
        "message_output_created",
    ]
    assert [getattr(e, "item", None) for e in events[1:]] == hit.new_items
    assert hit.final_output == "Opened T-2 for usr_bob" and desk.notified == ["T-1", "T-2"]
    assert len(hit.to_input_list()) == 10 and runner.last_result is not None and runner.last_result.hit


async def test_two_runs_at_once_keep_their_own_replays() -> None:
    desk, _, runner = await recorded()
    bob, eve = await asyncio.gather(
        runner.run(task("bob@x.io"), params={"email": "bob@x.io"}),
        runner.run(task("eve@x.io"), params={"email": "eve@x.io"}),
    )
    for result, user in ((bob, "usr_bob"), (eve, "usr_eve")):
        calls = [i for i in result.new_items if isinstance(i, ToolCallItem)]
        outputs = [i for i in result.new_items if isinstance(i, ToolCallOutputItem)]
        assert len(calls) == 4 and outputs[0].output["id"] == user and user in result.final_output
        assert [o.call_id for o in outputs] == [c.call_id for c in calls]
    assert {t[1] for t in desk.tickets[1:]} == {"usr_bob", "usr_eve"}


def responding(desk: Desk) -> ScriptedModel:
    """A model that plays ``script`` for whichever user its conversation is about, turn by turn."""

    def respond(call: ModelCall) -> list[Any]:
        items = list(call.input)
        email = str(items[0]["content"]).split()[-1]
        outputs = [i["output"] for i in items if i.get("type") == "function_call_output"]
        ticket = json.loads(outputs[2])["ticket"] if len(outputs) > 2 else "T-?"
        turns = script(email, ticket)
        return turns[{0: 0, 2: 1, 3: 2, 4: 3}[len(outputs)]]

    return ScriptedModel([ModelStep.respond(respond) for _ in range(8)])


async def test_an_uncached_run_beside_a_recording_one_adds_nothing_to_its_trajectory() -> None:
    desk = Desk()
    model = responding(desk)
    runner = CachedRunner(Engine(), Agent(name="desk", model=model, tools=desk.tools()))
    await asyncio.gather(
        runner.run(task("ada@x.io"), params={"email": "ada@x.io"}),
        runner.run(task("bob@x.io"), params={"email": "bob@x.io"}, session=SQLiteSession("bob")),
    )
    assert len(model.calls) == 8 and len(desk.tickets) == 2
    result = await runner.run(task("eve@x.io"), params={"email": "eve@x.io"})
    mm = runner.last_result
    assert mm is not None and mm.hit and mm.steps_replayed == 4
    assert result.final_output == "Opened T-3 for usr_eve" and desk.notified[-1] == "T-3"


@pytest.mark.parametrize("as_handoff", [False, True], ids=["agent", "handoff"])
async def test_handoff_agents_tools_are_recorded_and_a_hit_ends_with_the_agent_that_answered(
    as_handoff: bool,
) -> None:
    @function_tool
    def refund(order: str) -> str:
        """Refund an order."""
        return f"refunded {order}"

    billing_model = ScriptedModel(
        [[function_call("refund", {"order": "A1"}, call_id="c1")], [assistant_message("Refunded A1")]]
    )
    billing = Agent(name="billing", model=billing_model, tools=[refund])
    triage_model = ScriptedModel([[function_call("transfer_to_billing", {}, call_id="h1")]])
    handed: list[str] = []
    target = handoff(billing, on_handoff=lambda ctx: handed.append("billing")) if as_handoff else billing
    triage = Agent(name="triage", model=triage_model, handoffs=[target])
    runner = CachedRunner(Engine(), triage)
    first = await runner.run("refund order A1", params={"order": "A1"})
    assert first.last_agent.name == "billing" and runner.last_result is not None and runner.last_result.stored
    hit = await runner.run("refund order A2", params={"order": "A2"})
    assert runner.last_result is not None and runner.last_result.hit
    assert hit.final_output == "Refunded A2" and hit.last_agent.name == "billing"
    assert hit.new_items[3].output == "refunded A2" and len(billing_model.calls) == 2
    assert handed == (["billing"] if as_handoff else [])  # a handoff callback does not run on a hit


async def test_a_run_that_used_a_hosted_tool_is_not_stored(caplog: pytest.LogCaptureFixture) -> None:
    @function_tool
    def refund(order: str) -> str:
        """Refund an order."""
        return f"refunded {order}"

    search = ResponseFunctionWebSearch(
        id="ws_1",
        status="completed",
        type="web_search_call",
        action=ActionSearch(query="policy", type="search"),
    )
    model = ScriptedModel(
        [
            [search],
            [function_call("refund", {"order": "A1"}, call_id="c1")],
            [assistant_message("Refunded A1")],
        ]
    )
    runner = CachedRunner(Engine(), Agent(name="desk", model=model, tools=[refund, WebSearchTool()]))
    result = await runner.run("refund order A1", params={"order": "A1"})
    assert result.final_output == "Refunded A1" and runner.last_result is None
    assert "web_search_call" in caplog.text


async def test_a_structured_output_comes_back_as_its_type_on_a_hit() -> None:
    class Ticket(BaseModel):
        ticket: str
        user: str

    @function_tool
    def lookup_user(email: str) -> str:
        """Find a user by email."""
        return "usr_" + email.split("@")[0]

    model = ScriptedModel(
        [
            [function_call("lookup_user", {"email": "ada@x.io"}, call_id="c1")],
            [assistant_message('{"ticket": "reset", "user": "usr_ada"}')],
        ]
    )
    runner = CachedRunner(Engine(), Agent(name="desk", model=model, tools=[lookup_user], output_type=Ticket))
    first = await runner.run(task("ada@x.io"), params={"email": "ada@x.io"})
    assert first.final_output == Ticket(ticket="reset", user="usr_ada")
    hit = await runner.run(task("bob@x.io"), params={"email": "bob@x.io"})
    assert runner.last_result is not None and runner.last_result.hit
    assert hit.final_output == Ticket(ticket="reset", user="usr_bob")


def test_run_sync_runs_and_replays_outside_an_event_loop() -> None:
    _, _, runner = desk_runner()
    runner.run_sync(task("ada@x.io"), params={"email": "ada@x.io"})
    hit = runner.run_sync(task("bob@x.io"), params={"email": "bob@x.io"})
    assert (
        runner.last_result is not None
        and runner.last_result.hit
        and hit.final_output == "Opened T-2 for usr_bob"
    )


async def test_run_sync_inside_an_event_loop_is_refused() -> None:
    _, _, runner = desk_runner()
    with pytest.raises(RuntimeError, match=r"await runner\.run"):
        runner.run_sync(task("ada@x.io"))


async def test_a_replayed_call_that_needs_approval_now_goes_to_the_agent_not_the_tool() -> None:
    refunds: list[tuple[str, int]] = []

    async def large(ctx: RunContextWrapper[Any], arguments: dict[str, Any], call_id: str) -> bool:
        return bool(arguments["amount"] > 100)

    @function_tool(needs_approval=large)
    def refund(order: str, amount: int) -> str:
        """Refund an amount of an order."""
        refunds.append((order, amount))
        return f"refunded {amount} on {order}"

    model = ScriptedModel(
        [
            [function_call("refund", {"order": "A1", "amount": 50}, call_id="c1")],
            [assistant_message("Refunded 50 on A1")],
            [function_call("refund", {"order": "A1", "amount": 500}, call_id="c2")],
        ]
    )
    runner = CachedRunner(Engine(), Agent(name="desk", model=model, tools=[refund]))
    await runner.run("refund 50 on order A1", params={"amount": 50})
    assert runner.last_result is not None and runner.last_result.stored
    result = await runner.run("refund 500 on order A1", params={"amount": 500})
    assert refunds == [("A1", 50)]  # neither the replay nor the agent refunded 500 unapproved
    assert result.interruptions and runner.last_result is None and len(model.calls) == 3


async def test_a_tool_that_needs_approval_is_not_stored() -> None:
    @function_tool(needs_approval=True)
    def delete_user(user_id: str) -> str:
        """Delete a user."""
        return f"deleted {user_id}"

    model = ScriptedModel([[function_call("delete_user", {"user_id": "usr_ada"}, call_id="c1")]])
    runner = CachedRunner(Engine(), Agent(name="desk", model=model, tools=[delete_user]))
    result = await runner.run("delete usr_ada", params={"user": "usr_ada"})
    assert result.interruptions and runner.last_result is None


async def test_a_secret_param_stays_out_of_the_bypass_log(caplog: pytest.LogCaptureFixture) -> None:
    _, _, runner = desk_runner()
    caplog.set_level(logging.INFO, logger="muscle_mem")
    await runner.run(task("ada@x.io"), params={"email": Secret("ada@x.io")}, previous_response_id="resp_1")
    assert "carries earlier conversation" in caplog.text and "ada@x.io" not in caplog.text


def test_checks_naming_a_tool_the_agent_lacks_are_refused() -> None:
    desk = Desk()
    agent = Agent(name="desk", model=ScriptedModel([]), tools=desk.tools())
    with pytest.raises(ValueError, match="'lokup_user'"):
        CachedRunner(Engine(), agent, checks={"lokup_user": Check.equal(lambda **_: 1)})


async def test_wrap_agent_records_inside_an_engine_whose_agent_runs_the_sdk() -> None:
    from agents import Runner

    desk = Desk()
    model = ScriptedModel(script("ada@x.io"))
    engine = Engine()
    agent = wrap_agent(engine, Agent(name="desk", model=model, tools=desk.tools()))

    async def solve(text: str) -> str:
        return str((await Runner.run(agent, text)).final_output)

    engine.set_agent(solve)
    first = await engine.arun(task("ada@x.io"), params={"email": "ada@x.io"})
    assert first.stored and [c.tool for c in first.calls][-1] == "notify"
    second = await engine.arun(task("bob@x.io"), params={"email": "bob@x.io"})
    assert second.hit and second.output == "Opened T-2 for usr_bob" and desk.call_ids[-1].startswith("mm_")


async def test_an_agent_wrapped_twice_records_each_call_once_in_the_runners_engine() -> None:
    desk = Desk()
    model = ScriptedModel(script("ada@x.io"))
    other = Engine()
    wrapped = wrap_agent(other, Agent(name="desk", model=model, tools=desk.tools()))
    engine = Engine()
    runner = CachedRunner(engine, CachedRunner(engine, wrapped).agent)
    await runner.run(task("ada@x.io"), params={"email": "ada@x.io"})
    assert runner.last_result is not None and runner.last_result.stored
    assert [c.tool for c in runner.last_result.calls] == [
        "lookup_user",
        "get_plan",
        "create_ticket",
        "notify",
    ]
    assert (
        await runner.run(task("bob@x.io"), params={"email": "bob@x.io"})
    ).final_output == "Opened T-2 for usr_bob"
    assert runner.last_result is not None and runner.last_result.hit and len(model.calls) == 4


def triage_desk() -> tuple[Agent[Any], Agent[Any]]:
    """A triage agent that hands off to billing, which refunds and answers (fresh scripted models)."""

    @function_tool
    def refund(order: str) -> str:
        """Refund an order."""
        return f"refunded {order}"

    billing = Agent(
        name="billing",
        model=ScriptedModel(
            [[function_call("refund", {"order": "A1"}, call_id="c1")], [assistant_message("Refunded A1")]]
        ),
        tools=[refund],
    )
    triage = Agent(
        name="triage",
        model=ScriptedModel([[function_call("transfer_to_billing", {}, call_id="h1")]]),
        handoffs=[billing],
    )
    return triage, billing


def shape(result: Any, users: dict[str, Agent[Any]]) -> list[tuple[Any, ...]]:
    """A result's items field by field, the ids left out, each agent checked to be the user's own."""
    assert result.last_agent is users[result.last_agent.name]
    rows: list[tuple[Any, ...]] = [("last_agent", result.last_agent.name)]
    for item in result.new_items:
        for name in ("agent", "source_agent", "target_agent"):
            agent = getattr(item, name, None)
            assert agent is None or agent is users[agent.name], (item.type, name)
        raw = item.raw_item
        fields = raw if isinstance(raw, dict) else raw.model_dump(exclude_none=True)
        kept = {k: v for k, v in fields.items() if k not in ("id", "call_id")}
        if item.type == "message_output_item":
            kept = {"text": ItemHelpers.text_message_output(item)}
        rows.append((type(item).__name__, item.agent.name, kept, getattr(item, "output", None)))
    rows.append(("input", [(i.get("type"), i.get("name"), i.get("role")) for i in result.to_input_list()]))
    return rows


async def events(streamed: Any) -> list[tuple[str, str | None]]:
    return [
        (e.type, getattr(e, "name", None) or getattr(getattr(e, "new_agent", None), "name", None))
        async for e in streamed.stream_events()
        if e.type != "raw_response_event"
    ]


async def test_a_plain_run_a_miss_and_a_hit_have_the_same_items_agents_and_handoff() -> None:
    """Handoff items included, every agent in the result the user's own object, on a miss as on a hit."""
    triage, billing = triage_desk()
    plain = shape(await Runner.run(triage, "refund order A1"), {"triage": triage, "billing": billing})
    triage, billing = triage_desk()
    users = {"triage": triage, "billing": billing}
    runner = CachedRunner(Engine(), triage)
    miss = shape(await runner.run("refund order A1", params={"order": "A1"}), users)
    hit = await runner.run("refund order A1", params={"order": "A1"})
    assert runner.last_result is not None and runner.last_result.hit
    assert plain == miss == shape(hit, users)
    assert [type(item) for item in hit.new_items][:2] == [HandoffCallItem, HandoffOutputItem]
    assert hit.new_items[0].raw_item.call_id == hit.new_items[1].raw_item["call_id"]
    assert hit.new_items[0].raw_item.call_id.startswith("mm_")


async def test_a_streamed_plain_run_miss_and_hit_send_the_same_events() -> None:
    triage, _ = triage_desk()
    plain = await events(Runner.run_streamed(triage, "refund order A1"))
    triage, billing = triage_desk()
    runner = CachedRunner(Engine(), triage)
    missed = await runner.run_streamed("refund order A1", params={"order": "A1"})
    miss = await events(missed)
    assert missed.last_agent is billing
    hit = await runner.run_streamed("refund order A1", params={"order": "A1"})
    assert isinstance(hit, CachedStreamingResult) and hit.last_agent is billing
    assert plain == miss == await events(hit)
    assert plain[:4] == [
        ("agent_updated_stream_event", "triage"),
        ("run_item_stream_event", "handoff_requested"),
        ("run_item_stream_event", "handoff_occured"),
        ("agent_updated_stream_event", "billing"),
    ]


async def test_a_run_without_a_handoff_ends_with_the_users_own_agent() -> None:
    desk, _, runner = desk_runner()
    missed = await runner.run(task("ada@x.io"), params={"email": "ada@x.io"})
    hit = await runner.run(task("bob@x.io"), params={"email": "bob@x.io"})
    assert missed.last_agent is desk.agent and hit.last_agent is desk.agent
    assert all(item.agent is desk.agent for item in [*missed.new_items, *hit.new_items])


async def test_a_handoff_stays_in_place_when_a_param_equals_how_many_calls_came_before_it() -> None:
    """The handoffs are stored by name, so no number in them is bound to a param (count=0, then others).

    Every run either misses (the agent records it) or hits; each hit has the handoff first.
    """

    @function_tool
    def ship(count: int) -> str:
        """Ship some items."""
        return "shipment booked"  # the same observation whatever the count

    billing = Agent(
        name="billing",
        model=ScriptedModel(
            [[function_call("ship", {"count": 0}, call_id="c1")], [assistant_message("Shipped")]] * 3
        ),
        tools=[ship],
    )
    triage = Agent(
        name="triage",
        model=ScriptedModel([[function_call("transfer_to_billing", {}, call_id="h1")]] * 3),
        handoffs=[billing],
    )
    runner = CachedRunner(Engine(), triage)
    hits = []
    for count in (0, 0, 1):
        result = await runner.run(f"ship {count} items", params={"count": count})
        assert runner.last_result is not None
        if runner.last_result.hit:
            hits.append([type(item) for item in result.new_items])
    assert hits and all(
        kinds == [HandoffCallItem, HandoffOutputItem, ToolCallItem, ToolCallOutputItem, MessageOutputItem]
        for kinds in hits
    )


# what the agents read besides the input is part of the task


async def test_changed_instructions_are_another_task_and_the_same_ones_hit() -> None:
    """Yesterday's date in the instructions never serves today's run; today's run serves today's."""
    engine, desk = Engine(), Desk()
    model = ScriptedModel([*script("ada@x.io"), *script("eve@x.io", "T-3")])

    def runner_for(day: str) -> CachedRunner:
        agent = Agent(name="desk", instructions=f"Today is {day}.", model=model, tools=desk.tools())
        return CachedRunner(engine, agent)

    hits = []
    for day, email in (("04", "ada"), ("04", "bob"), ("11", "eve"), ("11", "ada")):
        runner = runner_for(f"2026-12-{day}")
        await runner.run(task(f"{email}@x.io"), params={"email": f"{email}@x.io"})
        assert runner.last_result is not None
        hits.append(runner.last_result.hit)
    assert hits == [False, True, False, True] and model.remaining_steps == 0


async def test_callable_instructions_are_resolved_with_the_calls_context() -> None:
    """Instructions made from the run's context count as this call's context makes them."""
    desk = Desk()
    model = ScriptedModel([*script("ada@x.io"), *script("eve@x.io", "T-3")])

    def instructions(ctx: RunContextWrapper[dict[str, str]], agent: Agent[Any]) -> str:
        return f"You are {agent.name}. Today is {ctx.context['today']}."

    agent = Agent(name="desk", instructions=instructions, model=model, tools=desk.tools())
    runner = CachedRunner(Engine(), agent)
    hits = []
    for day, email in (("04", "ada"), ("04", "bob"), ("11", "eve"), ("11", "ada")):
        today = {"today": f"2026-12-{day}"}
        await runner.run(task(f"{email}@x.io"), params={"email": f"{email}@x.io"}, context=today)
        assert runner.last_result is not None
        hits.append(runner.last_result.hit)
    assert hits == [False, True, False, True] and model.remaining_steps == 0


async def test_a_handoff_agents_changed_instructions_are_another_task() -> None:
    """The agents a handoff names are known up front: what they read counts, reached or not."""

    @function_tool
    def refund(order: str) -> str:
        """Refund an order."""
        return f"refunded {order}"

    engine = Engine()
    refunds = [[function_call("refund", {"order": "A1"}, call_id="c1")], [assistant_message("Refunded A1")]]
    billing_model = ScriptedModel(refunds * 2)
    triage_model = ScriptedModel([[function_call("transfer_to_billing", {}, call_id="h1")]] * 2)
    hits = []
    for limit in ("$100", "$100", "$50"):
        billing = Agent(
            name="billing", instructions=f"Refund up to {limit}.", model=billing_model, tools=[refund]
        )
        runner = CachedRunner(engine, Agent(name="triage", model=triage_model, handoffs=[handoff(billing)]))
        await runner.run("refund order A1", params={"order": "A1"})
        assert runner.last_result is not None
        hits.append(runner.last_result.hit)
    assert hits == [False, True, False] and billing_model.remaining_steps == 0


async def test_instructions_never_reach_the_store_in_clear(tmp_path: Path) -> None:
    """The instructions are keyed by their fingerprint: a secret in them is not stored, and the run is."""
    engine = Engine(f"sqlite:///{tmp_path / 'store.db'}")
    secret = "Bill with the key sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0, desk bot."
    agent = Agent(
        name="desk", instructions=secret, model=ScriptedModel(script("ada@x.io")), tools=Desk().tools()
    )
    runner = CachedRunner(engine, agent)
    await runner.run(task("ada@x.io"), params={"email": "ada@x.io"})
    assert runner.last_result is not None and runner.last_result.stored
    engine.close()
    stored = (tmp_path / "store.db").read_bytes()
    assert b"sk-live-9f8e7d6c5b4a" not in stored and b"desk bot" not in stored


async def test_run_streamed_is_streamed_without_await_as_the_sdks_and_awaited_as_before() -> None:
    """``streamed = runner.run_streamed(...)``, then ``stream_events()``: the SDK's own way, miss and hit."""
    triage, billing = triage_desk()
    runner = CachedRunner(Engine(), triage)
    plain = await events(Runner.run_streamed(triage_desk()[0], "refund order A1"))
    for expected_hit in (False, True):
        streamed = runner.run_streamed("refund order A1", params={"order": "A1"})
        with pytest.raises(AttributeError, match="has not started yet"):
            _ = streamed.final_output
        assert await events(streamed) == plain
        assert runner.last_result is not None and runner.last_result.hit is expected_hit
        assert streamed.last_agent is billing and streamed.final_output == "Refunded A1"
        assert [i.get("type") for i in streamed.to_input_list()][-1] == "message"
    awaited = await runner.run_streamed("refund order A1", params={"order": "A1"})
    assert isinstance(awaited, CachedStreamingResult) and await events(awaited) == plain
