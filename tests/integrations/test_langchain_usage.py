"""LangGraph: what the chat models of a run spent (each response's ``usage_metadata``) is the run's usage."""

from __future__ import annotations

import pytest

pytest.importorskip("langchain_core")
pytest.importorskip("langgraph")
pytest.importorskip("langchain")

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool

from muscle_mem import Engine
from muscle_mem.integrations.langchain import CachedAgent

MODEL = "gpt-4.1-mini"


class FakeModel(GenericFakeChatModel):
    """LangChain's scripted chat model; ``create_agent`` binds tools to it, which it ignores."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> FakeModel:  # type: ignore[override]
        return self


def answered(text: str, input_tokens: int, output_tokens: int, **call: Any) -> AIMessage:
    """A model turn as a provider returns it: its usage and the model's name."""
    tool_calls = (
        [{"name": call["name"], "args": call["args"], "id": "c1", "type": "tool_call"}] if call else []
    )
    return AIMessage(
        text,
        tool_calls=tool_calls,
        usage_metadata={
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "total_tokens": input_tokens + output_tokens,
        },
        response_metadata={"model_name": MODEL},
    )


@tool
def lookup_user(email: str) -> dict[str, str]:
    """Find a user by email."""
    return {"id": "usr_" + email.split("@")[0]}


def own_total(messages: list[BaseMessage]) -> tuple[int, int, int]:
    """The framework's own figures of a run: input and output tokens of its AIMessages, and their count."""
    usages = [m.usage_metadata for m in messages if isinstance(m, AIMessage) and m.usage_metadata]
    return sum(u["input_tokens"] for u in usages), sum(u["output_tokens"] for u in usages), len(usages)


def agent(engine: Engine) -> CachedAgent:
    model = FakeModel(
        messages=iter(
            [
                answered("", 120, 14, name="lookup_user", args={"email": "ada@x.io"}),
                answered("Ada is usr_ada.", 151, 9),
            ]
        )
    )
    return CachedAgent(engine, create_agent(model, [lookup_user]))


def ask(cached: CachedAgent, email: str) -> Any:
    return cached.invoke({"messages": [("user", f"who is {email}")]}, params={"email": email})


def test_a_miss_counts_the_usage_metadata_of_every_model_response() -> None:
    """After a miss the engine's tokens, the ledger's split and requests equal the AIMessages' usage."""
    engine = Engine(prices={MODEL: (0.4, 1.6)})
    state = ask(agent(engine), "ada@x.io")
    input_tokens, output_tokens, requests = own_total(state["messages"])
    assert (input_tokens, output_tokens, requests) == (271, 23, 2)
    assert engine.metrics.agent_tokens == input_tokens + output_tokens
    spent = engine.ledger().total.spent
    assert (spent.input_tokens, spent.output_tokens, spent.requests) == (271, 23, 2)
    assert spent.money == pytest.approx((271 * 0.4 + 23 * 1.6) / 1e6)


def test_a_hit_saves_what_the_recorded_run_spent_and_calls_no_model() -> None:
    """A hit spends nothing and saves the recorded run's tokens, in the metrics and the ledger."""
    engine = Engine(prices={MODEL: (0.4, 1.6)})
    cached = agent(engine)
    recorded = own_total(ask(cached, "ada@x.io")["messages"])
    ask(cached, "bob@x.io")
    assert cached.last_result is not None and cached.last_result.hit
    assert engine.metrics.agent_tokens == engine.metrics.saved_tokens == recorded[0] + recorded[1]
    saved = engine.ledger().total.saved
    assert (saved.input_tokens, saved.output_tokens, saved.requests) == recorded


async def test_ainvoke_counts_the_usage_metadata_too() -> None:
    """The async front end reads the same usage as ``invoke``."""
    engine = Engine()
    state = await agent(engine).ainvoke(
        {"messages": [("user", "who is ada@x.io")]}, params={"email": "ada@x.io"}
    )
    input_tokens, output_tokens, _ = own_total(state["messages"])
    assert engine.metrics.agent_tokens == input_tokens + output_tokens == 294


def test_a_response_without_usage_metadata_counts_a_request_and_no_tokens() -> None:
    """A model that reports no usage leaves the tokens at 0, its requests counted, its model unnamed."""
    engine = Engine()
    model = FakeModel(
        messages=iter(
            [
                AIMessage(
                    "",
                    tool_calls=[
                        {
                            "name": "lookup_user",
                            "args": {"email": "ada@x.io"},
                            "id": "c1",
                            "type": "tool_call",
                        }
                    ],
                ),
                AIMessage("usr_ada"),
            ]
        )
    )
    ask(CachedAgent(engine, create_agent(model, [lookup_user])), "ada@x.io")
    spent = engine.ledger().total.spent
    assert (spent.tokens, spent.requests, engine.metrics.agent_tokens) == (0, 2, 0)
