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
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import CoroutineType
from typing import Any

from muscle_mem.check import SNAPSHOT_DATA, Check, MissingThreshold
from muscle_mem.model import codec
from muscle_mem.model._evidence import History, uncovered
from muscle_mem.model._frozen_instances import fast_instance
from muscle_mem.model._observations import (
    Flat,
    Leaf,
    Observation,
    Observer,
    bound_names,
    bound_numbers,
    kept_leaves,
    key_of,
    params_key,
    scalar_key,
)
from muscle_mem.model._snapshot_keys import MEMO_KINDS, RECENT_KEYS, snapshot_key
from muscle_mem.model.provenance import SCALAR_TYPES, Broken, Disagreement, Unresolved, evaluate
from muscle_mem.model.trajectory import Step, Trajectory, arg_record
from muscle_mem.reasons import MissReason
from muscle_mem.record._run import NOT_CAPTURED, Call, Run, frozen
from muscle_mem.record.tools import Tool, ToolRegistry
from muscle_mem.replay._step_index import (
    NOT_RENEWED,
    Skipped,
    StepEdge,
    StepGroup,
    StepNode,
    TaskSteps,
    newest_first,
)

logger = logging.getLogger(__name__)


Invoke = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]
"""A call the driver must make: ``fn(*args, **kwargs)``, awaiting the result if it is awaitable."""


class Raised:
    """What the driver sends back when the call raised (otherwise it sends the value returned)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


@dataclass(frozen=True)
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
        """This ending with any secret value in its reason replaced by its name, and secret-looking texts redacted.

        An exception's text may quote the secret argument it was given, or a key a tool returned.
        """
        if self.reason is None:
            return self
        return dataclasses.replace(self, reason=run.redact(self.reason))


_Attempt = tuple[StepEdge, Iterator[StepEdge], Any, Tool, Step, tuple[Any, ...], dict[str, Any], StepGroup]
"""The call a step makes: its most recently successful candidate whose pre-check passed, the other
candidates (newest first, walked only if the first fails its post-check), what the pre-check
captured, the tool, the recorded step, and the live arguments."""


Replay = Generator[Invoke, Any, Ending]


class Replayer:
    """Walks a task index step by step, executing the first safe candidate each time.

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

    def replay(self, task: TaskSteps) -> Replay:
        """Replay as far as it is safe; the returned :class:`Ending` says whether it was a full hit."""
        try:
            node: StepNode = task.root
            if not node.groups and not node.ends:
                return _nothing_stored(self.run)
            run, calls, outputs, tools = self.run, self.run.calls, self.outputs, self.registry.by_name
            context = self.context
            compare = self.compare
            observer: Observer | None = None
            """Made at the first output that is not a plain scalar (before it, each key is a memo lookup)."""
            given: dict[frozenset[str], str] | None = None
            if compare and self.params:
                params_flat = Observer(self.params, run.hidden().values()).flatten_params()
                given = {}
            taken: list[StepEdge] = []
            """The edges followed so far (what each run through them saw is on their steps)."""
            renewals: list[tuple[int, Any]] = []
            """The steps whose edge a full hit renews, with the pre snapshot each was replayed on."""
            params_differ = False
            token: object | None = None if self.params or run.secrets else _NO_HISTORY
            """What this replay saw so far, while each output was one an earlier replay passed after the same history."""
            while True:
                step_no = len(calls)
                reasons: list[tuple[MissReason, str]] = []
                attempt: _Attempt | None = None
                blame: str | None = None
                groups = node.groups
                # newest first; a copy when there are few (one C call: another thread cannot change it meanwhile)
                for group in (
                    tuple(groups.values())[::-1] if len(groups) <= FEW_GROUPS else newest_first(groups)
                ):
                    if attempt is not None and group.latest_stamp() <= attempt[0].stamp:
                        break  # this group and the older ones cannot hold a more recent success
                    step = group.step
                    tool = tools.get(step.tool)
                    direct = group.direct
                    call_args: tuple[Any, ...] | None = None
                    if tool is not None and direct is not None and tool.version == step.version:
                        # what _prepare makes of arguments passed as they are, without its calls
                        fixed = direct[2]
                        if fixed is not None:
                            call_args, kwargs = fixed[0], dict(fixed[1]) if fixed[1] else {}
                        else:
                            try:  # each value as it is (at < 0) or a whole output, inline: a call per step less
                                live = []
                                for at, constant in direct[0]:
                                    live.append(constant if at < 0 else outputs[at])
                                kwargs = {}
                                for name, (at, constant) in direct[1]:
                                    kwargs[name] = constant if at < 0 else outputs[at]
                                call_args = tuple(live)
                            except IndexError:  # an output this run has not made: _prepare says so
                                call_args = None
                        if call_args is not None and tool.is_method:
                            call_args = (context, *call_args)
                    if call_args is None:
                        call = self._prepare(group, step_no, reasons)
                        if call is not None:
                            tool, call_args, kwargs = call
                    first = None
                    if call_args is not None:
                        assert tool is not None
                        check = tool.pre_check
                        pre = NOT_CAPTURED
                        if check is None:
                            candidates: Iterator[StepEdge] | None = group.ordered()
                        else:
                            pre = yield check.plain_capture, call_args, kwargs  # a snapshot made here, inline
                            kind = type(pre)
                            if kind not in SNAPSHOT_DATA and kind is not Raised:
                                pre = check.snapshot(pre)
                                kind = type(pre)
                            if check.by_key and kind is not Raised:
                                try:  # an equality check by hash: what _candidates does, without its call
                                    candidates = group.ordered(
                                        (kind in MEMO_KINDS and RECENT_KEYS.get((kind, pre)))
                                        or snapshot_key(pre),
                                        keyed=True,
                                    )
                                except codec.CodecError:
                                    candidates = self._candidates(tool, check, group, pre, step_no, reasons)
                            else:
                                candidates = self._candidates(tool, check, group, pre, step_no, reasons)
                        if candidates is not None:
                            first = next(candidates, None)
                            if given is not None and first is not None and step_no == 0:
                                first = _given_first(first, candidates, given, params_flat)
                                params_differ = params_differ or first is None
                                if first is None:
                                    continue
                            if first is None:
                                reasons.append(
                                    (
                                        MissReason.PRE_CHECK_FAILED,
                                        f"pre-check of tool {tool.name!r} failed at step {step_no}",
                                    )
                                )
                            elif attempt is None or first.stamp > attempt[0].stamp:
                                attempt = (first, candidates, pre, tool, step, call_args, kwargs, group)
                    if first is None:
                        blame = blame or group.step.tool
                if attempt is None:
                    if params_differ:
                        return (yield from self._general([(node, ())]))
                    if node.ends:
                        ending = self._finish(node)
                        if renewals and ending.trajectory is not None:
                            _renew(taken, renewals)
                        return ending
                    return Ending(
                        reason="; ".join(dict.fromkeys(text for _, text in reasons))
                        or f"no stored step {step_no} is safe",
                        tool=blame,
                        kind=reasons[0][0] if reasons else MissReason.NO_SAFE_STEP,
                    )
                first, _, pre, tool, step, call_args, kwargs, _ = attempt
                self.edge = first  # in use from now on: eviction leaves its trajectories alone
                value = yield tool.fn, call_args, kwargs
                if type(value) is Raised:
                    return _tool_raised(value, tool, step_no)
                edge: StepEdge | None
                if tool.post_check is None:
                    edge, post = first, NOT_CAPTURED
                else:
                    post = yield from self._post_capture(tool, tool.post_check, call_args, kwargs)
                    edge = None
                if (
                    type(value) in SCALAR_TYPES
                    and type(pre) in SCALAR_TYPES
                    and post is NOT_CAPTURED
                    and tool.plain
                ):
                    output = value  # what _replayed makes of it, without its call: a hit's common case
                    outputs.append(value)
                    calls.append(
                        tuple.__new__(
                            Call,
                            (tool.name, call_args, kwargs, value, True, 0.0, pre, post, step, tool, 0, value),
                        )
                    )
                else:
                    output = self._replayed(tool, value, call_args, kwargs, pre, post, step)
                    if type(output) is Ending:
                        return output
                if compare:
                    renewing = tool.pre_check
                    if renewing is not None and renewing.renew:
                        renewals.append((step_no, calls[-1].pre))
                    if token is not None and observer is None and edge is not None:
                        memo = edge.passed
                        if (
                            memo is not None
                            and memo[0] is token
                            and memo[1] == output
                            and type(output) is memo[2]
                        ):
                            token = memo[3]  # this history and output passed here before: the same verdict
                            taken.append(edge)  # (self.edge is this edge already: it is the first)
                            node = edge.node
                            continue
                    seen = first.step.observed
                    fast = edge is not None and seen is not None and not tool.secret_outputs
                    if fast and observer is None and not self.params and type(output) in SCALAR_TYPES:
                        assert seen is not None and edge is not None
                        if not seen.identities and scalar_key(output) == seen.key:
                            token = _passed(edge, token, output)
                            taken.append(edge)  # the common case: a plain scalar the recorded run saw too
                            self.edge = edge
                            node = edge.node
                            continue
                    if observer is None:
                        observer = self._observed(_history(taken) or (first.step.given,), step_no)
                    if fast and type(output) is int and not observer.bound_numbers and not observer.hidden:
                        assert seen is not None and edge is not None
                        if observer.int_key(step_no, output, seen.identities) == seen.key:
                            token = _passed(edge, token, output)
                            taken.append(
                                edge
                            )  # one int (an id passed on, a count), the observer's rules in one step
                            self.edge = edge
                            node = edge.node
                            continue
                        observer = self._observed(_history(taken) or (first.step.given,), step_no)  # anew
                    if tool.secret_outputs:
                        observer.hide(run.hidden().values())
                    flat = observer.flatten(step_no, output)
                    if (
                        edge is None
                        or seen is None
                        or seen.key != key_of(flat, seen.identities, observer.bound_numbers)
                    ):
                        token = None  # a verdict that weighed other runs' evidence is not remembered
                        edge, passing = _route(attempt, tool.post_check, post, flat, observer)
                        if edge is None and passing:
                            head = _history(taken)
                            return (
                                yield from self._general(
                                    [(e.node, (*head, *_seen_at(e, step_no))) for e in passing]
                                )
                            )
                    if edge is not None:
                        token = _passed(edge, token, output) if fast else None
                        taken.append(edge)
                        if edge.step.observed is not None and edge.step.observed.identities:
                            observer.free_leaves(step_no, flat, edge.step.observed.identities)
                elif edge is None:
                    edge = _post_passing(attempt, tool.post_check, post)
                if edge is None:
                    return Ending(
                        reason=f"post-check of tool {tool.name!r} failed at step {step_no}",
                        tool=tool.name,
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

    def _finish(self, node: StepNode) -> Ending:
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
        return fast_instance(Ending, trajectory=trajectory, answer=value)

    def _prepare(
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

    def _candidates(
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

    def _replayed(
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

    def _post_capture(
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

    def _general(self, members: list[tuple[StepNode, History]]) -> Replay:
        """Replay on from several recorded runs at once, while the evidence of those that go on covers what is seen.

        ``members``: the nodes reached, each with what its run saw on the way there (its params, then
        each step's output). A next call is made only if the runs that made it next saw, together,
        everything this replay saw (:func:`muscle_mem.model._evidence.uncovered`); the answer likewise.
        """
        calls = self.run.calls
        while True:
            step_no = len(calls)
            members = members[:MAX_MEMBERS]
            live, names = self._live(members[0][1] if members else ())
            options: dict[str, list[tuple[History, StepGroup]]] = {}
            ends: dict[str, list[tuple[History, Trajectory]]] = {}
            for node, history in members:
                for signature, group in tuple(node.groups.items()):
                    options.setdefault(signature, []).append((history, group))
                for trajectory in reversed(tuple(node.ends.values())):
                    ends.setdefault(codec.canonical(arg_record(trajectory.result)), []).append(
                        (history, trajectory)
                    )
            reasons: list[tuple[MissReason, str]] = []
            taken = False
            for pairs in sorted(options.values(), key=lambda p: -max(g.latest_stamp() for _, g in p)):
                if step_no > 0:
                    why = uncovered(live, [h for h, _ in pairs], names)
                    if why is not None:
                        reasons.append((MissReason.OBSERVATION_CHANGED, why))
                        continue
                call = self._prepare(pairs[0][1], step_no, reasons)
                if call is None:
                    continue
                tool, call_args, kwargs = call
                check = tool.pre_check
                pre = NOT_CAPTURED
                if check is not None:
                    pre = yield check.capture, call_args, kwargs
                allowed = False
                for _, group in pairs:
                    if check is None:
                        found: Iterator[StepEdge] | None = group.ordered()
                    else:
                        found = self._candidates(tool, check, group, pre, step_no, reasons)
                    if next(found or iter(()), None) is not None:
                        allowed = True
                        break
                if not allowed:
                    reasons.append(
                        (
                            MissReason.PRE_CHECK_FAILED,
                            f"pre-check of tool {tool.name!r} failed at step {step_no}",
                        )
                    )
                    continue
                # every run that made this call here is evidence of what its output may vary in
                edges = [(history, e) for history, group in pairs for e in group.ordered()][: 4 * MAX_MEMBERS]
                if step_no == 0:
                    edges = [((e.step.given,), e) for _, e in edges]
                    why = uncovered(live, [h for h, _ in edges], names)
                    if why is not None:
                        reasons.append((MissReason.OBSERVATION_CHANGED, why))
                        continue
                self.edge = edges[0][1]
                value = yield tool.fn, call_args, kwargs
                if type(value) is Raised:
                    return _tool_raised(value, tool, step_no)
                post = NOT_CAPTURED
                if tool.post_check is not None:
                    post = yield from self._post_capture(tool, tool.post_check, call_args, kwargs)
                    edges = [(h, e) for h, e in edges if _post_passes(tool.post_check, post, e)]
                output = self._replayed(
                    tool, value, call_args, kwargs, pre, post, edges[0][1].step if edges else pairs[0][1].step
                )
                if type(output) is Ending:
                    return output
                if not edges:
                    return Ending(
                        reason=f"post-check of tool {tool.name!r} failed at step {step_no}",
                        tool=tool.name,
                        kind=MissReason.POST_CHECK_FAILED,
                    )
                members = [(e.node, (*h, e.step.observed)) for h, e in edges]
                taken = True
                break
            if taken:
                continue
            for finishing in ends.values():
                why = uncovered(live, [h for h, _ in finishing], names) if step_no > 0 else None
                if why is not None:
                    reasons.append((MissReason.OBSERVATION_CHANGED, why))
                    continue
                for _, trajectory in finishing:
                    ending = self._answer(trajectory)
                    if ending is not None:
                        return ending
            if not reasons:
                reasons.append((MissReason.NO_SAFE_STEP, f"no stored step {step_no} is safe"))
            observed = [r for r in reasons if r[0] is MissReason.OBSERVATION_CHANGED]
            kind, _ = (observed or reasons)[0]
            blame = calls[-1].tool if kind is MissReason.OBSERVATION_CHANGED and calls else None
            return Ending(
                reason="; ".join(dict.fromkeys(text for _, text in (observed or reasons))),
                tool=blame,
                kind=kind,
            )

    def _observed(self, like: History, upto: int, live: list[tuple[Leaf, ...]] | None = None) -> Observer:
        """An observer that has seen the params and the outputs before step ``upto`` as the run ``like`` did.

        The params bound and the identities freed are those ``like`` recorded (its params, then each
        step's output). ``live`` gets what each observation shows as the evidence compares it.
        """
        observer = Observer(self.params, self.run.hidden().values())
        if self.params:
            flat = observer.flatten_params()
            if live is not None:
                live.append(kept_leaves(flat, frozenset()))
            bound = bound_names(like[0] if like else None)
            observer.bound_numbers = bound_numbers(self.params, bound)
            observer.free_params(bound)
        elif live is not None:
            live.append(())
        for step in range(upto):
            flat = observer.flatten(step, self.outputs[step])
            if live is not None:
                live.append(kept_leaves(flat, frozenset(), observer.bound_numbers))
            seen = like[step + 1] if step + 1 < len(like) else None
            if seen is not None and seen.identities:
                observer.free_leaves(step, flat, seen.identities)
        return observer

    def _live(self, like: History) -> tuple[list[tuple[Leaf, ...]], list[str]]:
        """What this replay saw so far (its params, then each output) as the evidence compares it, and their names."""
        live: list[tuple[Leaf, ...]] = []
        self._observed(like, len(self.outputs), live)
        return live, ["the params", *(f"step {step} {call.tool}" for step, call in enumerate(self.run.calls))]


MAX_MEMBERS = 64
"""The most recorded runs a replay follows at once where they saw different things."""


def _tool_raised(raised: Raised, tool: Tool, step_no: int) -> Ending:
    """The end of a replay whose tool raised (anything but an ``Exception`` goes on up)."""
    if not isinstance(raised.error, Exception):
        raise raised.error
    return Ending(
        reason=f"replayed tool {tool.name!r} raised {raised.error!r} at step {step_no}",
        tool=tool.name,
        kind=MissReason.TOOL_RAISED,
    )


_NO_HISTORY = object()
"""What a replay with no params and no secrets has seen before its first step."""
_REMEMBERED_TYPES = frozenset({int, str, bool, type(None)})
"""The outputs whose verdict an edge remembers: ``==`` between two of one of these types is identity of value."""


def _passed(edge: StepEdge, token: object | None, output: Any) -> object | None:
    """What a replay has seen once ``output`` passed at ``edge`` after ``token``; the edge remembers the verdict.

    A replay whose outputs are, step by step, those an earlier replay passed with (the same types and
    values after the same history) reaches the same verdicts, so it is spared the comparisons. None:
    the chain is broken (no token, or an output of another type), and this replay compares from here on.
    """
    kind = type(output)
    if token is None or kind not in _REMEMBERED_TYPES:
        return None
    after = object()
    edge.passed = (token, output, kind, after)
    return after


def _history(taken: Sequence[StepEdge]) -> tuple[Observation | None, ...]:
    """What the runs through the edges ``taken`` saw: their params, then each step's output."""
    if not taken:
        return ()
    return (taken[0].step.given, *(edge.step.observed for edge in taken))


def _seen_at(edge: StepEdge, step_no: int) -> tuple[Observation | None, ...]:
    """What the run through ``edge`` saw: its output, after its params at the first step."""
    step = edge.step
    return (step.given, step.observed) if step_no == 0 else (step.observed,)


def _given_first(
    first: StepEdge, others: Iterator[StepEdge], keys: dict[frozenset[str], str], flat: Flat
) -> StepEdge | None:
    """The first candidate of a first step whose run saw these params (up to the params it bound), or None."""
    for edge in itertools.chain((first,), others):
        given = edge.step.given
        if given is None:
            continue
        key = keys.get(given.identities)
        if key is None:
            key = keys[given.identities] = params_key(flat, given.identities)
        if key == given.key:
            return edge
    return None


def _route(
    attempt: _Attempt, check: Check[Any] | None, post: Any, flat: Flat, observer: Observer
) -> tuple[StepEdge | None, list[StepEdge]]:
    """The edge of a run that saw this output (and whose post snapshot passes), or None and the evidence to judge it by.

    The candidates whose pre snapshot passed are tried first, then every other recorded way of
    making the call. Without an exact match, every edge of the call whose post snapshot passes is
    evidence: runs in another state that made the same call show what the output may vary in (the
    next steps' checks still judge whether they may run now).
    """
    first, others, *_, group = attempt
    passing: list[StepEdge] = []
    keys: dict[frozenset[str], str] = {}
    tried: set[int] = set()
    for edge in itertools.chain((first,), others, group.ordered()):
        if id(edge) in tried:
            continue
        tried.add(id(edge))
        if check is not None and not _post_passes(check, post, edge):
            continue
        seen = edge.step.observed
        if seen is not None:
            key = keys.get(seen.identities)
            if key is None:
                key = keys[seen.identities] = key_of(flat, seen.identities, observer.bound_numbers)
            if key == seen.key:
                return edge, passing
        if len(passing) < MAX_MEMBERS:
            passing.append(edge)
        elif len(tried) > 4 * MAX_MEMBERS:
            break
    return None, passing


def _post_passing(attempt: _Attempt, check: Check[Any] | None, post: Any) -> StepEdge | None:
    """The first candidate whose post snapshot passes (observations not compared)."""
    first, others, *_ = attempt
    if check is None:
        return first
    return next((e for e in itertools.chain((first,), others) if _post_passes(check, post, e)), None)


def _post_passes(check: Check[Any], captured: Any, edge: StepEdge) -> bool:
    """Whether what the post-check captured passes against an edge's recorded post snapshot."""
    if captured is NOT_CAPTURED:
        return False
    snapshot = edge.step.post
    if snapshot is None:
        return False
    if check.by_key:
        return _key(captured) == snapshot.key
    if not snapshot.kept:
        return False
    try:
        return bool(check.passes(captured, snapshot.value))
    except MissingThreshold:
        raise
    except Exception as exc:  # its text may quote a secret: only its kind is logged
        logger.warning("post-check compare raised %s", type(exc).__name__)
        return False


FEW_GROUPS = 8
"""Up to this many groups at a node are walked from a copy (cheaper than a lazy walk)."""


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


def _renew(taken: list[StepEdge], renewals: list[tuple[int, Any]]) -> None:
    """After a full hit, keep each step's replayed pre snapshot on the edge it took (see ``Check.renew``)."""
    for step_no, pre in renewals:
        taken[step_no].renewed = pre


def _key(value: Any) -> str | None:
    """The hash an equality Check compares a snapshot by (None for a value that has none)."""
    try:
        return snapshot_key(value)
    except codec.CodecError:
        return None


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
    send = replay.send
    try:
        fn, args, kwargs = next(replay)
        while True:
            try:
                value = fn(*args, **kwargs)
            except Exception as exc:
                fn, args, kwargs = send(Raised(exc))
                continue
            if type(value) is CoroutineType:  # what inspect.iscoroutine tells, without its call
                value.close()
                raise on_async(getattr(fn, "__qualname__", repr(fn)))
            fn, args, kwargs = send(value)
    except StopIteration as stop:
        ending: Ending = stop.value
        return ending


async def drive_async(replay: Replay) -> Ending:
    """Run a replay, awaiting async tools and captures."""
    send = replay.send
    try:
        fn, args, kwargs = next(replay)
        while True:
            try:
                value = fn(*args, **kwargs)
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:
                fn, args, kwargs = send(Raised(exc))
                continue
            fn, args, kwargs = send(value)
    except StopIteration as stop:
        ending: Ending = stop.value
        return ending


class ActiveReplays:
    """The replays of one engine in progress: their runs, and the trajectories they follow."""

    def __init__(self) -> None:
        self._by_run: dict[int, Replayer] = {}

    def add(self, replayer: Replayer) -> None:
        self._by_run[replayer.run.id] = replayer  # one C call each, as the copies below: no lock

    def remove(self, run: Run) -> None:
        self._by_run.pop(run.id, None)

    def runs(self) -> list[Run]:
        """The runs in progress (a call from a thread without a run in its context may be theirs)."""
        return [r.run for r in tuple(self._by_run.values())]

    def protected(self) -> frozenset[str]:
        """The trajectories replays in progress follow (eviction leaves them alone)."""
        edges = [r.edge for r in tuple(self._by_run.values()) if r.edge is not None]
        return frozenset().union(*(e.trajectories for e in edges))


def _nothing_stored(run: Run) -> Ending:
    """The ending of a task with no stored trajectory, naming the similar task semantic matching found."""
    if run.similar is None:
        return Ending(reason="no trajectory is stored for this task", kind=MissReason.NO_TRAJECTORY)
    why = (
        f"no trajectory is stored for this task; the similar task {run.similar.text!r} is only a "
        "candidate: the agent solves this one, and its run is compared with that task's"
    )
    return Ending(reason=why, kind=MissReason.SIMILAR_TASK)
