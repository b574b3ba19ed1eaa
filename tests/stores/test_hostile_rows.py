"""A row rewritten by SQL never breaks a call: it is skipped (counted, named once) and the good ones replay.

Each row kind is one that once stopped a whole task replaying in every process, or raised to the
caller of ``engine(...)``: a Windows worker's ``WindowsPath``, an empty numpy scalar, pydantic's
``BaseModel`` itself, a format-1 template part ``"[]"``, a numpy dtype string ``"(1,"``, invalid
UTF-8 in a SQLite column, and a dataclass tag naming pydantic's ``PydanticDescriptorProxy`` (a
``RecursionError`` on every call); and two that cost without bound: int keys sharing one hash, and a
constant nested 5,000 deep.
"""

from __future__ import annotations

import logging

import pytest

from conftest import StoreSpec, open_spec
from hostile_rows import ROWS, TASK, build_engine, plant_hostile
from muscle_mem import Engine, Result


async def _call(engine: Engine, mode: str) -> Result:
    return engine(TASK) if mode == "sync" else await engine.arun(TASK)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("kind", sorted(ROWS))
async def test_a_hostile_row_never_breaks_a_call(
    durable: StoreSpec, kind: str, mode: str, logs: pytest.LogCaptureFixture
) -> None:
    """A hostile row of the task is skipped (counted in ``store_errors`` and named once in the log when
    it cannot be read); every call still hits on the good trajectory, sync and async."""
    good, planted, refused = plant_hostile(durable, kind)

    engine = build_engine(open_spec(durable), {"v": 1})
    try:
        results = [await _call(engine, mode) for _ in range(3)]
    finally:
        engine.close()
    assert [(r.hit, r.trajectory_id) for r in results] == [(True, good)] * 3, [r.reason for r in results]
    # every durable store has a step index: a record rewritten under its rows is left out even when it
    # decodes (inertly), so each planted row is counted and named once
    assert engine.metrics.store_errors == 1, refused
    named = [r for r in logs.records if planted in r.getMessage() and r.levelno >= logging.WARNING]
    assert len(named) == 1, [r.getMessage() for r in named]
