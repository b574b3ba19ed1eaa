"""What a pydantic-ai agent reads besides its prompt: its instructions and system prompts, for one run.

pydantic-ai resolves them at the run's first model request; the engine needs them before, to key the
task, so they are resolved here the same way (an instruction function runs once more per run). An
instruction given to one run alone (``agent.run(..., instructions=...)``), or by an MCP server not
connected yet, is not known this early: :func:`unkeyed_instructions` finds it in the model request.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from muscle_mem.integrations._common import missing_extra

try:
    from pydantic_ai import RunContext
    from pydantic_ai._instructions import resolve_sourced_instructions
    from pydantic_ai._system_prompt import resolve_system_prompts
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.toolsets import AbstractToolset
    from pydantic_ai.toolsets._instruction_collection import collect_toolset_instructions
except ImportError as exc:  # pragma: no cover - pydantic_ai.py imports the framework first
    raise missing_extra("pydantic-ai", "pydantic-ai") from exc


async def agent_context(ctx: RunContext[Any], toolset: AbstractToolset[Any]) -> dict[str, list[str]]:
    """The run's instructions and system prompts as its model will read them (functions resolved now).

    The instructions are the agent's own (or an ``agent.override``'s), its capabilities' and those of
    the run's ``toolset``.
    """
    agent = ctx.agent
    if agent is None:
        return {}
    capability = ctx.root_capability
    sourced = agent._get_instructions(
        cap_instructions=capability._collect_instructions() if capability is not None else None
    )
    instructions = [
        *await resolve_sourced_instructions(sourced, ctx),
        *await collect_toolset_instructions(toolset, ctx),
    ]
    prompts = await resolve_system_prompts(agent._system_prompts, agent._system_prompt_functions, ctx)
    return {
        "instructions": [part.content for part in instructions],
        "system_prompts": [part.content for part in prompts],
    }


def unkeyed_instructions(keyed: Collection[str], request: ModelRequestContext) -> list[str]:
    """The instructions of a model request that are not among those the task was keyed on."""
    parts = request.model_request_parameters.instruction_parts or []
    return [part.content for part in parts if part.content not in keyed]
