"""A replay follows one recorded run: never one run's params with another run's output."""

from __future__ import annotations

from typing import Any

from muscle_mem import Engine, current_run
from muscle_mem.reasons import MissReason


def test_params_one_run_saw_and_an_output_another_run_saw_are_not_taken_for_a_run_that_saw_both() -> None:
    """Shipped when the order's region is the one asked for: eu/eu and us/us recorded, eu/us now holds."""
    world: dict[str, Any] = {"region": "eu", "shipped": [], "held": []}
    engine = Engine()

    @engine.tool()
    def read_order(order: str) -> dict[str, str]:
        return {"order": order, "region": world["region"]}

    @engine.tool()
    def ship(order: str) -> str:
        world["shipped"].append(order)
        return "shipped"

    @engine.tool()
    def hold(order: str) -> str:
        world["held"].append(order)
        return "held"

    def agent(task: str, order: str, region: str) -> str:
        run = current_run()
        done = len(run.steps) if run is not None else 0
        seen = run.steps[0].output if run is not None and done else read_order(order)
        return ship(order) if seen["region"] == region else hold(order)

    engine.set_agent(agent)

    def ask(order: str, region: str) -> Any:
        return engine("ship the order", order, region, params={"order": order, "region": region})

    world["region"] = "eu"
    assert ask("ord-1", "eu").stored
    world["region"] = "us"
    ask("ord-2", "us")
    world["region"] = "us"
    probe = ask("ord-3", "eu")
    assert not probe.hit and probe.miss_reason is MissReason.OBSERVATION_CHANGED
    assert world["shipped"] == ["ord-1", "ord-2"] and world["held"] == ["ord-3"]
