"""pydantic-ai: what a run's model responses spent (its ``RunUsage``) is the engine run's usage."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.models.test import TestModel

from muscle_mem import Engine
from muscle_mem.integrations.pydantic_ai import MuscleMem


def lookup_user(email: str) -> str:
    """Find a user by email."""
    return "usr_" + email.split("@")[0]


def agent(engine: Engine) -> Agent[None, str]:
    memory = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    return Agent(TestModel(), tools=[lookup_user], capabilities=[memory])


def test_a_miss_counts_the_runs_own_usage() -> None:
    """After a miss the engine's tokens, and the ledger's split, requests and model, are the RunUsage."""
    engine = Engine(prices={"test": (1.0, 2.0)})
    result = agent(engine).run_sync("who is ada@x.io", metadata={"email": "ada@x.io"})
    usage = result.usage
    assert usage.input_tokens and usage.output_tokens and usage.requests == 2
    assert engine.metrics.agent_tokens == usage.input_tokens + usage.output_tokens
    spent = engine.ledger().total.spent
    assert (spent.input_tokens, spent.output_tokens, spent.requests) == (
        usage.input_tokens,
        usage.output_tokens,
        usage.requests,
    )
    assert spent.money == pytest.approx((usage.input_tokens * 1.0 + usage.output_tokens * 2.0) / 1e6)


def test_a_hit_saves_the_recorded_runs_usage_and_spends_none() -> None:
    """A hit's scripted turns spend no token; it saves what the recorded run spent."""
    engine = Engine()
    cached = agent(engine)
    recorded = cached.run_sync("who is ada@x.io", metadata={"email": "ada@x.io"}).usage
    # TestModel calls the tool with made-up arguments: the param flows nowhere, so it counts by its value
    hit = cached.run_sync("who is ada@x.io", metadata={"email": "ada@x.io"})
    assert hit.usage.input_tokens == hit.usage.output_tokens == 0
    total = recorded.input_tokens + recorded.output_tokens
    assert engine.metrics.agent_tokens == engine.metrics.saved_tokens == total
    saved = engine.ledger().total.saved
    assert (saved.input_tokens, saved.output_tokens, saved.requests) == (
        recorded.input_tokens,
        recorded.output_tokens,
        recorded.requests,
    )
