"""``Result``: what one engine call did."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from muscle_mem.model.verdict import Shadow
from muscle_mem.reasons import MissReason, NotStoredReason


@dataclass(frozen=True, slots=True)
class StepView:
    """One tool call of a run: the tool, its arguments, its output, and whether it was replayed.

    ``output`` is what the caller of the tool got (for a tool registered with ``output_view``, the
    output itself, not the view).
    """

    tool: str
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    output: Any
    replayed: bool
    decided_at: int | None = None
    """How many of the run's calls came before the model turn that made this one: calls with the same
    value were made in one turn, together. None where the front end does not tell the model's turns
    apart (and, in a :class:`Result`, for the calls the agent made)."""


def _stored_turn(call: Any) -> int | None:
    """The model turn of a replayed call, as its stored step says (None for a call the agent made)."""
    return call.step.decided_at if call.step is not None else None


def step_views(
    calls: Sequence[Any], decided_at: Callable[[Any], int | None] = _stored_turn
) -> tuple[StepView, ...]:
    """The views of a run's calls (:class:`muscle_mem.record._run.Call`), read-only.

    ``decided_at``: the model turn a call was made in (by default, a replayed call's stored step's).
    """
    return tuple(
        StepView(c.tool, c.args, MappingProxyType(c.kwargs), c.returned, c.replayed, decided_at(c))
        for c in calls
    )


@dataclass(frozen=True)
class Result:
    """The outcome of ``engine(...)``: truthy exactly on a full cache hit.

    ``output`` is the agent's return value on a miss, and the recorded answer (with its param and
    data-flow references resolved) on a hit. ``reason`` says why the cache was not, or not fully, used;
    ``miss_reason`` is the kind of that cause, to branch on or count.

    On a miss, the agent's run is either stored (``stored``) or not, and then ``not_stored`` says why
    and ``not_stored_reason`` gives its kind. A full hit stores nothing new, and both are None.
    """

    hit: bool
    output: Any = None
    steps_replayed: int = 0
    fallback: bool = False
    """The agent was invoked."""
    reason: str | None = None
    trajectory_id: str | None = None
    """The trajectory replayed (on a hit) or stored (on a miss); None if nothing was stored."""
    elapsed: float = 0.0
    stored: bool = False
    """This call's run was written to the store as a new trajectory before the call returned.

    The write is synchronous (only the journal's events are batched), so another engine on the same
    store can replay it at once. It can still be removed later: by eviction, or when a tool of the run
    is called after the run ended (``metrics.not_stored_by_reason[CALLED_AFTER_RUN]`` counts those).
    Never true with ``Engine(write_behind=True)``: see ``storing``."""
    storing: bool = False
    """This call's run became a trajectory, checked and handed to the engine's background writer
    (``Engine(write_behind=True)``), which had not written it when the call returned.

    ``trajectory_id`` is its id. It is in the store once ``engine.flush()`` (or ``close()``) returns,
    unless that write fails: the failure is logged and counted in ``metrics.not_stored_by_reason``
    (``STORE_ERROR`` or ``STORE_UNAVAILABLE``). If the process dies first, it is not stored."""
    not_stored: str | None = None
    """On a miss whose run was not stored: why, in words. None on a hit, when ``stored`` and when ``storing``."""
    not_stored_reason: NotStoredReason | None = None
    """The kind of ``not_stored``."""
    miss_reason: MissReason | None = None
    """The kind of ``reason`` (the first cause, if there were several); None on a hit."""
    miss_tool: str | None = None
    """On a miss, the tool to blame: the first whose step was not safe, failed its post-check or raised."""
    tokens_saved: int = 0
    """On a full hit: the LLM tokens the replayed trajectory's run spent when it was recorded."""
    tokens_spent: int = 0
    """On a miss: the LLM tokens the agent reported spending on this run (the integrations read them)."""
    shadow: Shadow | None = None
    """In shadow mode (and proven mode, the family not proven yet): how a replay would have compared
    with the agent's run; None when there was nothing stored to compare with, and in other modes."""
    template: str | None = None
    """When a template learned from the agent's runs served the call: the template (``refund order {1}``)."""
    slots: Mapping[str, Any] | None = None
    """With ``template``: the values its slots took in this task, by slot name (``{"1": 4471}``)."""
    steps: Sequence[Any] = field(default=(), repr=False, compare=False)
    """The run's calls as the engine keeps them; read :attr:`calls`."""

    @property
    def calls(self) -> tuple[StepView, ...]:
        """The tool calls of the run in order: replayed by the engine, then (on a miss) made by the agent."""
        return step_views(self.steps)

    def __bool__(self) -> bool:
        return self.hit
