"""From a finished run to a trajectory: every replayed value bound to where it came from.

For each value a replay would produce (a tool argument, an item inside one, a piece of a text, the
agent's answer), every origin it could have come from is found:

* a **param**, in its own form or another one (``"4471"`` passed as ``4471``, ``2000`` written
  ``2,000.00``, ``maria`` written ``Maria``);
* an **earlier tool output**, at any path, in every output that holds it;
* a **literal of the task** (in the task text outside the params), which is a constant.

No origin: a constant. One origin: the value is bound to it, whatever its size (an issue number
``41`` created by one tool and passed to the next replays with the fresh number). Several origins:
all are kept (:class:`~muscle_mem.model.provenance.Agree`) and the replay goes on only while they give the
same value. A few values are both a possible origin and a plausible constant, and are bound to both:
booleans and None, a plain word of an output met in the agent's own prose (``Thanks for your
business``) unless it is a param's value there, a param that is a common short word (``it``), a number inside a date or a time. An
element chosen from a list of several is bound by position and by identity
(:class:`~muscle_mem.model.provenance.Pick`), and by the params its value contains. Texts are matched only
at word and number boundaries. A run a replay could not repeat faithfully is refused
(:class:`Unreplayable`): a param or an output hidden in a constant it cannot rebuild.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from muscle_mem.check import Check
from muscle_mem.model import codec
from muscle_mem.model._run_observations import observe_run, with_failed_attempts
from muscle_mem.model._snapshot_keys import snapshot_key
from muscle_mem.model.provenance import Arg
from muscle_mem.model.trajectory import Snapshot, Step, Trajectory
from muscle_mem.reasons import NotStoredReason, Problem, problem_kind
from muscle_mem.record._origins import ArgBuilder, Argument, Unreplayable
from muscle_mem.record._run import NOT_CAPTURED, Call, Run
from muscle_mem.secrecy.declared import leaks_secret, looks_secret, plain_params

logger = logging.getLogger(__name__)


def _literal(task: str, params: Mapping[str, Any]) -> str:
    """The task text without its ``{param}`` places and the values shown for params."""
    text = task
    for name, value in params.items():
        text = text.replace("{" + name + "}", " ").replace(f"{name}={value!r}", " ")
    return text


class _Snapshots:
    """The snapshots of a run's checks, each hash made once for equal scalar captures (a state read
    before every step)."""

    def __init__(self) -> None:
        self._digests: dict[tuple[type, Any], Snapshot] = {}

    def of(self, value: Any, check: Check[Any] | None, index: int, call: Call, which: str) -> Snapshot:
        """The snapshot of a captured value to store: only its hash for an equality Check, which
        compares by hash."""
        try:
            if check is None or not check.by_key:
                return Snapshot.capture(value)
            kind = type(value)
            if kind is not int and kind is not str:  # equal values of these are written alike
                return Snapshot.digest(value)
            found = self._digests.get((kind, value))
            if found is None:  # the hash the replay made of the same capture, if it made it
                found = self._digests[(kind, value)] = Snapshot(None, snapshot_key(value), kept=False)
            return found
        except codec.CodecError as exc:
            where = f"step {index} (tool {call.tool!r})"
            raise codec.CodecError(f"{where} {which}-check snapshot: {exc}") from None


def trajectory_of(run: Run, output: Any, seconds: float) -> Trajectory | Problem:
    """The trajectory a finished run leaves, or why it leaves none (logged: the answer is not lost)."""
    if run.problems:  # first: a call the run missed can leave it with none
        why = run.redact("; ".join(run.problems))
        logger.error("cannot store the trajectory of task %r: %s", run.task, why)
        return Problem(problem_kind(run.problems[0]), why)
    if not run.calls:
        logger.info("the agent made no tool call for task %r; nothing to store", run.task)
        return Problem(NotStoredReason.NO_TOOL_CALLS, "the agent made no tool call")
    try:
        trajectory = build_trajectory(run, output, seconds)
    except codec.CodecError as exc:
        logger.error("cannot store the trajectory of task %r: %s", run.task, run.redact(str(exc)))
        kind = (
            NotStoredReason.UNREPLAYABLE
            if isinstance(exc, Unreplayable)
            else NotStoredReason.UNSTORABLE_VALUE
        )
        return Problem(kind, run.redact(str(exc)))
    leak = kept_secret(run, trajectory)
    if leak is not None:
        logger.error("the trajectory of task %r is not stored: %s", run.task, leak)
        return Problem(NotStoredReason.SECRET_LEAK, leak)
    return trajectory


def kept_secret(run: Run, trajectory: Trajectory) -> str | None:
    """Why the trajectory would store a secret in clear, or None if it would not (or it cannot be told)."""
    captured = (v for c in run.calls for v in (c.pre, c.post) if v is not NOT_CAPTURED)
    try:
        if leaks_secret(trajectory, run.hidden(), captured):
            return "the trajectory contains the value of a secret param or a secret tool output outside a reference"
        looks = looks_secret(trajectory)
    except Exception as exc:  # a value that cannot be walked: what it holds is unknown
        return f"the trajectory's values cannot be searched for secrets ({type(exc).__name__})"
    if looks is None:
        return None
    return (
        f"the trajectory holds what looks like {looks} (in a value, a check snapshot or the task text): "
        "it is never stored in clear; pass it as a Secret param, or register the tool that returns it "
        "with secret_outputs=True"
    )


def _failed_attempts(run: Run) -> dict[int, int]:
    """How many times each call raised before it returned, by the call's index (a retry is one call)."""
    found: dict[int, int] = {}
    for order, *_ in run.raised:
        index = next((i for i, call in enumerate(run.calls) if call.order > order), None)
        if index is not None:
            found[index] = found.get(index, 0) + 1
    return found


def build_trajectory(run: Run, result: Any, agent_seconds: float) -> Trajectory:
    """The trajectory a finished run leaves; raises CodecError naming the tool and argument at fault."""
    if run.problems:
        raise codec.CodecError("; ".join(run.problems))
    params = plain_params(run.params)  # a Secret param becomes a reference by name
    literal = _literal(run.task, params)
    builder = ArgBuilder(params, frozenset(run.secrets), literal)
    snapshots = _Snapshots()
    made: list[
        tuple[str, str, tuple[Arg, ...], tuple[tuple[str, Arg], ...], Snapshot | None, Snapshot | None, float]
    ] = []
    recorded: list[Arg] = []  # every argument of every step, for what the run copied
    calls = run.calls
    decided = [run.decided_at(call) for call in calls]
    known = 0  # the outputs data flow may rebuild a value from: those made before the call's turn
    for index, call in enumerate(calls):
        before = decided[index]
        while known < (index if before is None else min(before, index)):
            builder.outputs.add(known, calls[known].output)
            known += 1
        tool = call.tool_ref
        if call.step is not None:
            args, kwargs = call.step.args, call.step.kwargs
            version = call.step.version
        else:
            assert tool is not None
            values = call.args
            args = (
                (builder.build(values[0], Argument(index, call, 0)),)  # the common case, without a list
                if len(values) == 1
                else tuple([builder.build(v, Argument(index, call, i)) for i, v in enumerate(values)])
            )
            kwargs = (
                tuple([(k, builder.build(v, Argument(index, call, k))) for k, v in call.kwargs.items()])
                if call.kwargs
                else ()
            )
            version = tool.version
        pre: Snapshot | None = None
        post: Snapshot | None = None
        if call.pre is not NOT_CAPTURED:
            pre = snapshots.of(call.pre, tool.pre_check if tool else None, index, call, "pre")
        if call.post is not NOT_CAPTURED:
            post = snapshots.of(call.post, tool.post_check if tool else None, index, call, "post")
        made.append((call.tool, version, args, kwargs, pre, post, call.seconds))
        recorded += args
        if kwargs:
            recorded += [v for _, v in kwargs]
    while known < len(calls):
        builder.outputs.add(known, calls[known].output)
        known += 1
    answer = builder.build(result, "the agent's return value")
    given, observed = observe_run(
        params,
        builder.outputs.outputs,
        recorded,
        answer,
        run.hidden().values(),
        run.secrets,
        literal,
    )
    if run.raised:  # calls the agent made again
        for index, count in _failed_attempts(run).items():
            observed[index] = with_failed_attempts(observed[index], count)
    steps = tuple(
        [
            Step(*parts, seen, given if index == 0 else None, decided[index])
            for index, (parts, seen) in enumerate(zip(made, observed, strict=True))
        ]
    )
    return Trajectory(
        task_key=run.task_key,
        task=run.task,
        tags=run.tags,
        steps=steps,
        result=answer,
        agent_seconds=agent_seconds,
        tokens=run.tokens,
    )
