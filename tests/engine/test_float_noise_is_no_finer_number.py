"""Float noise is not a finer number: ``30.000000000000004`` is covered where runs saw 35.25 and 20.5.

Where the runs saw fractions, a number written with more decimal places than any of them is not
covered (the agent may have rounded it). A sum of cents leaves noise past the twelfth significant
digit; that noise is not a decimal place the agent could have rounded away.
"""

from __future__ import annotations

from typing import Any

from muscle_mem import Engine, current_run


def quoting(world: dict[str, Any]) -> Engine:
    engine = Engine()

    @engine.tool()
    def quote(sku: str) -> dict[str, float]:
        return {"price": world["price"]}

    @engine.tool()
    def accept(sku: str) -> str:
        world.setdefault("accepted", []).append(sku)
        return "accepted"

    def agent(task: str) -> str:
        run = current_run()
        done = {s.tool: s.output for s in run.steps} if run is not None else {}
        price = (done["quote"] if "quote" in done else quote("a1"))["price"]
        if price < 100 and "accept" not in done:
            accept("a1")
        return "accepted"

    engine.set_agent(agent)
    return engine


def recorded() -> tuple[Engine, dict[str, Any]]:
    world: dict[str, Any] = {}
    engine = quoting(world)
    for price in (35.25, 20.5):
        world["price"] = price
        engine("quote a1")
    return engine, world


def test_float_noise_within_the_range_is_covered() -> None:
    engine, world = recorded()
    world["price"] = 0.1 * 3 * 100  # 30.000000000000004
    assert world["price"] != 30
    assert engine("quote a1").hit


def test_a_number_finer_than_the_runs_saw_still_stops() -> None:
    engine, world = recorded()
    world["price"] = 30.125
    result = engine("quote a1")
    assert not result.hit and result.steps_replayed == 1
