"""A constant the runs may have computed from numbers they read replays only while that computation still gives it.

Every run shipped in 2 boxes while the quantity and the box size varied: the agent may have taken
the ceiling of their ratio, and 20 of 6 makes 4. Where a simple computation of the numbers the
runs saw gave a call's constant in every run (exact, rounded, as a percentage; a date at the end
of its month or past a weekend), the replay stops where it would now give another value, and goes
on where it still gives the constant. A constant no such computation explains (a fixed reorder of
50) keeps the generality the runs earned.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from typing import Any

import pytest

from muscle_mem import Engine, current_run
from muscle_mem.model._evidence_computed import Constant, constants_of
from muscle_mem.model.provenance import Const, Guarded, Output, Template, Text

Compute = Callable[[dict[str, Any]], Any]


def desk(compute: Compute) -> tuple[Engine, dict[str, Any], list[Any]]:
    """An agent that reads an order and a rule from two tools, then acts with a value it computed from them."""
    world: dict[str, Any] = {}
    acted: list[Any] = []
    engine = Engine()

    @engine.tool()
    def read_order(key: str) -> dict[str, Any]:
        return dict(world["order"])

    @engine.tool()
    def read_rule(key: str) -> dict[str, Any]:
        return dict(world["rule"])

    @engine.tool()
    def act(key: str, value: Any) -> str:
        acted.append(value)
        return "ok"

    def agent(task: str) -> str:
        run = current_run()
        seen = {s.tool: s.output for s in run.steps} if run is not None else {}
        order = seen["read_order"] if "read_order" in seen else read_order("k")
        rule = seen["read_rule"] if "read_rule" in seen else read_rule("k")
        value = compute({**order, **rule})
        act("k", value)
        return f"done with {value}"

    engine.set_agent(agent)
    return engine, world, acted


def ask(engine: Engine, world: dict[str, Any], order: dict[str, Any], rule: dict[str, Any]) -> Any:
    world["order"], world["rule"] = order, rule
    return engine("handle the order")


def boxes(seen: dict[str, Any]) -> int:
    return math.ceil(seen["qty"] / seen["per_box"])


def test_a_count_rounded_up_the_same_in_every_run_stops_where_it_would_round_to_another() -> None:
    engine, world, acted = desk(boxes)
    for qty, per_box in ((10, 6), (12, 8), (20, 12)):  # 2 boxes each time
        assert ask(engine, world, {"qty": qty}, {"per_box": per_box}).stored
    changed = ask(engine, world, {"qty": 20}, {"per_box": 6})  # each within range; 4 boxes
    assert not changed.hit
    assert acted[-1] == 4
    assert changed.reason is not None and "ratio" in changed.reason and "per_box" in changed.reason


def test_a_count_rounded_up_that_still_gives_the_constant_replays() -> None:
    engine, world, acted = desk(boxes)
    for qty, per_box in ((10, 6), (12, 8), (20, 12)):
        ask(engine, world, {"qty": qty}, {"per_box": per_box})
    same = ask(engine, world, {"qty": 16}, {"per_box": 10})  # 1.6 boxes: still 2
    assert same.hit, same.reason
    assert acted[-1] == 2


def test_a_fixed_amount_no_computation_gives_keeps_the_range_the_runs_earned() -> None:
    engine, world, acted = desk(lambda seen: 50 if seen["stock"] < seen["threshold"] else 0)
    for stock, threshold in ((3, 10), (7, 12), (5, 9)):
        assert ask(engine, world, {"stock": stock}, {"threshold": threshold}).stored
    within = ask(engine, world, {"stock": 4}, {"threshold": 11})
    assert within.hit, within.reason
    assert acted[-1] == 50


def month_end_after_terms(seen: dict[str, Any]) -> str:
    due = dt.date.fromisoformat(seen["issued"]) + dt.timedelta(days=seen["terms"])
    following = due.replace(day=28) + dt.timedelta(days=4)
    return (following - dt.timedelta(days=following.day)).isoformat()


def test_a_date_at_the_end_of_the_month_stops_where_the_due_date_moved_to_another_month() -> None:
    engine, world, acted = desk(month_end_after_terms)
    for issued, terms in (("2026-03-01", 20), ("2026-03-15", 10)):  # both due by 03-31
        assert ask(engine, world, {"issued": issued}, {"terms": terms}).stored
    moved = ask(engine, world, {"issued": "2026-03-15"}, {"terms": 20})  # due 04-04: 04-30
    assert not moved.hit
    assert acted[-1] == "2026-04-30"
    assert moved.reason is not None and "end of its month" in moved.reason
    kept = ask(engine, world, {"issued": "2026-03-08"}, {"terms": 12})  # due 03-20: 03-31
    assert kept.hit, kept.reason


def test_a_percentage_written_in_a_text_stops_where_it_would_read_otherwise() -> None:
    engine, world, acted = desk(lambda seen: f"{seen['part'] * 100 // seen['whole']}% complete")
    for part, whole in ((5, 10), (101, 200), (51, 101)):  # 50% each time
        ask(engine, world, {"part": part}, {"whole": whole})
    assert not ask(engine, world, {"part": 51}, {"whole": 100}).hit
    assert acted[-1] == "51% complete"


MARCH_END = dt.datetime(2026, 3, 31, tzinfo=dt.timezone.utc).timestamp()


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((Const(2),), {Constant(2.0, 0, False)}),
        ((Const(12.5),), {Constant(12.5, 1, False)}),
        ((Const(0), Const(1), Const(True)), {Constant(0.0, 0, False), Constant(1.0, 0, False)}),  # a bool: no
        (
            (Const("Total $1,250 in 4x boxes, ref ord-7x"),),
            {Constant(1250.0, 0, False), Constant(4.0, 0, False)},
        ),
        ((Const("Ship in 3 boxes by 2026-03-31"),), {Constant(3.0, 0, False), Constant(MARCH_END, 0, True)}),
        ((Template((Text("Total: 19.99 for "), Output(0, ()))),), {Constant(19.99, 2, False)}),
        ((Const({"boxes": 4, "note": "2 pallets"}),), {Constant(4.0, 0, False), Constant(2.0, 0, False)}),
        ((Guarded(Const(7), (("qty", "digest"),)),), set()),  # replays only while its origin is unchanged
    ],
)
def test_the_constants_a_call_holds(args: tuple[Any, ...], expected: set[Constant]) -> None:
    assert set(constants_of(args)) == expected
