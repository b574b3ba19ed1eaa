"""``Session``: a task whose agent works outside the engine call (another process, an MCP client).

The engine call runs in a task of its own. Its agent is the session: it waits for :meth:`Session.end`,
and tool calls made through :meth:`Session.call` run in the run's context, so they are recorded into
it from whichever asyncio task they come.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from muscle_mem.errors import MuscleMemError
from muscle_mem.record._run import CURRENT_RUN
from muscle_mem.record._run_view import RunView
from muscle_mem.result import Result, StepView

Solve = Callable[[Callable[..., Any]], Coroutine[Any, Any, Result]]
"""One engine call of the session's task, given the agent that solves it if it cannot be replayed."""

logger = logging.getLogger(__name__)


class SessionAbandoned(MuscleMemError):
    """A session ended without an answer: the agent's run is not stored."""


class Session:
    """One task solved by an agent the engine does not call.

    >>> async with engine.session(f"reset the password of {e}", params={"email": e}) as s:
    ...     if s.result is None:                        # no replay: the remote agent works
    ...         user = await s.call(lookup_user, email=e)
    ...         s.end(f"reset for {user['id']}")
    >>> s.result.hit, s.result.output
    """

    def __init__(self, solve: Solve) -> None:
        self._solve = solve
        self._answer: asyncio.Future[Any] | None = None
        self._context: contextvars.Context | None = None
        self._task: asyncio.Task[Result] | None = None
        self.result: Result | None = None
        """The engine call's result once it ended: at :meth:`begin` on a full hit, else after :meth:`end`."""

    async def begin(self) -> Result | None:
        """Replay the task if it is safe: the result of a full hit, or None when the agent must work."""
        if self._task is not None:
            raise RuntimeError("this session has begun already")
        loop = asyncio.get_running_loop()
        self._answer = answer = loop.create_future()
        started: asyncio.Future[None] = loop.create_future()

        async def remote_agent(*_args: Any, **_kwargs: Any) -> Any:
            self._context = contextvars.copy_context()
            started.set_result(None)
            return await answer

        self._task = task = asyncio.create_task(self._solve(remote_agent))
        await asyncio.wait([task, started], return_when=asyncio.FIRST_COMPLETED)  # type: ignore[type-var]
        if task.done():
            self.result = task.result()  # a full hit; an error in the call is raised here
        return self.result

    @property
    def steps(self) -> tuple[StepView, ...]:
        """The run's tool calls so far, the replayed ones first."""
        run = self._context.get(CURRENT_RUN) if self._context is not None else None
        if run is not None:
            return run.step_views()
        return self.result.calls if self.result is not None else ()

    async def call(self, tool: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        """Call one of the engine's tools inside the session's run, so that the call is recorded."""
        if self._context is None or self._answer is None or self._answer.done():
            raise RuntimeError(
                "this session has no run in progress to record into (not begun, a hit, or ended)"
            )
        context = self._context.copy()
        if inspect.iscoroutinefunction(tool):
            return await context.run(asyncio.ensure_future, tool(*args, **kwargs))
        return context.run(tool, *args, **kwargs)

    def begin_turn(self) -> None:
        """Say that the agent's model begins a turn (see :meth:`RunView.begin_turn`); nothing outside a run."""
        run = self._context.get(CURRENT_RUN) if self._context is not None else None
        if run is not None:
            RunView(run).begin_turn()

    def add_usage(
        self, input_tokens: int, output_tokens: int, *, requests: int = 1, model: str | None = None
    ) -> None:
        """Report model calls the agent made for the session's run (see :meth:`RunView.add_usage`)."""
        run = self._context.get(CURRENT_RUN) if self._context is not None else None
        if run is None or run.ended or not run.recording:
            raise RuntimeError(
                "this session has no run in progress to add usage to (not begun, a hit, or ended)"
            )
        RunView(run).add_usage(input_tokens, output_tokens, requests=requests, model=model)

    def end(self, answer: Any = None) -> None:
        """The agent solved the task: ``answer`` is its output; :meth:`wait` gives the result."""
        self._settle(answer, None)

    def abandon(self, why: str = "the session was abandoned") -> None:
        """The agent gave up: nothing is stored, and the session's result stays None."""
        self._settle(None, SessionAbandoned(why))

    async def wait(self) -> Result | None:
        """The engine call's result, once it ended (None if the session was abandoned)."""
        if self._task is None:
            raise RuntimeError("this session has not begun")
        try:
            self.result = await self._task
        except SessionAbandoned:
            self.result = None
        return self.result

    def _settle(self, answer: Any, error: BaseException | None) -> None:
        if self._answer is None:
            raise RuntimeError("this session has not begun")
        if self._answer.done():
            raise RuntimeError("this session has ended already")
        if error is None:
            self._answer.set_result(answer)
        else:
            self._answer.set_exception(error)

    async def __aenter__(self) -> Session:
        await self.begin()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object
    ) -> None:
        if self._task is None or (self._task.done() and self.result is not None):
            return
        assert self._answer is not None
        if not self._answer.done():
            why = (
                f"the session's block raised {exc!r}"
                if exc is not None
                else "the session ended without end()"
            )
            logger.warning("%s; nothing is stored for this task", why)
            self.abandon(why)
        await self.wait()

    def __repr__(self) -> str:
        state = "not begun" if self._task is None else "ended" if self._task.done() else "in progress"
        return f"Session({state}, steps={len(self.steps)})"
