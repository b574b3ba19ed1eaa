"""smolagents: a ``ToolCallingAgent`` or ``CodeAgent`` with muscle memory.

>>> agent = CachedAgent(engine, CodeAgent(tools=[lookup_user, send_reset], model=model))
>>> agent.run("reset the password of bob@example.com", params={"email": "bob@example.com"})

Each tool's ``forward`` is instrumented on the agent's own tool objects, so both agent kinds record
through the framework's usual path. A hit returns what ``agent.run`` returns (the answer, or a
``RunResult`` when full results are asked for) without calling the model, and leaves the replayed
steps in ``agent.memory``.

- ``CodeAgent`` runs each code block in a worker thread when its executor has a timeout (the
  default). The worker would not carry the run, so the wrapper runs the code with the run's context
  in that worker itself, keeping the agent's timeout.
- The system prompt the run gives the model (with the agent's ``instructions``), the tools it is
  offered, and the run's ``additional_args``, ``images`` and ``max_steps`` are part of the task, by
  their fingerprint in a ``context:`` tag.
- ``final_answer`` is not a step. Managed agents are not tools the engine can replay: an agent that
  has them runs uncached (logged). Remote executors (E2B, Docker...) call tools out of this process:
  nothing can be recorded there (logged).
- Streaming runs (``stream=True``) pass through uncached; so does ``reset=False`` on an agent with
  earlier steps (a follow-up), unless ``cache_followups=True``.
- A tool that raises stays an error: the engine does not record the call, and smolagents shows the
  model its usual error text.
- On a miss the agent's own token counts for the run (its monitor's) go into the engine's run, named
  by the model's ``model_id``; a hit's ``RunResult`` reports 0 tokens.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FuturesTimeoutError
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from muscle_mem import CodecError, Engine, Result, StepView, current_run, source_version
from muscle_mem.integrations._common import (
    Checks,
    checks_for,
    fresh_call_id,
    missing_extra,
    note_followup_bypass,
    tools_offered,
    unknown_checks,
    with_context,
)

try:
    from smolagents.agents import MultiStepAgent, RunResult
    from smolagents.local_python_executor import ExecutionTimeoutError, LocalPythonExecutor
    from smolagents.memory import ActionStep, TaskStep, ToolCall
    from smolagents.monitoring import Timing, TokenUsage
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise missing_extra("smolagents", "smolagents") from exc

__all__ = ["CachedAgent", "wrap_agent"]

logger = logging.getLogger(__name__)

_WRAPPED = "_muscle_mem_engine"
_FINAL_ANSWER = "final_answer"


@dataclass(slots=True)
class _Call:
    """One ``CachedAgent.run`` in progress: the front end and what ``agent.run`` is given and gives."""

    front: CachedAgent
    task: str
    run_kwargs: dict[str, Any]
    returned: Any = field(default=None)


_CALL: ContextVar[_Call | None] = ContextVar("muscle_mem_smolagents_call", default=None)


def wrap_agent(engine: Engine, agent: MultiStepAgent, *, checks: Checks | None = None) -> MultiStepAgent:
    """Instrument the agent's tools in place so that its runs inside engine calls are recorded.

    ``checks`` maps a tool name to a pre-check or a ``(pre_check, post_check)`` pair. Each tool keeps
    the version of its own ``forward``. Returns the agent.
    """
    unknown_checks(checks, set(agent.tools) - {_FINAL_ANSWER})
    for name, tool in agent.tools.items():
        if name == _FINAL_ANSWER or getattr(tool.forward, _WRAPPED, None) is engine:
            continue
        pre_check, post_check = checks_for(checks, name)
        forward = tool.forward
        shim = engine.register(
            forward, name=name, version=source_version(forward), pre_check=pre_check, post_check=post_check
        )
        setattr(shim, _WRAPPED, engine)
        tool.forward = shim
    _carry_run_into_code_threads(agent)
    return agent


def _carry_run_into_code_threads(agent: MultiStepAgent) -> None:
    """Make a CodeAgent's timed code execution run in the caller's context (so its tool calls record)."""
    executor = getattr(agent, "python_executor", None)
    if executor is None or isinstance(executor, _ContextCarryingExecutor):
        return
    if not isinstance(executor, LocalPythonExecutor):
        logger.warning(
            "%s runs its code in %s, out of this process: its tool calls cannot be recorded",
            type(agent).__name__,
            type(executor).__name__,
        )
        return
    if executor.timeout_seconds is not None:
        agent.python_executor = _ContextCarryingExecutor(executor)


class _ContextCarryingExecutor:
    """A ``LocalPythonExecutor`` whose timed runs carry the caller's context into the worker thread.

    smolagents submits each code block to a fresh thread without the caller's context variables;
    this runs the block there with a copy of them, under the executor's own timeout.
    """

    def __init__(self, inner: LocalPythonExecutor) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_timeout", inner.timeout_seconds)
        inner.timeout_seconds = None  # this wrapper keeps the timeout

    def __call__(self, code_action: str) -> Any:
        context = contextvars.copy_context()
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="muscle-mem-smolagents")
        try:
            future = pool.submit(context.run, self._inner, code_action)
            try:
                return future.result(timeout=self._timeout)
            except FuturesTimeoutError:
                raise ExecutionTimeoutError(
                    f"Code execution exceeded the maximum execution time of {self._timeout} seconds"
                ) from None
        finally:
            pool.shutdown(wait=False)

    @property
    def timeout_seconds(self) -> int | None:
        """The agent's timeout for one code block, kept by this wrapper."""
        return self._timeout  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "timeout_seconds":
            object.__setattr__(self, "_timeout", value)
        else:
            setattr(self._inner, name, value)


class CachedAgent:
    """A smolagents agent whose ``run`` replays known tasks without the model.

    >>> cached = CachedAgent(engine, ToolCallingAgent(tools=[...], model=model))
    >>> cached.run("reset bob@example.com", params={"email": "bob@example.com"})
    >>> cached.last_result.hit
    """

    def __init__(
        self,
        engine: Engine,
        agent: MultiStepAgent,
        *,
        checks: Checks | None = None,
        cache_followups: bool = False,
    ) -> None:
        self.engine = engine
        self.agent = wrap_agent(engine, agent, checks=checks)
        self.cache_followups = cache_followups
        self.last_result: Result | None = None
        """The engine's result of the last cached run (None before one, and for a run passed through)."""
        engine.set_agent(_solve)

    def run(
        self,
        task: str,
        *,
        params: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        stream: bool = False,
        reset: bool = True,
        return_full_result: bool | None = None,
        **run_kwargs: Any,
    ) -> Any:
        """Run the task: replayed when it is known and safe, else by the agent (and recorded)."""
        passthrough = self._uncached_because(task, params, stream, reset)
        if passthrough is None:
            tags, passthrough = self._context_tags(tags, run_kwargs)
        if passthrough is not None:
            self.last_result = None
            logger.info("a smolagents run passes through uncached: %s", passthrough)
            return self.agent.run(
                task, stream=stream, reset=reset, return_full_result=return_full_result, **run_kwargs
            )
        full = self.agent.return_full_result if return_full_result is None else return_full_result
        call = _Call(self, task, dict(run_kwargs, reset=reset, return_full_result=full))
        started = time.time()
        token = _CALL.set(call)
        try:
            result = self.engine(task, params=params, tags=tags)
        finally:
            _CALL.reset(token)
        self.last_result = result
        if not result.hit:
            return call.returned
        self._remember(task, result.calls, result.output, started)
        if not full:
            return result.output
        return RunResult(
            output=result.output,
            state="success",
            steps=self.agent.memory.get_full_steps(),
            token_usage=TokenUsage(input_tokens=0, output_tokens=0),
            timing=Timing(start_time=started, end_time=time.time()),
        )

    def _uncached_because(
        self, task: str, params: Mapping[str, Any] | None, stream: bool, reset: bool
    ) -> str | None:
        if stream:
            return "streaming runs are not cached"
        if self.agent.managed_agents:
            return "the agent has managed agents, whose work a replay could not redo"
        extra = _user_callbacks(self.agent)
        if extra:
            return f"the agent has {extra}, which a replay would not run (they may change what the model reads, or refuse its answer)"
        if not reset and self.agent.memory.steps and not self.cache_followups:
            note_followup_bypass("smolagents", task, params)
            return "a follow-up (reset=False)"
        return None

    def _context_tags(
        self, tags: Sequence[str] | None, run_kwargs: Mapping[str, Any]
    ) -> tuple[Sequence[str] | None, str | None]:
        """The run's tags, with one naming what the agent reads besides the task; or why it runs uncached.

        That is the system prompt the run will give the model (the agent's ``instructions`` and tools
        in its template), the tools it is offered (for a template that does not list them), the
        ``additional_args`` and ``images`` the run is given, and its step limit (``max_steps``: a
        replay of a run made under another limit could make calls the agent alone would not reach).
        """
        context = {
            "system_prompt": self.agent.system_prompt,
            "tools": tools_offered(
                (tool.name, tool.description, {"inputs": tool.inputs, "output_type": tool.output_type})
                for tool in self.agent.tools.values()
            ),
            "additional_args": run_kwargs.get("additional_args"),
            "images": run_kwargs.get("images"),
            "max_steps": run_kwargs.get("max_steps") or self.agent.max_steps,
            "planning_interval": self.agent.planning_interval,
            "prompt_templates": self.agent.prompt_templates if self.agent.planning_interval else None,
        }
        try:
            return with_context(tags, context), None
        except CodecError as exc:
            return tags, f"what the agent reads besides the task cannot identify it: {exc}"

    def _remember(self, task: str, calls: Sequence[StepView], output: Any, started: float) -> None:
        """Leave the replayed run in the agent's memory, as a run of the agent would have."""
        self.agent.task = task
        self.agent.memory.reset()
        self.agent.memory.steps.append(TaskStep(task=task))
        steps = _action_steps(calls, started)
        self.agent.memory.steps.extend(steps)
        self.agent.memory.steps.append(_final_step(len(steps) + 1, output, started))

    def _resume(self, call: _Call, replayed: list[StepView]) -> Any:
        """Run the agent after a replay that stopped: the replayed steps are its history."""
        self.agent.memory.reset()
        self.agent.monitor.reset()
        self.agent.memory.steps.append(TaskStep(task=call.task))
        self.agent.memory.steps.extend(_action_steps(replayed, time.time()))
        go_on = f"{call.task}\n\n(The tool calls above were already made for this task: continue from there.)"
        return self.agent.run(go_on, **dict(call.run_kwargs, reset=False))

    def __repr__(self) -> str:
        return f"CachedAgent({type(self.agent).__name__}, tools={sorted(self.agent.tools)})"


def _action_steps(calls: Sequence[StepView], started: float) -> list[ActionStep]:
    """One memory step per tool call, with a fresh call id and the output as the observation."""
    now = time.time()
    return [
        ActionStep(
            step_number=number,
            timing=Timing(start_time=started, end_time=now),
            tool_calls=[ToolCall(name=c.tool, arguments=dict(c.kwargs) or list(c.args), id=fresh_call_id())],
            observations=str(c.output),
        )
        for number, c in enumerate(calls, 1)
    ]


def _final_step(number: int, output: Any, started: float) -> ActionStep:
    """The memory step of the answer, as a run leaves it: a ``final_answer`` call that ends the run."""
    return ActionStep(
        step_number=number,
        timing=Timing(start_time=started, end_time=time.time()),
        tool_calls=[ToolCall(name="final_answer", arguments={"answer": output}, id=fresh_call_id())],
        observations=str(output),
        is_final_answer=True,
    )


def _solve(task: str) -> Any:
    """The engine's agent: the front end's smolagents agent runs the task (resuming after a replay)."""
    call = _CALL.get()
    if call is None:
        raise RuntimeError("the engine of a smolagents CachedAgent was called directly: use CachedAgent.run")
    run = current_run()
    replayed = [s for s in run.steps if s.replayed] if run is not None else []
    front = call.front
    try:
        call.returned = (
            front._resume(call, replayed) if replayed else front.agent.run(task, **call.run_kwargs)
        )
    finally:
        _report_usage(front.agent)
    return call.returned.output if isinstance(call.returned, RunResult) else call.returned


def _report_usage(agent: MultiStepAgent) -> None:
    """Add what the agent's model spent on its run (its monitor's token counts) to the engine's run.

    Each memory step that holds a token count was one model request.
    """
    run = current_run()
    if run is None:
        return
    counts = agent.monitor.get_total_token_counts()
    requests = sum(getattr(step, "token_usage", None) is not None for step in agent.memory.steps)
    model = getattr(agent.model, "model_id", None)
    run.add_usage(
        counts.input_tokens,
        counts.output_tokens,
        requests=requests,
        model=model if isinstance(model, str) else None,
    )


def _user_callbacks(agent: MultiStepAgent) -> str:
    """The agent's own step callbacks and final answer checks, named ('' if none).

    A step callback may write into the memory the model reads next; a final answer check may refuse
    an answer: a replay runs neither. smolagents' own monitor callback is not the user's.
    """
    found: list[str] = []
    if agent.final_answer_checks:
        found.append("final_answer_checks")
    registry = getattr(agent.step_callbacks, "_callbacks", None)
    monitor = agent.monitor.update_metrics
    if isinstance(registry, dict) and any(
        callback != monitor for callbacks in registry.values() for callback in callbacks
    ):
        found.append("step_callbacks")
    return " and ".join(found)
