"""Choosing and executing the next safe step of a stored trajectory.

The replay is a generator that yields the calls it needs made (captures and tool bodies) and
receives their outcomes, so one piece of logic serves both the sync and the async engine.

At each point, the candidate next steps are tried most recently successful first, and across
different calls too: the call whose passing candidate succeeded last is made, even if another call
succeeded later in a state that does not pass now.

Where one stored trajectory ends at a point from which others go on, the replay goes on when a next
step is safe (the pre-checks judge), and finishes with the trajectory that ends there otherwise: a
trajectory cut short because the environment differed must not stop a later run half-way.
"""

from __future__ import annotations

import dataclasses
import inspect
import itertools
import logging
import threading
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from muscle_mem import codec
from muscle_mem.check import Check, MissingThreshold
from muscle_mem.index import Edge, Group, Node, Skipped, TaskIndex, newest_first
from muscle_mem.provenance import Broken, Disagreement, Unresolved, evaluate
from muscle_mem.reasons import MissReason
from muscle_mem.recording import NOT_CAPTURED, Call, Run, frozen, kept
from muscle_mem.tools import Tool, ToolRegistry
from muscle_mem.trajectory import Step, Trajectory

logger = logging.getLogger(__name__)


@dataclass(slots=True)
class Invoke:
    """A call the driver must make: ``fn(*args, **kwargs)``, awaiting the result if it is awaitable."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: dict[str, Any]


@dataclass(slots=True)
class Outcome:
    """What the driver sends back: the value returned, or the exception raised."""

    value: Any = None
    error: BaseException | None = None


@dataclass(frozen=True, slots=True)
class Ending:
    """How a replay ended: a full hit (the ``trajectory`` completed, its ``answer``), or why it stopped."""

    trajectory: Trajectory | None = None
    answer: Any = None
    reason: str | None = None
    tool: str | None = None
    """On a miss, the tool to blame: the first whose step was not safe, failed its post-check or raised."""
    kind: MissReason | None = None
    """On a miss, the kind of its (first) cause."""

    def redacted(self, run: Run) -> Ending:
        """This ending with any secret value in its reason replaced by the param's name.

        An exception's text may quote the secret argument it was given.
        """
        if self.reason is None or not run.secrets:
            return self
        return dataclasses.replace(self, reason=run.redact(self.reason))


@dataclass(slots=True)
class _Prepared:
    """The live call a group of edges would make, before its pre-check."""

    tool: Tool
    step: Step
    call_args: tuple[Any, ...]
    kwargs: dict[str, Any]
    check: Check[Any] | None


@dataclass(slots=True)
class _Attempt:
    """A group chosen for the next step: the tool, the live call, the candidate edges."""

    tool: Tool
    step: Step
    call_args: tuple[Any, ...]
    kwargs: dict[str, Any]
    first: Edge
    """The most recently successful candidate whose pre-check passed."""
    others: Iterator[Edge]
    """The other candidates, newest first (walked only if ``first`` fails its post-check)."""
    pre: Any


Replay = Generator[Invoke, Outcome, Ending]


class Replayer:
    """Walks a task index step by step, executing the first safe candidate each time.

    A stored trajectory that fails in a way no run explains (a :class:`Broken` value, or anything
    else raised while replaying it) is left out and reported to ``skipped``; it never raises to the
    engine's caller.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        context: Any,
        run: Run,
        params: Mapping[str, Any],
        skipped: Skipped = lambda ids, why: None,
    ) -> None:
        self.registry = registry
        self.context = context
        self.run = run
        self.params = params
        self.skipped = skipped
        self.outputs: list[Any] = []
        self.edge: Edge | None = None
        """The edge being taken or last taken (its trajectories are the ones still being followed)."""

    def replay(self, task: TaskIndex) -> Replay:
        """Replay as far as it is safe; the returned :class:`Ending` says whether it was a full hit."""
        try:
            node: Node = task.root
            if not node.groups and not node.ends:
                return Ending(reason="no trajectory is stored for this task", kind=MissReason.NO_TRAJECTORY)
            while True:
                step_no = len(self.run.calls)
                reasons: list[tuple[MissReason, str]] = []
                attempt: _Attempt | None = None
                blame: str | None = None
                for group in newest_first(node.groups):
                    if attempt is not None and group.latest_stamp() <= attempt.first.stamp:
                        break  # this group and the older ones cannot hold a more recent success
                    call = self._prepare(group, step_no, reasons)
                    if call is None:
                        tried = None
                    elif call.check is None:
                        tried = self._attempt(call, group.ordered(), NOT_CAPTURED, step_no, reasons)
                    else:
                        captured = yield Invoke(call.check.capture, call.call_args, call.kwargs)
                        tried = self._checked(call, group, captured, step_no, reasons)
                    if tried is None:
                        blame = blame or group.step.tool
                    elif attempt is None or tried.first.stamp > attempt.first.stamp:
                        attempt = tried
                if attempt is None:
                    if node.ends:
                        return self._finish(node)
                    return Ending(
                        reason="; ".join(dict.fromkeys(text for _, text in reasons))
                        or f"no stored step {step_no} is safe",
                        tool=blame,
                        kind=reasons[0][0] if reasons else MissReason.NO_SAFE_STEP,
                    )
                self.edge = attempt.first  # in use from now on: eviction leaves its trajectories alone
                outcome = yield Invoke(attempt.tool.fn, attempt.call_args, attempt.kwargs)
                if outcome.error is not None:
                    if not isinstance(outcome.error, Exception):
                        raise outcome.error
                    return Ending(
                        reason=f"replayed tool {attempt.tool.name!r} raised {outcome.error!r} at step {step_no}",
                        tool=attempt.tool.name,
                        kind=MissReason.TOOL_RAISED,
                    )
                edge: Edge | None
                if attempt.tool.post_check is None:
                    edge, post = attempt.first, NOT_CAPTURED
                else:
                    edge, post = yield from self._post_check(attempt, attempt.tool.post_check)
                output = kept(outcome.value)  # as at the call, like the recording: later calls may change it
                self.outputs.append(output)
                self.run.calls.append(
                    Call(
                        tool=attempt.tool.name,
                        args=attempt.call_args[1:] if attempt.tool.is_method else attempt.call_args,
                        kwargs=attempt.kwargs,
                        output=output,
                        replayed=True,
                        pre=_frozen_snapshot(attempt.pre),
                        post=_frozen_snapshot(post),
                        step=attempt.step,
                        tool_ref=attempt.tool,
                    )
                )
                if edge is None:
                    return Ending(
                        reason=f"post-check of tool {attempt.tool.name!r} failed at step {step_no}",
                        tool=attempt.tool.name,
                        kind=MissReason.POST_CHECK_FAILED,
                    )
                self.edge = edge
                node = edge.node
        except MissingThreshold:
            raise  # the application's Check is misconfigured: it must hear of it
        except Exception as exc:
            return self._broken(exc)

    def _broken(self, exc: Exception) -> Ending:
        """The end of a replay that failed in a way no run explains; its trajectories are skipped."""
        why = f"its replay failed ({exc!r})"[:500]
        self.skipped(list(self.edge.trajectories) if self.edge is not None else [], why)
        return Ending(reason=f"a stored trajectory could not be replayed: {why}", kind=MissReason.STORE_ERROR)

    def _finish(self, node: Node) -> Ending:
        """A full hit on the most recent trajectory that ends at ``node``, its answer resolved.

        A trajectory whose answer is broken is skipped for the next most recent.
        """
        ending = self._answer(next(reversed(node.ends.values())))
        if ending is not None:
            return ending
        for trajectory in list(reversed(node.ends.values()))[1:]:
            ending = self._answer(trajectory)
            if ending is not None:
                return ending
        return Ending(reason="every recorded answer here is broken", kind=MissReason.STORE_ERROR)

    def _answer(self, trajectory: Trajectory) -> Ending | None:
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
        return Ending(trajectory=trajectory, answer=value)

    def _prepare(self, group: Group, step_no: int, reasons: list[tuple[MissReason, str]]) -> _Prepared | None:
        """The live call a group would make, or None (with the reason) if it cannot be made."""
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
        try:
            args = tuple([evaluate(a, self.params, self.outputs) for a in step.args])
            kwargs = (
                {k: evaluate(a, self.params, self.outputs) for k, a in step.kwargs} if step.kwargs else {}
            )
        except Unresolved as exc:
            if isinstance(exc, Broken):
                self.skipped([t for edge in group.edges.values() for t in edge.trajectories], str(exc))
                kind = MissReason.STORE_ERROR
            elif isinstance(exc, Disagreement):
                kind = MissReason.AMBIGUOUS_ORIGIN
            else:
                kind = MissReason.UNRESOLVED_VALUE
            reasons.append((kind, f"step {step_no} (tool {tool.name!r}): {exc}"))
            return None
        call_args = (self.context, *args) if tool.is_method else args
        return _Prepared(tool, step, call_args, kwargs, tool.pre_check)

    def _checked(
        self,
        call: _Prepared,
        group: Group,
        captured: Outcome,
        step_no: int,
        reasons: list[tuple[MissReason, str]],
    ) -> _Attempt | None:
        """The attempt whose pre-check passes against what was just captured, or None."""
        name = call.tool.name
        if captured.error is not None:
            reasons.append(
                (
                    MissReason.PRE_CHECK_RAISED,
                    f"pre-check capture of tool {name!r} raised {captured.error!r} at step {step_no}",
                )
            )
            return None
        current, check = captured.value, call.check
        assert check is not None
        if check.by_key:
            try:
                candidates = group.ordered(codec.fingerprint(current), keyed=True)
            except codec.CodecError as exc:
                reasons.append(
                    (
                        MissReason.SNAPSHOT_UNHASHABLE,
                        f"pre-check snapshot of tool {name!r} cannot be hashed: {exc}",
                    )
                )
                return None
        else:
            candidates = self._passing(check.passes, current, group.ordered(), reasons, name)
        return self._attempt(call, candidates, current, step_no, reasons)

    @staticmethod
    def _attempt(
        call: _Prepared,
        candidates: Iterator[Edge],
        pre: Any,
        step_no: int,
        reasons: list[tuple[MissReason, str]],
    ) -> _Attempt | None:
        first = next(candidates, None)
        if first is None:
            reasons.append(
                (
                    MissReason.PRE_CHECK_FAILED,
                    f"pre-check of tool {call.tool.name!r} failed at step {step_no}",
                )
            )
            return None
        return _Attempt(call.tool, call.step, call.call_args, call.kwargs, first, candidates, pre)

    @staticmethod
    def _passing(
        passes: Callable[[Any, Any], bool],
        current: Any,
        edges: Iterator[Edge],
        reasons: list[tuple[MissReason, str]],
        name: str,
    ) -> Iterator[Edge]:
        for edge in edges:
            if edge.step.pre is None:
                continue
            try:
                if passes(current, edge.step.pre.value):
                    yield edge
            except MissingThreshold:
                raise
            except Exception as exc:
                reasons.append(
                    (MissReason.PRE_CHECK_RAISED, f"pre-check compare of tool {name!r} raised {exc!r}")
                )

    def _post_check(
        self, attempt: _Attempt, check: Check[Any]
    ) -> Generator[Invoke, Outcome, tuple[Edge | None, Any]]:
        captured = yield Invoke(check.capture, attempt.call_args, attempt.kwargs)
        if captured.error is not None:
            logger.warning(
                "post-check capture of tool %r raised %s",
                attempt.tool.name,
                self.run.redact(repr(captured.error)),
            )
            return None, NOT_CAPTURED
        current = captured.value
        for edge in itertools.chain((attempt.first,), attempt.others):
            if edge.step.post is None:
                continue
            try:
                if check.passes(current, edge.step.post.value):
                    return edge, current
            except MissingThreshold:
                raise
            except Exception as exc:
                logger.warning(
                    "post-check compare of tool %r raised %s", attempt.tool.name, self.run.redact(repr(exc))
                )
        return None, current


def _frozen_snapshot(value: Any) -> Any:
    """A snapshot taken at replay, copied before later steps can change it (as is if unstorable)."""
    if value is NOT_CAPTURED:
        return value
    try:
        return frozen(value)
    except codec.CodecError:
        return value  # storing the run will report it


def drive(replay: Replay, on_async: Callable[[str], BaseException]) -> Ending:
    """Run a replay synchronously; an awaitable result raises ``on_async(name)``."""
    try:
        request = next(replay)
        while True:
            try:
                value = request.fn(*request.args, **request.kwargs)
            except Exception as exc:
                request = replay.send(Outcome(error=exc))
                continue
            if inspect.iscoroutine(value):
                value.close()
                raise on_async(getattr(request.fn, "__qualname__", repr(request.fn)))
            request = replay.send(Outcome(value=value))
    except StopIteration as stop:
        ending: Ending = stop.value
        return ending


async def drive_async(replay: Replay) -> Ending:
    """Run a replay, awaiting async tools and captures."""
    try:
        request = next(replay)
        while True:
            try:
                value = request.fn(*request.args, **request.kwargs)
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:
                request = replay.send(Outcome(error=exc))
                continue
            request = replay.send(Outcome(value=value))
    except StopIteration as stop:
        ending: Ending = stop.value
        return ending


class ActiveReplays:
    """The replays of one engine in progress: their runs, and the trajectories they follow."""

    def __init__(self) -> None:
        self._by_run: dict[int, Replayer] = {}
        self._lock = threading.Lock()

    def add(self, replayer: Replayer) -> None:
        with self._lock:
            self._by_run[replayer.run.id] = replayer

    def remove(self, run: Run) -> None:
        with self._lock:
            self._by_run.pop(run.id, None)

    def runs(self) -> list[Run]:
        """The runs in progress (a call from a thread without a run in its context may be theirs)."""
        with self._lock:
            return [r.run for r in self._by_run.values()]

    def protected(self) -> frozenset[str]:
        """The trajectories replays in progress follow (eviction leaves them alone)."""
        with self._lock:
            edges = [r.edge for r in self._by_run.values() if r.edge is not None]
        return frozenset().union(*(e.trajectories for e in edges))
