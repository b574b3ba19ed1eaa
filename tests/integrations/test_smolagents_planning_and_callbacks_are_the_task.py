"""smolagents: what a run's model reads (or what decides its end) beyond its system prompt is part of the task.

Each test records a run, changes one thing, runs the same task again, and asserts the sound outcome:
a miss / an uncached run, or what the agent alone does.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

pytest.importorskip("smolagents")

from smolagents import ActionStep, ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
    Model,
)

from muscle_mem import Engine
from muscle_mem.integrations.smolagents import CachedAgent


class Desk(Model):
    """Looks order A1 up, refunds it, answers; answers 'refunds are frozen' once it reads 'never refund'.

    A planning call (no tools offered) echoes the policy it reads.
    """

    def __init__(self) -> None:
        super().__init__(model_id="desk")

    def generate(self, messages: list[Any], stop_sequences: Any = None, **kwargs: Any) -> ChatMessage:
        text = str(messages)
        frozen = "never refund" in text
        if not kwargs.get("tools_to_call_from"):
            return ChatMessage(
                role=MessageRole.ASSISTANT, content="Plan: never refund." if frozen else "Plan: refund."
            )
        made = text.count("Calling tools:")
        if frozen:
            name, arguments = "final_answer", {"answer": "refunds are frozen"}
        elif made == 0:
            name, arguments = "lookup", {"order": "A1"}
        elif made == 1:
            name, arguments = "refund", {"order": "A1"}
        else:
            name, arguments = "final_answer", {"answer": "refunded A1"}
        call = ChatMessageToolCall(
            function=ChatMessageToolCallFunction(name=name, arguments=arguments),
            id=f"c{made}",
            type="function",
        )
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call])


def tools(refunded: list[str]) -> list[Any]:
    @tool
    def lookup(order: str) -> str:
        """Look an order up.

        Args:
            order: the order id
        """
        return "order A1: paid"

    @tool
    def refund(order: str) -> str:
        """Refund an order.

        Args:
            order: the order id
        """
        refunded.append(order)
        return "refunded"

    return [lookup, refund]


def bare(refunded: list[str], **options: Any) -> ToolCallingAgent:
    templates = options.pop("templates", None)
    agent = ToolCallingAgent(tools=tools(refunded), model=Desk(), verbosity_level=-1, **options)
    if templates is not None:
        agent.prompt_templates = templates(copy.deepcopy(agent.prompt_templates))
    return agent


def alone(**options: Any) -> tuple[Any, list[str]]:
    refunded: list[str] = []
    return bare(refunded, **options).run("refund order A1"), refunded


def recorded(refunded: list[str], **options: Any) -> Engine:
    engine = Engine()
    first = CachedAgent(engine, bare(refunded, **options))
    assert first.run("refund order A1") == "refunded A1"
    assert first.last_result is not None and first.last_result.stored
    refunded.clear()
    return engine


def rerun(engine: Engine, refunded: list[str], **options: Any) -> tuple[Any, CachedAgent]:
    again = CachedAgent(engine, bare(refunded, **options))
    return again.run("refund order A1"), again


# --- holds --------------------------------------------------------------------------------------


def test_holds_changed_instructions_are_another_task() -> None:
    """HOLDS: ``instructions`` are rendered into the system prompt, which is keyed."""
    refunded: list[str] = []
    engine = recorded(refunded, instructions="You are a support agent.")
    output, _ = rerun(engine, refunded, instructions="You are a support agent: never refund.")
    assert output == "refunds are frozen" and refunded == []


def test_holds_a_changed_system_prompt_template_is_another_task() -> None:
    """HOLDS: the rendered system prompt template is keyed."""
    refunded: list[str] = []
    engine = recorded(refunded)

    def freeze(t: dict[str, Any]) -> dict[str, Any]:
        t["system_prompt"] += "\nnever refund"
        return t

    output, _ = rerun(engine, refunded, templates=freeze)
    assert output == "refunds are frozen" and refunded == []


# --- what the model reads beyond the agent --------------------------------------------------------------------------------------


def _freeze_planning(t: dict[str, Any]) -> dict[str, Any]:
    t["planning"]["initial_plan"] += "\nPolicy: never refund."
    return t


# planning_interval (a planning step the model reads) is not keyed; a hit replays the unplanned run
def test_turning_planning_on_is_another_task() -> None:
    refunded: list[str] = []
    engine = recorded(refunded, templates=_freeze_planning)  # planning off: the template is never read
    assert alone(planning_interval=1, templates=_freeze_planning) == ("refunds are frozen", [])
    output, _ = rerun(engine, refunded, planning_interval=1, templates=_freeze_planning)
    assert output == "refunds are frozen" and refunded == []


# prompt_templates['planning'] are not keyed (only the system prompt is); a hit replays
def test_a_changed_planning_template_is_another_task() -> None:
    refunded: list[str] = []
    engine = recorded(refunded, planning_interval=1)
    assert alone(planning_interval=1, templates=_freeze_planning) == ("refunds are frozen", [])
    output, _ = rerun(engine, refunded, planning_interval=1, templates=_freeze_planning)
    assert output == "refunds are frozen" and refunded == []


# step_callbacks can write into memory what the model reads next; not keyed, a hit replays
def test_a_step_callback_that_adds_to_what_the_model_reads_is_another_task() -> None:
    refunded: list[str] = []
    engine = recorded(refunded)

    def ops_note(step: Any, agent: Any = None) -> None:
        if isinstance(step, ActionStep) and step.observations:
            step.observations += "\nops: never refund"

    assert alone(step_callbacks=[ops_note]) == ("refunds are frozen", [])
    output, _ = rerun(engine, refunded, step_callbacks=[ops_note])
    assert output == "refunds are frozen" and refunded == []


# final_answer_checks are not run on a hit; a check that refuses the answer is bypassed
def test_a_final_answer_check_that_refuses_the_answer_ends_as_the_agent_alone() -> None:
    refunded: list[str] = []
    engine = recorded(refunded)

    def not_refunded(answer: Any, memory: Any = None, agent: Any = None) -> bool:
        return "refunded" not in str(answer)

    by_alone = alone(final_answer_checks=[not_refunded])
    output, _ = rerun(engine, refunded, final_answer_checks=[not_refunded])
    assert output == by_alone[0]
