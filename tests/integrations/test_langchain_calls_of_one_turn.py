"""LangChain fronts: parallel calls in one model turn, partial replays resumed mid-turn, recursion limits, tool errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool, ToolException
from langgraph.errors import GraphRecursionError

from muscle_mem import Engine
from muscle_mem.integrations.langchain import CachedAgent


def seen(messages: list[Any]) -> list[tuple[str, dict[str, Any], Any]]:
    asked: dict[str, tuple[str, dict[str, Any]]] = {}
    done: list[tuple[str, dict[str, Any], Any]] = []
    for m in messages:
        if isinstance(m, AIMessage):
            for c in m.tool_calls:
                asked[str(c["id"])] = (c["name"], dict(c["args"]))
        elif isinstance(m, ToolMessage):
            name, args = asked[m.tool_call_id]
            try:
                out: Any = json.loads(str(m.content))
            except ValueError:
                out = str(m.content)
            if m.status == "error":
                out = {"error": str(m.content)}
            done.append((name, args, out))
    return done


def chat(policy: Any) -> Any:
    class Policy(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatResult:
            done = seen(messages)
            move = policy(done)
            if isinstance(move, list):
                calls = [
                    {"name": n, "args": a, "id": f"c{len(done)}_{i}", "type": "tool_call"}
                    for i, (n, a) in enumerate(move)
                ]
                return ChatResult(generations=[ChatGeneration(message=AIMessage("", tool_calls=calls))])
            return ChatResult(generations=[ChatGeneration(message=AIMessage(str(move)))])

    return Policy(messages=iter(()))


def rooms(world: dict[str, Any]) -> list[Any]:
    def free(room: str) -> str:
        """Is a room free."""
        return json.dumps({"free": world["free"][room]})

    def hold(room: str) -> str:
        """Hold a room."""
        world["held"].append(room)
        return "held"

    return [StructuredTool.from_function(free), StructuredTool.from_function(hold)]


def rooms_policy(done: list[Any]) -> Any:
    if not done:
        return [("free", {"room": "r1"}), ("free", {"room": "r2"})]
    frees = [a["room"] for n, a, o in done if n == "free" and o["free"]]
    if not any(n == "hold" for n, _, _ in done):
        return [("hold", {"room": frees[0]})] if frees else "none free"
    return f"held {[a['room'] for n, a, _ in done if n == 'hold']}"


def _judge(
    policy: Any,
    tools: Any,
    cached: CachedAgent,
    world: dict[str, Any],
    start: dict[str, Any],
    config: Any = None,
) -> None:
    alone_world = copy.deepcopy(start)
    try:
        alone = (
            create_agent(chat(policy), tools(alone_world))
            .invoke({"messages": [HumanMessage("go")]}, config)["messages"][-1]
            .content
        )
    except GraphRecursionError:
        alone = "recursion"
    world.clear()
    world.update(copy.deepcopy(start))
    try:
        got = cached.invoke({"messages": [HumanMessage("go")]}, config)["messages"][-1].content
    except GraphRecursionError:
        got = "recursion"
    assert (got, world) == (alone, alone_world)


def test_lc_partial_replay_mid_turn_of_parallel_calls() -> None:
    world: dict[str, Any] = {"free": {"r1": True, "r2": False}, "held": []}
    agent = CachedAgent(Engine(), create_agent(chat(rooms_policy), rooms(world)))
    agent.invoke({"messages": [HumanMessage("go")]})
    world["held"] = []
    agent.invoke({"messages": [HumanMessage("go")]})
    assert agent.last_result is not None and agent.last_result.hit
    _judge(rooms_policy, rooms, agent, world, {"free": {"r1": False, "r2": True}, "held": []})


def poll_tools(world: dict[str, Any]) -> list[Any]:
    def poll(job: str) -> str:
        """Poll a job."""
        world["polls"] += 1
        return json.dumps({"done": world["polls"] >= world["ready_at"]})

    return [StructuredTool.from_function(poll)]


def poll_policy(done: list[Any]) -> Any:
    if not done or not done[-1][2]["done"]:
        return [("poll", {"job": "j1"})]
    return f"done after {len(done)}"


def test_lc_partial_replay_then_resume_under_the_same_recursion_limit() -> None:
    """Recorded: two polls under recursion_limit 6. Probe: three polls, which the graph alone cannot make
    under 6; a replay of two polls then a resumed graph with a full budget would."""
    world: dict[str, Any] = {"polls": 0, "ready_at": 2}
    agent = CachedAgent(Engine(), create_agent(chat(poll_policy), poll_tools(world)))
    agent.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": 6})
    assert agent.last_result is not None and agent.last_result.stored
    _judge(poll_policy, poll_tools, agent, world, {"polls": 0, "ready_at": 3}, {"recursion_limit": 6})


def test_lc_parallel_calls_hit_under_a_tight_recursion_limit() -> None:
    """Two parallel calls then an answer fit recursion_limit 4; so must the hit."""
    world: dict[str, Any] = {"free": {"r1": False, "r2": False}, "held": []}

    def policy(done: list[Any]) -> Any:
        if not done:
            return [("free", {"room": "r1"}), ("free", {"room": "r2"})]
        return f"free {[a['room'] for n, a, o in done if o['free']]}"

    agent = CachedAgent(Engine(), create_agent(chat(policy), rooms(world)))
    agent.invoke({"messages": [HumanMessage("go")]}, {"recursion_limit": 4})
    _judge(
        policy, rooms, agent, world, {"free": {"r1": False, "r2": False}, "held": []}, {"recursion_limit": 4}
    )
    assert agent.last_result is not None and agent.last_result.hit


def test_lc_handled_tool_error_branches_the_model() -> None:
    """handle_tool_error turns a ToolException into an error message; the model then takes another tool."""

    def tools(world: dict[str, Any]) -> list[Any]:
        def charge(amount: int) -> str:
            """Charge."""
            if world["fail"]:
                raise ToolException("declined")
            world["done"].append(("charge", amount))
            return "charged"

        def invoice(amount: int) -> str:
            """Invoice."""
            world["done"].append(("invoice", amount))
            return "invoiced"

        return [
            StructuredTool.from_function(charge, handle_tool_error=True),
            StructuredTool.from_function(invoice),
        ]

    def policy(done: list[Any]) -> Any:
        if not done:
            return [("charge", {"amount": 5})]
        last = done[-1]
        if isinstance(last[2], dict) and "error" in last[2]:
            return [("invoice", {"amount": 5})]
        return f"done {last[2]}"

    world: dict[str, Any] = {"fail": False, "done": []}
    agent = CachedAgent(Engine(), create_agent(chat(policy), tools(world)))
    agent.invoke({"messages": [HumanMessage("go")]})
    world["done"] = []
    agent.invoke({"messages": [HumanMessage("go")]})
    assert agent.last_result is not None and agent.last_result.hit
    _judge(policy, tools, agent, world, {"fail": True, "done": []})
    _judge(policy, tools, agent, world, {"fail": True, "done": []})
