"""LangChain: middleware that acts on each run makes the model read what no input shows, so it is part of the task.

A ``@dynamic_prompt`` can change the system prompt between two runs of the same input (a policy
switched off, another user's role): a replay of the first would do what the model no longer
would. Such a graph runs uncached unless ``context=`` says what its middleware reads.
"""

from __future__ import annotations

import logging

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import ModelRequest, before_model, dynamic_prompt, wrap_tool_call
from langchain_core.messages import HumanMessage
from langchain_core.tools import StructuredTool

from muscle_mem import Engine
from muscle_mem.integrations.langchain import CachedAgent
from refund_chat_model import PolicyModel

policy = {"mode": "refunds allowed"}


@dynamic_prompt
def support_policy(request: ModelRequest) -> str:
    return f"You are a support agent. Policy: {policy['mode']}"


@pytest.fixture
def refunded() -> list[str]:
    policy["mode"] = "refunds allowed"
    return []


def graph(refunded: list[str], middleware: list[Any]) -> Any:
    def refund(order: str) -> str:
        """Refund an order."""
        refunded.append(order)
        return "refunded"

    return create_agent(
        PolicyModel(messages=iter([])), [StructuredTool.from_function(refund)], middleware=middleware
    )


def ask(agent: CachedAgent) -> Any:
    return agent.invoke({"messages": [HumanMessage("refund order A1")]})


def test_a_dynamic_prompt_runs_uncached_and_says_how_to_cache_it(
    refunded: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    agent = CachedAgent(Engine(), graph(refunded, [support_policy]))
    with caplog.at_level(logging.INFO):
        ask(agent)
        policy["mode"] = "refunds frozen: never refund"
        state = ask(agent)
    assert agent.last_result is None and refunded == ["A1"], "the second run followed the new prompt"
    assert state["messages"][-1].text == "refunds are frozen"
    assert "context=" in caplog.text and "@dynamic_prompt" in caplog.text


def test_with_context_the_same_prompt_hits_and_a_changed_one_is_another_task(refunded: list[str]) -> None:
    engine = Engine()
    agent = CachedAgent(engine, graph(refunded, [support_policy]), context=lambda: policy["mode"])
    ask(agent)
    assert agent.last_result is not None and agent.last_result.stored
    ask(agent)
    assert agent.last_result is not None and agent.last_result.hit and refunded == ["A1", "A1"]
    policy["mode"] = "refunds frozen: never refund"
    state = ask(agent)
    assert agent.last_result is not None and not agent.last_result.hit
    assert refunded == ["A1", "A1"] and state["messages"][-1].text == "refunds are frozen"


def test_a_context_function_that_raises_runs_the_graph_uncached(refunded: list[str]) -> None:
    def broken() -> str:
        raise RuntimeError("the policy service is down")

    agent = CachedAgent(Engine(), graph(refunded, [support_policy]), context=broken)
    ask(agent)
    assert agent.last_result is None and refunded == ["A1"]


@before_model
def stamp(state: Any, runtime: Any) -> None:
    return None


@wrap_tool_call
def passthrough(request: Any, handler: Any) -> Any:
    return handler(request)


@pytest.mark.parametrize("middleware", [[stamp], [passthrough]], ids=["before_model", "wrap_tool_call"])
def test_hooks_and_tool_call_wrappers_count_as_middleware(refunded: list[str], middleware: list[Any]) -> None:
    agent = CachedAgent(Engine(), graph(refunded, middleware))
    ask(agent)
    ask(agent)
    assert agent.last_result is None and refunded == ["A1", "A1"]


def test_a_graph_without_middleware_is_cached_as_before(refunded: list[str]) -> None:
    agent = CachedAgent(Engine(), graph(refunded, []))
    ask(agent)
    ask(agent)
    assert agent.last_result is not None and agent.last_result.hit
