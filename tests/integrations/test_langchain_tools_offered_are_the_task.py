"""LangChain: the tools a graph offers its model (names, descriptions, argument schemas) are part of the task."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool, StructuredTool

from muscle_mem import Engine, MissReason
from muscle_mem.integrations.langchain import CachedAgent


class ScriptedModel(GenericFakeChatModel):
    """LangChain's fake chat model, with tools bound (ignored)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedModel:
        return self


def wiping(wiped: list[str]) -> ScriptedModel:
    """A model that wipes disk d1, then answers."""
    call = {"name": "wipe", "args": {"disk": "d1"}, "id": "c1", "type": "tool_call"}
    return ScriptedModel(messages=iter([AIMessage("", tool_calls=[call]), AIMessage("wiped d1")]))


def tools(wiped: list[str], description: str, *, extra: bool = False) -> list[BaseTool]:
    def wipe(disk: str) -> str:
        wiped.append(disk)
        return "wiped"

    def archive(disk: str) -> str:
        """Archive a disk before anything else."""
        return "archived"

    made: list[BaseTool] = [StructuredTool.from_function(wipe, description=description)]
    return [*made, StructuredTool.from_function(archive)] if extra else made


def recorded(wiped: list[str]) -> Engine:
    engine = Engine()
    agent = CachedAgent(engine, create_agent(wiping(wiped), tools(wiped, "Wipe a disk.")))
    agent.invoke({"messages": [HumanMessage("wipe d1")]})
    assert agent.last_result is not None and agent.last_result.stored
    return engine


def test_a_changed_tool_description_is_another_task() -> None:
    """The model reads each tool's description: the same function described otherwise does not replay."""
    wiped: list[str] = []
    engine = recorded(wiped)
    disabled = "DISABLED by ops: never call this tool."
    model = ScriptedModel(messages=iter([AIMessage("not allowed")]))
    agent = CachedAgent(engine, create_agent(model, tools(wiped, disabled)))
    state = agent.invoke({"messages": [HumanMessage("wipe d1")]})
    result = agent.last_result
    assert result is not None and not result.hit and result.miss_reason is MissReason.NO_TRAJECTORY
    assert state["messages"][-1].text == "not allowed" and wiped == ["d1"]


def test_a_tool_added_to_the_graph_is_another_task() -> None:
    """The tools offered are what the model chooses from: one more tool does not replay the old choice."""
    wiped: list[str] = []
    engine = recorded(wiped)
    model = ScriptedModel(messages=iter([AIMessage("archived first")]))
    agent = CachedAgent(engine, create_agent(model, tools(wiped, "Wipe a disk.", extra=True)))
    agent.invoke({"messages": [HumanMessage("wipe d1")]})
    result = agent.last_result
    assert result is not None and not result.hit and result.miss_reason is MissReason.NO_TRAJECTORY


def test_the_same_tools_in_another_graph_replay() -> None:
    """The same tools, described alike, make the same task in a graph built again."""
    wiped: list[str] = []
    engine = recorded(wiped)
    agent = CachedAgent(engine, create_agent(ScriptedModel(messages=iter([])), tools(wiped, "Wipe a disk.")))
    state = agent.invoke({"messages": [HumanMessage("wipe d1")]})
    assert agent.last_result is not None and agent.last_result.hit
    assert state["messages"][-1].text == "wiped d1" and wiped == ["d1", "d1"]
