"""The model turns of a run's tool calls: saying when one begins, grouping replayed calls by turn.

A model may ask for several tools in one turn (parallel tool calls). A front end says when the
model begins a turn (:meth:`muscle_mem.RunView.begin_turn`), so the stored steps keep which calls
were decided together; a replay then makes a turn's calls together, and the front end gives the
framework back one model turn per recorded turn, whatever the number of calls in it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from muscle_mem import RunView, StepView, current_run
from muscle_mem.record._run import CURRENT_RUN

if TYPE_CHECKING:
    from muscle_mem import Engine


def begin_turn(engine: Engine) -> RunView | None:
    """Say that the model of ``engine``'s run in progress begins a turn: the run, or None outside it."""
    run = current_run()
    if run is None or run.engine is not engine:
        return None
    run.begin_turn()
    return run


def replaying_a_turn() -> bool:
    """Whether the call a replay makes now begins a model turn (True where turns are not told apart)."""
    run = CURRENT_RUN.get()
    return run is None or run.replays_a_turn()


def turns_of(steps: Sequence[StepView]) -> list[list[StepView]]:
    """The steps in model turns, in order: consecutive steps decided at the same point share a turn."""
    turns: list[list[StepView]] = []
    for step in steps:
        previous = turns[-1][-1] if turns else None
        if previous is not None and step.decided_at is not None and previous.decided_at == step.decided_at:
            turns[-1].append(step)
        else:
            turns.append([step])
    return turns
