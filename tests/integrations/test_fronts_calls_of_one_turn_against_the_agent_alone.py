"""Calls of one model turn replayed together, attacked through the framework fronts.

Each test runs the cached agent and the agent alone (same framework objects, no MuscleMem) on deep
copies of one world, and compares the final world and the answer (or the exception).
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("pydantic_ai")

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import StructuredTool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from pydantic_ai import Agent
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import UsageLimits
from test_langchain_calls_of_one_turn import chat
from test_langchain_calls_of_one_turn import seen as lc_seen
from test_pydantic_ai_calls_of_one_turn import seen as pa_seen
from test_pydantic_ai_calls_of_one_turn import stock_tools

from muscle_mem import Engine
from muscle_mem.integrations.langchain import CachedAgent
from muscle_mem.integrations.pydantic_ai import MuscleMem

# --- LangGraph: a node that is no chat model decides calls from the outputs of a turn


def lc_stock_tools(world: dict[str, Any]) -> list[Any]:
    def stock(sku: str) -> str:
        """Stock of a sku."""
        return json.dumps({"qty": world["stock"][sku]})

    def order(sku: str) -> str:
        """Order a sku."""
        world["ordered"].append(sku)
        return "ordered"

    return [StructuredTool.from_function(stock), StructuredTool.from_function(order)]


def lc_model_policy(done: list[Any]) -> Any:
    if not done:
        return [("stock", {"sku": "a"}), ("stock", {"sku": "b"})]
    return f"ordered {[a['sku'] for n, a, _ in done if n == 'order']}"


def reorder_graph(world: dict[str, Any]) -> Any:
    """model -> tools -> reorder (a rule, no model) -> tools again when it ordered, else model."""
    model = chat(lc_model_policy)

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def reorder(state: MessagesState) -> dict[str, Any]:
        done = lc_seen(state["messages"])
        ordered = {a["sku"] for n, a, _ in done if n == "order"}
        need = [a["sku"] for n, a, o in done if n == "stock" and o["qty"] == 0 and a["sku"] not in ordered]
        if not need:
            return {"messages": []}
        calls = [
            {"name": "order", "args": {"sku": s}, "id": f"auto_{len(done)}_{i}", "type": "tool_call"}
            for i, s in enumerate(need)
        ]
        return {"messages": [AIMessage("", tool_calls=calls)]}

    def after_model(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else END

    def after_reorder(state: MessagesState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "model"

    graph = StateGraph(MessagesState)
    graph.add_node("model", call_model)
    graph.add_node("tools", ToolNode(lc_stock_tools(world)))
    graph.add_node("reorder", reorder)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", after_model, ["tools", END])
    graph.add_edge("tools", "reorder")
    graph.add_conditional_edges("reorder", after_reorder, ["tools", "model"])
    return graph.compile()


_RESUMES_AT_START = pytest.mark.xfail(
    strict=True,
    reason="pre-existing: a hand-built graph resumes at START (the model), not at the rule node after the tools",
)


@pytest.mark.parametrize(
    "probe",
    [
        pytest.param({"stock": {"a": 1, "b": 0}, "ordered": []}, marks=_RESUMES_AT_START),
        {"stock": {"a": 1, "b": 1}, "ordered": []},
        pytest.param({"stock": {"a": 0, "b": 0}, "ordered": []}, marks=_RESUMES_AT_START),
    ],
    ids=["other-sku-out", "none-out", "both-out"],
)
def test_lc_rule_node_deciding_from_a_turns_outputs(probe: dict[str, Any]) -> None:
    """The rule node's order(a) was decided on stock(a)'s output, not at the model's turn."""
    world: dict[str, Any] = {"stock": {"a": 0, "b": 1}, "ordered": []}
    agent = CachedAgent(Engine(), reorder_graph(world))
    agent.invoke({"messages": [HumanMessage("restock")]})
    world.update(ordered=[])
    agent.invoke({"messages": [HumanMessage("restock")]})
    assert agent.last_result is not None and agent.last_result.hit
    alone_world = copy.deepcopy(probe)
    alone = reorder_graph(alone_world).invoke({"messages": [HumanMessage("restock")]})["messages"][-1].content
    world.clear()
    world.update(copy.deepcopy(probe))
    got = agent.invoke({"messages": [HumanMessage("restock")]})["messages"][-1].content
    assert (got, world) == (alone, alone_world), agent.last_result


# --- pydantic-ai: the answer in the same model response as tool calls


def pa_model(policy: Any, with_answer: bool) -> FunctionModel:
    """Turn 1: two stock look-ups. Turn 2: an order of each empty sku, AND the answer, in one response."""

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        done = pa_seen(messages)
        move = policy(done)
        parts: list[Any] = [
            ToolCallPart(n, a, tool_call_id=f"c{len(done)}_{i}") for i, (n, a) in enumerate(move[0])
        ]
        if move[1] is not None:
            if info.output_tools:
                parts.append(ToolCallPart(info.output_tools[0].name, {"text": move[1]}, tool_call_id="out"))
            else:
                parts.append(TextPart(move[1]))
        return ModelResponse(parts=parts)

    return FunctionModel(respond)


def answer_with_calls_policy(done: list[Any]) -> Any:
    seen_skus = {a["sku"] for n, a, _ in done if n == "stock"}
    if seen_skus != {"a", "b"}:
        return [("stock", {"sku": s}) for s in ("a", "b")], None
    if any(n == "order" for n, _, _ in done):
        return [], "done"  # only if the answer was not taken with the orders
    need = [a["sku"] for n, a, o in done if n == "stock" and o["qty"] == 0]
    return [("order", {"sku": s}) for s in need], f"ordered {need}"


def _pa_run(agent: Agent[Any, Any], limit: int | None) -> Any:
    try:
        limits = UsageLimits(request_limit=limit) if limit is not None else None
        result = agent.run_sync("restock", usage_limits=limits)
        return (result.output, result.usage().requests)
    except UsageLimitExceeded as exc:
        return f"raised {exc!r}"


@pytest.mark.parametrize("limit", [None, 2], ids=["no-limit", "request_limit-2"])
def test_pa_answer_in_the_same_response_as_tool_calls(limit: int | None) -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        text: str

    world: dict[str, Any] = {"stock": {"a": 0, "b": 1}, "ordered": []}

    def build(w: dict[str, Any], cached: Engine | None) -> Agent[Any, Any]:
        caps = [MuscleMem(cached)] if cached is not None else []
        return Agent(
            pa_model(answer_with_calls_policy, True),
            tools=stock_tools(w),
            output_type=Answer,
            end_strategy="exhaustive",
            capabilities=caps,
        )

    engine = Engine()
    cached = build(world, engine)
    _pa_run(cached, limit)
    world.update(ordered=[])
    _pa_run(cached, limit)
    probe = {"stock": {"a": 0, "b": 1}, "ordered": []}
    alone_world = copy.deepcopy(probe)
    alone = _pa_run(build(alone_world, None), limit)
    world.clear()
    world.update(copy.deepcopy(probe))
    got = _pa_run(cached, limit)
    assert (got, world) == (alone, alone_world)
