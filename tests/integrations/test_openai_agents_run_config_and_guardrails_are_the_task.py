"""OpenAI Agents SDK: what a run reads or obeys beyond the agent's own fields is part of the task.

Each test records a run, changes one thing the model reads (or that decides how the run ends),
runs the same task again, and asserts the sound outcome: a miss / an uncached run, or what the
agent alone does.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    GuardrailFunctionOutput,
    InputGuardrailTripwireTriggered,
    ModelSettings,
    OutputGuardrailTripwireTriggered,
    RunConfig,
    RunContextWrapper,
    function_tool,
    input_guardrail,
    output_guardrail,
    set_tracing_disabled,
)
from agents.run_config import CallModelData, ModelInputData
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call

from muscle_mem import Engine
from muscle_mem.integrations.openai_agents import CachedRunner

set_tracing_disabled(True)

Done = list[tuple[str, Any]]


def refund_model(log: list[str] | None = None) -> ScriptedModel:
    """Refunds order A1 unless its instructions freeze refunds or it may not call tools; then answers."""

    def respond(call: ModelCall) -> list[Any]:
        if log is not None:
            log.append("model")
        done = [
            i
            for i in (call.input if isinstance(call.input, list) else [])
            if i.get("type") == "function_call_output"
        ]
        frozen = "never refund" in (call.system_instructions or "")
        no_tools = not call.tools or getattr(call.model_settings, "tool_choice", None) == "none"
        if done:
            return [assistant_message("refunded A1")]
        if frozen or no_tools:
            return [assistant_message("refunds are frozen")]
        return [function_call("refund", {"order": "A1"}, call_id="c0")]

    return ScriptedModel([ModelStep.respond(respond) for _ in range(50)])


def desk(refunded: list[str], **options: Any) -> Agent[Any]:
    @function_tool
    def refund(order: str) -> str:
        """Refund an order."""
        refunded.append(order)
        return "refunded"

    return Agent(
        name="desk", instructions="You are a support agent.", model=refund_model(), tools=[refund], **options
    )


async def recorded(refunded: list[str], **options: Any) -> Engine:
    engine = Engine()
    runner = CachedRunner(engine, desk(refunded, **options))
    await runner.run("refund order A1")
    assert runner.last_result is not None and runner.last_result.stored
    refunded.clear()
    return engine


# --- holds --------------------------------------------------------------------------------------


async def test_holds_instructions_callable_reading_the_run_context_is_part_of_the_task() -> None:
    """HOLDS: callable instructions are resolved with this call's ``context=``: a changed context misses."""
    refunded: list[str] = []

    def instructions(ctx: RunContextWrapper[Any], agent: Agent[Any]) -> str:
        return f"You are a support agent. Policy: {ctx.context['policy']}"

    engine = Engine()
    runner = CachedRunner(
        engine,
        Agent(name="desk", instructions=instructions, model=refund_model(), tools=desk(refunded).tools),
    )
    await runner.run("refund order A1", context={"policy": "refunds allowed"})
    refunded.clear()
    result = await runner.run("refund order A1", context={"policy": "never refund"})
    assert result.final_output == "refunds are frozen" and refunded == []


# --- what the model reads beyond the agent --------------------------------------------------------------------------------------


# RunConfig.call_model_input_filter rewrites what the model reads; not in the task key, a hit replays
async def test_call_model_input_filter_that_changes_the_instructions_is_another_task() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)

    def freeze(data: CallModelData[Any]) -> ModelInputData:
        return ModelInputData(
            input=data.model_data.input, instructions=f"{data.model_data.instructions} never refund"
        )

    runner = CachedRunner(engine, desk(refunded))
    result = await runner.run("refund order A1", run_config=RunConfig(call_model_input_filter=freeze))
    assert result.final_output == "refunds are frozen" and refunded == []


# RunConfig.model_settings(tool_choice='none') overrides the agent's; only agent.model_settings is keyed
async def test_run_config_tool_choice_none_is_another_task() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)
    runner = CachedRunner(engine, desk(refunded))
    result = await runner.run(
        "refund order A1", run_config=RunConfig(model_settings=ModelSettings(tool_choice="none"))
    )
    assert result.final_output == "refunds are frozen" and refunded == []


# RunConfig.model overrides every agent's model; a replay recorded under another model replays (the run's model is not keyed)
async def test_run_config_model_override_is_another_task() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)
    frozen = ScriptedModel(
        [ModelStep.respond(lambda call: [assistant_message("refunds are frozen")]) for _ in range(5)]
    )
    runner = CachedRunner(engine, desk(refunded))
    result = await runner.run("refund order A1", run_config=RunConfig(model=frozen))
    assert result.final_output == "refunds are frozen" and refunded == []


# an agent input guardrail added since recording is not run on a hit; the agent alone raises InputGuardrailTripwireTriggered
async def test_an_agent_input_guardrail_that_trips_stops_the_run_as_the_agent_alone() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)

    @input_guardrail(run_in_parallel=False)
    def no_refunds(ctx: RunContextWrapper[Any], agent: Agent[Any], input: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(
            output_info="refunds blocked", tripwire_triggered="refund" in str(input)
        )

    runner = CachedRunner(engine, desk(refunded, input_guardrails=[no_refunds]))
    with pytest.raises(InputGuardrailTripwireTriggered):
        await runner.run("refund order A1")
    assert refunded == []


# RunConfig(input_guardrails=...) is not run on a hit; the agent alone raises InputGuardrailTripwireTriggered
async def test_a_run_config_input_guardrail_that_trips_stops_the_run_as_the_agent_alone() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)

    @input_guardrail(run_in_parallel=False)
    def no_refunds(ctx: RunContextWrapper[Any], agent: Agent[Any], input: Any) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info="refunds blocked", tripwire_triggered=True)

    runner = CachedRunner(engine, desk(refunded))
    with pytest.raises(InputGuardrailTripwireTriggered):
        await runner.run("refund order A1", run_config=RunConfig(input_guardrails=[no_refunds]))
    assert refunded == []


# an output guardrail is not run on a hit; the agent alone raises OutputGuardrailTripwireTriggered on the same answer
async def test_an_output_guardrail_that_trips_stops_the_run_as_the_agent_alone() -> None:
    refunded: list[str] = []
    engine = await recorded(refunded)

    @output_guardrail
    def no_refund_talk(
        ctx: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> GuardrailFunctionOutput:
        return GuardrailFunctionOutput(output_info="blocked", tripwire_triggered="refunded" in str(output))

    runner = CachedRunner(engine, desk(refunded, output_guardrails=[no_refund_talk]))
    with pytest.raises(OutputGuardrailTripwireTriggered):
        await runner.run("refund order A1")
