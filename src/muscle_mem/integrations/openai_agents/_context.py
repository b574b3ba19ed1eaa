"""What the agents of a run read besides its input: their instructions and prompts, for one call."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agents import Agent, Handoff, RunContextWrapper
from pydantic_core import to_jsonable_python


async def agents_context(start: Agent[Any], context: Any) -> dict[str, Any]:
    """The instructions (and prompt) of ``start`` and of every agent its handoffs name, by agent name.

    A callable's instructions are resolved with this call's ``context``, as the SDK resolves them
    when the agent runs. A handoff agent counts though the run may not reach it: it may, and a
    replay would then go by what it read when it was recorded. A handoff whose agent is known only
    once it is invoked cannot count.
    """
    wrapper = RunContextWrapper(context=context)
    read: list[list[Any]] = []
    for agent in _reachable(start):
        instructions = await agent.get_system_prompt(wrapper)
        prompt = await agent.get_prompt(wrapper)
        if instructions or prompt:
            read.append([agent.name, instructions, to_jsonable_python(prompt)])
    return {"agents": read}


def _reachable(start: Agent[Any]) -> Iterator[Agent[Any]]:
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
