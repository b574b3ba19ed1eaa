"""Checks (capture + compare) and point 2, step-wise validation."""

from __future__ import annotations

import operator
from collections import Counter
from typing import Any

import numpy as np
import pytest

from muscle_mem import Check, Engine, current_run

# Check on its own


def test_bool_compare() -> None:
    check = Check(lambda: 1, lambda current, candidate: current == candidate)
    assert check.passes(1, 1) is True
    assert check.passes(1, 2) is False
    assert Check(lambda: 1, lambda c, r: np.array(c) == np.array(r)).passes(3, 3) is True  # numpy bool


def test_float_score_passes_at_or_above_the_threshold() -> None:
    check = Check(lambda: 0.0, lambda current, candidate: 1.0 - abs(current - candidate), threshold=0.9)
    assert check.passes(1.0, 1.0)
    assert check.passes(1.0, 0.9)  # score 0.9 == threshold
    assert not check.passes(1.0, 0.5)
    assert Check(lambda: 0, lambda c, r: 1, threshold=1).passes(0, 0)  # an int score is a score too


def test_float_score_without_threshold_raises_a_value_error_that_says_so() -> None:
    check = Check(lambda: 0.0, lambda current, candidate: 0.75)
    with pytest.raises(ValueError, match="no threshold") as info:
        check.passes(0.0, 0.0)
    assert "threshold=" in str(info.value) and "0.75" in str(info.value)


def test_compare_returning_something_else_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="bool or a float"):
        Check(lambda: 0, lambda c, r: "yes").passes(0, 0)  # type: ignore[arg-type,return-value]


def test_check_needs_callables() -> None:
    with pytest.raises(TypeError):
        Check(1, operator.eq)  # type: ignore[arg-type]


def test_check_equal_compares_by_key() -> None:
    check = Check.equal(lambda: "x")
    assert check.by_key and not Check(lambda: 1, operator.eq).by_key
    assert check.passes("a", "a") and not check.passes("a", "b")


def test_check_threshold_must_be_a_number() -> None:
    """``Check(..., threshold="0.8")`` raises a TypeError naming ``threshold`` when the check is made, not
    a miss at replay."""
    with pytest.raises(TypeError, match="threshold"):
        Check(lambda: 1.0, lambda a, b: 0.5, threshold="0.8")  # type: ignore[arg-type]


# Checks in the engine


def test_a_float_check_with_threshold_gates_replay() -> None:
    engine = Engine()
    temperature = {"now": 20.0}

    def closeness(current: float, candidate: float) -> float:
        return 1.0 / (1.0 + abs(current - candidate))

    @engine.tool(pre_check=Check(lambda: temperature["now"], closeness, threshold=0.5), name="heat")
    def heat() -> None:
        pass

    engine.set_agent(lambda: heat())
    assert not engine()
    temperature["now"] = 20.5  # score 0.67
    assert engine().hit
    temperature["now"] = 25.0  # score 0.17
    result = engine()
    assert not result and result.reason == "pre-check of tool 'heat' failed at step 0"


def test_a_float_check_without_threshold_fails_loudly_in_the_engine() -> None:
    engine = Engine()

    @engine.tool(pre_check=Check(lambda: 1.0, lambda current, candidate: 0.5))
    def act() -> None:
        pass

    engine.set_agent(lambda: act())
    engine()  # recording captures but never compares
    with pytest.raises(ValueError, match="no threshold"):
        engine()


def counted(capture: Any, counter: Counter[str], name: str) -> Any:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        counter[name] += 1
        return capture(*args, **kwargs)

    return wrapper


def test_equal_checks_are_found_by_hash_among_many_trajectories() -> None:
    """1,000 trajectories in different states: one capture per step, and compare is never called."""
    engine = Engine()
    state = {"v": 0}
    calls: Counter[str] = Counter()

    def never(current: Any, candidate: Any) -> bool:
        calls["compare"] += 1
        return bool(current == candidate)

    open_check = Check.equal(counted(lambda path: state["v"], calls, "capture open"))
    open_check.compare = never
    read_check = Check.equal(counted(lambda path: ("read", state["v"]), calls, "capture read"))
    read_check.compare = never

    @engine.tool(pre_check=open_check)
    def open_file(path: str) -> str:
        return f"handle:{path}"

    @engine.tool(pre_check=read_check)
    def read_file(handle: str) -> str:
        return f"data of {handle} at {state['v']}"

    def agent(path: str) -> str:
        return read_file(open_file(path))

    engine.set_agent(agent)
    for v in range(1000):
        state["v"] = v
        assert not engine("/etc/motd")
    assert len(engine.store) == 1000

    for v in (0, 499, 999):  # the first recorded, one in the middle, the last
        state["v"] = v
        calls.clear()
        hit = engine("/etc/motd")
        assert hit, hit.reason
        assert hit.output == f"data of handle:/etc/motd at {v}"
        assert calls == Counter({"capture open": 1, "capture read": 1})

    state["v"] = 1000  # an unknown state: one capture to find no match, then the agent's own
    calls.clear()
    miss = engine("/etc/motd")
    assert not miss and miss.steps_replayed == 0
    assert calls == Counter({"capture open": 2, "capture read": 1})


def test_a_compare_check_is_tried_most_recent_first_and_stops_at_the_first_safe() -> None:
    engine = Engine()
    state = {"v": 0}
    compared: list[tuple[int, int]] = []
    captures: list[int] = []

    def at_least(current: int, candidate: int) -> bool:
        compared.append((current, candidate))
        return current >= candidate

    def capture() -> int:
        captures.append(state["v"])
        return state["v"]

    @engine.tool(pre_check=Check(capture, at_least))
    def act() -> None:
        pass

    engine.set_agent(lambda: act())
    for v in (30, 20, 10):  # each state is below the earlier ones: every run is a miss
        state["v"] = v
        assert not engine()
    assert len(engine.store) == 3
    state["v"] = 25
    compared.clear()
    captures.clear()
    hit = engine()
    assert hit
    assert captures == [25]  # one capture for the step, not one per trajectory
    assert compared == [(25, 10)]  # the most recent (10) passed first; 20 and 30 never compared
    state["v"] = 15
    compared.clear()
    assert engine()
    assert compared == [(15, 10)]  # 10 is now also the most recently successful


def test_capture_once_per_distinct_step_at_a_branch() -> None:
    """Two trajectories branch at step 1: each distinct step is captured once, not per trajectory."""
    engine = Engine()
    page = {"name": "home"}
    captures: Counter[str] = Counter()

    @engine.tool(pre_check=Check.equal(counted(lambda: "site", captures, "go")))
    def go() -> None:
        pass

    @engine.tool(pre_check=Check.equal(counted(lambda button: page["name"], captures, "click")))
    def click(button: str) -> None:
        pass

    def agent() -> None:
        if not current_run().steps:  # type: ignore[union-attr]
            go()  # resumes after a replayed go()
        click("ok" if page["name"] == "home" else "retry")

    engine.set_agent(agent)
    for name in ("home", "error", "home", "error"):
        page["name"] = name
        engine()
    assert len(engine.store) == 2  # the second home and error runs were hits
    captures.clear()
    page["name"] = "error"
    assert engine()
    # step 0: one capture for go(); step 1: one for each distinct click (retry tried first, it passes)
    assert captures == Counter({"go": 1, "click": 1})
    page["name"] = "home"
    captures.clear()
    assert engine()
    assert captures == Counter({"go": 1, "click": 2})  # click("retry") fails, click("ok") passes


def test_most_recently_successful_first() -> None:
    """Where two stored trajectories are both safe, the one that succeeded last is replayed."""
    engine = Engine()
    visible = {"ok", "yes"}
    clicked: list[str] = []
    choice = {"button": "ok"}

    @engine.tool(pre_check=Check.equal(lambda button: button in visible))
    def click(button: str) -> None:
        clicked.append(button)

    engine.set_agent(lambda: click(choice["button"]))
    assert not engine()  # records click("ok")
    visible.discard("ok")
    choice["button"] = "yes"
    assert not engine()  # ok not visible: records click("yes")
    visible.add("ok")
    clicked.clear()
    assert engine() and clicked == ["yes"]  # both safe: the most recent
    visible.discard("yes")
    clicked.clear()
    assert engine() and clicked == ["ok"]  # only ok is safe: it succeeds, so it becomes the most recent
    visible.add("yes")
    clicked.clear()
    assert engine() and clicked == ["ok"]


def test_a_newly_recorded_trajectory_is_the_most_recent_even_on_a_known_step() -> None:
    engine = Engine()
    accepted: set[int] = set()
    page = {"n": 1}
    choice = {"button": "ok"}
    clicked: list[str] = []

    @engine.tool(pre_check=Check(lambda button: page["n"], lambda current, candidate: candidate in accepted))
    def click(button: str) -> None:
        clicked.append(button)

    engine.set_agent(lambda: click(choice["button"]))
    assert not engine()  # A: click("ok") on page 1
    page["n"], choice["button"] = 2, "yes"
    assert not engine()  # B: click("yes") on page 2
    page["n"], choice["button"] = 3, "ok"
    assert not engine()  # C: click("ok") on page 3, recorded last
    accepted.update({1, 2, 3})
    clicked.clear()
    hit = engine()
    assert hit and clicked == ["ok"], "C succeeded last, so its click comes first"


def test_most_recently_successful_first_across_different_calls() -> None:
    """click("one") succeeded first and last, click("two") in between; now only the first click("one")
    and click("two") pass their pre-checks: click("two") succeeded more recently of the two."""
    engine = Engine()
    accepted: set[str] = set()
    page = {"v": "s1"}
    choice = {"button": "one"}
    clicked: list[str] = []

    @engine.tool(pre_check=Check(lambda button: page["v"], lambda current, candidate: candidate in accepted))
    def click(button: str) -> None:
        clicked.append(button)

    engine.set_agent(lambda: click(choice["button"]))
    for v, button in (("s1", "one"), ("s2", "two"), ("s3", "one")):
        page["v"], choice["button"] = v, button
        assert not engine()  # nothing accepted yet: each run records
    accepted.update({"s1", "s2"})
    clicked.clear()
    assert engine() and clicked == ["two"]
    accepted.add("s3")
    clicked.clear()
    assert engine() and clicked == ["two"]  # the hit just now made click("two") the latest success


def test_post_check_failure_falls_back_after_the_step() -> None:
    engine = Engine()
    saved = {"count": 0}
    broken = {"on": False}

    def written() -> int:
        return saved["count"]

    @engine.tool(post_check=Check.equal(written), name="save")
    def save() -> None:
        if not broken["on"]:
            saved["count"] = 1

    seen_steps: list[int] = []

    def agent() -> str:
        run = current_run()
        assert run is not None
        seen_steps.append(len(run.steps))
        if not run.steps:
            save()
        return "saved"

    engine.set_agent(agent)
    assert not engine()
    saved["count"] = 0
    assert engine().hit  # the post-check sees count == 1 again
    saved["count"] = 0
    broken["on"] = True
    result = engine()
    assert not result and result.fallback
    assert result.steps_replayed == 1
    assert result.reason == "post-check of tool 'save' failed at step 0"
    assert seen_steps == [0, 1]  # the agent saw the replayed step: it stays done
    assert len(engine.store) == 2  # the new trajectory keeps the step, with its new post snapshot


def test_a_capture_that_raises_at_replay_is_a_failed_check() -> None:
    engine = Engine()
    fail = {"on": False}

    def capture() -> int:
        if fail["on"]:
            raise ConnectionError("screen unavailable")
        return 1

    @engine.tool(pre_check=Check.equal(capture), name="act")
    def act() -> None:
        pass

    engine.set_agent(lambda: act())
    engine()
    fail["on"] = True
    result = engine()
    assert not result
    assert result.reason is not None and "ConnectionError" in result.reason and "'act'" in result.reason


def test_a_compare_that_raises_is_a_failed_check() -> None:
    engine = Engine()

    def compare(current: int, candidate: int) -> bool:
        raise KeyError("boom")

    @engine.tool(pre_check=Check(lambda: 1, compare))
    def act() -> None:
        pass

    engine.set_agent(lambda: act())
    engine()
    result = engine()
    assert not result and result.reason is not None and "KeyError" in result.reason


def test_a_compare_raising_a_value_error_is_a_failed_check_too() -> None:
    """Only the missing-threshold error is loud; a compare's own ValueError is a failed check."""
    engine = Engine()

    def compare(current: str, candidate: str) -> bool:
        return int(current) == int(candidate)  # raises ValueError on "n/a"

    screen = {"count": "3"}

    @engine.tool(name="act", pre_check=Check(lambda: screen["count"], compare))
    def act() -> None:
        pass

    engine.set_agent(lambda: act())
    engine()
    screen["count"] = "n/a"
    result = engine()
    assert not result and result.fallback
    assert result.reason is not None and "ValueError" in result.reason and "'act'" in result.reason


def test_an_equal_check_sees_a_nested_pydantic_model_change_type() -> None:
    """``Check.equal`` tells pydantic models apart by the type of a nested model too: once
    ``Order(state=Paid(...))`` became ``Order(state=Refunded(...))`` the pre-check fails and the refund
    is not replayed."""
    from pydantic import BaseModel

    from muscle_mem import Check

    class Paid(BaseModel):
        at: str

    class Refunded(BaseModel):
        at: str

    class Order(BaseModel):
        order_id: str
        state: Paid | Refunded

    orders = {"ord_5521": Order(order_id="ord_5521", state=Paid(at="2024-05-01"))}
    engine = Engine()
    refunds: list[str] = []

    @engine.tool(pre_check=Check.equal(lambda order_id: orders[order_id]))
    def refund(order_id: str) -> str:
        refunds.append(order_id)
        orders[order_id] = Order(order_id=order_id, state=Refunded(at="2024-05-01"))
        return "refunded"

    def agent(task: str) -> str:
        if isinstance(orders["ord_5521"].state, Refunded):
            return "already refunded"
        return refund("ord_5521")

    engine.set_agent(agent)
    engine("refund order ord_5521")
    assert refunds == ["ord_5521"]
    result = engine("refund order ord_5521")  # the order is now Refunded: the pre-check must fail
    assert refunds == ["ord_5521"], (result.hit, result.output, refunds)


def test_check_equal_compares_type_and_value() -> None:
    """``Check.equal`` passes for a snapshot equal to the recorded one in type and value: 1.0 or True does
    not pass for a recorded 1, an equal 1 does."""
    state: dict[str, object] = {"v": 1}
    engine = Engine("memory://")

    @engine.tool(pre_check=Check.equal(lambda x: state["v"]))
    def t(x: str) -> str:
        return x

    engine.set_agent(lambda task: t(task))
    engine("a task")
    for other in (1.0, True):
        state["v"] = other
        result = engine("a task")
        assert not result.hit and "pre-check" in (result.reason or "")
    state["v"] = 1
    assert engine("a task").hit
