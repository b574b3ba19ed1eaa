"""What a finished run observed: its params and each step's output, the identities it only copied on masked, the params it bound."""

from __future__ import annotations

import datetime
import functools
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from muscle_mem.model import codec
from muscle_mem.model._json_texts import looks_like_json
from muscle_mem.model._leaf_kinds import (
    MEMO_LENGTH,
    NUMBER_TEXT,
    is_identity,
    names_a_thing,
    path_text,
    seconds_of,
    text_kind,
)
from muscle_mem.model._observations import (
    Observation,
    Observer,
    kept_leaves,
    key_of,
    params_key,
    params_leaves,
)
from muscle_mem.model.provenance import (
    SCALAR_TYPES,
    Arg,
    Const,
    Guarded,
    Output,
    Param,
    Template,
    Text,
    nested,
)


@dataclass(slots=True)
class Copies:
    """What a run's recorded values copy: output leaves and params, and whether it chose numbers of its own."""

    outputs: set[tuple[int, str]]
    """(step, path) of each output value copied into a later call or the answer."""
    into_calls: set[tuple[int, str]]
    """Those copied into a later call's arguments."""
    params: dict[str, int]
    """How many times each param is copied."""
    numbers: bool
    """Whether a call's arguments hold a number the agent chose or computed (other than 0 and 1)."""
    dates: bool = False
    """Whether a call's arguments or the answer hold a date or a time no origin explains (one the
    agent may have computed from a time it read: next Monday, in three days)."""
    params_in_calls: dict[str, int] = field(default_factory=dict)
    """How many times each param is copied into a call's arguments (not the answer)."""


def copies_in(args: Iterable[Arg], answer: Arg) -> Copies:
    """What the recorded values copy (a guarded value's params are compared, not copied)."""
    copies = Copies(set(), set(), {}, False)
    outputs, into_calls = copies.outputs, copies.into_calls
    stack = [(arg, True) for arg in args]
    stack.append((answer, False))
    while stack:
        arg, in_call = stack.pop()
        kind = type(arg)
        if kind is Const:
            value = arg.value  # type: ignore[union-attr]
            if in_call and type(value) in (int, float) and value not in (0, 1):
                copies.numbers = True
            copies.dates = copies.dates or _looks_like_a_time(value)
        elif kind is Template:
            for part in arg.parts:  # type: ignore[union-attr]
                if isinstance(part, Text):
                    copies.dates = copies.dates or _looks_like_a_time(part.text)
                else:
                    stack.append((part, in_call))
        elif kind is Output or (kind is Guarded and type(arg.value) is Output):  # type: ignore[union-attr]
            output = arg if kind is Output else arg.value  # type: ignore[union-attr]
            if output.form.kind == "secret":  # type: ignore[union-attr]
                continue  # a value read out of a text: the text is compared, not freed as a copy
            path = output.path  # type: ignore[union-attr]
            place = (output.step, path_text(path) if path else "")  # type: ignore[union-attr]
            outputs.add(place)
            if in_call:
                into_calls.add(place)
        elif kind is Param:
            name = arg.name  # type: ignore[union-attr]
            copies.params[name] = copies.params.get(name, 0) + 1
            if in_call:
                copies.params_in_calls[name] = copies.params_in_calls.get(name, 0) + 1
        elif kind is not Guarded:  # a guarded value's params must keep their values: not free
            stack += [(inner, in_call) for inner in nested(arg)]
    return copies


def observe_run(
    params: Mapping[str, Any],
    outputs: list[Any],
    args: Sequence[Arg],
    answer: Arg,
    hidden: Iterable[Any],
    secret_params: Iterable[str],
    literal: str = "",
) -> tuple[Observation | None, list[Observation]]:
    """What a finished run saw: its params (None without any) and each step's output, identities masked.

    ``args``: the recorded arguments of the steps; ``answer``: the recorded answer.

    A param the run copied is free (data flow rebuilds it), and so is one an output repeats whole
    (an order looked up by its id), unless it is a category word (:func:`may_name_a_thing`): that
    is compared like any observation. A number param only where the run copied it once and chose
    no number of its own: ``book(nights, 2)`` with nights 2, or ``pay(120)`` for 3 at 40, could as
    well be computed from it, so the runs must show it first.
    """
    if not params and not hidden and int in _ONE_LEAF and _INTS.issuperset(map(type, outputs)):
        copied_whole = _whole_outputs_into_calls(args)
        if copied_whole is not None:
            return None, _int_observations(outputs, copied_whole)
    copies = copies_in(args, answer)
    copied = copies.outputs
    observer = Observer(params, hidden)
    given = None
    if params:
        bound = {
            name
            for name in copies.params
            if may_name_a_thing(name, params.get(name))
            and not _unproven_number(params.get(name), copies, name)
        }
        bound |= set(secret_params) | _echoed(params, outputs)
        flat = observer.flatten_params()
        identities = frozenset(
            path for path, *_ in flat.leaves if any(path.startswith("{" + name + "}") for name in bound)
        )
        given = Observation(params_key(flat, identities), identities, params_leaves(flat, identities))
        observer.bound_numbers = bound_numbers(params, bound)
        observer.free_params(bound)
    observed = []
    into_calls = copies.into_calls
    copied_at: dict[int, tuple[str, ...]] | None = None
    into_calls_at: dict[int, tuple[str, ...]] = {}
    quick_ints = int in _ONE_LEAF and not observer.hidden and not observer.bound_numbers
    for step, output in enumerate(outputs):
        kind = type(output)
        if kind is int and quick_ints:
            whole = (step, "")
            observed.append(observer.int_observation(step, output, whole in copied and whole in into_calls))
            continue
        if copied_at is None:  # the paths copied out of each step, once an output needs them
            copied_at, into_calls_at = _by_step(copied), _by_step(into_calls)
        here, calls_here = copied_at.get(step, ()), into_calls_at.get(step, ())
        record_text = kind is str and looks_like_json(output)
        if record_text and "" in here:  # a JSON text passed on whole is a text copied, not each value in it
            here, calls_here = tuple(p for p in here if p), tuple(p for p in calls_here if p)
        if kind in _ONE_LEAF and not record_text:
            observed.append(observer.scalar_observation(step, output, here, calls_here))
        else:
            flat = observer.flatten(step, output)
            identities = frozenset(
                leaf[0] for leaf in flat.leaves if is_identity(leaf, flat.raw, here, calls_here)
            )
            key = key_of(flat, identities, observer.bound_numbers)
            observed.append(
                Observation(key, identities, kept_leaves(flat, identities, observer.bound_numbers))
            )
            observer.free_leaves(step, flat, identities)
    if copies.dates or _states_a_time(literal):  # a date the task states may be a cutoff
        observed = [_times_computed_on(o) for o in observed]
        given = _times_computed_on(given) if given is not None else None
    return given, observed


def _whole_outputs_into_calls(args: Sequence[Arg]) -> frozenset[int] | None:
    """The steps whose whole output a call copies, if every argument is a constant or a whole output (else None).

    What :func:`copies_in` finds of such arguments, without its walk.
    """
    steps = set()
    for arg in args:
        kind = type(arg)
        if kind is Output and not arg.path:  # type: ignore[union-attr]
            if arg.form.kind != "secret":  # type: ignore[union-attr]
                steps.add(arg.step)  # type: ignore[union-attr]
        elif kind is not Const:
            return None
    return frozenset(steps)


def _int_observations(outputs: list[int], copied: frozenset[int]) -> list[Observation]:
    """What :func:`observe_run` makes of the outputs of a run without params or secrets, each an int.

    ``copied``: the steps whose whole output a later call copies. The observations of the same outputs
    so copied are the same objects, remembered (the outputs of a task's runs repeat).
    """
    key = (tuple(outputs), copied)
    found = _INT_RUNS.get(key)
    if found is None:
        observer = Observer({})
        found = tuple(
            [observer.int_observation(step, output, step in copied) for step, output in enumerate(outputs)]
        )
        if len(_INT_RUNS) >= _INT_RUNS_KEPT:
            _INT_RUNS.clear()
        _INT_RUNS[key] = found
    return list(found)


_INT_RUNS: dict[tuple[tuple[int, ...], frozenset[int]], tuple[Observation, ...]] = {}
"""The observations of the int outputs of runs seen lately (see :func:`_int_observations`)."""
_INT_RUNS_KEPT = 4096
_INTS = frozenset({int})
"""The type of every output of a run :func:`_int_observations` observes."""


FAILED_ATTEMPTS = "!raised"
"""The path of the leaf that counts how many times a call raised before it returned (the agent retried it)."""


def with_failed_attempts(observation: Observation, count: int) -> Observation:
    """A step's observation, and that its call raised ``count`` times before it returned.

    The agent saw the errors and may have decided on them (a rate doubled after a failure), so the
    run covers no replay whose call returned at once: a replay never sees an error it goes on from.
    """
    leaves = (*observation.leaves, (FAILED_ATTEMPTS, "n", count, ""))
    key = codec.hash_text(f"{observation.key}\x1f{FAILED_ATTEMPTS}={count}")
    return Observation(key, observation.identities, leaves)


COMPUTED_ON = "computed-on"
"""The label of a timestamp leaf in a run whose calls or answer hold a date or time no origin explains:
such a timestamp may be what the agent computed it from, so runs that saw it vary do not make it free
(it must lie within the range they saw; see :func:`muscle_mem.model._evidence_leaves.free_by_variation`)."""

_TIME_TEXT = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b|\b\d{1,2}:\d{2}\b"
    r"|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b"
    r"|\b\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b",
    re.IGNORECASE,
)
"""A date (ISO, with slashes, with a month's name), a time of day, or a weekday's name, in a text."""
_EPOCH_SECONDS = (1e9, 1e10)
"""Numbers in this range read as Unix times (2001 to 2286)."""


def _looks_like_a_time(value: Any) -> bool:
    """Whether a constant may be a date or a time the agent computed: a date or time object, a text
    holding one, or a number of Unix seconds."""
    kind = type(value)
    if kind is int or kind is float:
        return bool(_EPOCH_SECONDS[0] <= abs(value) < _EPOCH_SECONDS[1])
    if kind is str:
        return _TIME_TEXT.search(value) is not None
    return isinstance(value, _TIMES)


_TIMES = (datetime.date, datetime.time, datetime.timedelta)


def _states_a_time(text: str) -> bool:
    """Whether a task text states a date or a time, remembered for a short text (a task's text repeats)."""
    if len(text) <= MEMO_LENGTH:
        return _states_a_time_memo(text)
    return _holds_a_time(text)


def _holds_a_time(text: str) -> bool:
    return _TIME_TEXT.search(text) is not None


_states_a_time_memo = functools.lru_cache(maxsize=4096)(_holds_a_time)


def _times_computed_on(observation: Observation) -> Observation:
    """The observation with its timestamp leaves labelled :data:`COMPUTED_ON` (the key is unchanged)."""
    if not any(leaf[1] == "s" for leaf in observation.leaves):
        return observation
    leaves = tuple(
        (path, kind, value, COMPUTED_ON) if kind == "s" else (path, kind, value, label)
        for path, kind, value, label in observation.leaves
    )
    return Observation(observation.key, observation.identities, leaves)


_ONE_LEAF = SCALAR_TYPES
"""The outputs flattened into one leaf at the empty path (see :meth:`Observer.scalar_observation`)."""


def _unproven_number(value: Any, copies: Copies, name: str) -> bool:
    """Whether a number param's binding is not proven by one run (copied twice, or beside numbers of the agent's)."""
    if type(value) not in (int, float):
        return False
    if not copies.params_in_calls.get(name):  # only in the answer: a number the agent may have counted
        return True
    return copies.params.get(name, 0) > 1 or copies.numbers


def may_name_a_thing(name: str, value: Any) -> bool:
    """Whether a param's value may name a thing, so a run that copied it on is evidence for another value.

    Not a single word (a category: a plan, a priority, ``everyone``) unless the param's name says
    it names a thing (``name``, ``user``, ``city_name``): the agent may have decided on it, and one
    run shows nothing of what another word would make it do. A number the user declared a param
    stays free where the run copied it (the task varies in it, as in muscle-mem 0.1.0), under
    :func:`_unproven_number`'s proof.
    """
    if type(value) is str and text_kind(value) == "w":
        return names_a_thing(f"[{name!r}]")
    return True


def _echoed(params: Mapping[str, Any], outputs: list[Any]) -> set[str]:
    """The params an output repeats whole (an order looked up by its id): the equality is kept, not the value.

    A category word repeated under a key that does not name a thing (the ticket already has the
    priority asked for) says nothing of what it is: it stays compared.
    """
    wanted = {(type(v), v): name for name, v in params.items() if type(v) in (int, str) and v != ""}
    if not wanted:
        return set()
    probe = Observer({})
    found: set[str] = set()
    for step, output in enumerate(outputs):
        for path, value in probe.flatten(step, output).raw.items():
            name = wanted.get((type(value), value))
            if name is not None and (may_name_a_thing(name, value) or names_a_thing(path)):
                found.add(name)
    return found


def _by_step(places: set[tuple[int, str]]) -> dict[int, tuple[str, ...]]:
    """The paths copied out of each step's output."""
    found: dict[int, list[str]] = {}
    for step, path in places:
        found.setdefault(step, []).append(path)
    return {step: tuple(paths) for step, paths in found.items()}


def bound_numbers(params: Mapping[str, Any], bound: Iterable[str]) -> tuple[tuple[str, float], ...]:
    """The numeric params among those bound (their values free), by name: numbers, and texts of numbers ("13.38")."""
    found = []
    for name in sorted(bound):
        value: Any = params.get(name)
        if type(value) is str and NUMBER_TEXT.match(value):
            value = float(value)
        elif type(value) is str and text_kind(value) == "d":  # a date: its order to the dates read
            value = seconds_of(value)
        if type(value) in (int, float) and math.isfinite(value):
            found.append((name, float(value)))
    return tuple(found)


def bound_names(given: Observation | None) -> frozenset[str]:
    """The params a recorded run bound (masked in its params' observation)."""
    if given is None:
        return frozenset()
    return frozenset(path[1 : path.index("}")] for path in given.identities if path.startswith("{"))
