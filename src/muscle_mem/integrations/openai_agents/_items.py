"""The SDK's items for replayed tool calls, the answer the engine stores, and the RunResult of a hit."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from agents import (
    Agent,
    AgentOutputSchemaBase,
    ItemHelpers,
    MessageOutputItem,
    RunContextWrapper,
    RunItem,
    RunResult,
    ToolCallItem,
    ToolCallOutputItem,
    TResponseInputItem,
)
from agents.result import RunResultBase
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from pydantic import TypeAdapter

from muscle_mem import StepView
from muscle_mem.integrations._common import fresh_call_id
from muscle_mem.integrations.openai_agents._tools import AgentGraph

logger = logging.getLogger(__name__)


def tool_items(graph: AgentGraph, steps: Sequence[StepView], call_ids: Sequence[str]) -> list[RunItem]:
    """A call item and an output item per replayed tool call, as the SDK makes them in a run."""
    items: list[RunItem] = []
    for step, call_id in zip(steps, call_ids, strict=True):
        agent = graph.owners.get(step.tool, graph.start)
        tool = graph.tools.get(step.tool)
        call = ResponseFunctionToolCall(
            arguments=json.dumps(dict(step.kwargs), ensure_ascii=False, separators=(",", ":")),
            call_id=call_id,
            name=step.tool,
            type="function_call",
            id=call_id,
        )
        raw = ItemHelpers.tool_call_output_item(
            call, step.output, output_json_schema=tool.output_json_schema if tool is not None else None
        )
        items += [
            ToolCallItem(agent=agent, raw_item=call),
            ToolCallOutputItem(agent=agent, raw_item=raw, output=step.output),
        ]
    return items


def history(
    graph: AgentGraph,
    given: str | list[TResponseInputItem],
    steps: Sequence[StepView],
    call_ids: Sequence[str],
) -> str | list[TResponseInputItem]:
    """The input with the replayed calls after it: what the agent resumes from after a partial replay."""
    if not steps:
        return given
    replayed = [item.to_input_item() for item in tool_items(graph, steps, call_ids)]
    return ItemHelpers.input_to_new_input_list(given) + replayed


def answer(result: RunResultBase) -> dict[str, Any]:
    """What the engine stores of a run's answer: the final output as JSON data, and the agent that gave it."""
    agent, output = result.last_agent, result.final_output
    adapter = _adapter(agent)
    typed = adapter is not None
    if adapter is not None:
        try:
            output = adapter.dump_python(output, mode="json")
        except ValueError:
            typed = False  # not of the output type (a tool's output that ended the run): stored as is
    return {"final_output": output, "last_agent": agent.name, "typed": typed}


def hit_result(
    graph: AgentGraph,
    given: str | list[TResponseInputItem],
    stored: Any,
    steps: Sequence[StepView],
    call_ids: Sequence[str],
    context: Any,
) -> RunResult:
    """The RunResult of a full hit: the replayed calls and the recorded answer, with fresh ids."""
    record = stored if isinstance(stored, dict) else {"final_output": stored}
    agent = graph.agents.get(str(record.get("last_agent")), graph.start)
    output = record.get("final_output")
    final = _typed(agent, output) if record.get("typed") else output
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    message = ResponseOutputMessage(
        id=fresh_call_id(),
        content=[ResponseOutputText(annotations=[], text=text, type="output_text")],
        role="assistant",
        status="completed",
        type="message",
    )
    return RunResult(
        input=given,
        new_items=[*tool_items(graph, steps, call_ids), MessageOutputItem(agent=agent, raw_item=message)],
        raw_responses=[],
        final_output=final,
        input_guardrail_results=[],
        output_guardrail_results=[],
        tool_input_guardrail_results=[],
        tool_output_guardrail_results=[],
        context_wrapper=RunContextWrapper(context),
        _last_agent=agent,
    )


def _typed(agent: Agent[Any], output: Any) -> Any:
    """The recorded output as the agent's output type (as JSON data, logged, if it no longer validates)."""
    adapter = _adapter(agent)
    if adapter is None:
        return output
    try:
        return adapter.validate_python(output)
    except ValueError as exc:
        logger.warning(
            "the replayed answer of agent %r does not validate as its output type (%s): returned as data",
            agent.name,
            type(exc).__name__,
        )
        return output


def _adapter(agent: Agent[Any]) -> TypeAdapter[Any] | None:
    """The pydantic adapter of an agent's structured output type; None for text (or a custom schema)."""
    kind = agent.output_type
    if kind is None or kind is str or isinstance(kind, AgentOutputSchemaBase):
        return None
    return TypeAdapter(kind)


def unrecordable(graph: AgentGraph, result: RunResultBase, recorded: int) -> str | None:
    """Why a replay could not repeat a finished run that recorded ``recorded`` calls, or None.

    Every tool call of the run must be a recorded function-tool call: a hosted or MCP tool is not
    recorded, and a call that failed (an exception the model saw as a message, a timeout, a
    rejected approval) would be skipped by a replay whose model never saw the failure.
    """
    if getattr(result, "interruptions", None):
        return "the run stopped for a tool approval"
    made = 0
    for item in result.new_items:
        if isinstance(item, ToolCallItem):
            raw = item.raw_item
            kind = raw.get("type") if isinstance(raw, dict) else getattr(raw, "type", None)
            if kind != "function_call" or item.tool_name not in graph.tools:
                return f"it called {item.tool_name or kind!r}, which muscle-mem does not record (a hosted or MCP tool)"
            made += 1
    if made > recorded:
        return f"{made - recorded} tool call(s) failed, and the model saw it: a replay would not"
    if any(g.output.tripwire_triggered for g in result.input_guardrail_results) or any(
        g.output.tripwire_triggered for g in result.output_guardrail_results
    ):
        return "a guardrail tripped"
    return None
