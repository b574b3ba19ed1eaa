"""Each leaf a replay saw against the same leaf in the runs: kinds, ranges, grids, values free by variation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from muscle_mem.model._evidence_places import History, Live, Place, label_text, shown_all, shown_leaf, where
from muscle_mem.model._leaf_kinds import Leaf, can_name, names_a_thing
from muscle_mem.model._run_observations import COMPUTED_ON, FAILED_ATTEMPTS

TOLERANCE = 1e-9
"""How close, relative to their size, two numbers are to be equal (float noise)."""

NUMERIC_KINDS = frozenset("nqds")
"""The kinds of leaf that hold a number: a number, one written as text, a date, a timestamp."""

TEXTUAL = frozenset("wip")
"""The kinds of leaf whose equalities are relations: a category word, an identifier, other text."""

PLAIN_TEXTS = frozenset("wp")
"""A category word and another text: one the runs saw is one they saw, whatever kinds the others were."""


def numbers_uncovered(live: Live, alike: Sequence[History], names: Sequence[str]) -> str | None:
    """Why a number, date, timestamp or list length lies outside what the runs that saw the replay's whole saw.

    A list's length must lie within their range; any other number as :func:`value_covered` judges
    it, free only where these runs saw it vary.
    """
    these = [by_place(h) for h in alike]
    for at, leaves in enumerate(live):
        for path, kind, value, _label in leaves:
            if (kind not in NUMERIC_KINDS and kind != "l") or type(value) not in (int, float):
                continue
            near = [leaf for run in these if (leaf := run.get((at, path))) is not None and leaf[1] != "#"]
            if not near:
                continue
            if kind == "l":
                covered = within(value, [leaf[2] for leaf in near])
            else:
                covered = value_covered(kind, value, near, path)
            if not covered:
                return (
                    f"{where(names[at], path)}: {shown_leaf(kind, value)}, recorded {shown_all(near)} "
                    "where the runs saw what the replay saw with it"
                )
    return None


def taken_elsewhere(
    live: Live, histories: Sequence[History], elsewhere: Sequence[History], names: Sequence[str]
) -> str | None:
    """Why a value the runs took for an identity selects another way: runs that went otherwise saw it as it is.

    An identity is free because data flow rebuilds what depends on it; but where runs that made
    another call, or gave another answer, saw this very value at that place as a plain value (``ok``
    then went on to ``b``; ``ok2``, passed on, ended), the value is what they went on by.
    """
    masked = {
        (at, leaf[0])
        for history in histories
        for at, observation in enumerate(history)
        if observation is not None
        for leaf in observation.leaves
        if leaf[1] == "#"
    }
    if not masked:
        return None
    plain = {
        (at, leaf[0], leaf[2])
        for history in elsewhere
        for at, observation in enumerate(history)
        if observation is not None
        for leaf in observation.leaves
        if leaf[1] != "#"
    }
    for at, leaves in enumerate(live):
        for path, kind, value, _label in leaves:
            if (at, path) in masked and (at, path, value) in plain:
                return (
                    f"{where(names[at], path)}: {shown_leaf(kind, value)}, seen by a recorded run that went "
                    "on otherwise, where the runs that went on this way passed another value on"
                )
    return None


def by_place(history: History) -> dict[Place, Leaf]:
    """What a run saw, leaf by leaf, by place."""
    return {
        (at, leaf[0]): leaf
        for at, observation in enumerate(history)
        if observation is not None
        for leaf in observation.leaves
    }


def leaves_uncovered(leaves: tuple[Leaf, ...], runs: list[tuple[Leaf, ...]], name: str) -> str | None:
    by_path = [{leaf[0]: leaf for leaf in run} for run in runs]
    live_paths = set()
    for path, kind, value, label in leaves:
        live_paths.add(path)
        recorded = [run[path] for run in by_path if path in run]
        if not recorded:
            return f"{where(name, path)}: {shown_leaf(kind, value)}, in no recorded run"
        if all(r[1] == "#" for r in recorded):  # an identity: free, but for what it equals
            if not can_name(kind, value):
                return f"{where(name, path)}: {shown_leaf(kind, value)}, recorded an identity"
            labels = {r[3] for r in recorded}
            if label not in labels:
                was = " or ".join(sorted({label_text(r) for r in labels}))
                return f"{where(name, path)}: now {label_text(label)}, recorded {was}"
            continue
        plain = [r for r in recorded if r[1] != "#"]
        if kind == "#" or not value_covered(kind, value, plain, path):
            shown = label_text(label) if kind == "#" else shown_leaf(kind, value)
            return f"{where(name, path)}: {shown}, recorded {shown_all(plain)}"
    if by_path:
        shared = set(by_path[0]).intersection(*by_path[1:])
        gone = sorted(shared - live_paths)
        if gone == [FAILED_ATTEMPTS]:
            return f"{name}: returned at once, where every recorded run saw it raise first (the agent retried it)"
        if gone:
            return f"{where(name, gone[0])}: gone, recorded in every run"
    return None


def value_covered(kind: str, value: Any, recorded: list[Leaf], path: str) -> bool:
    kinds = {r[1] for r in recorded}
    if kinds != {kind}:
        if kind in NUMERIC_KINDS or not (kinds <= PLAIN_TEXTS and kind in PLAIN_TEXTS):
            return False
        return any(r[1] == kind and r[2] == value for r in recorded)
    values = [r[2] for r in recorded]
    if free_by_variation(recorded, path):
        return True
    if kind in NUMERIC_KINDS and type(value) in (int, float):
        if type(value) is float and not value.is_integer() and all(type(v) is int for v in values):
            return False  # a fraction where every run saw a whole number
        if type(value) is float and not value.is_integer():
            places = max(_decimals(v) for v in values)
            if places and _decimals(value) > places:  # finer than every run's (2.75 for 2.5, 4.2): rounded?
                return False
            if places and not _on_grid(value, values, places):  # 3.2 where every run saw halves: rounded?
                return False
        return within(value, values)
    return value in values


def _on_grid(value: float, seen: Sequence[float], places: int) -> bool:
    """Whether a fraction lies on the grid every run's number stood on, in units of their finest decimal
    place and dividing one (halves for 2.5, 3.5 and 4.0; none for 15.9 and 12.3, nor for 19.99 and
    5.49): an agent may have rounded to it."""
    scale = 10**places
    grid = math.gcd(
        scale, *(round(v * scale) for v in seen)
    )  # a grid rounding makes (halves, fifths), not 0.3
    return grid <= 1 or round(value * scale) % grid == 0


def _decimals(number: float) -> int:
    """How many decimal places a number is written with at its shortest, float noise left out (``2.75``: 2;
    ``3.0``, ``3``: 0; ``30.000000000000004``: 0)."""
    if type(number) is not float or number.is_integer() or not math.isfinite(number):
        return 0
    text = format(number, ".12g")  # twelve significant digits: what a sum of cents leaves past them is noise
    if "e" in text or "E" in text:
        mantissa, exponent = text.lower().split("e")
        places = len(mantissa.split(".")[1]) if "." in mantissa else 0
        return max(0, places - int(exponent))
    return len(text.split(".")[1]) if "." in text else 0


def within(value: float, seen: Sequence[float]) -> bool:
    """Whether a number lies within the closed range of those seen (float noise tolerated)."""
    low, high = min(seen), max(seen)
    slack = TOLERANCE * max(1.0, abs(low), abs(high))
    return bool(low - slack <= value <= high + slack)


def free_by_variation(recorded: Sequence[Leaf], path: str) -> bool:
    """Whether runs that went on alike showed a leaf free: an identifier, a name or a time seen taking two values.

    Not a leaf a run may have computed a value of its calls from (labelled
    :data:`~muscle_mem.model._run_observations.COMPUTED_ON`): that one must be what the runs saw, or
    for a time within the range they saw.
    """
    kinds = {leaf[1] for leaf in recorded}
    if len(kinds) != 1 or any(leaf[3] == COMPUTED_ON for leaf in recorded):
        return False
    kind = kinds.pop()
    values = {leaf[2] for leaf in recorded}
    return len(values) >= 2 and (kind in ("i", "s") or (kind in ("p", "w") and names_a_thing(path)))


def order(a: float, b: float) -> str:
    """How two numbers are ordered, equal within the float noise tolerated."""
    if same(a, b):
        return "="
    return "<" if a < b else ">"


def same(a: float | None, b: float | None) -> bool:
    """Whether two numbers are equal within the float noise tolerated (None only to None)."""
    if a is None or b is None:
        return a is b
    return abs(a - b) <= TOLERANCE * max(1.0, abs(a), abs(b))
