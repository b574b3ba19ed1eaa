"""One pydantic-ai run through the engine: its wrapper toolset, its replayed calls, its scripted turns.

The engine records and replays a shim per tool (:func:`shim`). In the run, the wrapper toolset calls
the instrumented shim with the call's JSON arguments and the call itself in a context variable, so
the shim makes the framework's own call. In a replay (no call in progress) the shim runs the
recorded call through the run's :class:`RunState`. The replayed calls then become scripted model
turns, answered with the outputs the replay got, so the framework builds the run's history itself.
"""

from __future__ import annotations

import inspect
import logging
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import AsyncExitStack
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from muscle_mem import MuscleMemError, StepView, current_run
from muscle_mem.integrations._common import fresh_call_id, missing_extra
from muscle_mem.integrations._turns import replaying_a_turn, turns_of

try:
    from pydantic_ai import RunContext
    from pydantic_ai.capabilities import WrapRunHandler
    from pydantic_ai.messages import (
        ModelMessage,
        ModelResponse,
        ModelResponsePart,
        RetryPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.run import AgentRunResult
    from pydantic_ai.tools import DeferredToolRequests
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset
    from pydantic_core import to_jsonable_python

    from muscle_mem.integrations._pydantic_ai_context import turn_context
except ImportError as exc:  # pragma: no cover - pydantic_ai.py imports the framework first
    raise missing_extra("pydantic-ai", "pydantic-ai") from exc

logger = logging.getLogger(__name__)

SCRIPTED_MODEL = "muscle-mem"
"""The ``model_name`` of the turns a replay scripts (a hit's history says no model answered them)."""


@dataclass(frozen=True, slots=True)
class LiveCall:
    """A tool call the framework is making: what the shim hands to the wrapped toolset."""

    name: str
    args: dict[str, Any]
    ctx: RunContext[Any]
    tool: ToolsetTool[Any]
    toolset: AbstractToolset[Any]


LIVE: ContextVar[LiveCall | None] = ContextVar("muscle_mem_pydantic_ai_call", default=None)
"""The framework's tool call in progress in this context (set by the wrapper toolset)."""


class Unfinished(Exception):
    """A run that ended without a final answer (deferred tool calls): not a solved task to store."""


class OverLimit(MuscleMemError):
    """A replayed step the run's usage limits would not let the agent make: the replay stops before it."""


@dataclass(eq=False)
class RunState:
    """What one agent run shares between its hooks: the toolset, the replay, the scripted turns."""

    toolset: CachedToolset | None = None
    ctx: RunContext[Any] | None = None
    handler: WrapRunHandler | None = None
    tools: dict[str, ToolsetTool[Any]] = field(default_factory=dict)
    script: deque[list[ModelResponsePart]] = field(default_factory=deque)
    """The model turns to answer with, in order, before the model is asked."""
    outputs: dict[str, Any] = field(default_factory=dict)
    """Per scripted call id, the output the replay got (the wrapper toolset answers with it)."""
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    entered: bool = False
    answer_scripted: bool = False
    answer_context: str | None = None
    """What the model read at the turn that gave the scripted answer (its fingerprint)."""
    last_context: str | None = None
    """What the model read at its latest turn in this run (its fingerprint)."""
    deps: Any = None
    """The run's graph dependencies (how pydantic-ai resolves its instructions), if found."""
    allowed: tuple[int | None, int | None] = (None, None)
    """How many model turns and how many tool calls a replay may make, within the run's usage limits
    (None: no limit)."""
    replayed: tuple[int, int] = (0, 0)
    """The model turns and the tool calls the replay made."""
    result: AgentRunResult[Any] | None = None
    """The framework's result of a run the engine's agent made."""
    calls_at_request: int = 0
    """How many calls the engine's run had made when the model's latest request began."""
    answer_merged: int = 0
    """How many parts of the scripted answer were put in the last scripted turn of calls (0: none)."""

    async def context(self) -> str:
        """The fingerprint of what the model would read at a turn taken now (instructions, tools)."""
        assert self.toolset is not None and self.ctx is not None
        return await turn_context(self.ctx, self.toolset, self.deps)

    async def replay(self, name: str, kwargs: dict[str, Any]) -> Any:
        """Run one recorded call for the engine's replay, as the framework would (arguments validated).

        Each replayed step is a tool call, and the first of each recorded model turn a model turn, as
        its scripted turn counts: a step past what the run's usage limits allow is not made, and the
        framework raises as alone.
        """
        assert self.toolset is not None and self.ctx is not None
        tool = self.tools.get(name)
        if tool is None:
            raise LookupError(f"tool {name!r} is not offered to this run")
        turns, calls = self.replayed
        turns += replaying_a_turn()
        calls += 1
        for made, allowed, what in zip(
            (turns, calls), self.allowed, ("model turn(s)", "tool call(s)"), strict=True
        ):
            if allowed is not None and made > allowed:
                raise OverLimit(f"the run's usage limits allow {allowed} {what}")
        self.replayed = (turns, calls)
        inner, ctx = self.toolset.wrapped, self.ctx
        if not self.entered:  # as the framework does before the run's first step
            await self.stack.enter_async_context(inner)
            self.entered = True
        args = tool.args_validator.validate_python(kwargs, context=ctx.validation_context)
        call_ctx = replace(
            ctx, tool_name=name, tool_call_id=fresh_call_id(), retry=0, max_retries=tool.max_retries
        )
        if tool.args_validator_func is not None:
            checked = tool.args_validator_func(call_ctx, **args)
            if inspect.isawaitable(checked):
                await checked
        return await inner.call_tool(name, args, call_ctx, tool)

    async def leave(self) -> None:
        """Exit the toolset the replay entered, if it did."""
        self.entered = False
        await self.stack.aclose()

    def script_steps(self, steps: Sequence[StepView]) -> None:
        """Script one model turn per recorded turn of the replayed steps, answered with the outputs the replay got."""
        for turn in turns_of(steps):
            parts: list[ModelResponsePart] = []
            for step in turn:
                call_id = fresh_call_id()
                self.outputs[call_id] = step.output
                parts.append(ToolCallPart(step.tool, dict(step.kwargs), tool_call_id=call_id))
            self.script.append(parts)

    def script_answer(self, answer: Any) -> None:
        """Script the recorded last turn (left to the model if the stored answer is not one)."""
        parts = answer_parts(answer, set(self.tools))
        if parts is None:
            logger.warning("the recorded answer is not a model turn; the model ends this run")
            return
        if answer_with_calls(answer) and self.script:
            self.script[-1].extend(parts)  # the model gave the answer with the calls of its last turn
            self.answer_merged = len(parts)
        else:
            self.script.append(parts)
        self.answer_scripted = True
        self.answer_context = answer_context(answer)

    def next_turn(self, context: str) -> ModelResponse | None:
        """The next scripted model turn, or None when the model is to be asked.

        ``context`` is what the model reads at this turn: the scripted answer is given only if it is
        what the recorded answer's turn read (else the model answers, from the replayed history).
        """
        if len(self.script) == 1 and self.answer_scripted and context != self.answer_context:
            if self.answer_merged:
                del self.script[0][-self.answer_merged :]  # the calls stay: the replay made them
                self.answer_merged = 0
            else:
                self.script.clear()
            self.answer_scripted = False
            logger.warning("the model reads another context than at the recorded answer: the model answers")
        if self.script:
            return ModelResponse(parts=self.script.popleft(), model_name=SCRIPTED_MODEL)
        self.last_context = context
        if self.answer_scripted:
            self.answer_scripted = False
            logger.warning(
                "the recorded answer did not end this run (its output type refused it?): the model does"
            )
        return None

    async def solve(self) -> Any:
        """The engine's agent: run the framework (after the replayed steps) and return its last turn."""
        assert self.handler is not None
        run = current_run()
        await self.leave()  # the framework enters the toolset itself
        self.script_steps([s for s in run.steps if s.replayed] if run is not None else [])
        self.result = await self.handler()
        report_usage(self.result)
        functions = {name for name, tool in self.tools.items() if tool.tool_def.kind == "function"}
        failed = failed_call(self.result.new_messages(), functions)
        if failed is not None and run is not None:
            run.refuse(failed)
        answer = answer_of(self.result, set(self.tools), self.last_context)
        if run is not None and len(run.steps) > self.calls_at_request and _last_turn_has_calls(self.result):
            answer.insert(len(answer) - (answer_context(answer) is not None), dict(WITH_CALLS))
        return answer


RUN: ContextVar[RunState | None] = ContextVar("muscle_mem_pydantic_ai_run", default=None)
"""The run whose engine call is in progress in this context (its replay calls tools through it)."""


async def solve(*_args: Any, **_kwargs: Any) -> Any:
    """The agent of an engine a MuscleMem capability drives: the pydantic-ai run in progress."""
    state = RUN.get()
    if state is None:
        raise RuntimeError("this engine's agent is a pydantic-ai agent: call agent.run(...)")
    return await state.solve()


def shim(name: str) -> Callable[..., Any]:
    """The callable the engine records for tool ``name``: the framework's call, or a replayed one."""

    async def call(**kwargs: Any) -> Any:
        live = LIVE.get()
        if live is not None and live.name == name:
            return await live.toolset.call_tool(name, live.args, live.ctx, live.tool)
        state = RUN.get()
        if state is None:
            raise RuntimeError(f"tool {name!r} of a pydantic-ai agent was called outside an agent run")
        return await state.replay(name, kwargs)

    return call


def report_usage(result: AgentRunResult[Any]) -> None:
    """Add what the run's model responses spent to the engine's run (the scripted turns spent nothing)."""
    run = current_run()
    if run is None:
        return
    for message in result.new_messages():
        if isinstance(message, ModelResponse) and message.model_name != SCRIPTED_MODEL:
            usage = message.usage
            run.add_usage(usage.input_tokens, usage.output_tokens, model=message.model_name or None)


def jsonable(value: Any) -> Any:
    """What the engine records of a value: JSON data (a model's fields, a date as text)."""
    return to_jsonable_python(value)


@dataclass
class CachedToolset(WrapperToolset[Any]):
    """The run's toolset, seen through the capability: function tool calls go through the engine."""

    instrumented: Callable[[str, ToolsetTool[Any]], Callable[..., Any]] = field(repr=False)
    """The engine-instrumented shim of a tool (registered on first sight)."""
    state: RunState = field(repr=False)

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        toolset = await super().for_run(ctx)
        assert isinstance(toolset, CachedToolset)
        self.state.toolset = toolset
        return toolset

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        scripted = self.state.outputs
        if ctx.tool_call_id is not None and ctx.tool_call_id in scripted:
            return scripted[ctx.tool_call_id]  # a replayed step: it ran in the replay
        if tool.tool_def.kind != "function":
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        instrumented = self.instrumented(name, tool)
        try:
            kwargs = jsonable(tool_args)
        except Exception:  # recorded as given: the engine says whether it can store them
            kwargs = tool_args
        token = LIVE.set(LiveCall(name, tool_args, ctx, tool, self.wrapped))
        try:
            return await instrumented(**kwargs)
        finally:
            LIVE.reset(token)


def failed_call(messages: Sequence[ModelMessage], functions: set[str]) -> str | None:
    """Why a run cannot be stored: a function tool call failed where the engine did not see it, or None.

    The model saw the failure (arguments the tool's validation refused, a retry it asked for) and a
    replay would not: as for a tool that raised, the run is stored only if the model made the same
    call again at once (a retry).
    """
    asked: dict[str, ToolCallPart] = {}
    failed: ToolCallPart | None = None
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart) and part.tool_name in functions:
                if failed is not None:
                    if part.tool_name != failed.tool_name or part.args_as_dict() != failed.args_as_dict():
                        return _failure(failed, f"called {part.tool_name!r}")
                    failed = None
                asked[part.tool_call_id] = part
            elif (
                isinstance(part, RetryPromptPart | ToolReturnPart)
                and part.tool_call_id in asked
                and failed is None
                and (isinstance(part, RetryPromptPart) or part.outcome != "success")
            ):
                failed = asked[part.tool_call_id]
    return None if failed is None else _failure(failed, "answered")


def _failure(failed: ToolCallPart, then: str) -> str:
    return (
        f"tool {failed.tool_name!r} failed and the model saw it, then {then} instead of calling it again: "
        "what it did rests on the failure, which a replay cannot see"
    )


def answer_of(
    result: AgentRunResult[Any], function_tools: set[str], context: str | None
) -> list[dict[str, Any]]:
    """The model's last turn as the engine stores it: its texts and its output tool calls, and what it read."""
    if isinstance(result.output, DeferredToolRequests):
        raise Unfinished("it ended waiting on deferred tool calls")
    parts: list[dict[str, Any]] = []
    for part in result.response.parts:
        if isinstance(part, TextPart):
            parts.append({"text": part.content})
        elif isinstance(part, ToolCallPart) and part.tool_name not in function_tools:
            parts.append({"tool": part.tool_name, "args": part.args_as_dict()})
    if not parts:
        raise Unfinished("its last model turn holds no text and no output tool call")
    return [*parts, {"context": context}] if context is not None else parts


WITH_CALLS = {"with_calls": True}
"""The item of a stored answer given in the same model response as the calls of the run's last turn."""


def _last_turn_has_calls(result: AgentRunResult[Any]) -> bool:
    return any(isinstance(p, ToolCallPart) for p in result.response.parts)


def answer_with_calls(answer: Any) -> bool:
    """Whether a stored answer was given in one model response with the calls of the last turn."""
    if answer_context(answer) is not None:
        answer = answer[:-1]
    return isinstance(answer, list) and bool(answer) and answer[-1] == WITH_CALLS


def answer_context(answer: Any) -> str | None:
    """What a stored answer's turn read (its fingerprint), if the answer says."""
    last = answer[-1] if isinstance(answer, list) and answer else None
    if isinstance(last, dict) and last.keys() == {"context"} and isinstance(last["context"], str):
        return last["context"]
    return None


def answer_parts(answer: Any, function_tools: set[str]) -> list[ModelResponsePart] | None:
    """The model turn a stored answer describes, or None if it is not one (the store was changed).

    A call of a function tool is not an answer: only the engine's replay, with its checks, runs those.
    """
    if answer_context(answer) is not None:
        answer = answer[:-1]
    if answer_with_calls(answer):
        answer = answer[:-1]
    if not isinstance(answer, list) or not answer:
        return None
    parts: list[ModelResponsePart] = []
    for item in answer:
        if isinstance(item, dict) and item.keys() == {"text"} and isinstance(item["text"], str):
            parts.append(TextPart(item["text"]))
        elif (
            isinstance(item, dict)
            and item.keys() == {"tool", "args"}
            and isinstance(item["tool"], str)
            and item["tool"] not in function_tools
            and isinstance(item["args"], dict)
        ):
            parts.append(ToolCallPart(item["tool"], dict(item["args"]), tool_call_id=fresh_call_id()))
        else:
            return None
    return parts
