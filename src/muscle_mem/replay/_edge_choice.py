"""Which recorded edge a replayed step follows: the run that saw its output, the checks that pass, the verdicts edges remember."""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from muscle_mem.check import Check, MissingThreshold
from muscle_mem.model import codec
from muscle_mem.model._evidence_leaves import NUMERIC_KINDS
from muscle_mem.model._observations import Flat, Observation, Observer, key_of, params_key
from muscle_mem.model._snapshot_keys import snapshot_key
from muscle_mem.model.trajectory import Step
from muscle_mem.record._call_copies import NOT_PLAIN, plain_copy
from muscle_mem.record._run import NOT_CAPTURED
from muscle_mem.record.tools import Tool
from muscle_mem.replay._step_index import StepEdge, StepGroup, StepNode, TaskSteps

logger = logging.getLogger(__name__)

Attempt = tuple[StepEdge, Iterator[StepEdge], Any, Tool, Step, tuple[Any, ...], dict[str, Any], StepGroup]
"""The call a step makes: its most recently successful candidate whose pre-check passed, the other
candidates (newest first, walked only if the first fails its post-check), what the pre-check
captured, the tool, the recorded step, and the live arguments."""

MAX_MEMBERS = 64
"""The most recorded runs a replay follows at once where they saw different things."""

FEW_GROUPS = 8
"""Up to this many groups at a node are walked from a copy (cheaper than a lazy walk)."""

NO_HISTORY = object()
"""What a replay with no params and no secrets has seen before its first step."""
_REMEMBERED_TYPES = frozenset({int, str, bool, type(None)})
"""The outputs whose verdict an edge remembers: ``==`` between two of one of these types is identity of value."""


PARAMS_REMEMBERED = 4096
"""The sets of params values a task remembers what replays with them passed (then it starts again)."""


def params_passed(
    task: TaskSteps, params: Mapping[str, Any]
) -> tuple[object, dict[frozenset[str], str]] | None:
    """What a replay with these params starts from: the token of their history, and their keys made so far.

    The same for every replay of the task with params equal in type and value (ints, texts, bools,
    None), so that the verdicts an earlier replay reached with them are remembered (see :func:`passed`).
    None for params of other types: such a replay compares every output.
    """
    if not all(type(value) in _REMEMBERED_TYPES for value in params.values()):
        return None
    key = tuple(sorted((name, type(value), value) for name, value in params.items()))
    remembered = task.params_passed
    found = remembered.get(key)
    if found is None:
        if len(remembered) >= PARAMS_REMEMBERED:
            remembered.clear()
        found = remembered.setdefault(key, (object(), {}))
    return found


def passed(edge: StepEdge, token: object | None, output: Any) -> object | None:
    """What a replay has seen once ``output`` passed at ``edge`` after ``token``; the edge remembers the verdict.

    A replay whose outputs are, step by step, those an earlier replay passed with (the same types and
    values after the same history) reaches the same verdicts, so it is spared the comparisons. None:
    the chain is broken (no token, or an output that is not plain data), and this replay compares
    from here on. A record (dicts with text keys and lists of plain data) is remembered as the copy
    :func:`~muscle_mem.record._call_copies.plain_copy` makes, and matched only by :func:`same_plain`.
    """
    kind = type(output)
    if token is None:
        return None
    if kind in _REMEMBERED_TYPES:
        kept, whole = output, False
    else:
        kept = plain_copy(output)
        if kept is NOT_PLAIN:
            return None
        whole = True
    after = object()
    edge.passed = (token, kept, kind, after, whole)
    return after


def same_plain(kept: Any, value: Any) -> bool:
    """Whether ``value`` is ``kept`` to the type of every part: the same keys in the same order, ``1`` not ``True``, ``-0.0`` not ``0.0``."""
    kind = type(kept)
    if type(value) is not kind:
        return False
    if kind is dict:
        if len(kept) != len(value):
            return False
        for (key, item), (other_key, other) in zip(kept.items(), value.items(), strict=True):
            if key != other_key or type(other_key) is not str or not same_plain(item, other):
                return False
        return True
    if kind is list or kind is tuple:
        return len(kept) == len(value) and all(same_plain(a, b) for a, b in zip(kept, value, strict=True))
    if kind is float:
        return bool(kept == value and math.copysign(1.0, kept) == math.copysign(1.0, value))
    return bool(kept == value)


def history_of(taken: Sequence[StepEdge]) -> tuple[Observation | None, ...]:
    """What the runs through the edges ``taken`` saw: their params, then each step's output."""
    if not taken:
        return ()
    return (taken[0].step.given, *(edge.step.observed for edge in taken))


def seen_at(edge: StepEdge, step_no: int) -> tuple[Observation | None, ...]:
    """What the run through ``edge`` saw: its output, after its params at the first step."""
    step = edge.step
    return (step.given, step.observed) if step_no == 0 else (step.observed,)


def given_first(
    first: StepEdge, others: Iterator[StepEdge], keys: dict[frozenset[str], str], flat: Callable[[], Flat]
) -> StepEdge | None:
    """The first candidate of a first step whose run saw these params (up to the params it bound), or None.

    ``keys``: the params' keys by the identities they are keyed under, filled as they are made;
    ``flat``: the params flattened (called only for a key not made yet).
    """
    for edge in itertools.chain((first,), others):
        given = edge.step.given
        if given is None:
            continue
        key = keys.get(given.identities)
        if key is None:
            key = keys[given.identities] = params_key(flat(), given.identities)
        if key == given.key:
            return edge
    return None


def saw_these(keys: dict[frozenset[str], str], flat: Callable[[], Flat]) -> Callable[[StepEdge], bool]:
    """Whether a first step's edge belongs to a run that saw these params (see :func:`given_first`)."""
    return lambda edge: given_first(edge, iter(()), keys, flat) is not None


def route(
    attempt: Attempt,
    check: Check[Any] | None,
    post: Any,
    flat: Flat,
    observer: Observer,
    saw_params: Callable[[StepEdge], bool] | None = None,
) -> tuple[StepEdge | None, list[StepEdge]]:
    """The edge of a run that saw this output (and whose post snapshot passes), or None and the evidence to judge it by.

    The candidates whose pre snapshot passed are tried first, then every other recorded way of
    making the call. Without an exact match, every edge of the call whose post snapshot passes is
    evidence: runs in another state that made the same call show what the output may vary in (the
    next steps' checks still judge whether they may run now). ``saw_params`` (at a first step):
    whether an edge's run saw these params; one that did not is evidence only, never an exact match,
    so one run's params and another's output are not taken for a run that saw both.
    """
    first, others, *_, group = attempt
    passing: list[StepEdge] = []
    keys: dict[frozenset[str], str] = {}
    tried: set[int] = set()
    masked: StepEdge | None = None
    """An edge matched only with the identities its run masked: a run that saw this output as it is,
    and went on otherwise, would make that value evidence of its own way."""
    for edge in itertools.chain((first,), others, group.ordered()):
        if id(edge) in tried:
            continue
        tried.add(id(edge))
        if check is not None and not post_passes(check, post, edge):
            continue
        seen = edge.step.observed
        if seen is not None and (saw_params is None or saw_params(edge)):
            key = keys.get(seen.identities)
            if key is None:
                key = keys[seen.identities] = key_of(flat, seen.identities, observer.bound_numbers)
            if key == seen.key:
                if not seen.identities:
                    return edge, passing  # seen as it is: before a run that saw it only masked
                masked = masked or edge
        if len(passing) < MAX_MEMBERS:
            passing.append(edge)
        elif len(tried) > 4 * MAX_MEMBERS:
            break
    return masked, passing


def literal_match(
    group: StepGroup,
    edge: StepEdge,
    literal: Callable[[], str],
    saw_params: Callable[[StepEdge], bool] | None = None,
) -> StepEdge:
    """The edge to follow where ``edge`` matched this output only with the identities its run masked.

    A run that made the call in the same checked state and saw the output as it is, nothing
    masked (``literal()``: its key so), went on by that value: its edge is followed. Else ``edge``
    (the identity is free). Only the edges of that state are read: no other node is loaded.
    ``saw_params`` (at a first step): whether an edge's run saw these params; a run that saw others
    went on by them too, so its edge is not followed (one run's params are not another's).
    """
    key: str | None = None
    for other in _alike(group, edge):
        seen = other.step.observed
        if other is edge or seen is None or seen.identities or other.node is edge.node:
            continue
        if saw_params is not None and not saw_params(other):
            continue
        key = key or literal()
        if key == seen.key:
            return other
    return edge


def _alike(group: StepGroup, edge: StepEdge) -> Iterator[StepEdge]:
    """The edges in memory of the call made in the state ``edge``'s pre snapshot holds (none is read for it)."""
    pre = edge.step.pre
    return group.known(pre.key if pre is not None else None)


def same_calls(
    root: StepNode,
    path: Sequence[StepEdge],
    last: StepGroup,
    check: Check[Any] | None,
    post: Any,
) -> list[tuple[StepNode, tuple[Observation | None, ...]]]:
    """Every recorded run that made the calls of ``path`` then ``last``'s, wherever the tree files it, and saw alike, with what it saw.

    The tree files a run's steps under what the run observed, so runs that made the same calls in
    the same order may sit on other branches. Each is evidence of what the outputs may vary in, as
    the runs a replay on evidence starts from at a first step are, if before the last call it saw
    what the runs of ``path`` saw but for numbers and dates (:func:`alike`): the union of runs that
    saw different categories would cover pairs of them no run showed. Those whose post snapshot of
    the last call fails ``post`` are left out. At most :data:`MAX_MEMBERS` runs, the most recent
    first (a bound reached leaves runs out: a replay on less evidence only stops sooner).
    """
    signatures = [edge.step.signature for edge in path]
    signatures.append(last.step.signature)
    own = history_of(path)
    reached: list[tuple[StepNode, tuple[Observation | None, ...]]] = [(root, ())]
    for depth, signature in enumerate(signatures):
        final = depth == len(path)  # the call just made: post snapshots sift its edges, so more are read
        edges = (
            (edge, history)
            for node, history in reached
            if (group := node.groups.get(signature)) is not None
            for edge in group.ordered()
            if final or alike(own[depth + (depth > 0) : depth + 2], seen_at(edge, depth))
        )
        if final and check is not None:
            edges = ((edge, history) for edge, history in edges if post_passes(check, post, edge))
        reached = [
            (edge.node, (*history, *seen_at(edge, depth)))
            for edge, history in itertools.islice(edges, 4 * MAX_MEMBERS if final else MAX_MEMBERS)
        ]
    return reached[:MAX_MEMBERS]


def alike(own: Sequence[Observation | None], other: Sequence[Observation | None]) -> bool:
    """Whether two runs saw the same things, observation by observation, numbers and dates apart.

    Every leaf but a number, a date, a timestamp, a number written as a text or an identifier-shaped
    text must be the same: a category, a text, a bool, a list's length, an identity's label, a number's
    order to a bound param. An identifier the runs saw take two values is free, and what the runs saw
    together is judged as a whole where they weigh (:func:`~muscle_mem.model._evidence.uncovered`):
    leaving one out gathers a run that saw another region, as a region no run saw would.
    """
    if len(own) != len(other):
        return False
    for mine, theirs in zip(own, other, strict=True):
        if mine is None or theirs is None:
            if mine is not theirs:
                return False
        elif _steady_leaves(mine) != _steady_leaves(theirs):
            return False
    return True


def _steady_leaves(observation: Observation) -> frozenset[tuple[str, str, Any]]:
    """The leaves of an observation that are not numbers or dates: where, what kind, and what (an identity's label)."""
    return frozenset(
        (path, kind, label if kind == "#" else value)
        for path, kind, value, label in observation.leaves
        if kind not in NUMERIC_KINDS and kind != "i"
    )


def post_passing(attempt: Attempt, check: Check[Any] | None, post: Any) -> StepEdge | None:
    """The first candidate whose post snapshot passes (observations not compared)."""
    first, others, *_ = attempt
    if check is None:
        return first
    return next((e for e in itertools.chain((first,), others) if post_passes(check, post, e)), None)


def post_passes(check: Check[Any], captured: Any, edge: StepEdge) -> bool:
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


def renew(taken: list[StepEdge], renewals: list[tuple[int, Any]]) -> None:
    """After a full hit, keep each step's replayed pre snapshot on the edge it took (see ``Check.renew``)."""
    for step_no, pre in renewals:
        taken[step_no].renewed = pre


def _key(value: Any) -> str | None:
    """The hash an equality Check compares a snapshot by (None for a value that has none)."""
    try:
        return snapshot_key(value)
    except codec.CodecError:
        return None
