"""Which run records a tool call: the run in this context, or the only one in progress; none inside a recorded tool."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from typing import Any

from muscle_mem.reasons import NotStoredReason, Problem
from muscle_mem.record._run import CURRENT_RUN, IN_TOOL, Flight, Run
from muscle_mem.record.tools import Tool

logger = logging.getLogger(__name__)


def instrument(
    tool: Tool,
    owner: object,
    stray: Callable[[str, Run], None],
    in_progress: Callable[[], list[Run]],
) -> Callable[..., Any]:
    """Wrap ``tool.fn`` so that calls inside a run of ``owner`` are recorded; elsewhere it just runs.

    A call from a thread without a run in its context (a worker of a thread pool) belongs to the
    run of ``owner`` in progress when there is one only (``in_progress()`` lists them); with two or
    more it could be any of them, so none records it and none is stored. ``stray(name, run)`` hears
    of a call made after the agent of its run returned (a task or a thread it did not wait for).
    """
    fn = tool.fn
    if tool.is_async:

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            found = _recording(owner, tool, stray, in_progress)
            if found is None:
                return await fn(*args, **kwargs)
            return await found[0].record_async(tool, found[1], args, kwargs)

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        found = _recording(owner, tool, stray, in_progress)
        if found is None:
            return fn(*args, **kwargs)
        return found[0].record(tool, found[1], args, kwargs)

    return wrapper


def _recording(
    owner: object, tool: Tool, stray: Callable[[str, Run], None], in_progress: Callable[[], list[Run]]
) -> tuple[Run, Flight] | None:
    """The run that records this call and the call's flight, if any (not a call inside a recorded tool)."""
    run = CURRENT_RUN.get()
    if run is None:
        return _adopted(tool, stray, in_progress())
    if run.owner is not owner:
        if not tool.foreign_call_noted:
            tool.foreign_call_noted = True
            logger.warning(
                "tool %r belongs to another engine than the run it was called in (task %r): that run does "
                "not record it, and a replay of it will not make the call",
                tool.name,
                run.task,
            )
        _outer_misses(run, owner, tool)
        return None
    if run.ended:
        stray(tool.name, run)
        return None
    if not run.recording or IN_TOOL.get() == run.id:
        return None
    flight = run.start(tool.name)
    if flight is None:
        stray(tool.name, run)
        return None
    return run, flight


def _adopted(tool: Tool, stray: Callable[[str, Run], None], runs: list[Run]) -> tuple[Run, Flight] | None:
    """The run a call from a thread without a run in its context belongs to: the only one in progress.

    A call from an asyncio task is never adopted: a task made inside the run would carry its
    context, so this one was made outside it, and may or may not work for the agent.
    """
    if not runs:
        return None
    in_task = _in_asyncio_task()
    if len(runs) > 1 or in_task:
        where = "an asyncio task" if in_task else "a thread"
        for run in runs:
            run.unattributable(
                f"tool {tool.name!r} was called from {where} without a run in its context while "
                f"{_runs(len(runs))} in progress: whether it is this run's cannot be told, so it is not "
                "recorded and the run is not stored (make the call in the run's context: create the task "
                "inside the run, or submit it with contextvars.copy_context().run)"
            )
        return None
    run = runs[0]
    flight = run.adopt(tool.name)
    if flight is None:
        if run.sealed:
            stray(tool.name, run)
        return None
    return run, flight


def _runs(count: int) -> str:
    return "1 run of the engine was" if count == 1 else f"{count} runs of the engine were"


def _in_asyncio_task() -> bool:
    try:
        return asyncio.current_task() is not None
    except RuntimeError:  # no event loop runs in this thread
        return False


def _outer_misses(run: Run, owner: object, tool: Tool) -> None:
    """A tool of ``owner`` called inside another engine's run: the run of ``owner`` that handed the
    task on (if it is recording, outside a tool call) misses the call, so it is not stored."""
    outer: Run | None = run
    while outer is not None and outer.owner is not owner:
        if outer.in_parent_tool:
            return  # inside a tool call a run records: part of that step
        outer = outer.parent
    if outer is not None and outer.recording and not outer.ended and IN_TOOL.get() != outer.id:
        outer.problems.append(
            Problem(
                NotStoredReason.FOREIGN_RUN,
                f"tool {tool.name!r} was called inside another engine's run (a task handed on); this "
                "trajectory would miss it",
            )
        )


def note_sub_task(owner: object, text: str) -> None:
    """A task handed to ``owner`` inside one of its recording runs: that run misses its steps."""
    outer = CURRENT_RUN.get()
    if outer is not None and outer.owner is owner and outer.recording and IN_TOOL.get() != outer.id:
        outer.problems.append(
            Problem(
                NotStoredReason.SUB_TASK,
                f"the agent handed the sub-task {text!r} to the engine inside the run; its steps are "
                "not part of this trajectory",
            )
        )
