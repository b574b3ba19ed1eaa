"""A stored output path walks only what the recorder walks: dict keys, list items, declared fields.

A rewritten row once made a replay walk ``__class__.__init__.__globals__["os"].environ`` out of a
tool's output and pass the process's secrets to a tool. Paths are checked when a record is read
(no dunder, no private name, no negative index, a pick only at a list item) and again when a value
is rebuilt (no method, no module attribute, no property: only the fields a class declares).
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import json
import os
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple

import pydantic
import pytest

from hostile_rows import fetch
from muscle_mem import Check, Engine, MissReason
from muscle_mem.model.provenance import Output, Pick, Unresolved, evaluate, walk
from muscle_mem.model.trajectory import RecordError, Step, Trajectory, from_record, to_record
from muscle_mem.stores import SQLiteStore, _records
from muscle_mem.stores.steps import step_rows


@dataclasses.dataclass
class Account:
    name: str
    secret_note: str = "hidden"

    @property
    def shout(self) -> str:
        return self.name.upper()


class Point(NamedTuple):
    x: int
    y: int


class Profile(pydantic.BaseModel):
    email: str


def _record(path: list[Any], picks: list[Any] | None = None) -> dict[str, Any]:
    """A two-step record whose second step passes the value at ``path`` in the first step's output."""
    output: dict[str, Any] = {"output": 0, "path": path}
    if picks is not None:
        output["picks"] = picks
    trajectory = Trajectory(task_key="k", steps=(Step("read", "1"), Step("send", "1")))
    record = to_record(trajectory)
    record["steps"][1]["args"] = [output]
    return record


@pytest.mark.parametrize(
    "path",
    [
        [["attr", "__class__"], ["attr", "__init__"], ["attr", "__globals__"], ["key", "os"]],
        [["attr", "__dict__"]],
        [["attr", "_private"]],
        [["attr", "environ.get"]],
        [["item", -1]],
        [["item", True]],
        [["key", 1.5]],
        [["key", {"$t": "tuple", "v": []}]],
        [["call", "system"]],
    ],
)
def test_a_path_the_recorder_never_writes_is_refused_at_load(path: list[Any]) -> None:
    """A dunder, a private name, a dotted name, a negative or bool index, a key not str or int: refused."""
    with pytest.raises(RecordError):
        from_record(_record(path))


def test_a_pick_must_choose_a_list_item_of_its_path() -> None:
    """A pick's depth must point at a list item of the path it chooses in."""
    assert from_record(_record([["item", 0], ["key", "id"]], [[0, "d"]])).steps[1].args
    for picks in ([[1, "d"]], [[2, "d"]], [[-1, "d"]]):
        with pytest.raises(RecordError):
            from_record(_record([["item", 0], ["key", "id"]], picks))


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"a": 1}, (("attr", "keys"),)),
        ("text", (("attr", "upper"),)),
        (os, (("attr", "environ"),)),
        (Account("ann"), (("attr", "shout"),)),
        (Account("ann"), (("key", "name"),)),
        (Point(1, 2), (("item", 0),)),
        ([1, 2], (("key", 0),)),
        ({"a": 1}, (("item", 0),)),
        (Profile(email="e"), (("attr", "model_dump"),)),
        (Profile(email="e"), (("attr", "model_config"),)),
    ],
    ids=lambda v: type(v).__name__,
)
def test_a_replay_walks_no_method_module_attribute_or_property(value: Any, path: Any) -> None:
    """Only a mapping's key, a list or tuple's item and a declared field are walked; anything else is
    unresolved (the step is not replayed), never reached."""
    with pytest.raises(Unresolved):
        evaluate(Output(0, path), {}, [value])


def test_declared_fields_of_every_recorded_kind_are_walked() -> None:
    value = {"a": [Account("ann"), Point(1, 2), Profile(email="e@x")]}
    assert walk(value, (("key", "a"), ("item", 0), ("attr", "name"))) == "ann"
    assert walk(value, (("key", "a"), ("item", 1), ("attr", "y"))) == 2
    assert walk(value, (("key", "a"), ("item", 2), ("attr", "email"))) == "e@x"


def test_a_missing_key_of_a_defaultdict_is_missing_and_not_created() -> None:
    output: collections.defaultdict[str, list[int]] = collections.defaultdict(list)
    with pytest.raises(Unresolved):
        evaluate(Output(0, (("key", "absent"),)), {}, [output])
    assert "absent" not in output


def test_a_chosen_element_of_what_is_no_longer_a_list_is_unresolved() -> None:
    chosen = Output(0, (("key", "rows"), ("item", 0)), picks=(Pick(1, "x"),))
    with pytest.raises(Unresolved):
        evaluate(chosen, {}, [{"rows": "a text, not a list"}])


def test_a_rewritten_path_never_reaches_the_process_environment(tmp_path: Path) -> None:
    """A row whose path is rewritten to walk dunders is refused; one walking a method misses: the tool
    never receives anything but the recorded data."""
    path = tmp_path / "cache.db"
    sent: list[Any] = []
    state = {"v": 1}

    def build() -> Engine:
        engine = Engine(f"sqlite:///{path}")

        @engine.tool(pre_check=Check.equal(lambda: state["v"]))
        def read() -> dict[str, str]:
            return {"to": "ops@example.com"}

        @engine.tool()
        def send(to: Any) -> str:
            sent.append(to)
            return "sent"

        engine.set_agent(lambda task: send(read()["to"]))
        return engine

    engine = build()
    recorded = engine("mail ops")
    engine.close()
    assert recorded.stored and sent == ["ops@example.com"]
    spec = ("sqlite", str(path), "")
    (text,) = fetch(spec, "SELECT record FROM {s}.trajectories WHERE id = %s", (recorded.trajectory_id,))[0]
    record = json.loads(text)
    assert record["steps"][1]["args"][0] == {"output": 0, "path": [["key", "to"]]}
    for attack, refused in (
        ([["attr", "__class__"], ["attr", "__init__"], ["attr", "__globals__"], ["key", "os"]], True),
        ([["attr", "copy"]], False),
    ):
        rewritten = copy.deepcopy(record)
        rewritten["steps"][1]["args"][0]["path"] = attack
        with Engine(f"sqlite:///{path}") as writer:
            writer.store.clear()
        _write_row(path, rewritten)
        sent.clear()
        engine = build()
        result = engine("mail ops")
        engine.close()
        assert not result.hit and sent == ["ops@example.com"]  # the agent ran; nothing else was sent
        assert engine.metrics.store_errors == (1 if refused else 0)
        if not refused:
            assert result.miss_reason is MissReason.UNRESOLVED_VALUE


def _write_row(path: Path, record: dict[str, Any]) -> None:
    """Store a record as it is: a placeholder through the store, its text then rewritten by SQL."""
    store = SQLiteStore(path)
    try:
        placeholder = Trajectory(task_key=record["task_key"], steps=(), task=record["task"], id=record["id"])
        store.add(placeholder)
    finally:
        store.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (json.dumps(record), record["id"]))
        written = _records.loads(json.dumps(record), record["id"], record["task_key"], str(path))
        if written is not None:  # the step index rows a writing process would have left for it
            db.execute("DELETE FROM steps WHERE trajectory_id = ?", (record["id"],))
            db.executemany(
                "INSERT INTO steps VALUES (?, ?, ?, ?, ?, ?)", [r.values() for r in step_rows(written)]
            )
