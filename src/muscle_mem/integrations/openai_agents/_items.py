"""The SDK's items for replayed tool calls, the answer the engine stores, and the RunResult of a hit."""

from __future__ import annotations

import dataclasses
import json
import logging
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, cast

from agents import (
    Agent,
    AgentOutputSchemaBase,
    HandoffCallItem,
    HandoffOutputItem,
    ItemHelpers,
    MessageOutputItem,
    RunContextWrapper,
    RunItem,
    RunResult,
    RunResultStreaming,
    ToolCallItem,
    ToolCallOutputItem,
    TResponseInputItem,
)
from agents.result import RunResultBase
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText
from pydantic import TypeAdapter

from muscle_mem import StepView
from muscle_mem.integrations._common import fresh_call_id
from muscle_mem.integrations._turns import turns_of
from muscle_mem.integrations.openai_agents._tools import AgentGraph

logger = logging.getLogger(__name__)


def tool_items(graph: AgentGraph, steps: Sequence[StepView], call_ids: Sequence[str]) -> list[RunItem]:
    """The call items, then the output items, of each model turn of the replayed calls, as the SDK makes them in a run."""
    items: list[RunItem] = []
    ids = iter(call_ids)
    for turn in turns_of(steps):
        outputs: list[RunItem] = []
        for step in turn:
            call_id = next(ids)
            agent = graph.original(graph.owners.get(step.tool, graph.start))
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
            items.append(ToolCallItem(agent=agent, raw_item=call))
            outputs.append(ToolCallOutputItem(agent=agent, raw_item=raw, output=step.output))
        items += outputs
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
    """What the engine stores of a run's answer: the final output as JSON data, the agent that gave it,
    and the run's handoffs in order (by name only: no number that data flow could bind to a param)."""
    agent, output = result.last_agent, result.final_output
    adapter = _adapter(agent)
    typed = adapter is not None
    if adapter is not None:
        try:
            output = adapter.dump_python(output, mode="json")
        except ValueError:
            typed = False  # not of the output type (a tool's output that ended the run): stored as is
    stored: dict[str, Any] = {"final_output": output, "last_agent": agent.name, "typed": typed}
    handed = _handoffs(result.new_items)
    if handed:
        stored["handoffs"] = handed
    return stored


def _handoffs(items: Sequence[RunItem]) -> list[dict[str, Any]]:
    """Each handoff that took place: its tool and arguments, the agent it left and the one it reached."""
    asked, done = dict[str, dict[str, Any]](), list[dict[str, Any]]()
    for item in items:
        if isinstance(item, HandoffCallItem):
            call = item.raw_item
            asked[call.call_id] = {"tool": call.name, "arguments": call.arguments, "from": item.agent.name}
        elif isinstance(item, HandoffOutputItem):
            raw = item.raw_item
            call_id = raw.get("call_id") if isinstance(raw, Mapping) else getattr(raw, "call_id", None)
            entry = asked.pop(str(call_id), None)
            if entry is not None:
                done.append(entry | {"to": item.target_agent.name})
    return done


def _placed(graph: AgentGraph, steps: Sequence[StepView], handoffs: Sequence[Any]) -> list[int]:
    """Where each handoff goes among the steps: before the first later call of the agent it reached."""
    places, at = [], 0
    for handed in handoffs:
        target = str(handed.get("to")) if isinstance(handed, Mapping) else ""
        owned = [getattr(graph.owners.get(step.tool), "name", None) == target for step in steps]
        at = next((i for i in range(at, len(steps)) if owned[i]), at)
        places.append(at)
    return places


def hit_result(
    graph: AgentGraph,
    given: str | list[TResponseInputItem],
    stored: Any,
    steps: Sequence[StepView],
    call_ids: Sequence[str],
    context: Any,
) -> RunResult:
    """The RunResult of a full hit: the replayed calls, the handoffs and the recorded answer, with fresh ids."""
    record = stored if isinstance(stored, dict) else {"final_output": stored}
    agent = graph.original(graph.agents.get(str(record.get("last_agent")), graph.start))
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
    items = tool_items(graph, steps, call_ids)
    handoffs = [h for h in record.get("handoffs") or [] if isinstance(h, Mapping)]
    for handed, at in reversed(list(zip(handoffs, _placed(graph, steps, handoffs), strict=True))):
        items[2 * at : 2 * at] = _handoff_items(graph, handed)
    return RunResult(
        input=given,
        new_items=[*items, MessageOutputItem(agent=agent, raw_item=message)],
        raw_responses=[],
        final_output=final,
        input_guardrail_results=[],
        output_guardrail_results=[],
        tool_input_guardrail_results=[],
        tool_output_guardrail_results=[],
        context_wrapper=RunContextWrapper(context),
        _last_agent=agent,
    )


def _handoff_items(graph: AgentGraph, handed: Mapping[str, Any]) -> list[RunItem]:
    """The call and output items of a recorded handoff, as the SDK makes them, with a fresh call id."""
    source = graph.original(graph.agents.get(str(handed.get("from")), graph.start))
    target = graph.original(graph.agents.get(str(handed.get("to")), graph.start))
    call_id = fresh_call_id()
    call = ResponseFunctionToolCall(
        arguments=str(handed.get("arguments") or "{}"),
        call_id=call_id,
        name=str(handed.get("tool")),
        type="function_call",
        id=call_id,
    )
    output: TResponseInputItem = {
        "call_id": call_id,
        "output": json.dumps({"assistant": target.name}),  # the SDK's Handoff.get_transfer_message
        "type": "function_call_output",
    }
    return [
        HandoffCallItem(agent=source, raw_item=call),
        HandoffOutputItem(agent=source, raw_item=output, source_agent=source, target_agent=target),
    ]


def as_users(graph: AgentGraph, result: RunResult | RunResultStreaming) -> None:
    """The finished run's result with the user's own agents where the run had the wrapped clones."""
    result.new_items[:] = [_users_item(graph, item) for item in result.new_items]
    agent = graph.original(result.last_agent)
    if isinstance(result, RunResultStreaming):
        result.current_agent, result._current_agent_ref = agent, weakref.ref(agent)
    else:
        result._last_agent, result._last_agent_ref = agent, weakref.ref(agent)


def _users_item(graph: AgentGraph, item: RunItem) -> RunItem:
    names = [
        f.name
        for f in dataclasses.fields(item)
        if f.init and f.name in ("agent", "source_agent", "target_agent")
    ]
    users = {name: graph.original(getattr(item, name)) for name in names}
    replaced: RunItem = dataclasses.replace(cast(Any, item), **users)
    return replaced


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
