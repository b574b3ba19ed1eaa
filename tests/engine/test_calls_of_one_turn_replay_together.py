"""Calls a model made in one turn are decided together: a replay makes them together and hands over between turns.

An agent whose model asks for several tools at once says so (``current_run().begin_turn()``; the
framework integrations do it). Each call of the turn was decided on what the run had seen before
the turn, so a changed output of the first does not stop the replay before the second: the agent
alone would have made both. The replay stops at the next turn, and the agent resumes with whole
turns in its history. No call of a turn is rebuilt from the output of another of the same turn.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_signed_records import url_of

from conftest import StoreSpec
from muscle_mem import Engine, current_run
from muscle_mem.model.trajectory import RecordError, from_record, to_record


def rooms_desk(
    turns: bool = True, store: str | None = None, world: dict[str, Any] | None = None
) -> tuple[Engine, dict[str, Any], list[list[str]]]:
    """An agent that asks whether two rooms are free in one turn, then holds the first free one."""
    world = world if world is not None else {"free": {}, "held": []}
    seen_at_turns: list[list[str]] = []
    engine = Engine(store)

    @engine.tool()
    def is_free(room: str) -> bool:
        return bool(world["free"][room])

    @engine.tool()
    def hold(room: str) -> str:
        world["held"].append(room)
        return f"held {room}"

    def turn() -> None:
        run = current_run()
        assert run is not None
        seen_at_turns.append([f"{s.tool}({s.args[0]})" for s in run.steps])
        if turns:
            run.begin_turn()

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        done = {(s.tool, s.args[0]): s.output for s in run.steps}
        if ("is_free", "r1") not in done and ("is_free", "r2") not in done:
            turn()  # one model turn asks about both rooms
            done[("is_free", "r1")] = is_free("r1")
            done[("is_free", "r2")] = is_free("r2")
        free = [room for room in ("r1", "r2") if done.get(("is_free", room))]
        if not free:
            return "none free"
        if not any(tool == "hold" for tool, _ in done):
            turn()
            hold(free[0])
        return f"held {free[0]}"

    engine.set_agent(agent)
    return engine, world, seen_at_turns


def test_a_replay_makes_every_call_of_a_turn_and_hands_over_between_turns() -> None:
    engine, world, seen = rooms_desk()
    world["free"] = {"r1": True, "r2": False}
    assert engine("hold a room").stored
    world.update(free={"r1": False, "r2": True}, held=[])
    result = engine("hold a room")
    assert not result.hit
    assert result.steps_replayed == 2  # both look-ups of the first turn
    assert seen[-1] == ["is_free(r1)", "is_free(r2)"]  # the agent resumed between turns
    assert (result.output, world["held"]) == ("held r2", ["r2"])


def test_without_turns_a_replay_stops_at_the_first_changed_output() -> None:
    engine, world, _ = rooms_desk(turns=False)
    world["free"] = {"r1": True, "r2": False}
    engine("hold a room")
    world.update(free={"r1": False, "r2": True}, held=[])
    assert engine("hold a room").steps_replayed == 1


def test_a_stored_step_says_which_outputs_its_turn_had_seen() -> None:
    engine, world, _ = rooms_desk()
    world["free"] = {"r1": True, "r2": True}
    stored = engine("hold a room")
    trajectory = engine.store.get(stored.trajectory_id)
    assert trajectory is not None
    assert [s.decided_at for s in trajectory.steps] == [0, 0, 2]
    world["held"] = []
    again = engine("hold a room")
    assert again.hit
    assert [c.decided_at for c in again.calls] == [0, 0, 2]


def test_no_call_is_rebuilt_from_an_output_of_its_own_turn() -> None:
    """The second call of a turn repeats the first one's output by coincidence: it stays a constant."""
    world = {"code": "A7"}
    engine = Engine()

    @engine.tool()
    def code_of(item: str) -> str:
        return str(world["code"])

    @engine.tool()
    def label(text: str) -> str:
        return f"label {text}"

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        run.begin_turn()  # both calls decided at once: "A7" is the agent's own, not code_of's output
        code_of("item")
        label("A7")
        return "done"

    engine.set_agent(agent)
    stored = engine("label the item")
    trajectory = engine.store.get(stored.trajectory_id)
    assert trajectory is not None
    assert repr(trajectory.steps[1].args[0]) == "Const(value='A7')"


def test_a_turn_is_replayed_together_by_another_worker_on_a_durable_store(durable: StoreSpec) -> None:
    """Recorded by one engine on SQLite or PostgreSQL, replayed by a new one: the turns come with the steps."""
    world: dict[str, Any] = {"free": {"r1": True, "r2": False}, "held": []}
    recorder, _, _ = rooms_desk(store=url_of(durable), world=world)
    assert recorder("hold a room").stored
    recorder.close()
    world.update(free={"r1": False, "r2": True}, held=[])
    worker, _, seen = rooms_desk(store=url_of(durable), world=world)
    try:
        result = worker("hold a room")
        assert (result.steps_replayed, seen[-1]) == (2, ["is_free(r1)", "is_free(r2)"])
        assert world["held"] == ["r2"]
    finally:
        worker.close()


@pytest.mark.parametrize("decided_at", [3, -1, "0", 1.0])
def test_a_record_whose_step_claims_to_be_decided_after_itself_is_refused(decided_at: Any) -> None:
    """``decided_at`` counts steps before the step: anything else is a damaged record, never replayed."""
    engine, world, _ = rooms_desk()
    world["free"] = {"r1": True, "r2": True}
    trajectory = engine.store.get(engine("hold a room").trajectory_id or "")
    assert trajectory is not None
    record = to_record(trajectory)
    assert from_record(record) == trajectory
    record["steps"][1]["decided_at"] = decided_at
    with pytest.raises(RecordError, match="decided_at"):
        from_record(record)
