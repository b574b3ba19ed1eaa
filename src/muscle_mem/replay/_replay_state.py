"""A replay's state and the work of one step: the call prepared, its candidates, its output noted, the answer.

:class:`muscle_mem.replay._replayer.Replayer` walks a task's steps on it, and
:mod:`muscle_mem.replay._evidence_replay` replays on from several recorded runs with it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator, Iterator, Mapping
from typing import Any

from muscle_mem.check import Check, MissingThreshold
from muscle_mem.errors import MuscleMemError
from muscle_mem.model import codec
from muscle_mem.model._frozen_instances import fast_instance
from muscle_mem.model._snapshot_keys import snapshot_key
from muscle_mem.model.provenance import SCALAR_TYPES, Broken, Disagreement, Unresolved, evaluate
from muscle_mem.model.trajectory import Step, Trajectory
from muscle_mem.reasons import MissReason
from muscle_mem.record._call_copies import frozen
from muscle_mem.record._run import NOT_CAPTURED, Call, Run
from muscle_mem.record.tools import Tool, ToolRegistry
from muscle_mem.replay._drivers import Ending, Invoke, Raised
from muscle_mem.replay._step_index import NOT_RENEWED, Skipped, StepEdge, StepGroup, StepNode

logger = logging.getLogger(__name__)


class ReplayState:
    """What one replay has: its run, params and context, the outputs so far, the edge it follows; and one step's work.

    A stored trajectory that fails in a way no run explains (a :class:`Broken` value, or anything
    else raised while replaying it) is left out and reported to ``skipped``; it never raises to the
    engine's caller.
    """

    __slots__ = ("compare", "context", "edge", "outputs", "params", "registry", "run", "skipped")

    def __init__(
        self,
        registry: ToolRegistry,
        context: Any,
        run: Run,
        params: Mapping[str, Any],
        skipped: Skipped = lambda ids, why: None,
        *,
        compare: bool = True,
    ) -> None:
        self.registry = registry
        self.compare = compare
        """Whether each step's output is compared with what the recorded runs saw (False: checks alone decide)."""
        self.context = context
        self.run = run
        self.params = params
        self.skipped = skipped
        self.outputs: list[Any] = []
        self.edge: StepEdge | None = None
        """The edge being taken or last taken (its trajectories are the ones still being followed)."""

    def broken(self, exc: Exception) -> Ending:
        """The end of a replay that failed in a way no run explains; its trajectories are skipped."""
        why = f"its replay failed ({exc!r})"[:500]
        self.skipped(list(self.edge.trajectories) if self.edge is not None else [], why)
        return Ending(reason=f"a stored trajectory could not be replayed: {why}", kind=MissReason.STORE_ERROR)

    def finish(self, node: StepNode) -> Ending:
        """A full hit on the most recent trajectory that ends at ``node``, its answer resolved.

        A trajectory whose answer is broken is skipped for the next most recent.
        """
        ending = self.answer(next(reversed(node.ends.values())))
        if ending is not None:
            return ending
        for trajectory in list(reversed(node.ends.values()))[1:]:
            ending = self.answer(trajectory)
            if ending is not None:
                return ending
        return Ending(reason="every recorded answer here is broken", kind=MissReason.STORE_ERROR)

    def answer(self, trajectory: Trajectory) -> Ending | None:
        """How a replay ending with ``trajectory`` ends, or None if its answer is broken (it is skipped)."""
        try:
            value = evaluate(trajectory.result, self.params, self.outputs)
        except Broken as exc:
            self.skipped([trajectory.id], str(exc))
            return None
        except Unresolved as exc:
            kind = (
                MissReason.AMBIGUOUS_ORIGIN if isinstance(exc, Disagreement) else MissReason.ANSWER_UNRESOLVED
            )
            return Ending(reason=f"the recorded answer {exc}", kind=kind)
        return fast_instance(Ending, trajectory=trajectory, answer=value)

    def prepare(
        self, group: StepGroup, step_no: int, reasons: list[tuple[MissReason, str]]
    ) -> tuple[Tool, tuple[Any, ...], dict[str, Any]] | None:
        """The live call a group would make (the tool, its arguments), or None (with the reason) if it cannot be made.

        Its arguments are evaluated: the replay passes those that need not be (``group.direct``) itself.
        """
        step = group.step
        tool = self.registry.get(step.tool)
        if tool is None:
            reasons.append(
                (MissReason.TOOL_NOT_REGISTERED, f"tool {step.tool!r} is not registered with this engine")
            )
            return None
        if tool.version != step.version:
            reasons.append(
                (
                    MissReason.VERSION_CHANGED,
                    f"tool {step.tool!r} changed since it was recorded (version {step.version} → {tool.version})",
                )
            )
            return None
        params, outputs = self.params, self.outputs
        try:
            args = tuple([evaluate(a, params, outputs) for a in step.args]) if step.args else ()
            kwargs = {k: evaluate(a, params, outputs) for k, a in step.kwargs} if step.kwargs else {}
        except Unresolved as exc:
            if isinstance(exc, Broken):
                self.skipped([t for edge in group.ordered() for t in edge.trajectories], str(exc))
                kind = MissReason.STORE_ERROR
            elif isinstance(exc, Disagreement):
                kind = MissReason.AMBIGUOUS_ORIGIN
            else:
                kind = MissReason.UNRESOLVED_VALUE
            reasons.append((kind, f"step {step_no} (tool {tool.name!r}): {exc}"))
            return None
        return tool, (self.context, *args) if tool.is_method else args, kwargs

    def candidates(
        self,
        tool: Tool,
        check: Check[Any],
        group: StepGroup,
        captured: Any,
        step_no: int,
        reasons: list[tuple[MissReason, str]],
    ) -> Iterator[StepEdge] | None:
        """The candidate edges whose pre-check passes against what was just ``captured``.

        None (with the reason) when the capture raised or cannot be hashed.
        """
        if type(captured) is Raised:
            reasons.append(
                (
                    MissReason.PRE_CHECK_RAISED,
                    f"pre-check capture of tool {tool.name!r} raised {captured.error!r} at step {step_no}",
                )
            )
            return None
        if check.by_key:
            try:
                return group.ordered(snapshot_key(captured), keyed=True)
            except codec.CodecError as exc:
                reasons.append(
                    (
                        MissReason.SNAPSHOT_UNHASHABLE,
                        f"pre-check snapshot of tool {tool.name!r} cannot be hashed: {exc}",
                    )
                )
                return None
        return _passing(check.passes, captured, group.ordered(), reasons, tool.name)

    def replayed(
        self,
        tool: Tool,
        value: Any,
        call_args: tuple[Any, ...],
        kwargs: dict[str, Any],
        pre: Any,
        post: Any,
        step: Step,
    ) -> Any:
        """The output of a replayed call, as data flow sees it, noted in the run (an :class:`Ending` if its view raised)."""
        if type(value) in SCALAR_TYPES and tool.output_view is None and not tool.secret_outputs:
            output = value  # what run.seen makes of it
        else:
            try:
                output = self.run.seen(tool, value)  # as at the call: later calls may change it
            except Exception as exc:
                return Ending(
                    reason=f"output_view of tool {tool.name!r} raised {exc!r} at step {len(self.outputs)}",
                    tool=tool.name,
                    kind=MissReason.TOOL_RAISED,
                )
        self.outputs.append(output)
        self.run.calls.append(
            tuple.__new__(  # a Call in one C call, its fields in order
                Call,
                (
                    tool.name,
                    call_args[1:] if tool.is_method else call_args,
                    kwargs,
                    output,
                    True,
                    0.0,
                    pre if type(pre) in SCALAR_TYPES else _frozen_snapshot(pre),
                    post if post is NOT_CAPTURED else _frozen_snapshot(post),
                    step,
                    tool,
                    0,
                    value if tool.output_view is not None else output,
                ),
            )
        )
        return output

    def post_capture(
        self, tool: Tool, check: Check[Any], call_args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Generator[Invoke, Any, Any]:
        """What the post-check captures after the call (:data:`NOT_CAPTURED` if the capture raised, logged)."""
        captured = yield check.capture, call_args, kwargs
        if type(captured) is Raised:
            logger.warning(
                "post-check capture of tool %r raised %s",
                tool.name,
                self.run.redact(repr(captured.error)),
            )
            return NOT_CAPTURED
        return captured


def tool_raised(
    raised: Raised, tool: Tool, step_no: int, run: Run, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Ending:
    """The end of a replay whose tool raised (anything but an ``Exception`` goes on up).

    The call has run once, as it did for the agent alone: the agent that takes over gets the
    exception when it makes that call, not a second run of the tool (:meth:`Run.hold`). An error of
    muscle-mem's own (a call an integration does not replay) ran nothing: the agent makes the call.
    """
    if not isinstance(raised.error, Exception):
        raise raised.error
    if not isinstance(raised.error, MuscleMemError):
        run.hold(tool.name, args, kwargs, raised.error)
    return Ending(
        reason=f"replayed tool {tool.name!r} raised {raised.error!r} at step {step_no}",
        tool=tool.name,
        kind=MissReason.TOOL_RAISED,
    )


def nothing_stored(run: Run) -> Ending:
    """The ending of a task with no stored trajectory, naming the similar task semantic matching found."""
    if run.similar is None:
        return Ending(reason="no trajectory is stored for this task", kind=MissReason.NO_TRAJECTORY)
    why = (
        f"no trajectory is stored for this task; the similar task {run.similar.text!r} is only a "
        "candidate: the agent solves this one, and its run is compared with that task's"
    )
    return Ending(reason=why, kind=MissReason.SIMILAR_TASK)


def _passing(
    passes: Callable[[Any, Any], bool],
    current: Any,
    edges: Iterator[StepEdge],
    reasons: list[tuple[MissReason, str]],
    name: str,
) -> Iterator[StepEdge]:
    for edge in edges:
        pre, renewed = edge.step.pre, edge.renewed
        try:
            if (pre is not None and pre.kept and passes(current, pre.value)) or (
                renewed is not NOT_RENEWED and passes(current, renewed)
            ):
                yield edge
        except MissingThreshold:
            raise
        except Exception as exc:
            reasons.append(
                (MissReason.PRE_CHECK_RAISED, f"pre-check compare of tool {name!r} raised {exc!r}")
            )


def _frozen_snapshot(value: Any) -> Any:
    """A snapshot taken at replay, copied before later steps can change it (as is if unstorable)."""
    if value is NOT_CAPTURED:
        return value
    try:
        return frozen(value)
    except codec.CodecError:
        return value  # storing the run will report it
