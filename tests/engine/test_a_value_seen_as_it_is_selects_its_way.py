"""A value a run saw as it is selects that run's way over a run that only saw an identity there.

An identity is free because data flow rebuilds what depends on it: a run that passed ``ok2`` on
into its answer covers any other value there. But where another run saw ``ok`` itself at that place
and went on otherwise (it made one more call), ``ok`` is what that run went on by: a replay that
reads ``ok`` follows it, not the run that passed another value on.
"""

from __future__ import annotations

from typing import Any

from test_signed_records import url_of

from conftest import StoreSpec
from muscle_mem import Engine, current_run


def reviewer(world: dict[str, Any], store: str | None = None) -> Engine:
    """Reads a verdict; on ``ok`` it also files it, on anything else it answers with the verdict."""
    engine = Engine(store)

    @engine.tool()
    def verdict() -> str:
        return str(world["verdict"])

    @engine.tool()
    def file(what: str) -> str:
        world.setdefault("filed", []).append(what)
        return "filed"

    def agent(task: str) -> str:
        run = current_run()
        done = {s.tool: s.output for s in run.steps} if run is not None else {}
        got = done["verdict"] if "verdict" in done else verdict()
        if got == "ok" and "file" not in done:
            file("k")
        return f"verdict {got}"

    engine.set_agent(agent)
    return engine


def test_a_value_another_run_saw_as_it_is_follows_that_run() -> None:
    world: dict[str, Any] = {"verdict": "ok"}
    engine = reviewer(world)
    assert engine("review").stored  # ok: filed
    world.update(verdict="ok2", filed=[])
    engine("review")  # ok2, passed on into the answer: an identity of that run, which ended
    world.update(verdict="ok", filed=[])
    again = engine("review")
    assert (again.output, world["filed"]) == ("verdict ok", ["k"])
    assert again.hit and again.steps_replayed == 2


def test_a_value_no_run_saw_as_it_is_stays_free_where_it_was_an_identity() -> None:
    world: dict[str, Any] = {"verdict": "ok"}
    engine = reviewer(world)
    engine("review")
    world.update(verdict="ok2", filed=[])
    engine("review")
    world.update(verdict="ok3", filed=[])
    third = engine("review")
    assert (third.output, world["filed"]) == ("verdict ok3", [])


def test_a_worker_reading_the_runs_from_a_durable_store_follows_the_run_that_saw_the_value(
    durable: StoreSpec,
) -> None:
    world: dict[str, Any] = {"verdict": "ok"}
    recorder = reviewer(world, url_of(durable))
    recorder("review")
    world.update(verdict="ok2", filed=[])
    recorder("review")
    recorder.close()
    world.update(verdict="ok", filed=[])
    worker = reviewer(world, url_of(durable))
    try:
        again = worker("review")
        assert (again.output, world["filed"], again.hit) == ("verdict ok", ["k"], True)
    finally:
        worker.close()


def test_a_first_step_run_that_saw_other_params_is_not_followed() -> None:
    """The run that saw ``ok`` as it is had another tier (a param it went on by): it is not followed."""
    world: dict[str, Any] = {"verdict": "ok"}
    engine = Engine()

    @engine.tool()
    def verdict(case: str) -> str:
        return str(world["verdict"])

    @engine.tool()
    def file(case: str) -> str:
        world.setdefault("filed", []).append(case)
        return "filed"

    def agent(task: str) -> str:
        case, tier = task.split()[2], task.split()[4]
        run = current_run()
        done = {s.tool: s.output for s in run.steps} if run is not None else {}
        got = done["verdict"] if "verdict" in done else verdict(case)
        if got == "ok" and tier == "gold":
            if "file" not in done:
                file(case)
            return "filed"
        return f"verdict {got}"

    engine.set_agent(agent)

    def review(case: str, tier: str) -> Any:
        return engine(f"review case {case} tier {tier}", params={"case": case, "tier": tier})

    review("c1x", "gold")  # ok, gold: filed
    world.update(verdict="ok2", filed=[])
    review("c2x", "silver")  # ok2 passed on
    world.update(verdict="zz", filed=[])
    review("c3x", "silver")
    world.update(verdict="ok", filed=[])
    again = review("c4x", "silver")  # the agent alone files nothing
    assert (again.output, world["filed"]) == ("verdict ok", [])
