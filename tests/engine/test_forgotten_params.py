"""A miss whose task differs from a stored one only in a number or a quoted value says so: a forgotten param."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from muscle_mem import Engine, MissReason, Result, Secret
from muscle_mem.cache._near_tasks import REMEMBERED, NearTasks

GENERIC = "no trajectory is stored for this task"


def refund_desk(**options: Any) -> tuple[Engine, list[str]]:
    """An engine whose agent refunds the order named by the task's last word."""
    engine, refunded = Engine(**options), []

    @engine.tool()
    def refund(order: str) -> str:
        refunded.append(order)
        return f"refunded {order}"

    engine.set_agent(lambda task, **_: refund(task.split()[-1]))
    return engine, refunded


def test_a_number_that_should_have_been_a_param_is_named_with_both_values() -> None:
    engine, refunded = refund_desk()
    assert engine("refund order 1001").stored
    miss = engine("refund order 1002")
    assert miss.miss_reason is MissReason.NO_TRAJECTORY
    assert miss.reason == (
        f"{GENERIC}; a stored task differs only in '1001' (here '1002'): declare it as a param"
    )
    assert refunded == ["1001", "1002"]  # the hint changes no behaviour: the agent did the task


def test_a_quoted_value_that_differs_is_named() -> None:
    engine, _ = refund_desk()
    engine("refund the order named 'spring sale'")
    miss = engine("refund the order named 'summer sale'")
    assert miss.reason is not None
    assert "differs only in 'spring sale' (here 'summer sale')" in miss.reason


def test_once_the_param_is_declared_the_task_replays() -> None:
    engine, refunded = refund_desk()
    engine("refund order 1001", params={"order_id": 1001})
    hit = engine("refund order 1002", params={"order_id": 1002})
    assert hit.hit and refunded == ["1001", "1002"]


@pytest.mark.parametrize(
    ("stored", "missed"),
    [
        ("greet john", "greet erik"),  # a word, not a number or a quoted value
        ("refund order 1001", "refund the order 1002"),  # more than a value differs
        ("refund order 1001", "refund order 1001 twice"),  # another shape
    ],
)
def test_tasks_that_differ_in_more_than_a_value_keep_the_plain_reason(stored: str, missed: str) -> None:
    engine, _ = refund_desk()
    engine(stored)
    assert engine(missed).reason == GENERIC


def test_a_task_under_other_tags_is_not_taken_for_a_forgotten_param() -> None:
    engine, _ = refund_desk()
    engine("refund order 1001", tags=["eu"])
    assert engine("refund order 1002", tags=["us"]).reason == GENERIC
    assert "differs only in '1001'" in (engine("refund order 1003", tags=["eu"]).reason or "")


def test_a_run_with_secret_values_is_not_remembered() -> None:
    """Its task text is never quoted back in another run's reason."""
    engine, _ = refund_desk()
    assert engine("refund order 1001", params={"token": Secret("tok-1")}).stored
    assert engine("refund order 1002").reason == GENERIC


def test_only_the_most_recently_stored_shapes_are_remembered() -> None:
    near = NearTasks()
    for i in range(REMEMBERED + 1):
        near.remember(f"refund {'x' * i} order 1", ())
    assert near.differences("refund  order 2", ()) is None  # the first shape was forgotten
    assert near.differences(f"refund {'x' * REMEMBERED} order 2", ()) == (
        "a stored task differs only in '1' (here '2')"
    )


def test_a_hit_logs_its_steps_in_words(caplog: pytest.LogCaptureFixture) -> None:
    engine, _ = refund_desk()
    engine("refund order 1001", params={"order_id": 1001})
    with caplog.at_level(logging.DEBUG, logger="muscle_mem"):
        result: Result = engine("refund order 1002", params={"order_id": 1002})
    assert result.hit
    assert any(r.getMessage().startswith("hit, 1 step replayed from trajectory") for r in caplog.records)
