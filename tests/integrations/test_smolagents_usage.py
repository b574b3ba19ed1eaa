"""smolagents: what the agent's model spent on a run (its token counts) is the engine run's usage."""

from __future__ import annotations

import pytest

pytest.importorskip("smolagents")

from typing import Any

from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)
from smolagents.monitoring import LogLevel, TokenUsage

from muscle_mem import Engine
from muscle_mem.integrations.smolagents import CachedAgent


class ScriptedModel(Model):
    """Answers with the next scripted message, with the token counts a provider reports."""

    def __init__(self, replies: list[ChatMessage]) -> None:
        super().__init__(model_id="gpt-4.1-mini")
        self.replies = iter(replies)

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        return next(self.replies)


def calls(name: str, arguments: dict[str, Any], input_tokens: int, output_tokens: int) -> ChatMessage:
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content="",
        tool_calls=[
            ChatMessageToolCall(
                function=ChatMessageToolCallFunction(name=name, arguments=arguments), id=name, type="function"
            )
        ],
        token_usage=TokenUsage(input_tokens=input_tokens, output_tokens=output_tokens),
    )


@tool
def lookup_user(email: str) -> str:
    """Find a user by email.

    Args:
        email: the user's e-mail
    """
    return "usr_" + email.split("@")[0]


def agent(engine: Engine) -> CachedAgent:
    model = ScriptedModel(
        [
            calls("lookup_user", {"email": "ada@x.io"}, 300, 21),
            calls("final_answer", {"answer": "usr_ada"}, 340, 12),
        ]
    )
    return CachedAgent(
        engine, ToolCallingAgent(tools=[lookup_user], model=model, verbosity_level=LogLevel.OFF)
    )


def test_a_miss_counts_the_agents_own_token_counts() -> None:
    """After a miss the engine's tokens and the ledger's split, requests and price are the run's counts."""
    engine = Engine(prices={"gpt-4.1-mini": (0.4, 1.6)})
    result = agent(engine).run("who is ada@x.io", params={"email": "ada@x.io"}, return_full_result=True)
    usage = result.token_usage
    assert usage is not None and (usage.input_tokens, usage.output_tokens) == (640, 33)
    assert engine.metrics.agent_tokens == usage.total_tokens
    spent = engine.ledger().total.spent
    assert (spent.input_tokens, spent.output_tokens, spent.requests) == (640, 33, 2)
    assert spent.money == pytest.approx((640 * 0.4 + 33 * 1.6) / 1e6)


def test_a_hit_saves_the_recorded_runs_tokens_and_reports_none_spent() -> None:
    """A hit's RunResult counts no token; the engine saves what the recorded run spent."""
    engine = Engine()
    cached = agent(engine)
    cached.run("who is ada@x.io", params={"email": "ada@x.io"})
    hit = cached.run("who is bob@x.io", params={"email": "bob@x.io"}, return_full_result=True)
    assert cached.last_result is not None and cached.last_result.hit
    assert hit.token_usage is not None and hit.token_usage.total_tokens == 0
    assert engine.metrics.saved_tokens == engine.metrics.agent_tokens == 673
    saved = engine.ledger().total.saved
    assert (saved.input_tokens, saved.output_tokens, saved.requests) == (640, 33, 2)
