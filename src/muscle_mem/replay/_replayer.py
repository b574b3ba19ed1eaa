"""Choosing and executing the next safe step of a stored trajectory: the walk of one replay.

The replay is a generator that yields the calls it needs made (captures and tool bodies) and
receives their outcomes (:mod:`muscle_mem.replay._drivers`), so one piece of logic serves both the
sync and the async engine.

At each point, the candidate next steps are tried most recently successful first, and across
different calls too: the call whose passing candidate succeeded last is made, even if another call
succeeded later in a state that does not pass now.

Where one stored trajectory ends at a point from which others go on, the replay goes on when a next
step is safe (the pre-checks judge), and finishes with the trajectory that ends there otherwise: a
trajectory cut short because the environment differed must not stop a later run half-way.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from muscle_mem.check import SNAPSHOT_DATA, MissingThreshold
from muscle_mem.model import codec
from muscle_mem.model._json_texts import looks_like_json
from muscle_mem.model._observations import Flat, Observer, key_of, scalar_key
from muscle_mem.model._snapshot_keys import MEMO_KINDS, RECENT_KEYS, snapshot_key
from muscle_mem.model.provenance import SCALAR_TYPES
from muscle_mem.reasons import MissReason
from muscle_mem.record._run import NOT_CAPTURED, Call
from muscle_mem.replay._drivers import Ending, Raised, Replay
from muscle_mem.replay._edge_choice import (
    FEW_GROUPS,
    NO_HISTORY,
    Attempt,
    given_first,
    history_of,
    literal_match,
    params_passed,
    passed,
    post_passing,
    renew,
    route,
    same_calls,
    same_plain,
    saw_these,
    seen_at,
)
from muscle_mem.replay._evidence_replay import observed, replay_on_evidence
from muscle_mem.replay._replay_state import ReplayState, nothing_stored, tool_raised
from muscle_mem.replay._step_index import StepEdge, StepNode, TaskSteps, newest_first


class Replayer(ReplayState):
    """Walks a task index step by step, executing the first safe candidate each time."""

    __slots__ = ()

    def replay(self, task: TaskSteps) -> Replay:
        """Replay as far as it is safe; the returned :class:`Ending` says whether it was a full hit."""
        try:
            node: StepNode = task.root
            if not node.groups and not node.ends:
                return nothing_stored(self.run)
            run, calls, outputs, tools = self.run, self.run.calls, self.outputs, self.registry.by_name
            context = self.context
            compare = self.compare
            observer: Observer | None = None
            """Made at the first output that is not a plain scalar (before it, each key is a memo lookup)."""
            given: dict[frozenset[str], str] | None = None
            token: object | None = None
            """What this replay saw so far, while each output was one an earlier replay passed after the same history."""
            if compare and self.params:
                params = self.params
                flat_params: list[Flat] = []

                def params_flat() -> Flat:
                    if not flat_params:
                        flat_params.append(Observer(params, run.hidden().values()).flatten_params())
                    return flat_params[0]

                remembered = None if run.secrets else params_passed(task, params)
                if remembered is None:
                    given = {}
                else:
                    token, given = remembered
            elif not run.secrets:
                token = NO_HISTORY
            taken: list[StepEdge] = []
            """The edges followed so far (what each run through them saw is on their steps)."""
            renewals: list[tuple[int, Any]] = []
            """The steps whose edge a full hit renews, with the pre snapshot each was replayed on."""
            params_differ = False
            while True:
                step_no = len(calls)
                reasons: list[tuple[MissReason, str]] = []
                attempt: Attempt | None = None
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
                        # what prepare makes of arguments passed as they are, without its calls
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
                            except IndexError:  # an output this run has not made: prepare says so
                                call_args = None
                        if call_args is not None and tool.is_method:
                            call_args = (context, *call_args)
                    if call_args is None:
                        call = self.prepare(group, step_no, reasons)
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
                                try:  # an equality check by hash: what candidates does, without its call
                                    candidates = group.ordered(
                                        (kind in MEMO_KINDS and RECENT_KEYS.get((kind, pre)))
                                        or snapshot_key(pre),
                                        keyed=True,
                                    )
                                except codec.CodecError:
                                    candidates = self.candidates(tool, check, group, pre, step_no, reasons)
                            else:
                                candidates = self.candidates(tool, check, group, pre, step_no, reasons)
                        if candidates is not None:
                            first = next(candidates, None)
                            if given is not None and first is not None and step_no == 0:
                                first = given_first(first, candidates, given, params_flat)
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
                        return (yield from replay_on_evidence(self, [(node, ())]))
                    if node.ends:
                        ending = self.finish(node)
                        if renewals and ending.trajectory is not None:
                            renew(taken, renewals)
                        return ending
                    return Ending(
                        reason="; ".join(dict.fromkeys(text for _, text in reasons))
                        or f"no stored step {step_no} is safe",
                        tool=blame,
                        kind=reasons[0][0] if reasons else MissReason.NO_SAFE_STEP,
                    )
                first, _, pre, tool, step, call_args, kwargs, _ = attempt
                self.edge = first  # in use from now on: eviction leaves its trajectories alone
                run.replaying = first.step
                value = yield tool.fn, call_args, kwargs
                if type(value) is Raised:
                    return tool_raised(value, tool, step_no, run, call_args, kwargs)
                edge: StepEdge | None
                if tool.post_check is None:
                    edge, post = first, NOT_CAPTURED
                else:
                    post = yield from self.post_capture(tool, tool.post_check, call_args, kwargs)
                    edge = None
                if (
                    type(value) in SCALAR_TYPES
                    and type(pre) in SCALAR_TYPES
                    and post is NOT_CAPTURED
                    and tool.plain
                ):
                    output = value  # what replayed makes of it, without its call: a hit's common case
                    outputs.append(value)
                    calls.append(
                        tuple.__new__(
                            Call,
                            (tool.name, call_args, kwargs, value, True, 0.0, pre, post, step, tool, 0, value),
                        )
                    )
                else:
                    output = self.replayed(tool, value, call_args, kwargs, pre, post, step)
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
                            and (not memo[4] or same_plain(memo[1], output))
                        ):
                            token = memo[3]  # this history and output passed here before: the same verdict
                            taken.append(edge)  # (self.edge is this edge already: it is the first)
                            node = edge.node
                            continue
                    seen = first.step.observed
                    fast = edge is not None and seen is not None and not tool.secret_outputs
                    if (
                        fast
                        and observer is None
                        and not self.params
                        and type(output) in SCALAR_TYPES
                        and not (type(output) is str and looks_like_json(output))  # a record: walked
                    ):
                        assert seen is not None and edge is not None
                        if not seen.identities and scalar_key(output) == seen.key:
                            token = passed(edge, token, output)
                            taken.append(edge)  # the common case: a plain scalar the recorded run saw too
                            self.edge = edge
                            node = edge.node
                            continue
                    if observer is None:
                        observer = observed(self, history_of(taken) or (first.step.given,), step_no)
                    saw = saw_these(given, params_flat) if given is not None and step_no == 0 else None
                    if fast and type(output) is int and not observer.bound_numbers and not observer.hidden:
                        assert seen is not None and edge is not None
                        if observer.int_key(step_no, output, seen.identities) == seen.key and (
                            not seen.identities
                            or literal_match(
                                attempt[-1],
                                edge,
                                partial(observer.int_key, step_no, output, frozenset()),
                                saw,
                            )
                            is edge
                        ):
                            token = passed(edge, token, output)
                            taken.append(
                                edge
                            )  # one int (an id passed on, a count), the observer's rules in one step
                            self.edge = edge
                            node = edge.node
                            continue
                        observer = observed(self, history_of(taken) or (first.step.given,), step_no)  # anew
                    if tool.secret_outputs:
                        observer.hide(run.hidden().values())
                    flat = observer.flatten(step_no, output)
                    if edge is not None and seen is not None and seen.identities:
                        literally = partial(
                            key_of, flat, frozenset(), observer.bound_numbers
                        )  # nothing masked
                        edge = literal_match(attempt[-1], edge, literally, saw)
                        seen = edge.step.observed
                    if (
                        edge is None
                        or seen is None
                        or seen.key != key_of(flat, seen.identities, observer.bound_numbers)
                    ):
                        token = None  # a verdict that weighed other runs' evidence is not remembered
                        edge, passing = route(attempt, tool.post_check, post, flat, observer, saw)
                        if edge is None:
                            head = history_of(taken)
                            members = [(e.node, (*head, *seen_at(e, step_no))) for e in passing]
                            if step_no > 0:  # runs of the same calls filed on other branches weigh too
                                near = {id(node) for node, _ in members}
                                members += [
                                    member
                                    for member in same_calls(
                                        task.root, taken, attempt[-1], tool.post_check, post
                                    )
                                    if id(member[0]) not in near
                                ]
                            if members:
                                return (yield from replay_on_evidence(self, members))
                    if edge is not None:
                        token = passed(edge, token, output) if fast else None
                        taken.append(edge)
                        if edge.step.observed is not None and edge.step.observed.identities:
                            observer.free_leaves(step_no, flat, edge.step.observed.identities)
                elif edge is None:
                    edge = post_passing(attempt, tool.post_check, post)
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
            return self.broken(exc)
