"""Runs that made the same calls weigh together, wherever the step index filed them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Check, Engine, current_run
from muscle_mem.reasons import MissReason


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> str | None:
    """The in-process index of a memory store, and the lazy index of a SQLite file."""
    return None if request.param == "memory" else f"sqlite:///{tmp_path / 'cache.db'}"


def refund_desk(store: str | None) -> tuple[Engine, dict[str, Any]]:
    """A refund the processor issues or holds (no one can tell beforehand), after a read of a score."""
    world: dict[str, Any] = {"score": 0, "processor": "issued", "closed": [], "escalated": []}
    engine = Engine(store)

    @engine.tool()
    def read_account(customer: str) -> dict[str, Any]:
        return {"customer": customer, "score": world["score"]}

    @engine.tool(post_check=Check.equal(lambda customer: world["processor"]))
    def issue_refund(customer: str) -> dict[str, str]:
        return {"status": world["processor"]}

    @engine.tool()
    def close(customer: str) -> str:
        world["closed"].append(customer)
        return "closed"

    @engine.tool()
    def escalate(customer: str) -> str:
        world["escalated"].append(customer)
        return "escalated"

    def agent(task: str, customer: str) -> str:
        run = current_run()
        done = list(run.steps) if run is not None else []
        if not done:
            read_account(customer)
        refund = done[1].output if len(done) > 1 else issue_refund(customer)
        return close(customer) if refund["status"] == "issued" else escalate(customer)

    engine.set_agent(agent)
    return engine, world


def ask(engine: Engine, world: dict[str, Any], customer: str, score: int, processor: str) -> Any:
    world["score"], world["processor"] = score, processor
    return engine("refund the customer", customer, params={"customer": customer})


def record(engine: Engine, world: dict[str, Any]) -> None:
    """Issued at scores 10 and 30, held at 20 and 40: each run filed under the score it read."""
    for number, (score, processor) in enumerate([(10, "issued"), (20, "held"), (30, "issued"), (40, "held")]):
        ask(engine, world, f"cus-{number}", score, processor)
    world["closed"].clear()
    world["escalated"].clear()


def test_an_output_no_run_on_its_branch_saw_follows_the_runs_that_saw_it_elsewhere(store: str | None) -> None:
    """Score 20 was seen only with a held refund; issued now, the runs issued at 10 and 30 cover it."""
    engine, world = refund_desk(store)
    record(engine, world)
    result = ask(engine, world, "cus-new", 20, "issued")
    assert result.hit and result.steps_replayed == 3
    assert world["closed"] == ["cus-new"] and not world["escalated"]


def test_the_runs_elsewhere_do_not_cover_a_value_outside_what_they_saw(store: str | None) -> None:
    """Score 40 was seen only with a held refund; the issued runs saw 10 to 30: the agent takes over."""
    engine, world = refund_desk(store)
    record(engine, world)
    result = ask(engine, world, "cus-new", 40, "issued")
    assert not result.hit and result.steps_replayed == 2
    assert result.miss_reason is MissReason.OBSERVATION_CHANGED
    assert world["closed"] == ["cus-new"] and not world["escalated"]


def test_a_post_check_no_run_passes_still_hands_over(store: str | None) -> None:
    """A refund status no run saw (refused) passes no recorded post-check anywhere."""
    engine, world = refund_desk(store)
    record(engine, world)
    result = ask(engine, world, "cus-new", 20, "refused")
    assert not result.hit and result.miss_reason is MissReason.POST_CHECK_FAILED
    assert world["escalated"] == ["cus-new"] and not world["closed"]
