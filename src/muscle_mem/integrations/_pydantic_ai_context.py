"""What a pydantic-ai agent reads besides its prompt: its instructions, system prompts and tools.

pydantic-ai resolves them at each model request; the engine needs them before, to key the task,
and at each replayed step, to compare the turn it stands for, so they are resolved here the same
way (an instruction function runs once more each time). The run's own instructions
(``agent.run(..., instructions=...)``) are read from the run's graph, where pydantic-ai keeps them;
a version whose graph is not where this module looks leaves them to :func:`unkeyed_instructions`,
which finds them in the first model request.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from muscle_mem.integrations._common import missing_extra
from muscle_mem.integrations._turn_checks import mark

try:
    from pydantic_ai import RunContext
    from pydantic_ai._instructions import resolve_sourced_instructions
    from pydantic_ai._system_prompt import resolve_system_prompts
    from pydantic_ai.capabilities import AbstractCapability, WrapRunHandler
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_ai.toolsets._instruction_collection import collect_toolset_instructions
    from pydantic_core import to_jsonable_python
except ImportError as exc:  # pragma: no cover - pydantic_ai.py imports the framework first
    raise missing_extra("pydantic-ai", "pydantic-ai") from exc


def graph_deps(handler: WrapRunHandler) -> Any:
    """The run's graph dependencies behind a ``wrap_run`` handler (its instructions), or None if not found."""
    build = getattr(getattr(handler, "__self__", None), "build_result", None)
    for cell in getattr(build, "__closure__", None) or ():
        deps = getattr(getattr(getattr(cell, "cell_contents", None), "ctx", None), "deps", None)
        if callable(getattr(deps, "get_instructions", None)):
            return deps
    return None


async def instructions(ctx: RunContext[Any], toolset: AbstractToolset[Any], deps: Any) -> list[str]:
    """The instructions the model reads now: the agent's, its capabilities', the run's and the toolset's.

    With no graph ``deps``, the run's own instructions are not among them.
    """
    if deps is not None:
        base = await deps.get_instructions(ctx) or []
    elif ctx.agent is not None:
        capability = ctx.root_capability
        sourced = ctx.agent._get_instructions(
            cap_instructions=capability._collect_instructions() if capability is not None else None
        )
        base = await resolve_sourced_instructions(sourced, ctx)
    else:
        base = []
    return [part.content for part in [*base, *await collect_toolset_instructions(toolset, ctx)]]


def offered(tools: Mapping[str, ToolsetTool[Any]]) -> list[list[Any]]:
    """The tools offered to the model, each as its name, kind, description and parameters (sorted)."""
    return _defs(tool.tool_def for tool in tools.values())


def _defs(defs: Any) -> list[list[Any]]:
    return sorted(
        [d.name, d.kind, d.description or "", d.parameters_json_schema]
        for d in defs
        if isinstance(d, ToolDefinition)
    )


async def agent_context(
    ctx: RunContext[Any], toolset: AbstractToolset[Any], deps: Any, tools: Mapping[str, ToolsetTool[Any]]
) -> dict[str, Any]:
    """The run's instructions, system prompts, tools and tool choice as its model will first read them."""
    agent = ctx.agent
    prompts = (
        await resolve_system_prompts(agent._system_prompts, agent._system_prompt_functions, ctx)
        if agent is not None
        else []
    )
    return {
        "instructions": await instructions(ctx, toolset, deps),
        "system_prompts": [part.content for part in prompts],
        "tools": offered(tools),
        "tool_choice": to_jsonable_python(_model_settings(ctx, deps).get("tool_choice")),
        "output": _output(deps, agent),
        "model": [getattr(ctx.model, "system", None), getattr(ctx.model, "model_name", None)],
    }


def _output(deps: Any, agent: Any) -> Any:
    """What the model is asked to answer in: the run's output schema (its mode, object schema and output tools)."""
    schema = getattr(deps, "output_schema", None)
    if schema is None:  # a version whose graph is not where this module looks: the agent's own output type
        return repr(getattr(agent, "output_type", None))
    tools = getattr(getattr(schema, "toolset", None), "_tool_defs", None) or []
    return [
        getattr(schema, "mode", None),
        to_jsonable_python(getattr(getattr(schema, "object_def", None), "json_schema", None)),
        _defs(tools),
    ]


_REQUEST_HOOKS = (
    "before_model_request",
    "prepare_model_request",
    "wrap_model_request",
    "after_model_request",
    "compact_history",
    "get_wrapper_model",
)
"""The capability methods that act on each model request (what the model reads, or how it answers)."""


def request_hooks(ctx: RunContext[Any], own: object) -> list[str]:
    """The run's capabilities other than ``own`` that act on each model request, by class name.

    A history processor, a capability that adds a message or rewrites the instructions before each
    request, or wraps the model: the model may read what no prompt shows, and a replay runs none of
    them. Those of :data:`_READS_NOTHING` change nothing the key misses.
    """
    found: list[str] = []
    for capability in _leaves(ctx.root_capability):
        kind = type(capability)
        if capability is own or type(own) is kind or kind.__name__ in _READS_NOTHING:
            continue
        if any(
            getattr(kind, hook, None) is not getattr(AbstractCapability, hook, None)
            for hook in _REQUEST_HOOKS
        ):
            found.append(kind.__name__)
    return sorted(set(found))


_READS_NOTHING = frozenset({"Instrumentation", "PendingMessageDrainCapability", "ToolSearch"})
"""pydantic-ai's own capabilities that act on each request without the model reading what the task
key misses: tracing, messages the run itself queues, the tools it finds (compared at each turn)."""


def _leaves(capability: Any) -> list[Any]:
    """The capabilities a combined one holds, flattened (itself if it holds none)."""
    inner = getattr(capability, "capabilities", None)
    if capability is None:
        return []
    if isinstance(inner, (list, tuple)):
        return [leaf for part in inner for leaf in _leaves(part)]
    return [capability]


def _model_settings(ctx: RunContext[Any], deps: Any) -> Mapping[str, Any]:
    """The model settings of the run (the agent's and the run's, merged), as its graph holds them; else the agent's."""
    merged = getattr(deps, "get_model_settings", None)
    if callable(merged):
        settings = getattr(merged(ctx), "merged", None)
        if isinstance(settings, Mapping):
            return settings
    own = ctx.agent.model_settings if ctx.agent is not None else None
    return own if isinstance(own, Mapping) else {}


async def turn_context(ctx: RunContext[Any], toolset: AbstractToolset[Any], deps: Any) -> str:
    """The fingerprint of what the model would read at a turn taken now: instructions and tools."""
    tools = await toolset.get_tools(ctx)
    return mark([await instructions(ctx, toolset, deps), offered(tools)])


def request_reads(request: ModelRequestContext) -> str:
    """The fingerprint of what a model request gives the model: its instructions and tools."""
    parameters = request.model_request_parameters
    parts = parameters.instruction_parts or []
    tools = _defs([*parameters.function_tools, *parameters.output_tools])
    return mark([[part.content for part in parts], tools])


def unkeyed_instructions(keyed: Collection[str], request: ModelRequestContext) -> list[str]:
    """The instructions of a model request that are not among those the task was keyed on."""
    parts = request.model_request_parameters.instruction_parts or []
    return [part.content for part in parts if part.content not in keyed]
