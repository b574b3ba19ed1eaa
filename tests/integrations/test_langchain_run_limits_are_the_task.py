"""LangChain: a run's ``recursion_limit`` is part of the task, so a replay never outruns the graph's limit."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.errors import GraphRecursionError

from muscle_mem import Engine
from muscle_mem.integrations.langchain import CachedAgent


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, with tools bound (ignored)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def three_steps() -> list[AIMessage]:
    turns = [
        AIMessage("", tool_calls=[{"name": "step", "args": {"n": n}, "id": f"c{n}", "type": "tool_call"}])
        for n in range(3)
    ]
    return [*turns, AIMessage("3 steps")]


def test_a_lower_recursion_limit_stops_the_run_where_the_graph_alone_stops() -> None:
    """A task recorded under the default limit is not replayed under a limit it would exceed."""
    done: list[int] = []

    def step(n: int) -> str:
        """One step."""
        done.append(n)
        return "ok"

    engine = Engine()
    tool = StructuredTool.from_function(step)
    agent = CachedAgent(engine, create_agent(ScriptedModel(messages=iter(three_steps())), [tool]))
    task = {"messages": [HumanMessage("three steps")]}
    agent.invoke(task)
    assert agent.last_result is not None and agent.last_result.stored and done == [0, 1, 2]

    alone = create_agent(ScriptedModel(messages=iter(three_steps())), [StructuredTool.from_function(step)])
    done.clear()
    with pytest.raises(GraphRecursionError):
        alone.invoke(task, {"recursion_limit": 4})
    by_alone = list(done)

    limited = CachedAgent(engine, create_agent(ScriptedModel(messages=iter(three_steps())), [tool]))
    done.clear()
    with pytest.raises(GraphRecursionError):
        limited.invoke(task, {"recursion_limit": 4})
    assert done == by_alone == [0, 1]


def test_the_same_recursion_limit_replays() -> None:
    """A run made under a limit replays under the same limit."""
    engine = Engine()
    tool = StructuredTool.from_function(lambda n: "ok", name="step", description="One step.")
    config = {"recursion_limit": 10}
    agent = CachedAgent(engine, create_agent(ScriptedModel(messages=iter(three_steps())), [tool]))
    agent.invoke({"messages": [HumanMessage("three steps")]}, config)
    assert agent.last_result is not None and agent.last_result.stored
    again = CachedAgent(engine, create_agent(ScriptedModel(messages=iter([])), [tool]))
    again.invoke({"messages": [HumanMessage("three steps")]}, config)
    assert again.last_result is not None and again.last_result.hit and again.last_result.steps_replayed == 3
