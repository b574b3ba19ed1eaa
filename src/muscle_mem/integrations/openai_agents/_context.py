"""What the agents of a run read besides its input: their instructions, prompts and tools, for one call."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from typing import Any

from agents import Agent, AgentOutputSchemaBase, FunctionTool, Handoff, RunContextWrapper
from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from muscle_mem.integrations._turn_checks import mark


async def agents_context(start: Agent[Any], context: Any) -> dict[str, Any]:
    """The instructions, prompt, tools, output type and tool choice of ``start`` and of every agent its handoffs name.

    A callable's instructions (and a tool's ``is_enabled``) are resolved with this call's
    ``context``, as the SDK resolves them at each turn. Each tool offered is named with its
    description and parameters (its handoffs too), sorted. A handoff agent counts though the run may not reach it: it may, and a
    replay would then go by what it read when it was recorded. A handoff whose agent is known only
    once it is invoked cannot count.
    """
    wrapper = RunContextWrapper(context=context)
    read: list[list[Any]] = []
    for agent in reachable(start):
        instructions = await agent.get_system_prompt(wrapper)
        prompt = await agent.get_prompt(wrapper)
        tools = await _offered(agent, wrapper)
        shape = _output_schema(agent)
        choice = agent.model_settings.tool_choice
        if instructions or prompt or tools or shape or choice is not None:
            read.append([agent.name, instructions, to_jsonable_python(prompt), tools, shape, choice])
    return {"agents": read}


async def turn_context(start: Agent[Any], context: Any) -> str:
    """The fingerprint of what the agents would read at a turn taken now."""
    return mark(await agents_context(start, context))


async def _offered(agent: Agent[Any], wrapper: RunContextWrapper[Any]) -> list[list[Any]]:
    """The tools an agent offers its model now: enabled function tools, other tools, handoffs (sorted)."""
    offered: list[list[Any]] = []
    for tool in agent.tools:
        if isinstance(tool, FunctionTool):
            rule = tool.is_enabled
            enabled: Any = rule(wrapper, agent) if callable(rule) else rule
            if await enabled if inspect.isawaitable(enabled) else enabled:
                offered.append(
                    [tool.name, tool.description, tool.params_json_schema, tool.strict_json_schema]
                )
        else:
            offered.append([getattr(tool, "name", ""), type(tool).__name__, "", None])
    for handoff in agent.handoffs:
        if isinstance(handoff, Handoff):
            offered.append([handoff.tool_name, handoff.tool_description, handoff.input_json_schema, None])
        else:
            offered.append(
                [Handoff.default_tool_name(handoff), Handoff.default_tool_description(handoff), "", None]
            )
    return sorted(offered, key=lambda entry: str(entry[:2]))


def _output_schema(agent: Agent[Any]) -> Any:
    """The JSON schema of what an agent is asked to answer with (None for plain text): the model reads it."""
    output = agent.output_type
    if output is None or output is str:
        return None
    if isinstance(output, AgentOutputSchemaBase):
        return None if output.is_plain_text() else output.json_schema()
    try:
        return TypeAdapter(output).json_schema()
    except Exception:  # a type pydantic cannot describe: its name
        return getattr(output, "__qualname__", repr(output))


def reachable(start: Agent[Any]) -> Iterator[Agent[Any]]:
    """``start``, then the agents its handoffs name (depth first, each once)."""
    seen: set[int] = set()
    pending = [start]
    while pending:
        agent = pending.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        for handoff in reversed(agent.handoffs):
            target = handoff._agent_ref() if isinstance(handoff, Handoff) and handoff._agent_ref else handoff
            if isinstance(target, Agent):
                pending.append(target)
