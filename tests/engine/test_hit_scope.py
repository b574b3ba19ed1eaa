"""What an engine call leaves behind in its context: no current run, hit or not."""

from __future__ import annotations

import pytest

from muscle_mem import Check, Engine, current_run


def _engine(state: dict[str, float]) -> Engine:
    engine = Engine()
    tool = engine.register(lambda x: x + 1, name="inc", pre_check=Check.equal(lambda x: state["v"]))
    engine.set_agent(lambda task: tool(1))
    return engine


def test_no_run_is_current_after_a_hit_a_miss_or_a_rejected_call() -> None:
    """The run is current only during the call: after a miss, a hit, and a call refused for its tags."""
    engine = _engine({"v": 1.0})
    assert not engine("task").hit
    assert current_run() is None
    assert engine("task").hit
    assert current_run() is None
    with pytest.raises(TypeError):
        engine("task", tags=[1])  # type: ignore[list-item]
    assert current_run() is None
    assert engine("task").hit


def test_an_equality_check_tells_zero_from_negative_zero() -> None:
    """0.0 == -0.0 in Python, but their snapshots differ: a step recorded at 0.0 is not replayed at -0.0."""
    state = {"v": 0.0}
    engine = _engine(state)
    assert engine("task").stored
    assert engine("task").hit
    state["v"] = -0.0
    result = engine("task")
    assert not result.hit and result.stored
    assert engine("task").hit
    state["v"] = 0.0
    assert engine("task").hit
