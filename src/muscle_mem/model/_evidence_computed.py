"""The constants a call or answer holds that the runs may have computed, and whether they still would be.

Every run shipped in 2 boxes while qty and per_box varied: the agent may have taken the ceiling of
their ratio, and 20 of 6 makes 4. Where a simple computation of the numbers that varied between
the runs gave the call's constant in every run, it must give it now too, else the agent would have
written another value and the replay stops. The computations: a number alone; the sum, the
differences, the product, the ratios, the max, the min, the mean, small weighted sums, a rate
applied (``a * (1 + b)``) and a relative change of two; the sum of three and a product of two over
a third; each exact, plus or minus one, rounded (down, up) to the constant's decimal places or to
a coarser unit it is a multiple of (tens, 0.05), or as a percentage; a date, or a date plus or
minus a number of days, exact, at the end of its month, the first of the next, the Monday after,
or moved past a weekend. A constant no such computation gave in every run (a fixed reorder of 50)
is left to the ranges and relations of the numbers it may depend on; one that a computation gave
by chance in every run stops a replay the runs cannot tell from a computed one.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import numpy

from muscle_mem.model._evidence_leaves import TOLERANCE
from muscle_mem.model._evidence_places import Place, Places, place_text
from muscle_mem.model._leaf_kinds import seconds_of
from muscle_mem.model.provenance import (
    Arg,
    Const,
    Guarded,
    Param,
    Template,
    Text,
    Unresolved,
    evaluate,
    nested,
)

MAX_CONSTANTS = 32
"""The most constants of one call (or answer) weighed; the first ones found."""

MAX_VARIED = 32
"""The most numbers that differ between the runs whose computations are weighed; past it, a replay
whose next call or answer holds a constant stops (a bound reached may only make it stop)."""


class Constant(NamedTuple):
    """A number or a date a call or answer holds as a constant (a date as seconds since the epoch)."""

    value: float
    places: int
    """Its decimal places, as written."""
    date: bool


def constants_of(args: Iterable[Arg], params: Any = None) -> tuple[Constant, ...]:
    """The numbers and dates the recorded values hold as constants, written or inside texts (``1,250``, ``4x``).

    A number bound to a declared param counts by the param's value (the agent may have computed
    what the param happened to equal); a guarded value is left out: it replays only while what it
    was read from is unchanged.
    """
    found: dict[Constant, None] = {}
    stack = list(args)
    while stack and len(found) < MAX_CONSTANTS:
        arg = stack.pop()
        kind = type(arg)
        if kind is Const:
            _plain(arg.value, found)  # type: ignore[union-attr]
        elif kind is Template:
            for part in arg.parts:  # type: ignore[union-attr]
                if type(part) is Text:
                    _in_text(part.text, found)
                else:
                    stack.append(part)  # type: ignore[arg-type]
        elif kind is Param and params is not None:
            # a value bound to a param the runs all gave alike may be a computed value it coincided with
            try:
                value = evaluate(arg, params, ())
            except Unresolved:
                value = None
            if type(value) in (int, float):
                _plain(value, found)
        elif kind is not Guarded:
            stack += nested(arg)
    return tuple(found)[:MAX_CONSTANTS]


def _plain(value: Any, found: dict[Constant, None]) -> None:
    kind = type(value)
    if kind is int or kind is float:
        if math.isfinite(value):
            found[Constant(float(value), _places(repr(value)), False)] = None
    elif kind is str:
        _in_text(value, found)
    elif kind is list or kind is tuple:
        for item in value[:MAX_CONSTANTS]:
            _plain(item, found)
    elif kind is dict:
        for item in list(value.values())[:MAX_CONSTANTS]:
            _plain(item, found)


_DATE = re.compile(r"(?<!\d)\d{4}-\d{2}-\d{2}(?!\d)")
_DIGITS = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"
_NUMBER = re.compile(rf"(?<![\w.]){_DIGITS}(?![\w])|(?<![\w.\-/#]){_DIGITS}(?=[A-Za-z]{{1,3}}\b)")
"""A number as written: with thousands separators (1,250) or a short unit after it (4x, 5kg; not ord-7x)."""


def _in_text(text: str, found: dict[Constant, None]) -> None:
    for match in _DATE.finditer(text):
        seconds = seconds_of(match.group(0))
        if seconds is not None:
            found[Constant(seconds, 0, True)] = None
    for match in _NUMBER.finditer(_DATE.sub(" ", text)):
        written = match.group(0).replace(",", "")
        found[Constant(float(written), _places(written), False)] = None


def _places(written: str) -> int:
    """Decimal places of a number as written (``12.50``: 2, ``3.0``: 0, ``4``: 0)."""
    if "e" in written.lower() or "." not in written:
        return 0
    fraction = written.split(".")[1].rstrip("0")
    return len(fraction)


Make = Callable[[Any, Any], Any]
"""How a computation is made of two numbers (arrays of runs, or the replay's numbers)."""


def _ratio(a: Any, b: Any) -> Any:
    return numpy.divide(a, b, out=numpy.full(numpy.shape(a), numpy.nan), where=b != 0)


_NUMBER_WAYS: tuple[tuple[str, Make], ...] = (
    ("sum", lambda a, b: a + b),
    ("difference", lambda a, b: a - b),
    ("difference", lambda a, b: b - a),
    ("product", lambda a, b: a * b),
    ("ratio", _ratio),
    ("ratio", lambda a, b: _ratio(b, a)),
    ("max", numpy.maximum),
    ("min", numpy.minimum),
    ("weighted sum", lambda a, b: 2 * a + b),
    ("weighted sum", lambda a, b: a + 2 * b),
    ("weighted sum", lambda a, b: 3 * a + b),
    ("weighted sum", lambda a, b: a + 3 * b),
    ("mean", lambda a, b: (a + b) / 2),
    ("first times one plus the second", lambda a, b: a * (1 + b)),
    ("second times one plus the first", lambda a, b: b * (1 + a)),
    ("first times one minus the second", lambda a, b: a * (1 - b)),
    ("second times one minus the first", lambda a, b: b * (1 - a)),
    ("relative change", lambda a, b: _ratio(a, b) - 1),
    ("relative change", lambda a, b: _ratio(b, a) - 1),
)

MAX_TRIPLES_OF = 12
"""Of the numbers that varied, the first ones whose sums and products over ratios of three are weighed."""

_TRIPLE_WAYS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("sum", lambda a, b, c: a + b + c),
    ("product over", lambda a, b, c: _ratio(a * b, c)),
    ("product over", lambda a, b, c: _ratio(a * c, b)),
    ("product over", lambda a, b, c: _ratio(b * c, a)),
)

_DAY = 86_400.0

_DATE_WAYS: tuple[tuple[str, Make], ...] = (
    ("date plus days", lambda date, days: date + days * _DAY),
    ("date minus days", lambda date, days: date - days * _DAY),
)


class _Ways(NamedTuple):
    """Computations of the numbers that varied: what each is and its places, its value in each run (a row) and now."""

    names: list[tuple[str, tuple[Place, ...]]]
    then: numpy.ndarray[Any, Any]
    now: numpy.ndarray[Any, Any]


def computed_broken(
    live: Places,
    runs: Sequence[Places],
    dates: frozenset[Place],
    free_times: frozenset[Place],
    constants: Sequence[Constant],
    names: Sequence[str],
) -> str | None:
    """Why a constant of the next call or the answer, computed alike in every run from numbers that varied, would not be now.

    ``live``, ``runs``: the numbers by place, now and in each run that went on alike; ``dates``:
    the places that hold dates; ``free_times``: timestamps runs may show free (left out).
    """
    if not constants or len(runs) < 2:
        return None
    varied = [
        p
        for p in live
        if p not in free_times and all(p in run for run in runs) and len({run[p] for run in runs}) > 1
    ]
    if not varied:
        return None
    if len(varied) > MAX_VARIED:
        return (
            f"{len(varied)} numbers differ between the recorded runs: more than the {MAX_VARIED} whose "
            "computations are weighed against the constants of the next call or the answer"
        )
    then_all = numpy.array([[run[p] for p in varied] for run in runs], dtype=float)
    now_all = numpy.array([live[p] for p in varied], dtype=float)
    numbers = [k for k, p in enumerate(varied) if p not in dates]
    days = [k for k, p in enumerate(varied) if p in dates]
    made: dict[bool, _Ways] = {}
    for constant in constants:
        if constant.date not in made:
            made[constant.date] = (
                _date_ways(varied, numbers, days, then_all, now_all)
                if constant.date
                else _number_ways(varied, numbers, then_all, now_all)
            )
        ways = made[constant.date]
        if not ways.names:
            continue
        shows = _DATE_SHOWS if constant.date else _NUMBER_SHOWS
        if not constant.date:
            shows = shows + tuple(
                (f", {how} to a unit of {unit:g}", _to_unit(cut, unit))
                for unit in _units(constant)
                for how, cut in (
                    ("rounded", _rounded),
                    ("rounded down", numpy.floor),
                    ("rounded up", numpy.ceil),
                )
            )
        for show_name, show in shows:
            with numpy.errstate(all="ignore"):
                rows = numpy.flatnonzero(_gives(show(ways.then[:, :1], constant.places), constant))
                if rows.size:  # those that gave it in the first run: did they in every run?
                    rows = rows[_gives(show(ways.then[rows], constant.places), constant)]
                if not rows.size:
                    continue
                still = _gives(show(ways.now[rows], constant.places), constant)
            if still.all():
                continue
            row = int(rows[int(numpy.flatnonzero(~still)[0])])
            name, places = ways.names[row]
            inputs = " and ".join(place_text(p, names) for p in places)
            was = ", ".join(_written(v, constant.date) for v in ways.then[row].tolist())
            value = ways.now[row : row + 1]
            written = show(value, constant.places)
            return (
                f"{_shown(constant)}, a constant of the next call or the answer, is the {name} of {inputs}"
                f"{show_name} in every recorded run ({was}); now that gives "
                f"{_written(float(written[0]), constant.date)} ({_written(float(value[0]), constant.date)})"
            )
    return None


def _number_ways(
    varied: list[Place],
    numbers: list[int],
    then_all: numpy.ndarray[Any, Any],
    now_all: numpy.ndarray[Any, Any],
) -> _Ways:
    names: list[tuple[str, tuple[Place, ...]]] = [("value", (varied[k],)) for k in numbers]
    then = [then_all[:, numbers].T]
    now = [now_all[numbers]]
    few = numbers[:MAX_TRIPLES_OF]
    for groups, ways in (
        ([(a, b) for i, a in enumerate(numbers) for b in numbers[i + 1 :]], _NUMBER_WAYS),
        (
            [
                (a, b, c)
                for i, a in enumerate(few)
                for j, b in enumerate(few[i + 1 :], i + 1)
                for c in few[j + 1 :]
            ],
            _TRIPLE_WAYS,
        ),
    ):
        if not groups:
            continue
        columns = [list(column) for column in zip(*groups, strict=True)]
        with numpy.errstate(all="ignore"):
            for name, make in ways:
                names += [(name, tuple(varied[k] for k in group)) for group in groups]
                then.append(make(*(then_all[:, column].T for column in columns)))
                now.append(make(*(now_all[column] for column in columns)))
    return _Ways(names, numpy.concatenate(then), numpy.concatenate(now))


def _date_ways(
    varied: list[Place],
    numbers: list[int],
    days: list[int],
    then_all: numpy.ndarray[Any, Any],
    now_all: numpy.ndarray[Any, Any],
) -> _Ways:
    names: list[tuple[str, tuple[Place, ...]]] = []
    then: list[numpy.ndarray[Any, Any]] = []
    now: list[float] = []
    for k in days:
        names.append(("value", (varied[k],)))
        then.append(then_all[:, k])
        now.append(float(now_all[k]))
        for n in numbers:
            for name, make in _DATE_WAYS:
                names.append((name, (varied[k], varied[n])))
                then.append(make(then_all[:, k], then_all[:, n]))
                now.append(float(make(now_all[k], now_all[n])))
    rows = len(then_all)
    return _Ways(
        names,
        numpy.array(then, dtype=float).reshape(len(names), rows),
        numpy.array(now, dtype=float),
    )


def _gives(written: numpy.ndarray[Any, Any], constant: Constant) -> numpy.ndarray[Any, Any]:
    """Whether each value written gives the constant (every run's, along the last axis; never a value that is none)."""
    slack = TOLERANCE * numpy.maximum(1.0, numpy.maximum(numpy.abs(written), abs(constant.value)))
    equal = numpy.isfinite(written) & (numpy.abs(written - constant.value) <= slack)
    return numpy.asarray(equal.all(axis=-1) if equal.ndim > 1 else equal)


def _nudged(values: numpy.ndarray[Any, Any]) -> numpy.ndarray[Any, Any]:
    """Each value moved by float noise onto the whole number it is next to (4.999999999 is 5)."""
    nearest = numpy.rint(values)
    near = numpy.abs(values - nearest) <= 1e-9 * numpy.maximum(1.0, numpy.abs(values))
    return numpy.where(near, nearest, values)


Show = Callable[[numpy.ndarray[Any, Any], int], numpy.ndarray[Any, Any]]
"""How an agent may have written a computed value, to the constant's decimal places."""


def _to_places(cut: Callable[[Any], Any], scale: float = 1.0) -> Show:
    def show(values: numpy.ndarray[Any, Any], places: int) -> numpy.ndarray[Any, Any]:
        unit = 10.0**places
        return numpy.asarray(cut(_nudged(values * scale * unit)) / unit)

    return show


def _units(constant: Constant) -> list[float]:
    """Coarser units the constant is a multiple of, that it holds at least ten of (120: 10 and 5; 4.95: 0.05)."""
    found: list[float] = []
    for exponent in range(-constant.places, 7):
        for step in (1.0, 5.0, 2.5):
            unit = step * 10.0**exponent
            if unit <= 10.0**-constant.places or abs(constant.value) < 10 * unit:
                continue
            count = constant.value / unit
            if abs(count - round(count)) <= 1e-9 * max(1.0, abs(count)):
                found.append(unit)
    return found


def _to_unit(cut: Callable[[Any], Any], unit: float) -> Show:
    def show(values: numpy.ndarray[Any, Any], _places: int) -> numpy.ndarray[Any, Any]:
        return numpy.asarray(cut(_nudged(values / unit)) * unit)

    return show


def _rounded(values: numpy.ndarray[Any, Any]) -> numpy.ndarray[Any, Any]:
    """Each value rounded to a whole number, none at a half that rounding to even and rounding up tell apart."""
    even, up = numpy.rint(values), numpy.floor(values + 0.5)
    return numpy.where(even == up, even, numpy.nan)


_NUMBER_SHOWS: tuple[tuple[str, Show], ...] = (
    ("", lambda values, _places: values),
    (", rounded", _to_places(_rounded)),
    (", rounded down", _to_places(numpy.floor)),
    (", rounded up", _to_places(numpy.ceil)),
    (" plus one", lambda values, _places: values + 1),
    (" minus one", lambda values, _places: values - 1),
    (" as a percentage", lambda values, _places: values * 100),
    (" as a percentage, rounded", _to_places(_rounded, 100)),
    (" as a percentage, rounded down", _to_places(numpy.floor, 100)),
    (" as a percentage, rounded up", _to_places(numpy.ceil, 100)),
)


def _day(seconds: float) -> datetime.date | None:
    try:
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).date()
    except (OverflowError, OSError, ValueError):
        return None


def _seconds(day: datetime.date | None) -> float:
    if day is None:
        return math.nan
    return datetime.datetime(day.year, day.month, day.day, tzinfo=datetime.timezone.utc).timestamp()


def _by_day(move: Callable[[datetime.date], datetime.date]) -> Show:
    def show(values: numpy.ndarray[Any, Any], _places: int) -> numpy.ndarray[Any, Any]:
        days = [_day(v) if math.isfinite(v) else None for v in numpy.ravel(values).tolist()]
        moved = [_seconds(move(d)) if d is not None else math.nan for d in days]
        return numpy.array(moved, dtype=float).reshape(numpy.shape(values))

    return show


def _month_end(day: datetime.date) -> datetime.date:
    following = day.replace(day=28) + datetime.timedelta(days=4)
    return following - datetime.timedelta(days=following.day)


def _past_weekend(day: datetime.date) -> datetime.date:
    return day + datetime.timedelta(days=7 - day.weekday() if day.weekday() >= 5 else 0)


def _next_month(day: datetime.date) -> datetime.date:
    return _month_end(day) + datetime.timedelta(days=1)


def _next_monday(day: datetime.date) -> datetime.date:
    return day + datetime.timedelta(days=7 - day.weekday())


_DATE_SHOWS: tuple[tuple[str, Show], ...] = (
    ("", _by_day(lambda day: day)),
    (", at the first of the next month", _by_day(_next_month)),
    (", at the Monday after", _by_day(_next_monday)),
    (", at the end of its month", _by_day(_month_end)),
    (", moved past a weekend", _by_day(_past_weekend)),
)


def _written(value: float, date: bool) -> str:
    if date:
        day = _day(value) if math.isfinite(value) else None
        return day.isoformat() if day is not None else "none"
    return format(value, ".4g") if math.isfinite(value) else "none"


def _shown(constant: Constant) -> str:
    if constant.date:
        return _written(constant.value, True)
    if constant.places:
        return format(constant.value, f".{constant.places}f")
    return format(constant.value, ".15g")
