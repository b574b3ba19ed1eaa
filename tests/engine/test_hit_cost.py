"""A hit costs about the same however many trajectories its task has stored."""

from __future__ import annotations

import dataclasses
import tracemalloc

from muscle_mem import Check, Engine
from muscle_mem.model.provenance import Const


def _engine_with_first_calls(extra: int) -> Engine:
    """One task whose trajectories start with ``extra + 1`` distinct calls (the agent clicked
    elsewhere each time); the one recorded by the engine is the latest success."""
    engine = Engine()
    state = {"page": "home"}

    @engine.tool(pre_check=Check.equal(lambda x: state["page"]))
    def click(x: int) -> None:
        pass

    engine.set_agent(lambda task: click(5))
    recorded = engine.store.get(engine("click the button").trajectory_id)  # type: ignore[arg-type]
    assert recorded is not None
    for i in range(extra):
        step = dataclasses.replace(recorded.steps[0], args=(Const(100_000 + i),))
        engine.store.add(
            dataclasses.replace(recorded, steps=(step,), id=f"other{i}", created_at=recorded.created_at - 1)
        )
    assert engine("click the button").hit  # reads the index; promotes the engine's trajectory
    return engine


def _peak_bytes_of_a_hit(engine: Engine) -> int:
    tracemalloc.start()
    try:
        assert engine("click the button").hit
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_hit_does_not_copy_every_possible_next_call() -> None:
    """A hit allocates about the same with 20,000 distinct first calls stored for its task as with 10: it walks
    the stored calls newest first and stops at the first that passes."""
    small = _peak_bytes_of_a_hit(_engine_with_first_calls(10))
    large = _peak_bytes_of_a_hit(_engine_with_first_calls(20_000))
    assert large < 4 * small + 20_000, (
        f"a hit allocated {large:,} bytes with 20,000 calls stored, {small:,} with 10"
    )
