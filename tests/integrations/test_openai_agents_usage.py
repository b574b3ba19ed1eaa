"""OpenAI Agents SDK: a run's own ``Usage`` (tokens in and out, requests) is the engine run's usage."""

from __future__ import annotations

import pytest

pytest.importorskip("agents")

from agents import Agent, function_tool
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.usage import Usage

from muscle_mem import Engine
from muscle_mem.integrations.openai_agents import CachedRunner


@function_tool
def lookup_user(email: str) -> str:
    """Find a user by email."""
    return "usr_" + email.split("@")[0]


class NamedModel(ScriptedModel):
    """The SDK's scripted model, named as a provider's model is (``OpenAIResponsesModel.model``)."""

    model = "gpt-4.1"


def runner(engine: Engine) -> CachedRunner:
    model = NamedModel(
        [
            ModelStep(
                output=[function_call("lookup_user", {"email": "ada@x.io"}, call_id="c1")],
                usage=Usage(requests=1, input_tokens=210, output_tokens=18, total_tokens=228),
            ),
            ModelStep(
                output=[assistant_message("Ada is usr_ada")],
                usage=Usage(requests=1, input_tokens=260, output_tokens=7, total_tokens=267),
            ),
        ]
    )
    return CachedRunner(
        engine, Agent(name="desk", instructions="Help users.", model=model, tools=[lookup_user])
    )


async def test_a_miss_counts_the_runs_own_usage() -> None:
    """After a miss the engine's tokens, the ledger's split, requests and price are the run's Usage."""
    engine = Engine(prices={"gpt-4.1": (2.0, 8.0)})
    result = await runner(engine).run("who is ada@x.io", params={"email": "ada@x.io"})
    usage = result.context_wrapper.usage
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (470, 25, 2)
    assert engine.metrics.agent_tokens == usage.total_tokens
    spent = engine.ledger().total.spent
    assert (spent.input_tokens, spent.output_tokens, spent.requests) == (470, 25, 2)
    assert spent.money == pytest.approx((470 * 2.0 + 25 * 8.0) / 1e6)


async def test_a_hit_saves_the_recorded_runs_usage() -> None:
    """A hit calls no model and saves what the recorded run spent."""
    engine = Engine()
    cached = runner(engine)
    recorded = (await cached.run("who is ada@x.io", params={"email": "ada@x.io"})).context_wrapper.usage
    await cached.run("who is bob@x.io", params={"email": "bob@x.io"})
    assert cached.last_result is not None and cached.last_result.hit
    assert engine.metrics.saved_tokens == engine.metrics.agent_tokens == recorded.total_tokens
    saved = engine.ledger().total.saved
    assert (saved.input_tokens, saved.output_tokens, saved.requests) == (470, 25, 2)


async def test_a_streamed_miss_counts_the_runs_usage_once_its_stream_ends() -> None:
    """``run_streamed`` records the run, and its Usage, when the stream is consumed."""
    engine = Engine()
    streamed = await runner(engine).run_streamed("who is ada@x.io", params={"email": "ada@x.io"})
    async for _ in streamed.stream_events():
        pass
    assert engine.metrics.agent_tokens == streamed.context_wrapper.usage.total_tokens == 495
