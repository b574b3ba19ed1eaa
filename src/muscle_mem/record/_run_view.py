"""What an agent reads of the run in progress: :func:`current_run` and its :class:`RunView`."""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

from muscle_mem.model._spend import add_usage
from muscle_mem.reasons import NotStoredReason, Problem
from muscle_mem.record._run import CURRENT_RUN, Run
from muscle_mem.result import StepView


def current_run() -> RunView | None:
    """What the agent may read of the run in progress in this context, or None outside a run.

    The context is the thread or asyncio task.
    """
    run = CURRENT_RUN.get()
    return RunView(run) if run is not None else None


class RunView:
    """A read-only view of a run: the task, its tags and params, the steps done so far.

    The agent reports what its model calls spent with :meth:`add_usage` (the framework
    integrations do it for their agents), or adds bare token counts (``current_run().tokens += n``).
    """

    __slots__ = ("_run",)

    def __init__(self, run: Run) -> None:
        self._run = run

    @property
    def task(self) -> str:
        """The task as text, params shown as ``{name}``."""
        return self._run.task

    @property
    def tags(self) -> tuple[str, ...]:
        return self._run.tags

    @property
    def params(self) -> Mapping[str, Any]:
        """The params of the call (a :class:`~muscle_mem.Secret` stays wrapped)."""
        return types.MappingProxyType(self._run.params)

    @property
    def steps(self) -> tuple[StepView, ...]:
        """The steps done so far, replayed ones included, in order."""
        return self._run.step_views()

    @property
    def engine(self) -> object:
        """The engine whose run this is."""
        return self._run.owner

    @property
    def tokens(self) -> int:
        """LLM tokens the agent reported spending on this run."""
        return self._run.tokens

    @tokens.setter
    def tokens(self, value: int) -> None:
        self._run.tokens = value

    def add_usage(
        self, input_tokens: int, output_tokens: int, *, requests: int = 1, model: str | None = None
    ) -> None:
        """Report model calls the agent made for this run: tokens in and out, requests, the model's name.

        They add to :attr:`tokens`, and to the run's usage by model, which prices it in the ledger.
        """
        run = self._run
        if run.usage is None:
            run.usage = {}
        add_usage(run.usage, model, input_tokens, output_tokens, requests)
        run.tokens += input_tokens + output_tokens

    def begin_turn(self) -> None:
        """Say that the agent's model begins a turn: the tool calls it makes next were decided together.

        An agent whose model asks for several tools at once (parallel tool calls) says so before
        running them (the framework integrations do it for their agents). A replay then judges each
        of those calls on what the run had seen before the turn, makes the turn's calls together,
        and hands over to the agent only between turns, as its model would have met them.
        """
        if self._run.recording and not self._run.ended:
            self._run.begin_turn()

    def refuse(self, why: str) -> None:
        """Keep this run out of the store, saying why (a step it made cannot be replayed, say).

        It applies to what the agent records; a replayed step is already stored.
        """
        run = self._run
        if run.recording and not run.ended:
            run.problems.append(Problem(NotStoredReason.REFUSED, run.redact(why)))

    def __repr__(self) -> str:
        return f"RunView(task={self.task!r}, tags={self.tags!r}, steps={len(self._run.calls)})"
