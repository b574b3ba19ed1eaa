"""``CachedRunner``: ``Runner.run`` through a muscle-mem engine, and the streamed result of a hit."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine, Generator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import Any, Literal

from agents import (
    Agent,
    AgentUpdatedStreamEvent,
    RunItem,
    RunItemStreamEvent,
    Runner,
    RunResult,
    RunResultStreaming,
    RunState,
    StreamEvent,
    TResponseInputItem,
)
from agents.run_config import DEFAULT_MAX_TURNS

from muscle_mem import Engine, Result, StepView
from muscle_mem.integrations._common import Checks, note_followup_bypass, with_context
from muscle_mem.integrations._turns import turns_of
from muscle_mem.integrations.openai_agents._context import agents_context, reachable, turn_context
from muscle_mem.integrations.openai_agents._hooks import TurnHooks
from muscle_mem.integrations.openai_agents._items import answer, as_users, history, hit_result, unrecordable
from muscle_mem.integrations.openai_agents._tools import CALL, AgentGraph, CallState
from muscle_mem.integrations.openai_agents._usage import report_usage

logger = logging.getLogger(__name__)

_EVENTS: dict[
    str,
    Literal["tool_called", "tool_output", "message_output_created", "handoff_requested", "handoff_occured"],
] = {
    "tool_call_item": "tool_called",
    "tool_call_output_item": "tool_output",
    "message_output_item": "message_output_created",
    "handoff_call_item": "handoff_requested",
    "handoff_output_item": "handoff_occured",  # the SDK's spelling
}
_HISTORY_KWARGS = ("session", "previous_response_id", "conversation_id")


class CachedRunner:
    """Runs an Agents SDK agent through an engine: a task seen before is replayed without the model.

    >>> runner = CachedRunner(engine, agent)
    >>> result = await runner.run(f"reset the password of {email}", params={"email": email})
    >>> result.final_output, runner.last_result.hit

    A hit returns a real ``RunResult`` (``final_output``, ``new_items``, ``to_input_list()``);
    a miss returns the SDK's own. ``runner_kwargs`` go to ``Runner.run`` unchanged.
    """

    def __init__(
        self,
        engine: Engine,
        agent: Agent[Any],
        *,
        checks: Checks | None = None,
        cache_followups: bool = False,
    ) -> None:
        self.engine = engine
        self._graph = AgentGraph(engine, agent, checks)
        self.agent = self._graph.start
        """The wrapped agent the runner runs (its function tools are recorded)."""
        self.cache_followups = cache_followups
        self.last_result: Result | None = None
        """The engine's Result of the last call; None when it ran uncached (a follow-up, a resumed
        run) or its run could not be stored (a hosted or MCP tool, an approval, a tripped guardrail)."""

    async def run(
        self,
        input: str | list[TResponseInputItem] | RunState[Any],
        *,
        params: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        context: Any = None,
        **runner_kwargs: Any,
    ) -> RunResult:
        """``Runner.run`` with muscle memory: replayed if it can be, else run and recorded."""
        task, tags = await self._keyed(input, params, tags, context, runner_kwargs)
        if task is None or isinstance(input, RunState):
            self.last_result = None
            with _calling(CallState(context, None)):
                uncached = await Runner.run(self.agent, input, context=context, **runner_kwargs)
            as_users(self._graph, uncached)
            return uncached
        state = self._state(context, task, params, tags, runner_kwargs)
        with _calling(state):  # the tools the run calls find their session here
            hit, resumed, kwargs = await self._begin(state, input, runner_kwargs)
            if hit is not None:
                return hit
            if state.session is None:  # a hit the agent alone would not end as recorded
                result = await Runner.run(self.agent, resumed, context=context, **kwargs)
                as_users(self._graph, result)
                return result
            async with _abandoned_if_raised(state):
                result = await Runner.run(self.agent, resumed, context=context, **kwargs)
        self.last_result = await _finish(self._graph, state, result)
        as_users(self._graph, result)
        return result

    def run_sync(
        self,
        input: str | list[TResponseInputItem] | RunState[Any],
        *,
        params: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        context: Any = None,
        **runner_kwargs: Any,
    ) -> RunResult:
        """:meth:`run` from synchronous code (not inside a running event loop)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.run(input, params=params, tags=tags, context=context, **runner_kwargs))
        raise RuntimeError("run_sync() cannot be called inside an event loop: await runner.run(...)")

    def run_streamed(
        self,
        input: str | list[TResponseInputItem] | RunState[Any],
        *,
        params: Mapping[str, Any] | None = None,
        tags: Sequence[str] | None = None,
        context: Any = None,
        **runner_kwargs: Any,
    ) -> StreamedRun:
        """``Runner.run_streamed`` with muscle memory: stream its events as the SDK's, or await it.

        Awaited, it gives the SDK's ``RunResultStreaming`` on a miss, recorded when its run ends
        (``last_result`` is set once ``stream_events()`` is done), and a
        :class:`CachedStreamingResult` on a hit. Its ``stream_events()`` does that first, so a
        program written for ``Runner.run_streamed`` streams it unchanged.
        """
        return StreamedRun(self._streamed(input, params, tags, context, runner_kwargs))

    async def _streamed(
        self,
        input: str | list[TResponseInputItem] | RunState[Any],
        params: Mapping[str, Any] | None,
        tags: Sequence[str] | None,
        context: Any,
        runner_kwargs: dict[str, Any],
    ) -> RunResultStreaming | CachedStreamingResult:
        """The streamed run: the SDK's for a miss (recorded when it ends), a cached one for a hit."""
        task, tags = await self._keyed(input, params, tags, context, runner_kwargs)
        if task is None or isinstance(input, RunState):
            self.last_result = None
            with _calling(CallState(context, None)):
                uncached = Runner.run_streamed(self.agent, input, context=context, **runner_kwargs)
            self._record_when_done(None, uncached)
            return uncached
        state = self._state(context, task, params, tags, runner_kwargs)
        with _calling(state):  # the stream's run task starts in this context, and keeps it
            hit, resumed, kwargs = await self._begin(state, input, runner_kwargs)
            if hit is not None:
                return CachedStreamingResult(hit, self._graph.original(self.agent))
            if state.session is None:  # a hit the agent alone would not end as recorded
                streamed = Runner.run_streamed(self.agent, resumed, context=context, **kwargs)
                self._record_when_done(None, streamed)
                return streamed
            async with _abandoned_if_raised(state):
                streamed = Runner.run_streamed(self.agent, resumed, context=context, **kwargs)
        self._record_when_done(state, streamed)
        return streamed

    def _state(
        self,
        context: Any,
        task: str,
        params: Mapping[str, Any] | None,
        tags: Sequence[str] | None,
        runner_kwargs: Mapping[str, Any],
    ) -> CallState:
        """The call's state: its engine session, and the turns its replay may stand for."""
        session = self.engine.session(task, params=params, tags=tags)
        return CallState(context, session, max_turns=runner_kwargs.get("max_turns", DEFAULT_MAX_TURNS))

    async def _begin(
        self, state: CallState, given: str | list[TResponseInputItem], runner_kwargs: Mapping[str, Any]
    ) -> tuple[RunResult | None, str | list[TResponseInputItem], dict[str, Any]]:
        """Replay what is safe: the RunResult of a hit, or the input and runner kwargs the agent resumes with.

        Each recorded model turn of the replayed steps stands for one: the resumed run has the turns
        ``max_turns`` leaves.
        A replay that ran a tool an agent stops at (``tool_use_behavior``) ends there, as the run would.
        A full hit whose answer turn would read another context than the recorded one (or past
        ``max_turns``) is resumed by the agent, uncached (``state.session`` is then None). On a hit,
        the result is added to the agents Session (when one is given) as a run would add it.
        """
        session = state.session
        assert session is not None
        hit = await session.begin()
        steps = hit.calls if hit is not None else session.steps
        kwargs = dict(runner_kwargs)
        kwargs["hooks"] = TurnHooks(runner_kwargs.get("hooks"), session)  # the model's turns, recorded
        if steps:
            kwargs["max_turns"] = (state.max_turns or DEFAULT_MAX_TURNS) - len(turns_of(steps))
        stop = self._stopped_at(steps)
        if hit is None and stop is None:
            return None, history(self._graph, given, steps, state.replay_ids), kwargs
        if stop is not None:
            owner, output = stop
            stored: Any = {"final_output": output, "last_agent": owner.name, "typed": False}
        else:
            assert hit is not None
            stored = hit.output
            recorded = stored.get("context") if isinstance(stored, Mapping) else None
            if kwargs["max_turns"] < 1 or recorded != await turn_context(self.agent, state.context):
                logger.info(
                    "the replayed run would not end as recorded (its context, or max_turns): the agent resumes"
                )
                self.last_result, state.session = None, None
                return None, history(self._graph, given, steps, state.replay_ids), kwargs
        result = hit_result(self._graph, given, stored, steps, state.replay_ids, state.context)
        if hit is None:
            session.end(answer(result))
            hit = await session.wait()
        self.last_result = hit
        memory = runner_kwargs.get("session")
        if memory is not None:
            await memory.add_items(result.to_input_list())
        return result, given, kwargs

    def _stopped_at(self, steps: Sequence[StepView]) -> tuple[Agent[Any], Any] | None:
        """The agent and the output a run ends with at the replayed steps (``tool_use_behavior``), if any."""
        for step in steps:
            owner = self._graph.owners.get(step.tool, self.agent)
            behavior = owner.tool_use_behavior
            if behavior == "stop_on_first_tool" or (
                isinstance(behavior, Mapping) and step.tool in behavior.get("stop_at_tool_names", ())
            ):
                text = owner.output_type in (None, str) and not isinstance(step.output, str)
                return owner, str(step.output) if text else step.output  # as the SDK's final output
        return None

    def _record_when_done(self, state: CallState | None, streamed: RunResultStreaming) -> None:
        """Store the streamed run (``state``: uncached when None) once it ends, with the user's agents in it.

        Both are done before its run task (which ``stream_events`` awaits) ends.
        """
        run = streamed.run_loop_task
        if run is None:  # pragma: no cover - the SDK always starts one
            raise RuntimeError("the streamed run has no run task to record")

        async def recorded() -> Any:
            try:
                value = await run
            except BaseException:
                if state is not None:
                    await _abandon(state, "the streamed run failed")
                raise
            if state is not None:
                self.last_result = await _finish(self._graph, state, streamed)
            as_users(self._graph, streamed)
            return value

        def cancel_run(task: asyncio.Task[Any]) -> None:
            if task.cancelled() and not run.done():
                run.cancel()

        wrapper = asyncio.create_task(recorded())
        wrapper.add_done_callback(cancel_run)
        streamed.run_loop_task = wrapper

    async def _keyed(
        self,
        given: Any,
        params: Mapping[str, Any] | None,
        tags: Sequence[str] | None,
        context: Any,
        runner_kwargs: Mapping[str, Any],
    ) -> tuple[str | None, Sequence[str] | None]:
        """The task text and the tags to key the call on (with one naming what its agents read).

        The text is None (logged) when the call runs uncached.
        """
        task = self._task(given, params, runner_kwargs)
        if task is None:
            return None, tags
        unseen = _unseen_by_a_replay(self.agent, runner_kwargs.get("run_config"))
        if unseen:
            logger.info(
                "the run has %s, which a replay would not apply: solved by the agent, uncached",
                ", ".join(unseen),
            )
            return None, tags
        try:
            read = await agents_context(self.agent, context)
            return task, with_context(tags, {**read, "run_tool_choice": _run_tool_choice(runner_kwargs)})
        except Exception as exc:  # an instructions function that raises, a prompt that cannot be encoded
            logger.info("the agents' instructions cannot identify the task: solved uncached (%r)", exc)
            return None, tags

    def _task(
        self, given: Any, params: Mapping[str, Any] | None, runner_kwargs: Mapping[str, Any]
    ) -> str | None:
        """The task text to key the call on, or None (logged) when the call runs uncached."""
        if isinstance(given, RunState):
            logger.info("a run resumed from a RunState is not a new task: solved by the agent, uncached")
            return None
        text, alone = _user_text(given)
        if text is None:
            logger.info("the input has no user text to key the task on: solved by the agent, uncached")
            return None
        follow_up = not alone or any(runner_kwargs.get(name) for name in _HISTORY_KWARGS)
        if follow_up and not self.cache_followups:
            note_followup_bypass("OpenAI Agents", text, params)
            return None
        return text


class StreamedRun:
    """What :meth:`CachedRunner.run_streamed` returns: awaited, the streamed result; or streamed at once.

    Whether the task hits is known only once its key is made (instructions resolved), so the run
    starts at the first ``await`` or ``stream_events()``; the result's other attributes are read
    through once it has started.
    """

    def __init__(self, started: Coroutine[Any, Any, RunResultStreaming | CachedStreamingResult]) -> None:
        self._started = started
        self._run: asyncio.Future[RunResultStreaming | CachedStreamingResult] | None = None

    def result(self) -> asyncio.Future[RunResultStreaming | CachedStreamingResult]:
        """The streamed result, started on first use (one run however often it is awaited)."""
        if self._run is None:
            self._run = asyncio.ensure_future(self._started)
        return self._run

    def __await__(self) -> Generator[Any, None, RunResultStreaming | CachedStreamingResult]:
        return self.result().__await__()

    async def stream_events(self) -> AsyncIterator[StreamEvent]:
        """The run's events, as ``RunResultStreaming.stream_events`` gives them."""
        streamed = await self.result()
        async for event in streamed.stream_events():
            yield event

    def __del__(self) -> None:
        if self._run is None:
            self._started.close()  # never awaited nor streamed: nothing ran

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or self._run is None or not self._run.done():
            raise AttributeError(
                f"{name!r}: the streamed run has not started yet; await it or stream its events first"
            )
        return getattr(self._run.result(), name)


class CachedStreamingResult:
    """The streamed result of a hit: complete at once, its events the replayed items in order."""

    is_complete = True

    def __init__(self, result: RunResult, start: Agent[Any]) -> None:
        self.run_result = result
        """The hit's ``RunResult``."""
        self.input = result.input
        self.new_items: list[RunItem] = result.new_items
        self.final_output: Any = result.final_output
        self.raw_responses = result.raw_responses
        self.context_wrapper = result.context_wrapper
        self.current_agent = result.last_agent
        self._start = start

    @property
    def last_agent(self) -> Agent[Any]:
        return self.run_result.last_agent

    def to_input_list(
        self, *, mode: Literal["preserve_all", "normalized"] = "preserve_all"
    ) -> list[TResponseInputItem]:
        """The input, then the replayed calls and the answer, as input items for a next turn."""
        return self.run_result.to_input_list(mode=mode)

    async def stream_events(self) -> AsyncIterator[StreamEvent]:
        """The run's events as the SDK streams them: an agent update as each agent starts, then its items."""
        current = self._start
        yield AgentUpdatedStreamEvent(new_agent=current)
        for item in self.new_items:
            if item.agent is not current:
                current = item.agent
                yield AgentUpdatedStreamEvent(new_agent=current)
            yield RunItemStreamEvent(name=_EVENTS[item.type], item=item)

    def cancel(self, mode: Literal["immediate", "after_turn"] = "immediate") -> None:
        """Nothing runs: there is nothing to cancel."""


@contextmanager
def _calling(state: CallState) -> Iterator[None]:
    token = CALL.set(state)
    try:
        yield
    finally:
        CALL.reset(token)


async def _finish(
    graph: AgentGraph, state: CallState, result: RunResult | RunResultStreaming
) -> Result | None:
    """End the session with the run's answer; a run a replay could not repeat is not stored (None)."""
    session = state.session
    assert session is not None
    report_usage(session, result, graph.start)
    why = unrecordable(graph, result, sum(not step.replayed for step in session.steps))
    if why is not None:
        logger.warning("the agent's run is not stored: %s", why)
        await _abandon(state, why)
        return None
    session.end(answer(result) | {"context": await turn_context(graph.start, state.context)})
    return await session.wait()


@asynccontextmanager
async def _abandoned_if_raised(state: CallState) -> AsyncIterator[None]:
    """The session abandoned (nothing stored) if the agent raises."""
    try:
        yield
    except BaseException:
        await _abandon(state, "the agent raised")
        raise


async def _abandon(state: CallState, why: str) -> None:
    """Nothing is stored for the call (nothing to do if its engine call ended: cancelled with the loop)."""
    session = state.session
    assert session is not None
    try:
        session.abandon(why)
    except RuntimeError:
        return
    await session.wait()


def _user_text(given: str | list[TResponseInputItem]) -> tuple[str | None, bool]:
    """The text of the last user message, and whether the input is that message alone."""
    if isinstance(given, str):
        return given, True
    for item in reversed(given):
        if isinstance(item, Mapping) and item.get("role") == "user":
            return _text(item.get("content")), len(given) == 1
    return None, False


def _text(content: Any) -> str | None:
    """A message's text; None if it holds more than text (an image, a file)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = [
        part.get("text") if isinstance(part, Mapping) and part.get("type") == "input_text" else None
        for part in content
    ]
    if not texts or not all(isinstance(text, str) for text in texts):
        return None
    return "\n".join(str(text) for text in texts)


def _unseen_by_a_replay(start: Agent[Any], run_config: Any) -> list[str]:
    """What of the run a replay would not apply: a run-wide model, a model input filter, guardrails.

    ``RunConfig.model`` answers instead of every agent's model, ``call_model_input_filter`` rewrites
    what the model reads at each turn, and input or output guardrails (the run's or an agent's) may
    stop the run: a hit runs none of them.
    """
    unseen: list[str] = []
    if run_config is not None:
        for name in ("model", "call_model_input_filter", "input_guardrails", "output_guardrails"):
            if getattr(run_config, name, None):
                unseen.append(f"RunConfig.{name}")
    for agent in reachable(start):
        if agent.input_guardrails or agent.output_guardrails:
            unseen.append(f"guardrails on agent {agent.name!r}")
    return unseen


def _run_tool_choice(runner_kwargs: Mapping[str, Any]) -> Any:
    """The tool choice a ``RunConfig.model_settings`` imposes on every agent of the run (None if none)."""
    settings = getattr(runner_kwargs.get("run_config"), "model_settings", None)
    return getattr(settings, "tool_choice", None)
