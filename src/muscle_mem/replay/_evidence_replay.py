"""The replay on evidence: several recorded runs followed at once, where an output matched no single one."""

from __future__ import annotations

from collections.abc import Iterator

from muscle_mem.model import codec
from muscle_mem.model._evidence import uncovered
from muscle_mem.model._evidence_computed import constants_of
from muscle_mem.model._evidence_places import History
from muscle_mem.model._leaf_kinds import Leaf
from muscle_mem.model._observations import Observer, kept_leaves, params_leaves
from muscle_mem.model._run_observations import bound_names, bound_numbers
from muscle_mem.model.trajectory import Trajectory, arg_record
from muscle_mem.reasons import MissReason
from muscle_mem.record._run import NOT_CAPTURED
from muscle_mem.replay._drivers import Ending, Raised, Replay
from muscle_mem.replay._edge_choice import MAX_MEMBERS, post_passes
from muscle_mem.replay._replay_state import ReplayState, tool_raised
from muscle_mem.replay._step_index import StepEdge, StepGroup, StepNode


def replay_on_evidence(state: ReplayState, members: list[tuple[StepNode, History]]) -> Replay:
    """Replay on from several recorded runs at once, while the evidence of those that go on covers what is seen.

    ``members``: the nodes reached, each with what its run saw on the way there (its params, then
    each step's output). A next call is made only if the runs that made it next saw, together,
    everything this replay saw (:func:`muscle_mem.model._evidence.uncovered`); the answer likewise.
    """
    calls = state.run.calls
    while True:
        step_no = len(calls)
        members = members[:MAX_MEMBERS]
        live, names = _live(state, members[0][1] if members else ())
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
        ways = [[h for h, _ in pairs] for pairs in options.values()] + [
            [h for h, _ in finishing] for finishing in ends.values()
        ]
        for pairs in sorted(options.values(), key=lambda p: -max(g.latest_stamp() for _, g in p)):
            constants = constants_of(pairs[0][1].step.arguments, state.params)
            if step_no > 0:
                seen = _seen_when_decided(pairs, step_no) + 1  # the params, then the outputs seen
                mine = [h[:seen] for h, _ in pairs]
                otherwise = _otherwise(ways, pairs[0][0], seen)
                why = uncovered(live[:seen], mine, names, constants, otherwise)
                if why is not None:
                    reasons.append((MissReason.OBSERVATION_CHANGED, why))
                    continue
            call = state.prepare(pairs[0][1], step_no, reasons)
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
                    found = state.candidates(tool, check, group, pre, step_no, reasons)
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
                why = uncovered(live, [h for h, _ in edges], names, constants)
                if why is not None:
                    reasons.append((MissReason.OBSERVATION_CHANGED, why))
                    continue
            state.edge = edges[0][1]
            state.run.replaying = state.edge.step
            value = yield tool.fn, call_args, kwargs
            if type(value) is Raised:
                return tool_raised(value, tool, step_no, state.run, call_args, kwargs)
            post = NOT_CAPTURED
            if tool.post_check is not None:
                post = yield from state.post_capture(tool, tool.post_check, call_args, kwargs)
                edges = [(h, e) for h, e in edges if post_passes(tool.post_check, post, e)]
            output = state.replayed(
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
            constants = constants_of((finishing[0][1].result,), state.params)
            why = None
            if step_no > 0:
                otherwise = _otherwise(ways, finishing[0][0], len(live))
                why = uncovered(live, [h for h, _ in finishing], names, constants, otherwise)
            if why is not None:
                reasons.append((MissReason.OBSERVATION_CHANGED, why))
                continue
            for _, trajectory in finishing:
                ending = state.answer(trajectory)
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


def _otherwise(ways: list[list[History]], mine: History, seen: int) -> list[History]:
    """What the runs that went on another way saw (up to ``seen`` observations): all ways but the one ``mine`` is in."""
    return [h[:seen] for way in ways if not any(h is mine for h in way) for h in way]


def _seen_when_decided(pairs: list[tuple[History, StepGroup]], step_no: int) -> int:
    """How many outputs the agent had seen when it decided the next call, by the runs that made it.

    Calls of one model turn are decided together, on what the run saw before the turn: the latest
    point any of the runs decided it at (every output before the call where a run does not say).
    """
    seen = 0
    for _, group in pairs:
        for edge in group.ordered():
            decided = edge.step.decided_at
            if decided is None or decided >= step_no:
                return step_no
            seen = max(seen, decided)
    return seen


def observed(
    state: ReplayState, like: History, upto: int, live: list[tuple[Leaf, ...]] | None = None
) -> Observer:
    """An observer that has seen the params and the outputs before step ``upto`` as the run ``like`` did.

    The params bound and the identities freed are those ``like`` recorded (its params, then each
    step's output). ``live`` gets what each observation shows as the evidence compares it.
    """
    observer = Observer(state.params, state.run.hidden().values())
    if state.params:
        flat = observer.flatten_params()
        if live is not None:
            live.append(params_leaves(flat, frozenset(), labelled=True))
        bound = bound_names(like[0] if like else None)
        observer.bound_numbers = bound_numbers(state.params, bound)
        observer.free_params(bound)
    elif live is not None:
        live.append(())
    for step in range(upto):
        flat = observer.flatten(step, state.outputs[step])
        if live is not None:
            live.append(kept_leaves(flat, frozenset(), observer.bound_numbers, labelled=True))
        seen = like[step + 1] if step + 1 < len(like) else None
        if seen is not None and seen.identities:
            observer.free_leaves(step, flat, seen.identities)
    return observer


def _live(state: ReplayState, like: History) -> tuple[list[tuple[Leaf, ...]], list[str]]:
    """What this replay saw so far (its params, then each output) as the evidence compares it, and their names."""
    live: list[tuple[Leaf, ...]] = []
    observed(state, like, len(state.outputs), live)
    return live, ["the params", *(f"step {step} {call.tool}" for step, call in enumerate(state.run.calls))]
