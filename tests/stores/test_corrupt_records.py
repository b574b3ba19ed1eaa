"""A stored trajectory record that no longer decodes is skipped with a warning naming it, never fatal."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Check, Engine
from muscle_mem.model.provenance import Const
from muscle_mem.model.trajectory import Snapshot, Step, Trajectory
from muscle_mem.stores import SQLiteStore


def _good(task_key: str = "task-a", n: int = 0) -> Trajectory:
    """A one-step trajectory that decodes, its values depending on ``n``."""
    return Trajectory(
        task_key=task_key,
        task=f"do {task_key}",
        steps=(
            Step(
                tool="tool0",
                version="v1",
                args=(Const(n),),
                pre=Snapshot.capture({"state": n}),
            ),
        ),
        result=Const("done"),
    )


def _corrupt(record: dict[str, Any], how: str) -> dict[str, Any]:
    """The record with one value that no longer decodes, in the way ``how`` names."""
    if how == "decimal":  # decimal.InvalidOperation is an ArithmeticError, not a ValueError
        record["steps"][0]["args"][0] = {"static": {"$t": "decimal", "v": "not-a-number"}}
    elif how == "timedelta":  # OverflowError
        record["steps"][0]["pre"]["data"] = {"$t": "timedelta", "v": [10**10, 0, 0]}
    elif how == "tokens":  # json accepts Infinity; int(inf) raises OverflowError
        record["tokens"] = float("inf")
    return record


@pytest.mark.parametrize("how", ["decimal", "timedelta", "tokens"])
def test_a_corrupt_row_is_skipped_not_fatal(tmp_path: Path, how: str, logs: pytest.LogCaptureFixture) -> None:
    """A row whose decimal is not a number, whose timedelta overflows or whose ``tokens`` is Infinity is
    skipped with a warning naming it; the good trajectories of its task are still read."""
    path = tmp_path / "cache.db"
    store = SQLiteStore(path)
    good, bad = _good(n=1), _good(n=2)
    store.add(good)
    store.add(bad)
    store.close()
    db = sqlite3.connect(path)
    text = db.execute("SELECT record FROM trajectories WHERE id = ?", (bad.id,)).fetchone()[0]
    corrupt = json.dumps(_corrupt(json.loads(text), how))
    db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (corrupt, bad.id))
    db.commit()
    db.close()

    store = SQLiteStore(path)
    try:
        assert store.get(bad.id) is None
        changes = store.changes("task-a", 0)
        assert [t.id for t in changes.added] == [good.id]
    finally:
        store.close()
    assert any(bad.id in r.getMessage() for r in logs.records if r.levelno == logging.WARNING)


def test_engine_keeps_replaying_next_to_a_corrupt_row(tmp_path: Path) -> None:
    """One corrupt row of a task never stops the engine from replaying the intact trajectory of that task."""
    path = tmp_path / "cache.db"
    state = {"v": 1}

    def build() -> Engine:
        engine = Engine(f"sqlite:///{path}")

        @engine.tool(pre_check=Check.equal(lambda x: state["v"]))
        def act(x: str) -> str:
            return x.upper()

        engine.set_agent(lambda task: act("hello"))
        return engine

    engine = build()
    first = engine("say hello")
    state["v"] = 2
    second = engine("say hello")
    assert first.stored and second.stored
    engine.close()
    db = sqlite3.connect(path)
    text = db.execute("SELECT record FROM trajectories WHERE id = ?", (first.trajectory_id,)).fetchone()[0]
    record = json.loads(text)
    record["steps"][0]["args"][0] = {"static": {"$t": "decimal", "v": "oops"}}
    db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (json.dumps(record), first.trajectory_id))
    db.commit()
    db.close()

    engine = build()
    try:
        result = engine("say hello")  # state v == 2: the intact trajectory matches
        assert result.hit, result.reason
    finally:
        engine.close()
