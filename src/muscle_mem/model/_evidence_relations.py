"""The relations between numbers, and between texts, that held in every run and must still hold."""

from __future__ import annotations

import calendar
import datetime
import math
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy

from muscle_mem.model._evidence_computed import Constant, computed_broken
from muscle_mem.model._evidence_leaves import NUMERIC_KINDS, TEXTUAL, TOLERANCE, order, same, within
from muscle_mem.model._evidence_places import (
    BY_WHOLE,
    FROM_END,
    LENGTH,
    PERCENT,
    TOTAL,
    Leaves,
    Place,
    Places,
    list_pattern,
    place_text,
    shown_range,
)
from muscle_mem.model._leaf_kinds import Leaf
from muscle_mem.model._observations import EQUAL_WITHIN, sign_of
from muscle_mem.model._run_observations import COMPUTED_ON

MAX_RELATED = 48
"""Numbers, and texts, that may differ from the recorded runs with their relations still compared;
past it, a replay stops (a bound reached may only make it stop)."""


def relations_broken(
    live: Leaves, seen: Sequence[Leaves], names: Sequence[str], constants: Sequence[Constant] = ()
) -> str | None:
    """Why a relation between numbers, or texts, that held in every run no longer holds.

    ``constants``: the numbers and dates the next call (or the answer) holds as constants, which
    the runs may have computed from their numbers (:func:`computed_broken`).
    """
    now = _related(live)
    runs = [_related(leaves) for leaves in seen]
    run_numbers = [run.numbers for run in runs]
    why = _totals_uncovered(now.numbers, run_numbers, names)
    if why is None:
        why = _orders_broken(now.numbers, run_numbers, names)
    if why is None:
        why = _combinations_broken(now, run_numbers, names)
    if why is None:
        why = _combined_orders_broken(now, run_numbers, names)
    if why is None:
        why = _equalities_broken(now.texts, [run.texts for run in runs], names)
    if why is None:
        why = computed_broken(now.numbers, run_numbers, now.dates, now.free_times, constants, names)
    return why


class Related(NamedTuple):
    """What one run (or the replay) saw that relations are compared on."""

    numbers: Places
    texts: Places
    dates: frozenset[Place]
    """The numbers that are dates, or times a run may have computed a date from."""
    free_times: frozenset[Place]
    """The timestamps runs may show free: only their order is compared, not what they add up to."""


def _related(observations: Sequence[tuple[Leaf, ...]]) -> Related:
    """The numbers (with each list's totals), the texts, and which numbers are dates and which free times, by place."""
    numbers: Places = {}
    texts: Places = {}
    dates: set[Place] = set()
    free_times: set[Place] = set()
    for at, leaves in enumerate(observations):
        totals: dict[str, float] = {}
        for path, kind, value, label in leaves:
            if kind in NUMERIC_KINDS and type(value) in (int, float):
                numbers[(at, path)] = float(value)
                if kind == "d" or label == COMPUTED_ON:
                    dates.add((at, path))
                elif kind == "s":
                    free_times.add((at, path))
                aliased = FROM_END in path or BY_WHOLE in path
                pattern = list_pattern(path) if kind in ("n", "q") and not aliased else None
                if pattern is not None:
                    totals[pattern] = totals.get(pattern, 0.0) + float(value)
            elif kind in TEXTUAL:
                texts[(at, path)] = value
            elif kind == "l":  # a list's length is a count the agent may weigh against a number
                numbers[(at, LENGTH + path)] = float(value)
        for pattern, total in totals.items():
            numbers[(at, TOTAL + pattern)] = total
    return Related(numbers, texts, frozenset(dates), frozenset(free_times))


def _moving(live: Places, runs: list[Places]) -> tuple[list[Place], list[Place]]:
    """The places every run has, and among them those whose value is not the same in every run and now."""
    places = [p for p in live if all(p in run for run in runs)]
    moving = [p for p in places if any(run[p] != live[p] for run in runs)]
    return places, moving


def _totals_uncovered(live: Places, runs: list[Places], names: Sequence[str]) -> str | None:
    """Whether a list's total lies outside the range the runs saw (items each in range can add up to more)."""
    for place, value in live.items():
        if not place[1].startswith(TOTAL) or not all(place in run for run in runs):
            continue
        seen = [run[place] for run in runs]
        if not within(value, seen):
            return f"{place_text(place, names)}: {value:g}, recorded {shown_range(seen)}"
    return None


def _orders_broken(live: Places, runs: list[Places], names: Sequence[str]) -> str | None:
    """Why two numbers, one of them differing from the runs, are now in another order than in every run."""
    places, moving = _moving(live, runs)
    if len(moving) > MAX_RELATED:
        return f"{len(moving)} numbers differ from the recorded runs: more than the {MAX_RELATED} whose relations are compared"
    if not moving:
        return None
    column = {place: k for k, place in enumerate(places)}
    then = numpy.array([[run[p] for p in places] for run in runs], dtype=float)
    now = numpy.array([live[p] for p in places], dtype=float)
    rank = {place: i for i, place in enumerate(moving)}
    for i, a in enumerate(moving):
        k = column[a]
        was = _signs(then[:, k : k + 1] - then)
        broken = (was == was[0]).all(axis=0) & (_signs(now[k] - now) != was[0])
        for other in numpy.flatnonzero(broken):
            b = places[int(other)]
            if b == a or rank.get(b, len(moving)) <= i:
                continue  # the pair is weighed from its first number that differs
            return (
                f"{place_text(a, names)} and {place_text(b, names)}: their order changed "
                f"({live[a]:g} {sign_of(live[a] - live[b])} {live[b]:g}, "
                f"recorded {_SIGNS[int(was[0][other])]})"
            )
    return None


def _signs(difference: Any) -> numpy.ndarray[Any, Any]:
    """:func:`~muscle_mem.model._observations.sign_of` of each difference, as -1, 0 or 1."""
    return numpy.where(difference > EQUAL_WITHIN, 1, numpy.where(difference < -EQUAL_WITHIN, -1, 0))


def _related_pairs(live: Places, runs: list[Places], what: str) -> list[tuple[Place, Place]] | str:
    """The pairs of places whose relation may have changed (one of them differs from the runs), or why there are too many.

    Two values each the same in every run and now keep their relation; past :data:`MAX_RELATED`
    values that differ, the replay stops.
    """
    places, moving = _moving(live, runs)
    if len(moving) > MAX_RELATED:
        return f"{len(moving)} {what} differ from the recorded runs: more than the {MAX_RELATED} whose relations are compared"
    rank = {place: i for i, place in enumerate(moving)}
    return [(a, b) for i, a in enumerate(moving) for b in places if b != a and rank.get(b, len(moving)) > i]


def _combinations_broken(now: Related, runs: list[Places], names: Sequence[str]) -> str | None:
    """Why a sum, difference, product or ratio of two numbers that came out the same in every run differs now.

    Runs whose answer or calls hold the same constant while their numbers differ may have computed
    it from them (100 from 40 and 60, then from 30 and 70): where a combination of two numbers came
    out the same in every run, it is evidence, as an order is, and it must come out the same now. A
    date plus a number of days counts too (issued plus the payment terms). Timestamps runs may show
    free are left out: only their order is compared.
    """
    if len(runs) < 2:
        return None
    live = now.numbers
    varied = [
        p
        for p in live
        if p not in now.free_times and all(p in run for run in runs) and len({run[p] for run in runs}) > 1
    ][:MAX_RELATED]
    if len(varied) < 2:
        return None
    column = {place: k for k, place in enumerate(varied)}
    ways: list[Way] = [
        (name, a, b, combine, i, j)
        for i, a in enumerate(varied)
        for j, b in enumerate(varied[i + 1 :], start=i + 1)
        for name, combine in _combinations_of(a in now.dates, b in now.dates)
    ]
    then_all = numpy.array([[run[place] for place in varied] for run in runs], dtype=float)
    then, values = _made(ways, column, then_all, numpy.array([live[p] for p in varied], dtype=float))
    first = then[:, :1]
    slack = TOLERANCE * numpy.maximum(1.0, numpy.maximum(numpy.abs(then), numpy.abs(first)))
    kept = numpy.isfinite(then).all(axis=1) & (numpy.abs(then - first) <= slack).all(axis=1)
    for k in numpy.flatnonzero(kept):
        name, a, b, *_ = ways[k]
        value, was = float(values[k]), float(first[k, 0])
        if not math.isfinite(value) or not same(value, was):
            shown = format(value, "g") if math.isfinite(value) else "none"
            return (
                f"{place_text(a, names)} and {place_text(b, names)}: their {name} changed "
                f"({shown}, {was:g} in every recorded run)"
            )
    return None


def _combined_orders_broken(now: Related, runs: list[Places], names: Sequence[str]) -> str | None:
    """Why a combination of two numbers now lies on another side of a third number than in every run.

    The agent may weigh two numbers together against a third: ship when base + fee is within the
    limit, when price / qty is under the unit cap, when issued + terms is not before today, when
    ordered equals shipped + returned. Each of the three may lie within its range while the
    relation flips. So for two numbers that differ from the runs (now or between them), each
    combination of them that lay above, below or on a third number in every run must still do so.
    The third may be any number the runs and the replay share; past :data:`MAX_COMBINED` numbers
    that differ, the replay stops.
    """
    live = now.numbers
    shared = [p for p in live if p not in now.free_times and all(p in run for run in runs)]
    moving = [p for p in shared if any(run[p] != live[p] for run in runs)]
    if len(moving) < 2:
        return None
    if len(moving) > MAX_COMBINED:
        return (
            f"{len(moving)} numbers differ from the recorded runs: more than the {MAX_COMBINED} "
            "whose combinations are compared"
        )
    still = set(moving)
    derived = _percent_factors(live, [p for p in shared if p not in still])
    if derived:
        live = {**live, **derived}
        runs = [{**run, **derived} for run in runs]
    steady = sorted((live[p], p) for p in [*shared, *derived] if p not in still)
    thirds_then = numpy.array([[run[place] for place in moving] for run in runs], dtype=float)
    thirds_now = numpy.array([live[place] for place in moving], dtype=float)
    column = {place: k for k, place in enumerate(moving)}
    ways = [
        (name, x, y, combine, i, j)
        for i, a in enumerate(moving)
        for j in range(i + 1, len(moving))
        for name, x, y, combine in _ordered_combinations(a, moving[j], now.dates)
    ]
    then, values = _made(ways, column, thirds_then, thirds_now)
    steady_values = numpy.array([number for number, _ in steady], dtype=float)
    for k, third, was in _crossings(then, values, thirds_then, thirds_now, ways, steady_values):
        name, x, y, *_ = ways[k]
        c = moving[third] if third >= 0 else steady[-1 - third][1]
        return (
            f"the {name} of {place_text(x, names)} and {place_text(y, names)} against "
            f"{place_text(c, names)}: its order changed ({values[k]:g} {order(float(values[k]), live[c])} "
            f"{live[c]:g}, recorded {_SIGNS[was]})"
        )
    return None


Way = tuple[str, Place, Place, "Combine", int, int]
"""One combination of two numbers that differ: its name, its two places in order, how it is made, and the pair's columns."""


def _made(
    ways: list[Way],
    column: dict[Place, int],
    thirds_then: numpy.ndarray[Any, Any],
    thirds_now: numpy.ndarray[Any, Any],
) -> tuple[numpy.ndarray[Any, Any], numpy.ndarray[Any, Any]]:
    """Each combination in every run (a row of runs) and now, made on arrays a kind at a time (NaN where it cannot be made)."""
    then = numpy.empty((len(ways), thirds_then.shape[0]))
    values = numpy.empty(len(ways))
    rows_of: dict[Combine, list[int]] = {}
    for k, way in enumerate(ways):
        rows_of.setdefault(way[3], []).append(k)
    for combine, rows in rows_of.items():
        xs = [column[ways[k][1]] for k in rows]
        ys = [column[ways[k][2]] for k in rows]
        if combine in _BY_CALENDAR:  # made run by run, as a calendar counts
            for k, x, y in zip(rows, xs, ys, strict=True):
                then[k] = [
                    _number(combine(a, b))
                    for a, b in zip(thirds_then[:, x].tolist(), thirds_then[:, y].tolist(), strict=True)
                ]
                values[k] = _number(combine(float(thirds_now[x]), float(thirds_now[y])))
            continue
        with numpy.errstate(all="ignore"):
            then[rows] = combine(thirds_then[:, xs].T, thirds_then[:, ys].T)  # type: ignore[arg-type]
            values[rows] = combine(thirds_now[xs], thirds_now[ys])  # type: ignore[arg-type]
    return then, values


_CELLS_AT_ONCE = 1 << 20
"""The most (combination, run, third) triples weighed in one array."""


def _crossings(
    then: numpy.ndarray[Any, Any],
    values: numpy.ndarray[Any, Any],
    thirds_then: numpy.ndarray[Any, Any],
    thirds_now: numpy.ndarray[Any, Any],
    ways: list[Way],
    steady: numpy.ndarray[Any, Any],
) -> Iterator[tuple[int, int, int]]:
    """Each combination that now lies on another side of a third than in every run: its row, the third, and the side it was on.

    A third that differs from the runs is given by its column (the pair's own two left out), a
    steady one by ``-1 - its index`` in ``steady`` (ascending); the first found of each combination.
    A combination a run or the replay cannot make (a ratio to 0) is not weighed.
    """
    runs, thirds = thirds_then.shape
    chunk = max(1, _CELLS_AT_ONCE // max(1, runs * max(thirds, 1)))
    for start in range(0, len(ways), chunk):
        rows = slice(start, start + chunk)
        part, now = then[rows], values[rows]
        weighed = numpy.isfinite(now) & numpy.isfinite(part).all(axis=1)
        was = _orders(part[:, :, None], thirds_then[None, :, :])
        kept = (was == was[:, :1, :]).all(axis=1) & (
            _orders(now[:, None], thirds_now[None, :]) != was[:, 0, :]
        )
        index = numpy.arange(len(now))
        kept[index, [way[4] for way in ways[rows]]] = False
        kept[index, [way[5] for way in ways[rows]]] = False
        kept &= weighed[:, None]
        low, high = (
            part.min(axis=1, initial=numpy.inf, where=True),
            part.max(axis=1, initial=-numpy.inf, where=True),
        )
        below = _orders(low[:, None], steady[None, :])
        crossed = (below == _orders(high[:, None], steady[None, :])) & (
            _orders(now[:, None], steady[None, :]) != below
        )
        crossed &= weighed[:, None]
        for k in numpy.flatnonzero(kept.any(axis=1) | crossed.any(axis=1)):
            if kept[k].any():
                third = int(numpy.flatnonzero(kept[k])[0])
                yield start + int(k), third, int(was[k, 0, third])
            else:
                third = int(numpy.flatnonzero(crossed[k])[0])
                yield start + int(k), -1 - third, int(below[k, third])


def _number(value: float | None) -> float:
    return math.nan if value is None else value


def _orders(a: numpy.ndarray[Any, Any], b: numpy.ndarray[Any, Any]) -> numpy.ndarray[Any, Any]:
    """:func:`order` of each pair, as -1, 0 or 1 (``<``, ``=``, ``>``)."""
    slack = TOLERANCE * numpy.maximum(1.0, numpy.maximum(numpy.abs(a), numpy.abs(b)))
    difference = a - b
    return numpy.where(difference > slack, 1, numpy.where(difference < -slack, -1, 0))


_SIGNS = {-1: "<", 0: "=", 1: ">"}


def _percent_factors(live: Places, steady: list[Place]) -> Places:
    """Each steady number that may be a percentage (above 0, at most 100) as the factors an agent applies it by."""
    found: Places = {}
    for at, path in steady:
        value = live[(at, path)]
        if path.startswith((LENGTH, TOTAL, *PERCENT)) or not 0 < value <= 100:
            continue
        found[(at, "%" + path)] = value / 100
        found[(at, "1+%" + path)] = 1 + value / 100
        found[(at, "1-%" + path)] = 1 - value / 100
        if value < 1:  # a rate written as a fraction (a VAT rate of 0.2): 1 + rate, 1 - rate
            found[(at, "1+" + path)] = 1 + value
            found[(at, "1-" + path)] = 1 - value
    return found


MAX_COMBINED = 24
"""Numbers that may differ from the recorded runs with the combinations of each two weighed against a
third; past it, a replay stops (a bound reached may only make it stop)."""


def _ordered_combinations(
    a: Place, b: Place, dates: frozenset[Place]
) -> Iterator[tuple[str, Place, Place, Combine]]:
    """Each combination of two numbers, both ways round where the order matters."""
    for name, combine in (*_combinations_of(a in dates, b in dates), *_calendar_of(a in dates, b in dates)):
        yield name, a, b, combine
        if name in _ONE_WAY:
            yield name, b, a, combine


def _calendar_of(a_is_date: bool, b_is_date: bool) -> tuple[tuple[str, Combine], ...]:
    """Calendar combinations, weighed against a third only: whole months and years between two dates, a date plus or minus months or years."""
    if a_is_date and b_is_date:
        return _CALENDAR_DATES
    if a_is_date and not b_is_date:
        return _CALENDAR_DATE_AND_COUNT
    if b_is_date and not a_is_date:
        return _CALENDAR_COUNT_AND_DATE
    return ()


def _swapped(combine: Combine) -> Combine:
    return lambda a, b: combine(b, a)


def _moment(seconds: float) -> datetime.datetime | None:
    try:
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _plus_months(seconds: float, months: float) -> float | None:
    if months != int(months) or abs(months) > 120_000:
        return None
    moment = _moment(seconds)
    if moment is None:
        return None
    total = moment.year * 12 + moment.month - 1 + int(months)
    year, month = divmod(total, 12)
    if not 1 <= year <= 9999:
        return None
    day = min(moment.day, calendar.monthrange(year, month + 1)[1])
    return moment.replace(year=year, month=month + 1, day=day).timestamp()


def _months_between(a: float, b: float) -> float | None:
    """Calendar months from ``b`` to ``a``, with the fraction of the month under way (negative if ``a`` is before ``b``).

    Whole where ``a`` is ``b`` plus a number of months as :func:`_plus_months` counts them (Jan 31
    plus one month is Feb 28), so its order to a count of months is the order of ``a`` to ``b`` plus
    that many months: returned on the due day, or a day late.
    """
    if a < b:
        back = _months_between(b, a)
        return None if back is None else -back
    later, earlier = _moment(a), _moment(b)
    if later is None or earlier is None:
        return None
    months = (later.year - earlier.year) * 12 + later.month - earlier.month
    start = _plus_months(b, months)
    while start is not None and start > a and months > 0:
        months -= 1
        start = _plus_months(b, months)
    end = _plus_months(b, months + 1)
    if start is None or end is None or end <= start:
        return None
    return months + (a - start) / (end - start)


_CALENDAR_DATES: tuple[tuple[str, Combine], ...] = (
    ("months between", _months_between),
    ("years between", lambda a, b: None if (m := _months_between(a, b)) is None else m / 12),
)


_CALENDAR_DATE_AND_COUNT: tuple[tuple[str, Combine], ...] = (
    ("date plus months", lambda a, b: _plus_months(a, b)),
    ("date minus months", lambda a, b: _plus_months(a, -b)),
    ("date plus years", lambda a, b: _plus_months(a, 12 * b)),
    ("date minus years", lambda a, b: _plus_months(a, -12 * b)),
)


_CALENDAR_COUNT_AND_DATE: tuple[tuple[str, Combine], ...] = tuple(
    (name, _swapped(combine)) for name, combine in _CALENDAR_DATE_AND_COUNT
)

_BY_CALENDAR = frozenset(
    combine for _, combine in (*_CALENDAR_DATES, *_CALENDAR_DATE_AND_COUNT, *_CALENDAR_COUNT_AND_DATE)
)
"""The combinations a calendar makes (months, years): made run by run, not on arrays."""

_ONE_WAY = frozenset({"difference", "ratio", "days between", "months between", "years between"})
"""The combinations that differ with the order of their two numbers (a date plus or minus days takes the date either way)."""

Combine = Callable[[float, float], "float | None"]

_DAY = 86_400.0


_COMBINATIONS: tuple[tuple[str, Combine], ...] = (
    ("sum", lambda a, b: a + b),
    ("difference", lambda a, b: a - b),
    ("absolute difference", lambda a, b: abs(a - b)),
    ("product", lambda a, b: a * b),
    ("ratio", lambda a, b: _ratio(a, b)),
)


def _ratio(a: Any, b: Any) -> Any:
    """``a / b``, None (a number) or NaN (numbers in arrays) where ``b`` is 0."""
    if isinstance(b, numpy.ndarray):
        return numpy.where(b != 0, a / numpy.where(b != 0, b, 1.0), numpy.nan)
    return a / b if b else None


def _combinations_of(a_is_date: bool, b_is_date: bool) -> tuple[tuple[str, Combine], ...]:
    """The combinations compared for two numbers: a date and a number also as the date plus or minus that many days, two dates as the days between them."""
    if a_is_date and b_is_date:
        return _DATES_COMBINED
    if not a_is_date and not b_is_date:
        return _COMBINATIONS
    if a_is_date:
        return _DATE_AND_DAYS
    return _DAYS_AND_DATE


_DATES_COMBINED: tuple[tuple[str, Combine], ...] = (
    *_COMBINATIONS,
    ("days between", lambda a, b: (a - b) / _DAY),
)


_DATE_AND_DAYS: tuple[tuple[str, Combine], ...] = (
    *_COMBINATIONS,
    ("date plus days", lambda a, b: a + b * _DAY),
    ("date minus days", lambda a, b: a - b * _DAY),
)


_DAYS_AND_DATE: tuple[tuple[str, Combine], ...] = (
    *_COMBINATIONS,
    ("date plus days", lambda a, b: b + a * _DAY),
    ("date minus days", lambda a, b: b - a * _DAY),
)


def _equalities_broken(live: Places, runs: list[Places], names: Sequence[str]) -> str | None:
    pairs = _related_pairs(live, runs, "texts")
    if isinstance(pairs, str):
        return pairs
    for a, b in pairs:
        equal = {run[a] == run[b] for run in runs}
        if len(equal) == 1 and (live[a] == live[b]) not in equal:
            was = "equal" if equal.pop() else "different"
            return (
                f"{place_text(a, names)} and {place_text(b, names)}: no longer {was} as in every recorded run"
            )
    return None
