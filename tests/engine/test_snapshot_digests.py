"""Snapshots of equality Checks are stored as their hash only, compared by hash, and old records still replay."""

from __future__ import annotations

import json
from typing import Any

from muscle_mem import Check, Engine
from muscle_mem.model.trajectory import Snapshot, Trajectory, from_record, to_record

DOOR: dict[str, Any] = {}


def open_door(code: str) -> str:
    DOOR["state"] = "open"
    return "opened"


def agent(task: str) -> str:
    result = tool_of(task)(DOOR["code"])
    DOOR["state"] = "closed"
    return result


TOOLS: dict[str, Any] = {}


def tool_of(task: str) -> Any:
    return TOOLS[task]


def door_engine(pre: Check[Any] | None, post: Check[Any] | None = None, *, fresh: bool = True) -> Engine:
    """An engine whose one tool opens a door; its checks read the door (the owner is never an argument)."""
    if fresh:
        DOOR.clear()
        DOOR.update(state="closed", code="4471", owner="Maria Lopez")
    engine = Engine()
    TOOLS["open the door"] = engine.register(open_door, pre_check=pre, post_check=post)
    engine.set_agent(agent)
    return engine


def stored(engine: Engine) -> Trajectory:
    [summary] = engine.store.summaries()
    found = engine.store.get(summary.id)
    assert found is not None
    return found


def test_an_equality_snapshot_is_stored_as_its_hash_and_replays() -> None:
    engine = door_engine(Check.equal(lambda code: dict(DOOR)), Check.equal(lambda code: DOOR["state"]))
    assert engine("open the door").stored
    step = stored(engine).steps[0]
    record = json.dumps(to_record(stored(engine)))
    assert step.pre is not None and not step.pre.kept and step.pre.value is None
    assert step.pre.key == Snapshot.capture({"state": "closed", "code": "4471", "owner": "Maria Lopez"}).key
    assert "Maria Lopez" not in record and '"data"' not in record
    assert engine("open the door").hit
    DOOR["owner"] = "Bob Stone"  # what the check reads changed: its hash does not match
    assert not engine("open the door").hit


def test_a_compare_check_keeps_its_snapshot_value() -> None:
    engine = door_engine(Check(lambda code: DOOR["owner"], lambda now, then: now == then))
    engine("open the door")
    step = stored(engine).steps[0]
    assert step.pre is not None and step.pre.kept and step.pre.value == "Maria Lopez"
    assert engine("open the door").hit


def test_a_record_with_snapshot_values_still_loads_and_replays() -> None:
    """A record written before snapshots were hashed (its ``data`` kept) replays as before."""
    pre, post = Check.equal(lambda code: DOOR["owner"]), Check.equal(lambda code: DOOR["state"])
    engine = door_engine(pre, post)
    engine("open the door")
    record = to_record(stored(engine))
    step = record["steps"][0]
    step["pre"] = {"key": step["pre"]["key"], "data": "Maria Lopez"}
    step["post"] = {"key": step["post"]["key"], "data": "open"}
    old = from_record(record)
    assert old.steps[0].pre == Snapshot.capture("Maria Lopez") and old.steps[0].post == Snapshot.capture(
        "open"
    )
    again = door_engine(pre, post, fresh=False)
    again.store.add(old)
    assert again("open the door").hit


def test_a_hashed_snapshot_never_passes_a_compare_check() -> None:
    """A snapshot kept as its hash cannot be judged by a compare callback (the tool's check changed):
    the step is not safe, and the call goes to the agent."""
    engine = door_engine(Check.equal(lambda code: DOOR["owner"]))
    engine("open the door")
    compared: list[Any] = []
    again = door_engine(
        Check(lambda code: DOOR["owner"], lambda now, then: compared.append(then) or True), fresh=False
    )
    again.store.add(stored(engine))
    result = again("open the door")
    assert not result.hit and result.steps_replayed == 0 and compared == []


def test_an_equality_post_check_compares_by_type_and_value() -> None:
    """As for pre-checks, ``1`` and ``True`` are two snapshots: a post-check that read True then 1 fails."""
    engine = door_engine(None, Check.equal(lambda code: DOOR["flag"]))
    DOOR["flag"] = True
    engine("open the door")
    assert engine("open the door").hit
    DOOR["flag"] = 1
    assert not engine("open the door").hit
