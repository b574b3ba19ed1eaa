"""smolagents: a run's ``max_steps`` and the tools the agent offers are part of the task."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("smolagents")

from smolagents import ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)

from muscle_mem import Engine, MissReason
from muscle_mem.integrations.smolagents import CachedAgent


class Stepper(Model):
    """Calls ``step`` until it has made three steps (it reads its memory), then answers."""

    def __init__(self) -> None:
        super().__init__(model_id="stepper")

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        made = str(messages).count("Calling tools:")
        name, arguments = ("step", {"n": made}) if made < 3 else ("final_answer", {"answer": "3 steps"})
        call = ChatMessageToolCall(
            function=ChatMessageToolCallFunction(name=name, arguments=arguments),
            id=f"c{made}",
            type="function",
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def steps(done: list[int], *, extra: bool = False) -> list[Any]:
    @tool
    def step(n: int) -> str:
        """Make one step.

        Args:
            n: the step's number
        """
        done.append(n)
        return "ok"

    @tool
    def rest(minutes: int) -> str:
        """Rest a while.

        Args:
            minutes: how long
        """
        return "rested"

    return [step, rest] if extra else [step]


def agent(engine: Engine, done: list[int], **options: Any) -> CachedAgent:
    return CachedAgent(
        engine, ToolCallingAgent(tools=steps(done, **options), model=Stepper(), verbosity_level=-1)
    )


def test_a_lower_max_steps_makes_no_more_calls_than_the_agent_alone() -> None:
    """A task recorded with 20 steps allowed is not replayed with 2: the agent stops after 2 calls."""
    engine, done = Engine(), list[int]()
    first = agent(engine, done)
    first.run("three steps")
    assert first.last_result is not None and first.last_result.stored and done == [0, 1, 2]

    done.clear()
    ToolCallingAgent(tools=steps(done), model=Stepper(), verbosity_level=-1).run("three steps", max_steps=2)
    by_alone = list(done)
    done.clear()
    limited = agent(engine, done)
    limited.run("three steps", max_steps=2)
    result = limited.last_result
    assert result is not None and not result.hit and result.miss_reason is MissReason.NO_TRAJECTORY
    assert done == by_alone == [0, 1]


def test_a_tool_added_to_the_agent_is_another_task() -> None:
    """The tools offered are what the model chooses from: one more tool does not replay the old choice."""
    engine, done = Engine(), list[int]()
    agent(engine, done).run("three steps")
    more = agent(engine, done, extra=True)
    more.run("three steps")
    assert more.last_result is not None and not more.last_result.hit
    assert more.last_result.miss_reason is MissReason.NO_TRAJECTORY
    same = agent(engine, done, extra=True)
    same.run("three steps")
    assert same.last_result is not None and same.last_result.hit
