"""A stored instance of a class replays once this process encoded one, or ``Engine(types=...)`` lists it.

Another process (a worker that has not run the agent yet) reads a trajectory whose argument is an
instance of an application dataclass: decoding never rebuilds a class it was not told of, so the
step is not replayed until the class is allowed, and then it replays as it was.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from hostile_rows import TASK, build_engine, execute, good_record, passing, record_good
from muscle_mem import Engine, MissReason
from muscle_mem.model import codec
from muscle_mem.stores import SQLiteStore, _records, steps


@dataclasses.dataclass(frozen=True)
class Parcel:
    """Never encoded by this test process before a test allows it (the allowlist is the process's)."""

    weight: int
    label: str


@dataclasses.dataclass(frozen=True)
class Crate:
    """Never encoded by this test process before a test encodes one."""

    weight: int
    label: str


def _store_with_an_argument_of(cls: type, tmp_path: Path) -> tuple[str, str]:
    """A SQLite store whose one trajectory passes ``cls(3, "fragile")``, written by another process."""
    spec = ("sqlite", str(tmp_path / "cache.db"), "")
    store = SQLiteStore(spec[1])
    good = record_good(store)
    store.close()
    record = good_record(spec, good)
    value = {"$t": "dataclass", "type": f"{__name__}:{cls.__name__}", "v": {"weight": 3, "label": "fragile"}}
    passing(record, value, str(cls(3, "fragile")).upper())
    execute(spec, "UPDATE {s}.trajectories SET record = %s WHERE id = %s", (json.dumps(record), good))
    # as the writing process would have: the step index rows of the record as it now is
    written = _records.loads(json.dumps(record), good, record["task_key"], "test")
    assert written is not None
    execute(spec, "DELETE FROM {s}.steps WHERE trajectory_id = %s", (good,))
    for row in steps.step_rows(written):
        execute(spec, "INSERT INTO {s}.steps VALUES (%s, %s, %s, %s, %s, %s)", tuple(row.values()))
    return f"sqlite:///{spec[1]}", good


def _engine(url: str, seen: list[Any], types: tuple[type, ...] = ()) -> Engine:
    engine = build_engine(url, {"v": 1}, seen, types)
    engine.set_agent(lambda task: None)  # no tool call: nothing new is stored
    return engine


def test_an_unknown_class_is_not_replayed_until_allowed(tmp_path: Path) -> None:
    url, good = _store_with_an_argument_of(Parcel, tmp_path)
    seen: list[Any] = []
    with _engine(url, seen) as engine:
        result = engine(TASK)
    assert not result.hit and result.miss_reason is MissReason.UNRESOLVED_VALUE and seen == []
    assert "does not decode as its class" in (result.reason or "")
    with _engine(url, seen, types=(Parcel,)) as engine:
        result = engine(TASK)
    assert result.hit and result.trajectory_id == good and seen == [Parcel(3, "fragile")]


def test_a_class_this_process_encoded_since_is_rebuilt_at_the_next_replay(tmp_path: Path) -> None:
    """The trajectory was read while its class was unknown; once one is encoded here, it replays."""
    url, good = _store_with_an_argument_of(Crate, tmp_path)
    seen: list[Any] = []
    with _engine(url, seen) as engine:
        assert not engine(TASK).hit and seen == []
        codec.encode(Crate(1, "x"))  # the process records a Crate (any argument or output would)
        result = engine(TASK)
    assert result.hit and result.trajectory_id == good and seen == [Crate(3, "fragile")]


def test_types_takes_only_the_classes_the_codec_rebuilds() -> None:
    with pytest.raises(TypeError, match="types="):
        Engine(types=[Path])
