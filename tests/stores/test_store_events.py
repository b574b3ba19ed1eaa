"""The stores' event log (what ``stats`` and ``report`` read): every field kept, many writers, bad rows skipped."""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import StoreSpec, open_spec
from muscle_mem import Engine
from muscle_mem.cli import main as cli_main
from muscle_mem.stores import SQLiteStore, Store
from muscle_mem.stores.base import Event

FULL = Event(
    at=1_700_000_000.25,
    task="Rembourser 12 € à ann@example.org — « vite »",
    task_key="task:0123456789abcdef",
    hit=False,
    steps_replayed=3,
    reason="pre-check of tool 'issue_refund' failed at step 3; the agent raised",
    tool="issue_refund",
    trajectory_id="4bade0b342774bc3b0608abab5bcea31",
    elapsed=1.5,
    agent_seconds=1.25,
    saved_seconds=0.0,
    tokens_spent=4321,
    tokens_saved=0,
    usage=(("gpt-4.1", 4000, 300, 2), ("", 20, 1, 1)),
)


def test_every_field_is_kept(store: Store) -> None:
    hit = Event(
        at=FULL.at + 1,
        task="t",
        task_key="k",
        hit=True,
        steps_replayed=6,
        saved_seconds=2.5,
        tokens_saved=9782,
    )
    store.log_events([FULL, hit])
    assert store.events() == [FULL, hit]
    assert store.events(since=FULL.at) == [FULL, hit]  # since is inclusive
    assert store.events(since=FULL.at + 0.5) == [hit]
    assert store.events(since=FULL.at + 2) == []


def test_events_do_not_move_the_revision(store: Store) -> None:
    """Engines reload their index when the revision moves: writing events must not make them."""
    before = store.revision()
    store.log_events([FULL])
    assert store.revision() == before


def test_concurrent_writers_lose_nothing(store: Store) -> None:
    def write(worker: int) -> None:
        for i in range(25):
            store.log_events([Event(at=float(i), task=f"w{worker}", task_key="k", hit=bool(i % 2))])

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    found = store.events()
    assert len(found) == 100
    assert sorted((e.task, e.at) for e in found) == sorted(
        (f"w{w}", float(i)) for w in range(4) for i in range(25)
    )
    assert [e.at for e in found] == sorted(e.at for e in found)


def test_events_outlive_the_handle(opener: Callable[[], Store]) -> None:
    first = opener()
    first.log_events([FULL])
    first.close()
    assert opener().events() == [FULL]


def test_an_undecodable_event_is_skipped_with_a_warning(
    durable: StoreSpec, caplog: pytest.LogCaptureFixture
) -> None:
    store = open_spec(durable)
    try:
        store.log_events([FULL])
        _raw(durable, "INSERT INTO {s}.events (at, data) VALUES (%s, %s)", (FULL.at + 1, "{not json"))
        store.log_events([Event(at=FULL.at + 2, task="t", task_key="k", hit=True)])
        with caplog.at_level(logging.WARNING, logger="muscle_mem.stores"):
            assert [e.at for e in store.events()] == [FULL.at, FULL.at + 2]
        assert any("skipping event" in r.getMessage() for r in caplog.records)
    finally:
        store.close()


def _raw(spec: StoreSpec, sql: str, args: tuple[object, ...]) -> None:
    kind, location, schema = spec
    if kind == "sqlite":
        with sqlite3.connect(location) as db:
            db.execute(sql.format(s="main").replace("%s", "?"), args)
        return
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        conn.execute(sql.format(s=f'"{schema}"'), args)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("steps_replayed", "x"),
        ("tokens_spent", None),
        ("hit", "yes"),
        ("usage", "gpt-4.1"),
        ("usage", [["gpt-4.1", -1, 0, 1]]),
        ("usage", [["gpt-4.1", 1, 2]]),
    ],
)
def test_an_event_row_with_a_wrong_typed_field_is_skipped_with_a_warning(
    tmp_path: Path, field: str, value: Any, capsys: pytest.CaptureFixture[str], logs: pytest.LogCaptureFixture
) -> None:
    """An event row with a field of the wrong type is skipped with a warning; ``stats`` and ``report``
    still work."""
    path = tmp_path / "cache.db"
    engine = Engine(f"sqlite:///{path}")

    @engine.tool()
    def act(x: str) -> str:
        return x

    engine.set_agent(lambda task: act("abcd"))
    engine("hello")
    engine("hello")
    engine.close()
    db = sqlite3.connect(path)
    seq, data = db.execute("SELECT seq, data FROM events ORDER BY seq").fetchone()
    event = json.loads(data)
    event[field] = value
    db.execute("UPDATE events SET data = ? WHERE seq = ?", (json.dumps(event), seq))
    db.commit()
    db.close()

    store = SQLiteStore(path)
    try:
        assert len(store.events()) == 1, "the corrupt event was not skipped"
    finally:
        store.close()
    assert any(r.levelno == logging.WARNING and "event" in r.getMessage() for r in logs.records)
    url = f"sqlite:///{path}"
    assert cli_main(["stats", "--store", url]) == 0, capsys.readouterr().err
    assert cli_main(["report", "--out", str(tmp_path / "r.html"), "--store", url]) == 0, (
        capsys.readouterr().err
    )
