"""A time the agent may have computed a date from is never free, however the runs saw it vary.

Timestamps in a read's output are free once runs that went on alike saw them take two values: a
fetch time, a last login. But where a run's calls or answer hold a date or time no origin explains
(next Monday, three days from now), the timestamp may be what the agent computed it from: two runs in
the same week book the same Monday from two different times. Such a timestamp must lie within the
range the runs saw.
"""

from __future__ import annotations

import datetime as dt

import pytest

from muscle_mem import Engine, current_run
from muscle_mem.cli.family import generality
from muscle_mem.model._run_observations import _looks_like_a_time


def next_monday(stamp: str) -> str:
    day = dt.datetime.fromisoformat(stamp.replace("Z", "+00:00")).date()
    return (day + dt.timedelta(days=7 - day.weekday())).isoformat()


def review_desk(book_monday: bool) -> tuple[Engine, dict[str, str], list[str]]:
    """An agent that reads the clock, then books the weekly review (next Monday, or just "soon")."""
    clock = {"now": ""}
    booked: list[str] = []
    engine = Engine()

    @engine.tool()
    def now() -> str:
        return clock["now"]

    @engine.tool()
    def schedule(what: str, when: str) -> str:
        booked.append(when)
        return "booked"

    def agent(task: str) -> str:
        run = current_run()
        replayed = list(run.steps) if run is not None else []
        stamp = replayed[0].output if replayed else now()
        when = next_monday(stamp) if book_monday else "soon"
        schedule("review", when)
        return f"review booked {when}"

    engine.set_agent(agent)
    return engine, clock, booked


def test_a_timestamp_a_date_was_computed_from_stays_in_the_range_runs_saw() -> None:
    engine, clock, booked = review_desk(book_monday=True)
    for stamp in ("2026-12-03T09:00:00Z", "2026-12-04T10:30:00Z"):  # one week: the same Monday
        clock["now"] = stamp
        assert engine("book the weekly review").stored
    clock["now"] = "2026-12-03T15:00:00Z"
    within = engine("book the weekly review")
    assert within.hit and booked[-1] == "2026-12-07"
    clock["now"] = "2026-12-08T09:00:00Z"
    next_week = engine("book the weekly review")
    assert not next_week.hit and booked[-1] == "2026-12-14", "last week's Monday booked"


def test_a_timestamp_no_date_was_computed_from_is_free_once_runs_saw_it_vary() -> None:
    engine, clock, booked = review_desk(book_monday=False)
    for stamp in ("2026-12-03T09:00:00Z", "2026-12-04T10:30:00Z"):
        clock["now"] = stamp
        engine("book the weekly review")
    clock["now"] = "2027-03-01T08:00:00Z"
    assert engine("book the weekly review").hit and booked[-1] == "soon"


@pytest.mark.parametrize(
    "value",
    [
        "2026-12-07",
        "Review on 12/7/2026",
        "at 14:30",
        "Dec 7",
        "7 December",
        "next Monday",
        dt.date(2026, 12, 7),
        dt.timedelta(days=3),
        1_796_000_000,
    ],
)
def test_these_constants_read_as_times(value: object) -> None:
    assert _looks_like_a_time(value)


@pytest.mark.parametrize("value", ["refund order 1001", "sku-2026", 42, 3.5, "ticket TCK-5001", None])
def test_these_constants_do_not(value: object) -> None:
    assert not _looks_like_a_time(value)


@pytest.mark.parametrize(("book_monday", "free"), [(True, 0), (False, 1)])
def test_a_family_shows_such_a_timestamp_as_not_free(book_monday: bool, free: int) -> None:
    """What ``muscle-mem show --family`` and the demo's summary count: the clock is free only where no date came from it."""
    engine, clock, _ = review_desk(book_monday=book_monday)
    for stamp in ("2026-12-03T09:00:00Z", "2026-12-04T10:30:00Z"):
        clock["now"] = stamp
        engine("book the weekly review")
    runs = [engine.store.get(s.id) for s in engine.store.summaries()]
    assert generality([r for r in runs if r is not None]) == (1, free)
