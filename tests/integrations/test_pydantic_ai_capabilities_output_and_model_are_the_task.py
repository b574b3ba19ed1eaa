"""pydantic-ai: what a run's model reads beyond the agent's instructions and tools is part of the task.

Each test records a run, changes one thing the model reads, runs the same task again, and asserts
the sound outcome (a miss / an uncached run, or what the agent alone does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic import BaseModel
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability, PrepareTools, ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from muscle_mem import Engine
from muscle_mem.integrations.pydantic_ai import MuscleMem


def read(messages: list[ModelMessage], info: AgentInfo) -> str:
    """All the text the model is shown: instructions, system and user parts."""
    texts = [info.instructions or ""]
    for message in messages:
        for part in message.parts:
            if isinstance(part, (SystemPromptPart, UserPromptPart)) and isinstance(part.content, str):
                texts.append(part.content)
    return " ".join(texts)


def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Refunds order A1 unless what it reads freezes refunds (or it has no refund tool); then answers."""
    done = any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts)
    if info.output_tools:  # a structured answer: the model must call the output tool
        out = info.output_tools[0]
        if "refusal" in str(out.parameters_json_schema):
            return ModelResponse(
                parts=[ToolCallPart(out.name, {"refusal": "not allowed"}, tool_call_id="o1")]
            )
        if done:
            return ModelResponse(parts=[ToolCallPart(out.name, {"done": True}, tool_call_id="o1")])
    if done:
        return ModelResponse(parts=[TextPart("refunded A1")])
    may_refund = any(t.name == "refund" for t in info.function_tools) and (
        (info.model_settings or {}).get("tool_choice") != "none"
    )
    if "never refund" in read(messages, info) or not may_refund:
        return ModelResponse(parts=[TextPart("refunds are frozen")])
    return ModelResponse(parts=[ToolCallPart("refund", {"order": "A1"}, tool_call_id="c1")])


@dataclass
class Policy:
    mode: str = "refunds allowed"


def desk(engine: Engine | None, refunded: list[str], *, extra: Any = (), **options: Any) -> Agent[Any, Any]:
    """The support desk agent; with ``engine`` None, the agent alone (no MuscleMem)."""

    def refund(order: str) -> str:
        """Refund an order."""
        refunded.append(order)
        return "refunded"

    options.setdefault("instructions", "You are a support agent.")
    memory = [MuscleMem(engine)] if engine is not None else []
    return Agent(FunctionModel(respond), tools=[refund], capabilities=[*memory, *extra], **options)


def alone(**options: Any) -> Any:
    """What the agent alone answers, and whether it refunded."""
    refunded: list[str] = []
    output = desk(None, refunded, **options).run_sync("refund order A1", deps=Policy()).output
    return output, refunded


def recorded(refunded: list[str], **options: Any) -> Engine:
    engine = Engine()
    desk(engine, refunded, **options).run_sync("refund order A1", deps=Policy())
    refunded.clear()
    return engine


# --- holds --------------------------------------------------------------------------------------


def test_holds_instructions_function_reading_deps_is_part_of_the_task() -> None:
    """HOLDS: ``Agent(instructions=fn)`` reading ``deps`` is resolved for the key: a changed policy misses."""
    refunded: list[str] = []

    def policy(ctx: RunContext[Policy]) -> str:
        return f"You are a support agent. Policy: {ctx.deps.mode}"

    engine = recorded(refunded, instructions=policy, deps_type=Policy)
    result = desk(engine, refunded, instructions=policy, deps_type=Policy).run_sync(
        "refund order A1", deps=Policy("never refund")
    )
    assert result.output == "refunds are frozen" and refunded == []


def test_holds_a_dynamic_system_prompt_is_part_of_the_task() -> None:
    """HOLDS: ``@agent.system_prompt(dynamic=True)`` is resolved for the key."""
    refunded: list[str] = []
    engine = Engine()
    policy = Policy()

    def build() -> Agent[Any, Any]:
        agent = desk(engine, refunded)

        @agent.system_prompt(dynamic=True)
        def mode() -> str:
            return f"Policy: {policy.mode}"

        return agent

    build().run_sync("refund order A1")
    refunded.clear()
    policy.mode = "never refund"
    assert build().run_sync("refund order A1").output == "refunds are frozen" and refunded == []


def test_holds_instructions_given_to_the_run_alone_are_part_of_the_task() -> None:
    """HOLDS: ``agent.run(..., instructions=...)`` is read from the run's graph for the key."""
    refunded: list[str] = []
    engine = recorded(refunded)
    result = desk(engine, refunded).run_sync("refund order A1", deps=Policy(), instructions="never refund")
    assert result.output == "refunds are frozen" and refunded == []


def test_holds_run_model_settings_tool_choice_none_is_another_task() -> None:
    """HOLDS: the run's merged ``model_settings`` ``tool_choice`` is keyed."""
    refunded: list[str] = []
    engine = recorded(refunded)
    result = desk(engine, refunded).run_sync(
        "refund order A1", deps=Policy(), model_settings=ModelSettings(tool_choice="none")
    )
    assert result.output == "refunds are frozen" and refunded == []


def test_holds_prepare_tools_that_hides_a_tool_is_another_task() -> None:
    """HOLDS: ``Agent(prepare_tools=...)`` hiding ``refund`` changes the tools offered, so the key."""
    refunded: list[str] = []
    engine = recorded(refunded)

    async def hide(ctx: RunContext[Any], defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return [d for d in defs if d.name != "refund"]

    result = desk(engine, refunded, extra=[PrepareTools(hide)]).run_sync("refund order A1", deps=Policy())
    assert result.output == "refunds are frozen" and refunded == []


# --- what the model reads beyond the agent --------------------------------------------------------------------------------------


def test_a_history_processor_that_injects_a_policy_is_another_task() -> None:
    refunded: list[str] = []
    engine = recorded(refunded)

    def inject(messages: list[ModelMessage]) -> list[ModelMessage]:
        return [ModelRequest(parts=[SystemPromptPart("never refund")]), *messages]

    assert alone(extra=[ProcessHistory(inject)]) == ("refunds are frozen", [])
    result = desk(engine, refunded, extra=[ProcessHistory(inject)]).run_sync("refund order A1", deps=Policy())
    assert result.output == "refunds are frozen" and refunded == []


def test_a_capability_that_adds_a_message_before_each_request_is_another_task() -> None:
    refunded: list[str] = []
    engine = recorded(refunded)

    class Freeze(AbstractCapability[Any]):
        async def before_model_request(
            self, ctx: RunContext[Any], request_context: ModelRequestContext
        ) -> ModelRequestContext:
            request_context.messages = [
                ModelRequest(parts=[UserPromptPart("ops note: never refund")]),
                *request_context.messages,
            ]
            return request_context

    assert alone(extra=[Freeze()]) == ("refunds are frozen", [])
    agent = desk(engine, refunded)
    result = agent.run_sync("refund order A1", deps=Policy(), capabilities=[Freeze()])
    assert result.output == "refunds are frozen" and refunded == []


def test_a_capability_that_rewrites_the_instructions_before_each_request_is_another_task() -> None:
    refunded: list[str] = []
    engine = recorded(refunded)

    class Freeze(AbstractCapability[Any]):
        async def before_model_request(
            self, ctx: RunContext[Any], request_context: ModelRequestContext
        ) -> ModelRequestContext:
            params = request_context.model_request_parameters
            parts = [*(params.instruction_parts or [])]
            if parts:
                parts[0] = type(parts[0])(content=parts[0].content + " never refund")
            request_context.model_request_parameters = type(params)(
                **{**params.__dict__, "instruction_parts": parts}
            )
            return request_context

    assert alone(extra=[Freeze()]) == ("refunds are frozen", [])
    agent = desk(engine, refunded)
    result = agent.run_sync("refund order A1", deps=Policy(), capabilities=[Freeze()])
    assert result.output == "refunds are frozen" and refunded == []


class Refusal(BaseModel):
    refusal: str


class Done(BaseModel):
    done: bool


def test_another_output_type_is_another_task() -> None:
    refunded: list[str] = []
    assert alone(output_type=Refusal) == (Refusal(refusal="not allowed"), [])
    engine = recorded(refunded)
    result = desk(engine, refunded, output_type=Refusal).run_sync("refund order A1", deps=Policy())
    assert result.output == Refusal(refusal="not allowed") and refunded == []


def test_another_model_for_the_run_is_another_task() -> None:
    refunded: list[str] = []
    engine = recorded(refunded)
    frozen = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("refunds are frozen")]))
    result = desk(engine, refunded).run_sync("refund order A1", deps=Policy(), model=frozen)
    assert result.output == "refunds are frozen" and refunded == []


class Notes(AbstractCapability[Any]):
    """Adds the ops note of the day to each request (what the model reads beyond its prompt)."""

    def __init__(self, note: str) -> None:
        self.note = note

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        request_context.messages = [
            ModelRequest(parts=[UserPromptPart(self.note)]),
            *request_context.messages,
        ]
        return request_context


def test_with_context_a_capability_run_is_cached_and_a_changed_note_is_another_task() -> None:
    notes = Notes("ops note: refunds allowed")
    refunded: list[str] = []
    engine = Engine()

    def run() -> Any:
        memory = MuscleMem(engine, context=lambda ctx: notes.note)
        agent = Agent(FunctionModel(respond), tools=[desk_refund(refunded)], capabilities=[memory, notes])
        return agent.run_sync("refund order A1", deps=Policy()), memory

    run()
    _, memory = run()
    assert memory.last_result is not None and memory.last_result.hit and refunded == ["A1", "A1"]
    notes.note = "ops note: never refund"
    result, memory = run()
    assert memory.last_result is not None and not memory.last_result.hit
    assert result.output == "refunds are frozen" and refunded == ["A1", "A1"]


def desk_refund(refunded: list[str]) -> Any:
    def refund(order: str) -> str:
        """Refund an order."""
        refunded.append(order)
        return "refunded"

    return refund
