"""LangChain / LangGraph: graphs built with the framework's own API, run offline with its fake chat model."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

import asyncio
import itertools
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, Tool, ToolException, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedState, ToolNode, tools_condition
from langgraph.types import Command
from pydantic import BaseModel, Field

from muscle_mem import Check, Engine, MissReason, NotStoredReason, Secret
from muscle_mem.integrations.langchain import CachedAgent, wrap_tool, wrap_tools


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, with tools bound (ignored) and every call counted and kept."""

    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def scripted(*turns: AIMessage | str) -> ScriptedModel:
    return ScriptedModel(messages=iter(turns))


def call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def turn(*calls: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=list(calls))


class Desk:
    """A help desk: users, a ticket counter (each ticket id is new), an assignment queue."""

    def __init__(self) -> None:
        self.users = {"ada@x.io": "usr_ada", "bob@x.io": "usr_bob", "cy@x.io": "usr_cy"}
        self.numbers: Iterator[int] = itertools.count(1)
        self.queue_open = True
        self.assigned: list[str] = []
        self.escalated: list[str] = []

    def tools(self) -> list[BaseTool]:
        desk = self

        @tool
        def lookup_user(email: str) -> dict[str, str]:
            """Find a user by email."""
            if email not in desk.users:
                raise ToolException(f"no user {email}")
            return {"id": desk.users[email]}

        lookup_user.handle_tool_error = True  # the model sees the error (LangChain's ToolException way)

        @tool
        def open_ticket(user_id: str, topic: str) -> dict[str, str]:
            """Open a ticket for a user."""
            return {"ticket": f"T{next(desk.numbers)}", "user": user_id, "topic": topic}

        @tool
        def assign(ticket_id: str) -> str:
            """Assign a ticket to the queue."""
            desk.assigned.append(ticket_id)
            return f"{ticket_id} assigned"

        @tool
        def escalate(ticket_id: str) -> str:
            """Escalate a ticket."""
            desk.escalated.append(ticket_id)
            return f"{ticket_id} escalated"

        return [lookup_user, open_ticket, assign, escalate]


def ticket_script(email: str, user: str, ticket: str) -> list[AIMessage]:
    """What the model does for one request: look up, open a ticket, assign it, answer."""
    return [
        turn(call("lookup_user", "c1", email=email)),
        turn(call("open_ticket", "c2", user_id=user, topic="password")),
        turn(call("assign", "c3", ticket_id=ticket)),
        AIMessage(f"Ticket {ticket} for {user} is assigned."),
    ]


def request(email: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"open a password ticket for {email}")]}


def kinds(messages: list[BaseMessage]) -> list[str]:
    return [type(m).__name__ for m in messages]


def tool_call_ids(messages: list[BaseMessage]) -> list[str]:
    return [c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]


@pytest.fixture
def desk() -> Desk:
    return Desk()


def recorded_agent(desk: Desk, **options: Any) -> tuple[CachedAgent, ScriptedModel]:
    """A create_agent graph under CachedAgent that has solved the task once, for ada."""
    model = scripted(*ticket_script("ada@x.io", "usr_ada", "T1"))
    agent = CachedAgent(Engine(), create_agent(model, desk.tools()), **options)
    agent.invoke(request("ada@x.io"), params={"email": "ada@x.io"})
    return agent, model


# 1. the framework's agent runs unchanged; a first task misses and records


def test_a_create_agent_graph_misses_first_and_its_tool_calls_are_recorded(desk: Desk) -> None:
    """The graph runs as built; the engine records each tool call with the arguments the model chose."""
    model = scripted(*ticket_script("ada@x.io", "usr_ada", "T1"))
    agent = CachedAgent(Engine(), create_agent(model, desk.tools()))
    state = agent.invoke(request("ada@x.io"), params={"email": "ada@x.io"})

    result = agent.last_result
    assert result is not None and not result.hit and result.stored, result
    assert [(c.tool, dict(c.kwargs), c.replayed) for c in result.calls] == [
        ("lookup_user", {"email": "ada@x.io"}, False),
        ("open_ticket", {"user_id": "usr_ada", "topic": "password"}, False),
        ("assign", {"ticket_id": "T1"}, False),
    ]
    assert result.output == "Ticket T1 for usr_ada is assigned."
    assert kinds(state["messages"]) == ["HumanMessage"] + ["AIMessage", "ToolMessage"] * 3 + ["AIMessage"]
    assert tool_call_ids(state["messages"]) == ["c1", "c2", "c3"]  # the model's own ids on a miss
    assert len(model.seen) == 4


def test_async_tools_record_under_ainvoke_and_replay(desk: Desk) -> None:
    """Async tools (``coroutine``) go through ``engine.arun``: recorded on a miss, replayed on a hit."""

    @tool
    async def lookup_user(email: str) -> dict[str, str]:
        """Find a user by email."""
        await asyncio.sleep(0)
        return {"id": desk.users[email]}

    @tool
    async def open_ticket(user_id: str, topic: str) -> dict[str, str]:
        """Open a ticket for a user."""
        return {"ticket": f"T{next(desk.numbers)}", "user": user_id}

    @tool
    def assign(ticket_id: str) -> str:
        """Assign a ticket (a sync tool under ainvoke runs in LangChain's thread executor)."""
        desk.assigned.append(ticket_id)
        return f"{ticket_id} assigned"

    model = scripted(*ticket_script("ada@x.io", "usr_ada", "T1"))
    agent = CachedAgent(Engine(), create_agent(model, [lookup_user, open_ticket, assign]))

    async def both() -> tuple[Any, Any, Any]:
        await agent.ainvoke(request("ada@x.io"), params={"email": "ada@x.io"})
        first = agent.last_result
        hit = await agent.ainvoke(request("bob@x.io"), params={"email": "bob@x.io"})
        return first, hit, agent.last_result

    first, hit, second = asyncio.run(both())
    assert first is not None and first.stored
    assert [c.tool for c in first.calls] == ["lookup_user", "open_ticket", "assign"]
    assert second is not None and second.hit and second.steps_replayed == 3
    assert hit["messages"][-1].text == "Ticket T2 for usr_bob is assigned."
    assert desk.assigned == ["T1", "T2"]
    assert len(model.seen) == 4


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_parallel_tool_calls_of_one_model_turn_are_recorded_and_replayed(desk: Desk, mode: str) -> None:
    """Two tool calls in one AIMessage run side by side (threads or tasks) and are both recorded."""
    model = scripted(
        turn(call("lookup_user", "c1", email="ada@x.io"), call("lookup_user", "c2", email="bob@x.io")),
        AIMessage("usr_ada and usr_bob"),
    )
    agent = CachedAgent(Engine(), create_agent(model, desk.tools()))

    def run(a: str, b: str) -> Any:
        graph_in = {"messages": [HumanMessage(f"find {a} and {b}")]}
        params = {"a": a, "b": b}
        if mode == "invoke":
            return agent.invoke(graph_in, params=params)
        return asyncio.run(agent.ainvoke(graph_in, params=params))

    run("ada@x.io", "bob@x.io")
    first = agent.last_result
    assert first is not None and first.stored, first
    assert sorted(dict(c.kwargs)["email"] for c in first.calls) == ["ada@x.io", "bob@x.io"]

    state = run("cy@x.io", "ada@x.io")
    second = agent.last_result
    assert second is not None and second.hit and second.steps_replayed == 2
    assert state["messages"][-1].text == "usr_cy and usr_ada"
    # the model's turn as it was: one AIMessage asking for both, then a ToolMessage each
    assert kinds(state["messages"]) == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "AIMessage",
    ]
    assert [len(m.tool_calls) for m in state["messages"] if isinstance(m, AIMessage)] == [2, 0]
    assert len(model.seen) == 2


# 2. a hit skips the model; a fresh output flows into the next tool


def test_other_params_replay_without_the_model_and_the_new_ticket_flows_on(desk: Desk) -> None:
    """The second task is a full hit: no model call, and the ticket opened now is the one assigned."""
    agent, model = recorded_agent(desk)
    state = agent.invoke(request("bob@x.io"), params={"email": "bob@x.io"})

    result = agent.last_result
    assert result is not None and result.hit and result.steps_replayed == 3
    assert len(model.seen) == 4  # the script is spent: any model call would have raised
    assert desk.assigned == ["T1", "T2"]  # T2 was created in this run and assigned
    assert [dict(c.kwargs) for c in result.calls][1:] == [
        {"user_id": "usr_bob", "topic": "password"},
        {"ticket_id": "T2"},
    ]
    assert state["messages"][-1].text == "Ticket T2 for usr_bob is assigned."


# 3. a hit returns the framework's own result type


def test_a_hit_returns_the_state_a_run_returns_with_fresh_unique_call_ids(desk: Desk) -> None:
    """A hit's state holds the request, a tool-call turn per replayed call, its result, the answer."""
    agent, _ = recorded_agent(desk)
    first = agent.invoke(request("bob@x.io"), params={"email": "bob@x.io"})
    second = agent.invoke(request("cy@x.io"), params={"email": "cy@x.io"})

    messages = first["messages"]
    assert kinds(messages) == ["HumanMessage"] + ["AIMessage", "ToolMessage"] * 3 + ["AIMessage"]
    assert messages[0].text == "open a password ticket for bob@x.io"
    ids = tool_call_ids(messages) + tool_call_ids(second["messages"])
    assert all(i.startswith("mm_") for i in ids) and len(set(ids)) == 6
    answered = [m.tool_call_id for m in messages if isinstance(m, ToolMessage)]
    assert answered == tool_call_ids(messages)
    assert messages[2].content == '{"id": "usr_bob"}' and messages[2].name == "lookup_user"
    assert messages[1].tool_calls[0]["args"] == {"email": "bob@x.io"}


def test_a_hit_with_a_checkpointer_leaves_the_thread_as_a_run_would(desk: Desk) -> None:
    """With a checkpointer and a thread, the hit's messages are written to the thread, which is finished."""
    model = scripted(*ticket_script("ada@x.io", "usr_ada", "T1"))
    graph = create_agent(model, desk.tools(), checkpointer=InMemorySaver())
    agent = CachedAgent(Engine(), graph)
    agent.invoke(request("ada@x.io"), {"configurable": {"thread_id": "t1"}}, params={"email": "ada@x.io"})
    recorded = graph.get_state({"configurable": {"thread_id": "t1"}})

    thread = {"configurable": {"thread_id": "t2"}}
    state = agent.invoke(request("bob@x.io"), thread, params={"email": "bob@x.io"})
    assert agent.last_result is not None and agent.last_result.hit
    snapshot = graph.get_state(thread)
    assert snapshot.values == state
    assert kinds(snapshot.values["messages"]) == kinds(recorded.values["messages"])
    assert snapshot.next == recorded.next == ()  # nothing left to run, as after a run
    assert snapshot.values["messages"][-1].text == "Ticket T2 for usr_bob is assigned."


# 4. a failed check hands over to the same graph


def test_a_failed_check_hands_over_to_the_graph_with_the_replayed_calls_as_history(desk: Desk) -> None:
    """The graph resumes after the replayed calls (it sees them), its run is stored, and replays later."""
    queue = Check.equal(lambda ticket_id: desk.queue_open)
    model = scripted(
        *ticket_script("ada@x.io", "usr_ada", "T1"),
        turn(call("escalate", "c9", ticket_id="T2")),  # after the replay of bob's first two calls
        AIMessage("Ticket T2 for usr_bob is escalated."),
    )
    agent = CachedAgent(Engine(), create_agent(model, desk.tools()), checks={"assign": queue})
    agent.invoke(request("ada@x.io"), params={"email": "ada@x.io"})

    desk.queue_open = False
    state = agent.invoke(request("bob@x.io"), params={"email": "bob@x.io"})
    result = agent.last_result
    assert result is not None and not result.hit and result.steps_replayed == 2
    assert result.miss_reason is MissReason.PRE_CHECK_FAILED and result.stored, result
    resumed = model.seen[4]  # the model's one call of this run
    assert kinds(resumed) == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage", "ToolMessage"]
    assert resumed[4].content == '{"ticket": "T2", "user": "usr_bob", "topic": "password"}'
    assert kinds(state["messages"]) == ["HumanMessage"] + ["AIMessage", "ToolMessage"] * 3 + ["AIMessage"]
    assert desk.escalated == ["T2"] and desk.assigned == ["T1"]

    state = agent.invoke(request("cy@x.io"), params={"email": "cy@x.io"})  # the queue is still closed
    again = agent.last_result
    assert again is not None and again.hit and [c.tool for c in again.calls][-1] == "escalate"
    assert desk.escalated == ["T2", "T3"] and len(model.seen) == 6
    assert state["messages"][-1].text == "Ticket T3 for usr_cy is escalated."


# 5. prior history is a different task


def test_earlier_conversation_in_the_input_runs_uncached_and_says_so(
    desk: Desk, caplog: pytest.LogCaptureFixture
) -> None:
    """An input with earlier messages is a follow-up: the graph runs, nothing is looked up or stored."""
    agent, model = recorded_agent(desk)
    model.messages = iter(ticket_script("bob@x.io", "usr_bob", "T2"))
    history = {"messages": [HumanMessage("hi"), AIMessage("hello"), *request("bob@x.io")["messages"]]}
    with caplog.at_level(logging.INFO, logger="muscle_mem"):
        state = agent.invoke(history, params={"email": "bob@x.io"})
    assert agent.last_result is None and len(model.seen) == 8
    assert state["messages"][-1].text == "Ticket T2 for usr_bob is assigned."
    assert "carries earlier conversation" in caplog.text


def test_the_follow_up_log_line_shows_no_secret_param(desk: Desk, caplog: pytest.LogCaptureFixture) -> None:
    """The bypass is logged with the request, a secret param's value replaced by its name."""
    model = scripted(AIMessage("Done."))
    agent = CachedAgent(Engine(), create_agent(model, desk.tools()))
    history = {"messages": [HumanMessage("hi"), AIMessage("hello"), HumanMessage("use pin 48151623")]}
    with caplog.at_level(logging.INFO, logger="muscle_mem"):
        agent.invoke(history, params={"pin": Secret("48151623")})
    assert "carries earlier conversation" in caplog.text and "48151623" not in caplog.text


def test_a_thread_with_earlier_messages_runs_uncached_unless_followups_are_cached(desk: Desk) -> None:
    """A checkpointer thread that holds messages makes a follow-up; ``cache_followups=True`` caches it."""
    script = [*ticket_script("ada@x.io", "usr_ada", "T1"), *ticket_script("bob@x.io", "usr_bob", "T2")]
    for followups in (False, True):
        model = scripted(*script)
        graph = create_agent(model, Desk().tools(), checkpointer=InMemorySaver())
        agent = CachedAgent(Engine(), graph, cache_followups=followups)
        thread = {"configurable": {"thread_id": "t"}}
        agent.invoke(request("ada@x.io"), thread, params={"email": "ada@x.io"})
        assert agent.last_result is not None and agent.last_result.stored
        agent.invoke(request("bob@x.io"), thread, params={"email": "bob@x.io"})
        if followups:
            assert agent.last_result is not None and agent.last_result.hit and len(model.seen) == 4
            messages = graph.get_state(thread).values["messages"]
            assert kinds(messages[8:]) == kinds(messages[:8])  # the thread goes on with the replayed run
            assert messages[-1].text == "Ticket T2 for usr_bob is assigned."
        else:
            assert agent.last_result is None and len(model.seen) == 8


# 5b. the system messages the model reads are part of the task


def prompted(system: str, email: str = "ada@x.io") -> dict[str, Any]:
    return {"messages": [SystemMessage(system), *request(email)["messages"]]}


def test_a_changed_system_message_is_another_task_and_the_same_one_hits(desk: Desk) -> None:
    """Today's date in the system message: yesterday's run never replays today, today's run does."""
    script = [*ticket_script("ada@x.io", "usr_ada", "T1"), *ticket_script("ada@x.io", "usr_ada", "T2")]
    model = scripted(*script)
    agent = CachedAgent(Engine(), create_agent(model, desk.tools()))
    agent.invoke(prompted("Today is 2026-12-04."), params={"email": "ada@x.io"})
    agent.invoke(prompted("Today is 2026-12-11."), params={"email": "ada@x.io"})
    assert agent.last_result is not None and not agent.last_result.hit and agent.last_result.stored
    assert len(model.seen) == 8  # the model solved today's task
    agent.invoke(prompted("Today is 2026-12-11."), params={"email": "ada@x.io"})
    assert agent.last_result is not None and agent.last_result.hit and len(model.seen) == 8
    trajectory = agent.engine.store.get(str(agent.last_result.trajectory_id))
    assert trajectory is not None and trajectory.task == "open a password ticket for {email}"
    assert [tag[:8] for tag in trajectory.tags] == ["context:"]  # the prompt is a tag, by fingerprint


def test_a_changed_create_agent_system_prompt_is_another_task(desk: Desk) -> None:
    """The prompt built into the graph (``create_agent(system_prompt=...)``) counts like one in the input."""
    script = [*ticket_script("ada@x.io", "usr_ada", "T1"), *ticket_script("ada@x.io", "usr_ada", "T2")]
    engine, model = Engine(), scripted(*script)
    hits = []
    for day in ("2026-12-04", "2026-12-04", "2026-12-11"):
        agent = CachedAgent(engine, create_agent(model, desk.tools(), system_prompt=f"Today is {day}."))
        agent.invoke(request("ada@x.io"), params={"email": "ada@x.io"})
        assert agent.last_result is not None
        hits.append(agent.last_result.hit)
    assert hits == [False, True, False] and len(model.seen) == 8


def test_a_system_message_never_reaches_the_store_in_clear(desk: Desk, tmp_path: Path) -> None:
    """The system message is keyed by its fingerprint: a secret in it is not stored, and the run is."""
    system = "You are the desk bot. Use the key sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0 for billing."
    engine = Engine(f"sqlite:///{tmp_path / 'store.db'}")
    agent = CachedAgent(
        engine, create_agent(scripted(*ticket_script("ada@x.io", "usr_ada", "T1")), desk.tools())
    )
    agent.invoke(prompted(system), params={"email": "ada@x.io"})
    assert agent.last_result is not None and agent.last_result.stored
    engine.close()
    stored = (tmp_path / "store.db").read_bytes()
    assert b"sk-live-9f8e7d6c5b4a" not in stored and b"desk bot" not in stored


# 6. tool errors stay errors


def test_a_tool_error_the_model_sees_is_not_recorded_as_a_step(desk: Desk) -> None:
    """A tool that raises gives the model an error message (LangGraph's way) and is no step of the run.

    The model went on from the error (another lookup): what it decided rests on an error a replay
    cannot see, so the run is not stored, and says why. A run without the error is stored and replays.
    """
    model = scripted(
        turn(call("lookup_user", "c0", email="ada")),
        *ticket_script("ada@x.io", "usr_ada", "T1"),
        *ticket_script("ada@x.io", "usr_ada", "T2"),
    )
    agent = CachedAgent(Engine(), create_agent(model, desk.tools()))
    state = agent.invoke(request("ada@x.io"), params={"email": "ada@x.io"})
    error = state["messages"][2]
    assert isinstance(error, ToolMessage) and error.status == "error" and "no user ada" in str(error.content)
    result = agent.last_result
    assert result is not None and not result.stored
    assert result.not_stored_reason is NotStoredReason.TOOL_RAISED
    assert [c.tool for c in result.calls] == ["lookup_user", "open_ticket", "assign"]
    assert dict(result.calls[0].kwargs) == {"email": "ada@x.io"}  # the failed call is no step

    agent.invoke(request("ada@x.io"), params={"email": "ada@x.io"})
    assert agent.last_result is not None and agent.last_result.stored
    agent.invoke(request("bob@x.io"), params={"email": "bob@x.io"})
    assert agent.last_result is not None and agent.last_result.hit and agent.last_result.steps_replayed == 3


# 7. tool versions


def test_a_tools_version_follows_its_own_function_not_the_wrapper(desk: Desk) -> None:
    """Changing a tool's function stops its trajectories from replaying; its wrapper is the same code."""
    agent, _ = recorded_agent(desk)
    tools = desk.tools()

    @tool
    def assign(ticket_id: str) -> str:
        """Assign a ticket to the queue."""
        return f"{ticket_id} assigned to the night shift"

    changed = create_agent(
        scripted(*ticket_script("bob@x.io", "usr_bob", "T2")), [*tools[:2], assign, tools[3]]
    )
    other = CachedAgent(agent.engine, changed)
    other.invoke(request("bob@x.io"), params={"email": "bob@x.io"})
    result = other.last_result
    assert result is not None and not result.hit
    assert result.miss_reason is MissReason.VERSION_CHANGED and result.miss_tool == "assign"


def test_a_version_given_to_wrap_tool_is_the_tools_version(desk: Desk) -> None:
    """``wrap_tool(version=...)`` names the version: the same version over another function replays."""
    engine = Engine()
    first = [wrap_tool(engine, t, version="v1") for t in desk.tools()]
    model = scripted(*ticket_script("ada@x.io", "usr_ada", "T1"))
    agent = CachedAgent(engine, create_agent(model, first))
    agent.invoke(request("ada@x.io"), params={"email": "ada@x.io"})

    @tool
    def assign(ticket_id: str) -> str:
        """Assign a ticket to the queue."""
        return f"{ticket_id} assigned" if ticket_id else "no ticket"

    tools = desk.tools()
    renewed = [*tools[:2], assign, tools[3]]
    again = CachedAgent(
        engine, create_agent(scripted(), [wrap_tool(engine, t, version="v1") for t in renewed])
    )
    again.invoke(request("bob@x.io"), params={"email": "bob@x.io"})
    assert again.last_result is not None and again.last_result.hit


# 8. injected arguments


def test_an_injected_tool_call_id_is_not_recorded_and_is_fresh_at_replay() -> None:
    """``InjectedToolCallId`` is left out of the recorded call; a replay passes the hit's own call id."""

    @tool
    def remember(fact: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Remember a fact."""
        return ToolMessage(f"remembered {fact}", tool_call_id=tool_call_id, artifact={"call": tool_call_id})

    model = scripted(turn(call("remember", "c1", fact="green tea")), AIMessage("I will remember green tea."))
    agent = CachedAgent(Engine(), create_agent(model, [remember]))
    agent.invoke({"messages": [HumanMessage("remember green tea")]}, params={"fact": "green tea"})
    result = agent.last_result
    assert result is not None and result.stored and dict(result.calls[0].kwargs) == {"fact": "green tea"}

    state = agent.invoke({"messages": [HumanMessage("remember oat milk")]}, params={"fact": "oat milk"})
    assert agent.last_result is not None and agent.last_result.hit
    ask, answer = state["messages"][1], state["messages"][2]
    call_id = ask.tool_calls[0]["id"]
    assert call_id.startswith("mm_") and answer.tool_call_id == call_id
    assert answer.content == "remembered oat milk" and answer.artifact == {"call": call_id}
    assert state["messages"][-1].text == "I will remember oat milk."


def test_a_tool_that_reads_the_graph_state_runs_but_keeps_its_run_out_of_the_store() -> None:
    """A tool given the graph's state cannot be replayed: it runs as it is, and its run is not stored."""

    @tool
    def count_messages(note: str, state: Annotated[dict[str, Any], InjectedState]) -> str:
        """Count the messages so far."""
        return f"{note}: {len(state['messages'])} messages"

    model = scripted(turn(call("count_messages", "c1", note="so far")), AIMessage("There are 2 messages."))
    agent = CachedAgent(Engine(), create_agent(model, [count_messages]))
    state = agent.invoke({"messages": [HumanMessage("count")]})
    assert state["messages"][2].content == "so far: 2 messages"
    result = agent.last_result
    assert result is not None and not result.stored
    assert result.not_stored_reason is NotStoredReason.REFUSED
    assert (
        result.not_stored is not None
        and "count_messages" in result.not_stored
        and "state" in result.not_stored
    )


def test_a_tool_answering_with_a_command_keeps_its_run_out_of_the_store() -> None:
    """A tool that steers the graph with a Command is not replayable: its run is not stored."""

    @tool
    def finish(reason: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command[Any]:
        """Finish the conversation."""
        return Command(update={"messages": [ToolMessage(f"done: {reason}", tool_call_id=tool_call_id)]})

    model = scripted(turn(call("finish", "c1", reason="solved")), AIMessage("Done."))
    agent = CachedAgent(Engine(), create_agent(model, [finish]))
    state = agent.invoke({"messages": [HumanMessage("finish")]})
    assert state["messages"][2].content == "done: solved"
    result = agent.last_result
    assert result is not None and not result.stored and "Command" in (result.not_stored or "")


# other graphs, tools and inputs


def test_a_state_graph_with_a_tool_node_and_a_str_input(desk: Desk) -> None:
    """A hand-built StateGraph (model node, ToolNode, tools_condition) is cached like create_agent's."""
    model = scripted(*ticket_script("ada@x.io", "usr_ada", "T1"))

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", call_model)
    builder.add_node("tools", ToolNode(desk.tools()))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=InMemorySaver())
    agent = CachedAgent(Engine(), graph)

    agent.invoke(
        "open a password ticket for ada@x.io",
        {"configurable": {"thread_id": "a"}},
        params={"email": "ada@x.io"},
    )
    assert agent.last_result is not None and agent.last_result.stored
    thread = {"configurable": {"thread_id": "b"}}
    state = agent.invoke("open a password ticket for bob@x.io", thread, params={"email": "bob@x.io"})
    assert agent.last_result is not None and agent.last_result.hit
    assert graph.get_state(thread).next == () and state["messages"][-1].text.startswith("Ticket T2")


def test_a_class_based_tool_is_wrapped_recorded_and_replayed(desk: Desk) -> None:
    """A ``BaseTool`` subclass is called through a wrapping StructuredTool; its output flows on."""

    class LookupArgs(BaseModel):
        email: str

    class LookupUser(BaseTool):
        name: str = "lookup_user"
        description: str = "Find a user by email."
        args_schema: type[BaseModel] = LookupArgs

        def _run(self, email: str) -> dict[str, str]:
            return {"id": desk.users[email]}

    tools = [LookupUser(), *desk.tools()[1:]]
    model = scripted(*ticket_script("ada@x.io", "usr_ada", "T1"))
    agent = CachedAgent(Engine(), create_agent(model, tools))
    agent.invoke(request("ada@x.io"), params={"email": "ada@x.io"})
    assert agent.last_result is not None and agent.last_result.calls[0].output == {"id": "usr_ada"}
    state = agent.invoke(request("bob@x.io"), params={"email": "bob@x.io"})
    assert agent.last_result is not None and agent.last_result.hit
    assert state["messages"][-1].text == "Ticket T2 for usr_bob is assigned."


def test_a_single_input_tool_replays_with_its_argument_named_as_langchain_names_it() -> None:
    """A ``Tool`` gets its input as one positional argument; a hit's tool call names it ``__arg1``."""

    def shout(text: str) -> str:
        return text.upper()

    model = scripted(turn(call("shout", "c1", __arg1="ada")), AIMessage("ADA"))
    agent = CachedAgent(Engine(), create_agent(model, [Tool(name="shout", func=shout, description="Shout.")]))
    agent.invoke("shout ada", params={"name": "ada"})
    assert agent.last_result is not None and agent.last_result.calls[0].args == ("ada",)
    state = agent.invoke("shout bob", params={"name": "bob"})
    assert agent.last_result is not None and agent.last_result.hit
    assert state["messages"][1].tool_calls[0]["args"] == {"__arg1": "bob"}
    assert [m.content for m in state["messages"][2:]] == ["BOB", "BOB"]


def test_tools_wrapped_beforehand_are_used_as_they_are(desk: Desk) -> None:
    """``wrap_tools`` gives new tools (the user's stay unchanged) that CachedAgent does not wrap again."""
    engine = Engine()
    tools = desk.tools()
    wrapped = wrap_tools(engine, tools, checks={"assign": Check.equal(lambda ticket_id: desk.queue_open)})
    assert [t.name for t in wrapped] == [t.name for t in tools] and wrapped[0] is not tools[0]
    assert tools[0].invoke({"email": "ada@x.io"}) == {"id": "usr_ada"}  # outside a run: just the tool
    agent = CachedAgent(engine, create_agent(scripted(), wrapped))
    assert [agent.tools[t.name] for t in wrapped] == wrapped


def test_a_graph_whose_tools_record_into_another_engine_is_refused(desk: Desk) -> None:
    """One graph's tools record into one engine: a second engine would take them over unseen."""
    graph = create_agent(scripted(), desk.tools())
    CachedAgent(Engine(), graph)
    with pytest.raises(ValueError, match="another engine"):
        CachedAgent(Engine(), graph)


def test_checks_for_a_tool_the_graph_does_not_have_are_refused(desk: Desk) -> None:
    """A typo in ``checks`` would leave a tool unguarded: it is a ValueError."""
    graph = create_agent(scripted(), desk.tools())
    with pytest.raises(ValueError, match="'asign'"):
        CachedAgent(Engine(), graph, checks={"asign": Check.equal(lambda ticket_id: 1)})
    with pytest.raises(ValueError, match="'asign'"):
        wrap_tools(Engine(), desk.tools(), checks={"asign": Check.equal(lambda ticket_id: 1)})


def test_a_sync_invoke_of_a_graph_with_async_tools_is_a_clear_error() -> None:
    """LangChain cannot run an async tool in a sync run; CachedAgent says to use ainvoke."""

    @tool
    async def ping(host: str) -> str:
        """Ping a host."""
        return "pong"

    agent = CachedAgent(Engine(), create_agent(scripted(), [ping]))
    with pytest.raises(TypeError, match="ainvoke"):
        agent.invoke("ping example.org")


def test_a_run_that_ends_without_a_final_answer_is_not_stored(desk: Desk) -> None:
    """A run ending on a tool's message (``return_direct``) leaves no answer to replay: not stored."""

    @tool(return_direct=True)
    def status(ticket_id: str) -> str:
        """The status of a ticket."""
        return f"{ticket_id} is open"

    model = scripted(turn(call("status", "c1", ticket_id="T7")))
    agent = CachedAgent(Engine(), create_agent(model, [status]))
    state = agent.invoke("status of T7", params={"ticket": "T7"})
    assert state["messages"][-1].content == "T7 is open"
    result = agent.last_result
    assert result is not None and not result.stored and "ToolMessage" in (result.not_stored or "")


# concurrency


def test_concurrent_ainvoke_calls_keep_their_state_apart(desk: Desk) -> None:
    """Two calls at once (asyncio.gather) each get their own replay, messages and call ids."""
    agent, _ = recorded_agent(desk)

    async def both() -> list[Any]:
        return list(
            await asyncio.gather(
                agent.ainvoke(request("bob@x.io"), params={"email": "bob@x.io"}),
                agent.ainvoke(request("cy@x.io"), params={"email": "cy@x.io"}),
            )
        )

    bob, cy = asyncio.run(both())
    assert bob["messages"][0].text.endswith("bob@x.io") and "usr_bob" in bob["messages"][-1].text
    assert cy["messages"][0].text.endswith("cy@x.io") and "usr_cy" in cy["messages"][-1].text
    ids = tool_call_ids(bob["messages"]) + tool_call_ids(cy["messages"])
    assert len(set(ids)) == 6
    assert sorted(desk.assigned) == ["T1", "T2", "T3"]


def message_shape(messages: list[BaseMessage]) -> list[tuple[Any, ...]]:
    """Each message field by field, its ids only checked: present, and unique in the list."""
    ids = [m.id for m in messages]
    assert all(isinstance(i, str) and i for i in ids) and len(set(ids)) == len(ids), ids
    return [
        (
            type(m).__name__,
            [(c["name"], sorted(c["args"])) for c in getattr(m, "tool_calls", [])],
            getattr(m, "name", None),
            getattr(m, "status", None),
            m.response_metadata,
            m.additional_kwargs,
        )
        for m in messages
    ]


def test_a_plain_run_a_miss_and_a_hit_give_messages_of_the_same_shape_each_with_an_id() -> None:
    """No checkpointer: a hit's messages get ids as the graph's reducer gives a run's, unique ones."""
    plain_model = scripted(*ticket_script("bob@x.io", "usr_bob", "T1"))
    plain = create_agent(plain_model, Desk().tools()).invoke(request("bob@x.io"))
    model = scripted(*ticket_script("ada@x.io", "usr_ada", "T1"))
    fresh = CachedAgent(Engine(), create_agent(model, Desk().tools()))
    miss = fresh.invoke(request("ada@x.io"), params={"email": "ada@x.io"})
    hit = fresh.invoke(request("bob@x.io"), params={"email": "bob@x.io"})
    again = fresh.invoke(request("cy@x.io"), params={"email": "cy@x.io"})
    assert fresh.last_result is not None and fresh.last_result.hit
    shapes = [message_shape(s["messages"]) for s in (plain, miss, hit)]
    assert shapes[0] == shapes[1] == shapes[2]
    assert not {m.id for m in hit["messages"]} & {m.id for m in again["messages"]}


def test_wrap_tool_keeps_a_tool_classs_args_schema(desk: Desk) -> None:
    class LookupArgs(BaseModel):
        """Who to look up."""

        email: str = Field(description="the user's email")

    class LookupUser(BaseTool):
        name: str = "lookup_user"
        description: str = "Find a user by email."
        args_schema: type[BaseModel] = LookupArgs

        def _run(self, email: str) -> dict[str, str]:
            return {"id": desk.users[email]}

    original = LookupUser()
    wrapped = wrap_tool(Engine(), original)
    assert wrapped.args_schema is LookupArgs
    assert wrapped.tool_call_schema.model_json_schema() == original.tool_call_schema.model_json_schema()
    assert wrapped.args == original.args
