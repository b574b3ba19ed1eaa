"""pydantic-ai: ``MuscleMem(engine)``, a capability that gives an agent muscle memory.

``Agent(model, tools=[...], capabilities=[MuscleMem(engine)])``; ``agent.run(...)``, ``run_sync``,
``run_stream`` and ``iter`` are called as ever. A run's prompt is the engine's task; ``params=``
and ``tags=`` are values, or callables over the run's ``RunContext`` (``lambda ctx: ctx.metadata``).

- A miss: the run goes on unchanged; its function tool calls, made through the capability's wrapper
  toolset, are recorded with the JSON arguments the model gave (an injected ``RunContext`` is not
  one of them). A call that raises (``ModelRetry``, ``ToolFailed`` included) is not a step. The
  model's last turn (its text, its output tool call) is the recorded answer.
- A full hit: the engine replays the tools, then the run goes on with the model's turns scripted
  from the replay (a turn per recorded model turn, its calls together, each with a fresh ``mm_``
  call id and the output of this replay, then the recorded last turn): the model is not called,
  and the run ends with pydantic-ai's own ``AgentRunResult``, its output validated by the run's
  own output type. A recorded answer that
  type refuses goes back to the model, as pydantic-ai retries any answer.
- A failed check: the steps replayed before it are scripted the same way, then the model takes over
  with them as its history, and the resumed run is recorded.
- What the model reads is part of the task, by its fingerprint in a ``context:`` tag: the
  instructions (the agent's, its capabilities', its toolsets' and those given to the run alone)
  and system prompts, resolved for the run, and the tools offered (name, kind, description,
  parameters). Instruction functions and ``prepare`` run again at each turn: each step replays only
  if the model would read at its turn what the recorded step's turn read (a pre-check every tool
  gets), and the recorded answer is given only at a turn that reads what its turn read.
- A tool call that failed where the engine does not see it (arguments its validation refused, a
  retry asked for) keeps the run out of the store, unless the model made the same call again.
- A run with a message history (a follow-up) is solved uncached unless ``cache_followups=True``; so
  is one without a text prompt, and one that ends on deferred tool calls is not stored.

Scripted turns count in ``usage.requests`` (with no tokens) and against ``request_limit``, as
pydantic-ai counts every turn a capability answers; a replay makes no more steps than the run's
``request_limit`` and ``tool_calls_limit`` allow (a turn per recorded model turn, a call per step),
so the run raises where the agent alone would. Each model request the run makes begins a turn for
the engine (:meth:`muscle_mem.RunView.begin_turn`): the calls of one response are replayed
together, and a replay that stops hands over between turns. On a miss, what the model's responses
spent (tokens in and out, by model name) goes into the engine's run; the scripted turns spent
nothing. Tools the provider runs (native tools) are not calls the engine sees.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from muscle_mem import Engine, Result, current_run, source_version
from muscle_mem.integrations._common import (
    UNREAD,
    Checks,
    acting_context,
    checks_for,
    missing_extra,
    note_followup_bypass,
    schema_version,
    unknown_checks,
    with_context,
)
from muscle_mem.integrations._turn_checks import turn_checked
from muscle_mem.integrations._turns import begin_turn
from muscle_mem.secrecy.declared import redact, secret_values

try:
    from pydantic_ai import RunContext
    from pydantic_ai.capabilities import AbstractCapability, WrapModelRequestHandler, WrapRunHandler
    from pydantic_ai.messages import ModelResponse
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.run import AgentRunResult
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

    from muscle_mem.integrations._pydantic_ai_context import (
        agent_context,
        graph_deps,
        request_hooks,
        request_reads,
        unkeyed_instructions,
    )
    from muscle_mem.integrations._pydantic_ai_run import (
        LIVE,
        RUN,
        CachedToolset,
        RunState,
        Unfinished,
        jsonable,
        shim,
        solve,
    )
except ImportError as exc:
    raise missing_extra("pydantic-ai", "pydantic-ai") from exc

__all__ = ["MuscleMem"]

logger = logging.getLogger(__name__)

Params = Mapping[str, Any] | Callable[[RunContext[Any]], Mapping[str, Any] | None] | None
Tags = Sequence[str] | Callable[[RunContext[Any]], Sequence[str] | None] | None


class MuscleMem(AbstractCapability[Any]):
    """A pydantic-ai capability that records an agent's runs and replays them without the model.

    >>> memory = MuscleMem(engine, params=lambda ctx: ctx.metadata)
    >>> agent = Agent(model, tools=[find_user, reset_password], capabilities=[memory])
    >>> agent.run_sync("reset the password of ada@x.io", metadata={"email": "ada@x.io"}).output

    The engine becomes the capability's: its agent is set to the pydantic-ai run in progress.
    ``checks`` maps a tool name to a Check or a ``(pre_check, post_check)`` pair.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        params: Params = None,
        tags: Tags = None,
        checks: Checks | None = None,
        cache_followups: bool = False,
        context: Callable[[RunContext[Any]], Any] | None = None,
    ) -> None:
        if not isinstance(engine, Engine):
            raise TypeError(f"MuscleMem needs a muscle_mem.Engine, got {type(engine).__name__}")
        self.engine = engine.set_agent(solve)
        self.params = params
        self.tags = tags
        self.checks = checks
        self.cache_followups = cache_followups
        self.context = context
        """What the run's other capabilities read besides the prompt (a function of the run's context): part of the task."""
        self.last_result: Result | None = None
        """The engine's Result of the latest run (None if it was solved uncached or ended unfinished)."""
        self._origin = self
        self._state = RunState()
        self._keyed: list[str] | None = None
        """The instructions this run's task was keyed on, until its first model request checks them."""
        self._shims: dict[str, tuple[str, Callable[..., Any]]] = {}
        self._versions: dict[Callable[..., Any], str] = {}

    __eq__ = object.__eq__
    __hash__ = object.__hash__

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # holds an engine: not built from an agent spec

    async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
        run = copy.copy(self)  # shares the options, the origin and the tools registered
        run._state = RunState()
        run._keyed = None
        return run

    def get_wrapper_toolset(self, toolset: AbstractToolset[Any]) -> AbstractToolset[Any] | None:
        return CachedToolset(toolset, instrumented=self._origin._instrumented, state=self._state)

    async def wrap_run(self, ctx: RunContext[Any], *, handler: WrapRunHandler) -> AgentRunResult[Any]:
        state = self._state
        self._origin.last_result = None
        params, tags = _given(self.params, ctx), _given(self.tags, ctx)
        task = self._task(ctx, state, params)
        if task is None:
            return await handler()
        state.ctx, state.handler, state.deps = ctx, handler, graph_deps(handler)
        state.tools = await self._register(ctx, state)
        state.allowed = _allowed(ctx)
        assert state.toolset is not None  # checked by _task
        context = await agent_context(ctx, state.toolset, state.deps, state.tools)
        context_fn = self.context
        read = acting_context(
            "pydantic-ai",
            request_hooks(ctx, self),
            (lambda: context_fn(ctx)) if context_fn is not None else None,
            "MuscleMem",
        )
        if read is UNREAD:
            return await handler()
        tags = with_context(tags, {**context, "capabilities": read})
        self._keyed = context.get("instructions", [])
        live, run = LIVE.set(None), RUN.set(state)
        try:
            result = await self.engine.arun(task, params=params, tags=tags)
        except Unfinished as why:
            logger.info("the run of %r is not stored: %s", _shown(task, params), why)
            assert state.result is not None
            return state.result
        finally:
            RUN.reset(run)
            LIVE.reset(live)
            await state.leave()
        self._origin.last_result = result
        if not result.hit:
            assert state.result is not None  # the engine's agent ran the framework
            return state.result
        state.script_steps(result.calls)
        state.script_answer(result.output)
        return await handler()

    async def wrap_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, handler: WrapModelRequestHandler
    ) -> ModelResponse:
        keyed, self._keyed = self._keyed, None
        if keyed is not None:
            self._check_instructions(keyed, request_context)
        turn = self._state.next_turn(request_reads(request_context))
        if turn is not None:
            return turn
        run = begin_turn(self.engine)  # the calls of the response are decided together
        if run is not None:
            self._state.calls_at_request = len(run.steps)
        return await handler(request_context)

    def _check_instructions(self, keyed: list[str], request_context: ModelRequestContext) -> None:
        """Keep a run out of the store when its model reads instructions its task was not keyed on.

        Those given to one run alone (``agent.run(..., instructions=...)``), or by an MCP server that
        connected since, are known only now: a replay could not have told them apart (the log says so).
        """
        unkeyed = unkeyed_instructions(keyed, request_context)
        if not unkeyed:
            return
        why = (
            f"the model reads {len(unkeyed)} instruction(s) known only at its first request (given to "
            "this run alone, or by an MCP server connected since), which the task key does not hold"
        )
        run = current_run()
        if run is not None and run.engine is self.engine:
            run.refuse(f"{why}: the run is not stored")
        else:
            logger.warning("%s: the replay went by the agent's own instructions", why)

    def _task(self, ctx: RunContext[Any], state: RunState, params: Any) -> str | None:
        """The run's task text, or None when the run is solved uncached (and the log says why)."""
        if not isinstance(ctx.prompt, str):
            logger.info("a pydantic-ai run without a text prompt is solved uncached")
            return None
        if ctx.messages and not self.cache_followups:
            note_followup_bypass("pydantic-ai", ctx.prompt, params)
            return None
        if state.toolset is None:
            logger.warning("the run's toolset was not wrapped by MuscleMem; it is solved uncached")
            return None
        return ctx.prompt

    async def _register(self, ctx: RunContext[Any], state: RunState) -> dict[str, ToolsetTool[Any]]:
        """The run's tools by name, each function tool registered with the engine (so it can replay)."""
        assert state.toolset is not None
        tools = await state.toolset.wrapped.get_tools(ctx)
        functions = {name: tool for name, tool in tools.items() if tool.tool_def.kind == "function"}
        unknown_checks(self.checks, set(functions))
        for name, tool in functions.items():
            self._origin._instrumented(name, tool)
        return tools

    def _instrumented(self, name: str, tool: ToolsetTool[Any]) -> Callable[..., Any]:
        """The engine-instrumented shim of a tool, registered anew when the tool's version changed."""
        version = self._version(tool)
        known = self._shims.get(name)
        if known is not None and known[0] == version:
            return known[1]
        pre, post = checks_for(self.checks, name)
        instrumented = self.engine.register(
            shim(name),
            name=name,
            version=version,
            pre_check=turn_checked(pre, _turn),
            post_check=post,
            output_view=jsonable,
        )
        self._shims[name] = (version, instrumented)
        return instrumented

    def _version(self, tool: ToolsetTool[Any]) -> str:
        """The tool's version: of its Python function when it has one, else of its definition."""
        function = _function_of(tool)
        if function is None:
            tool_def = tool.tool_def
            return schema_version(tool_def.name, tool_def.description, tool_def.parameters_json_schema)
        version = self._versions.get(function)
        if version is None:
            version = self._versions[function] = source_version(function)
        return version

    def __repr__(self) -> str:
        return f"MuscleMem({self.engine!r}, cache_followups={self.cache_followups!r})"


async def _turn() -> str:
    """What the model of the run in progress would read at a turn taken now (its fingerprint)."""
    state = RUN.get()
    return await state.context() if state is not None else ""


def _allowed(ctx: RunContext[Any]) -> tuple[int | None, int | None]:
    """How many more model turns and tool calls the run's usage limits allow (None: no limit)."""
    limits, usage = ctx.usage_limits, ctx.usage
    if limits is None:
        return None, None
    return _left(limits.request_limit, usage.requests), _left(limits.tool_calls_limit, usage.tool_calls)


def _left(limit: int | None, used: int) -> int | None:
    return None if limit is None else max(limit - used, 0)


def _given(option: Any, ctx: RunContext[Any]) -> Any:
    """A ``params=``/``tags=`` option for this run: the value, or what the callable says of the run."""
    return option(ctx) if callable(option) else option


def _shown(prompt: str, params: Any) -> str:
    """The prompt as the log shows it: the values of secret params replaced by their names."""
    return redact(prompt, secret_values(params)) if isinstance(params, Mapping) else prompt


def _function_of(tool: ToolsetTool[Any]) -> Callable[..., Any] | None:
    """The Python function behind a function toolset's tool, through combined toolsets (None if none)."""
    while True:
        call = getattr(tool, "call_func", None)
        if call is not None:
            function = getattr(getattr(call, "__self__", None), "function", None)
            return function if callable(function) else None
        inner = getattr(tool, "source_tool", None)
        if not isinstance(inner, ToolsetTool):
            return None
        tool = inner
