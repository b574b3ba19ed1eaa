"""An agent graph whose function tools the engine records and replays (the hook of the integration).

Each ``FunctionTool`` gets a shim registered with the engine: it takes the tool's JSON arguments as
keyword arguments and runs the SDK's own invoker. What the SDK passes besides the arguments (the
``ToolContext``) travels in a context variable, so it is never recorded; at replay the shim builds a
``ToolContext`` itself, with a fresh ``mm_`` call id and the context of the runner call.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import logging
import weakref
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents import Agent, FunctionTool, Handoff, ModelBehaviorError
from agents.tool import set_function_tool_failure_error_function, with_function_tool_failure_error_handler
from agents.tool_context import ToolContext
from openai.types.responses import ResponseFunctionToolCall
from pydantic import BaseModel

from muscle_mem import MuscleMemError, current_run, source_version
from muscle_mem.integrations._common import Checks, checks_for, fresh_call_id, schema_version, unknown_checks
from muscle_mem.integrations._turn_checks import turn_checked
from muscle_mem.integrations._turns import replaying_a_turn
from muscle_mem.integrations.openai_agents._context import turn_context

if TYPE_CHECKING:
    from muscle_mem import Engine, Session

logger = logging.getLogger(__name__)


class NotReplayable(MuscleMemError):
    """A tool call the replay must not make on its own (it needs approval, is disabled, is past a limit)."""


@dataclass(eq=False)
class CallState:
    """One front-end call: the session recording it (None: uncached) and what a replay needs."""

    context: Any
    session: Session | None
    replay_ids: list[str] = field(default_factory=list)
    """The call ids of the tool calls replayed so far, in order."""
    max_turns: int | None = None
    """The run's ``max_turns``: a replay stands for no more model turns."""
    replayed_turns: int = 0
    """The model turns the calls replayed so far stand for."""


@dataclass(frozen=True, eq=False)
class _Invocation:
    """A call the SDK made: the tool, its context and its raw arguments (none of them recorded)."""

    tool: FunctionTool
    context: ToolContext[Any]
    arguments: str


CALL: ContextVar[CallState | None] = ContextVar("muscle_mem_openai_agents_call", default=None)
_INVOCATION: ContextVar[_Invocation | None] = ContextVar("muscle_mem_openai_agents_tool", default=None)
_MADE: dict[int, tuple[weakref.ref[FunctionTool], FunctionTool, Engine]] = {}
"""The tools this module made, by id: the tool, the one it wraps, and its engine (a tool wrapped
again is wrapped from its original, so that no call is recorded twice)."""


class AgentGraph:
    """Wraps an agent, its handoff agents and their function tools for one engine."""

    def __init__(self, engine: Engine, agent: Agent[Any], checks: Checks | None) -> None:
        self.engine = engine
        self.checks = checks
        self.tools: dict[str, FunctionTool] = {}
        """The original function tools, by name."""
        self.owners: dict[str, Agent[Any]] = {}
        """The wrapped agent that holds each tool, by tool name."""
        self.agents: dict[str, Agent[Any]] = {}
        """The wrapped agents, by name (the first of a name)."""
        self._clones: dict[int, Agent[Any]] = {}
        self._originals: dict[int, Agent[Any]] = {}
        """The user's agent of each clone, by the clone's id (the originals are kept: their ids stay theirs)."""
        self.start = self.wrap(agent)
        """The wrapped starting agent."""
        unknown_checks(checks, set(self.tools))

    def wrap(self, agent: Agent[Any]) -> Agent[Any]:
        """The clone of ``agent`` whose function tools (and handoff agents') are recorded."""
        clone = self._clones.get(id(agent))
        if clone is not None:
            return clone
        clone = agent.clone(tools=list(agent.tools), handoffs=list(agent.handoffs))
        self._clones[id(agent)] = self._clones[id(clone)] = clone
        self._originals[id(clone)] = agent
        self.agents.setdefault(clone.name, clone)
        clone.tools = [self._tool(t, clone) if isinstance(t, FunctionTool) else t for t in agent.tools]
        clone.handoffs = [self.wrap(h) if isinstance(h, Agent) else self._handoff(h) for h in agent.handoffs]
        return clone

    async def _turn(self) -> str:
        """What the agents would read at a turn taken now, with this call's context (its fingerprint)."""
        call = CALL.get()
        return await turn_context(self.start, call.context if call is not None else None)

    def original(self, agent: Agent[Any]) -> Agent[Any]:
        """The user's own agent that a wrapped clone stands for (any other agent: itself)."""
        return self._originals.get(id(agent), agent)

    def _handoff(self, handoff: Handoff[Any, Any]) -> Handoff[Any, Any]:
        """The handoff to the wrapped clone of its agent (known now, or when the handoff happens)."""
        invoke = handoff.on_invoke_handoff

        async def on_invoke_handoff(context: Any, arguments: str) -> Agent[Any]:
            return self.wrap(await invoke(context, arguments))

        wrapped = dataclasses.replace(handoff, on_invoke_handoff=on_invoke_handoff)
        target = handoff._agent_ref() if handoff._agent_ref is not None else None
        if isinstance(target, Agent):
            wrapped._agent_ref = weakref.ref(self.wrap(target))
        return wrapped

    def _tool(self, tool: FunctionTool, owner: Agent[Any]) -> FunctionTool:
        """The tool with its invoker recorded by the engine (a tool made for this engine as it is)."""
        made = _MADE.get(id(tool))
        if made is not None and made[0]() is tool:
            if made[2] is self.engine:
                self.tools.setdefault(tool.name, made[1])
                self.owners.setdefault(tool.name, owner)
                return tool
            tool = made[1]
        self.tools.setdefault(tool.name, tool)
        self.owners.setdefault(tool.name, owner)
        handles_errors = callable(getattr(tool.on_invoke_tool, "__agents_bind_function_tool__", None))
        raising = copy.copy(tool) if handles_errors else tool
        if handles_errors:  # the SDK would turn an exception into a message: let it raise in the run
            set_function_tool_failure_error_function(raising, None)
        shim = _shim(tool, raising, owner)
        pre, post = checks_for(self.checks, tool.name)
        recorded = self.engine.register(
            shim,
            name=tool.name,
            version=tool_version(tool),
            pre_check=turn_checked(pre, self._turn),
            post_check=post,
            output_view=_view,
        )
        invoke = _invoker(tool, shim, recorded)
        wrapped = dataclasses.replace(
            tool,
            on_invoke_tool=with_function_tool_failure_error_handler(invoke, _handled)
            if handles_errors
            else invoke,
        )
        _MADE[id(wrapped)] = (weakref.ref(wrapped), tool, self.engine)
        weakref.finalize(wrapped, _MADE.pop, id(wrapped), None)
        return wrapped


def tool_version(tool: FunctionTool) -> str:
    """The version of a tool: its Python callable's, else its name, description and schema's."""
    try:
        return source_version(tool.__wrapped__)
    except AttributeError:
        return schema_version(tool.name, tool.description, tool.params_json_schema)


def _shim(tool: FunctionTool, raising: FunctionTool, owner: Agent[Any]) -> Callable[..., Any]:
    """The callable the engine records: the tool's arguments in, the SDK's invoker run."""

    async def shim(**arguments: Any) -> Any:
        invocation = _INVOCATION.get()
        if invocation is not None and invocation.tool is tool:
            return await raising.on_invoke_tool(invocation.context, invocation.arguments)
        call = CALL.get()
        context = await _replay_context(tool, owner, arguments, call)
        output = await raising.on_invoke_tool(context, context.tool_arguments)
        if call is not None:
            call.replay_ids.append(context.tool_call_id)
        return output

    return shim


def _invoker(
    tool: FunctionTool, shim: Callable[..., Any], recorded: Callable[..., Any]
) -> Callable[[ToolContext[Any], str], Any]:
    """What the SDK calls: the recorded shim inside a run, the plain one outside."""

    async def invoke(context: ToolContext[Any], arguments: str) -> Any:
        kwargs = _arguments(tool.name, arguments)
        call = CALL.get()
        if call is not None and call.session is not None:
            return await call.session.call(_invoke, recorded, _Invocation(tool, context, arguments), kwargs)
        target = recorded if current_run() is not None else shim  # outside a run nothing records it
        return await _invoke(target, _Invocation(tool, context, arguments), kwargs)

    return invoke


async def _invoke(fn: Callable[..., Any], invocation: _Invocation, kwargs: dict[str, Any]) -> Any:
    token = _INVOCATION.set(invocation)
    try:
        return await fn(**kwargs)
    finally:
        _INVOCATION.reset(token)


def _arguments(name: str, arguments: str) -> dict[str, Any]:
    """The tool's JSON arguments as keyword arguments (a model error, as the SDK says, if they are not)."""
    try:
        parsed = json.loads(arguments) if arguments.strip() else {}
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        raise ModelBehaviorError(f"Invalid JSON input for tool {name}")
    return parsed


async def _replay_context(
    tool: FunctionTool, owner: Agent[Any], arguments: dict[str, Any], call: CallState | None
) -> ToolContext[Any]:
    """The ``ToolContext`` of a replayed call, or NotReplayable if the call cannot be made as in a run.

    Not replayed: a call that needs approval, a disabled tool, a tool with guardrails (a replay does
    not run them), an agent whose ``tool_use_behavior`` is a function, and a model turn past
    ``max_turns`` (the calls of one recorded turn are one).
    """
    if tool.tool_input_guardrails or tool.tool_output_guardrails:
        raise NotReplayable(
            f"tool {tool.name!r} has guardrails, which a replay does not run: it is not replayed"
        )
    if callable(owner.tool_use_behavior):
        raise NotReplayable(
            f"agent {owner.name!r} decides by a function when its tools end the run: not replayed"
        )
    if call is not None and replaying_a_turn():
        if call.max_turns is not None and call.replayed_turns >= call.max_turns:
            raise NotReplayable(f"the run's max_turns ({call.max_turns}) allows no more replayed turns")
        call.replayed_turns += 1
    call_id = fresh_call_id()
    text = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    context: ToolContext[Any] = ToolContext(
        call.context if call is not None else None,
        tool_name=tool.name,
        tool_call_id=call_id,
        tool_arguments=text,
        tool_call=ResponseFunctionToolCall(
            arguments=text, call_id=call_id, name=tool.name, type="function_call", id=call_id
        ),
        agent=owner,
    )
    approval = tool.needs_approval
    if approval is True or (callable(approval) and await _value(approval(context, arguments, call_id))):
        raise NotReplayable(f"tool {tool.name!r} needs approval for this call: it is not replayed")
    enabled = tool.is_enabled
    if enabled is False or (callable(enabled) and not await _value(enabled(context, owner))):
        raise NotReplayable(f"tool {tool.name!r} is disabled for this run: it is not replayed")
    return context


async def _value(result: Any) -> bool:
    return bool(await result if inspect.isawaitable(result) else result)


def _view(output: Any) -> Any:
    """What data flow sees of a tool output: JSON text parsed, a pydantic model as its JSON data."""
    try:
        if isinstance(output, str) and output[:1] in ("{", "["):
            return json.loads(output)
        if isinstance(output, BaseModel):
            return output.model_dump(mode="json")
    except ValueError:
        pass
    return output


def _handled(tool: FunctionTool, error: Exception, arguments: str) -> None:
    """The SDK turned a tool's exception into a message for the model; the call was not recorded."""
    logger.info(
        "tool %r raised %s: the model gets the framework's error message, and the call is not recorded",
        tool.name,
        type(error).__name__,
    )
