"""LangChain/LangGraph: what a graph's model reads that no input shows is part of the task.

Each test records a run, changes one thing the model reads, runs the same input again, and asserts
the sound outcome (a miss / an uncached run, or what the graph alone does).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from dataclasses import dataclass

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, dynamic_prompt
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from muscle_mem import Engine
from muscle_mem.integrations.langchain import CachedAgent
from refund_chat_model import PolicyModel


def refund_tool(refunded: list[str]) -> StructuredTool:
    def refund(order: str) -> str:
        """Refund an order."""
        refunded.append(order)
        return "refunded"

    return StructuredTool.from_function(refund)


def hand_built(refunded: list[str]) -> Any:
    """A StateGraph by hand: its model node takes the system prompt from the state or the config."""

    class State(MessagesState, total=False):
        policy: str

    model = PolicyModel(messages=iter([]))

    def call_model(state: State, config: RunnableConfig) -> dict[str, Any]:
        policy = state.get("policy") or config.get("configurable", {}).get("policy", "refunds allowed")
        return {"messages": [model.invoke([SystemMessage(f"Policy: {policy}"), *state["messages"]])]}

    builder = StateGraph(State)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode([refund_tool(refunded)]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile()


def answer(state: Any) -> str:
    return str(state["messages"][-1].content)


def test_holds_a_state_key_the_prompt_reads_is_part_of_the_task() -> None:
    """HOLDS: the input's other state keys are part of the task."""
    refunded: list[str] = []
    agent = CachedAgent(Engine(), hand_built(refunded))
    agent.invoke({"messages": [HumanMessage("refund order A1")], "policy": "refunds allowed"})
    refunded.clear()
    state = agent.invoke({"messages": [HumanMessage("refund order A1")], "policy": "never refund"})
    assert answer(state) == "refunds are frozen" and refunded == []


# a hand-built model node reading config['configurable'] is opaque; configurable values are not keyed, a hit replays
def test_a_configurable_value_the_prompt_reads_is_part_of_the_task() -> None:
    refunded: list[str] = []
    agent = CachedAgent(Engine(), hand_built(refunded))
    agent.invoke(
        {"messages": [HumanMessage("refund order A1")]}, {"configurable": {"policy": "refunds allowed"}}
    )
    assert agent.last_result is not None and agent.last_result.stored
    refunded.clear()
    state = agent.invoke(
        {"messages": [HumanMessage("refund order A1")]}, {"configurable": {"policy": "never refund"}}
    )
    assert answer(state) == "refunds are frozen" and refunded == []


@dataclass
class Ctx:
    policy: str


@dynamic_prompt
def runtime_policy(request: ModelRequest) -> str:
    return f"Policy: {request.runtime.context.policy}"


def test_holds_create_agent_runtime_context_is_part_of_the_task() -> None:
    """HOLDS: ``invoke(..., context=Ctx(...))`` goes to the engine with the input, so a changed context misses.

    (``CachedAgent(context=...)`` takes no arguments and so cannot read the invoke's runtime context;
    the invoke's own ``context=`` covering it is what holds here.)
    """
    refunded: list[str] = []
    graph = create_agent(
        PolicyModel(messages=iter([])),
        [refund_tool(refunded)],
        middleware=[runtime_policy],
        context_schema=Ctx,
    )
    agent = CachedAgent(Engine(), graph, context=lambda: "runtime policy")
    agent.invoke({"messages": [HumanMessage("refund order A1")]}, context=Ctx("refunds allowed"))
    refunded.clear()
    state = agent.invoke({"messages": [HumanMessage("refund order A1")]}, context=Ctx("never refund"))
    assert answer(state) == "refunds are frozen" and refunded == []
