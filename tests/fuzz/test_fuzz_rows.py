"""Fuzzing stored rows: no row, however made, breaks a call or a command, or runs anything when read.

Rows are made by hypothesis: records whose argument is a value of every kind the codec knows (they
must load and replay as they were), the same records with parts replaced by hostile JSON (random
tags, payloads, paths, forms, versions), and the hand-made hostile rows of :data:`hostile_rows.ROWS`.
Each goes into every store (memory, a SQLite file, a PostgreSQL schema: the conftest ``store``
fixture), then through the engine (sync and async) and every command that reads rows (``ls``,
``show``, ``stats``, ``export``, ``report``, and ``import`` of what export wrote). What must hold: no
exception reaches the caller; no import, file open, exec or subprocess happens while a row is
decoded (an audit hook); the good trajectory still replays, and its tool sees only its own argument.
The number of examples is bounded so that the suite runs in ``make test``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import pathlib
import time
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from row_strategies import VALUES, mutated

from cli_support import run_cli
from conftest import StoreSpec, open_spec
from hostile_rows import ROWS, TASK, audited, build_engine, execute, passing, record_good, twin_record
from muscle_mem.model import codec
from muscle_mem.model.trajectory import to_record
from muscle_mem.stores import PostgresStore, SQLiteStore, Store, _records

EXAMPLES = 25
"""Rows planted per store by the engine test."""
CLI_EXAMPLES = 8
"""Rows planted per durable store by the command test (each runs nine commands)."""


class Rows:
    """A store holding one good trajectory of :data:`TASK`, and the rows planted next to it.

    In a memory store a row is the trajectory its record decodes to (if it does); in a durable one,
    a placeholder stored through the store, its record then rewritten by SQL. A row is created (and
    first used) after every use before it: of the rows that replay, the one planted last is then the
    most recently used, the one a call replays.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self.spec: StoreSpec | None = None
        if isinstance(store, SQLiteStore):
            self.spec = ("sqlite", str(store.path), "")
        elif isinstance(store, PostgresStore):
            self.spec = ("postgres", store.url, store.schema)
        self.good = record_good(store)
        good = store.get(self.good)
        assert good is not None
        self.trajectory = good
        self.record: dict[str, Any] = json.loads(json.dumps(to_record(good)))
        self.expected: tuple[str, Any] = (self.good, "hello")
        """The row a call replays (the most recently planted or used), and its tool's argument."""
        self.latest = good.created_at

    def plant(self, data: st.DataObject) -> None:
        """Plant a new row made by hypothesis; every row is read once here, under the audit hook."""
        new_id = uuid.uuid4().hex
        created_at = self.latest = max(time.time(), self.latest + 0.001)  # after any use of the others
        how = data.draw(st.sampled_from(["value", "mutated", "hand-made"]), label="row")
        record = twin_record(self.record, new_id, created_at, matching=how == "value")
        value: Any = None
        if how == "hand-made":
            text = ROWS[data.draw(st.sampled_from(sorted(ROWS)), label="kind")][0](record)
        else:
            value = data.draw(VALUES, label="value")
            passing(record, codec.encode(value), str(value).upper())  # what the tool returns for it
            text = json.dumps(record if how == "value" else mutated(record, data))
        if isinstance(text, bytes) and self.spec is not None and self.spec[0] != "sqlite":
            text = text.decode("utf-8", "replace")  # PostgreSQL takes only UTF-8
        with audited() as seen:
            loaded = _records.loads(text, new_id, record["task_key"], "fuzz")
        assert seen == [], seen
        if how == "value":
            assert loaded is not None, text
            self.expected = (new_id, value)
        if self.spec is None or how == "value":  # a row meant to replay goes in through the store: its step
            if loaded is not None:  # rows then agree with it (a record rewritten under them is not replayed)
                self.store.add(loaded)
            return
        self.store.add(dataclasses.replace(self.trajectory, id=new_id, created_at=created_at))
        cast = "CAST(%s AS TEXT)" if isinstance(text, bytes) else "%s"
        execute(self.spec, f"UPDATE {{s}}.trajectories SET record = {cast} WHERE id = %s", (text, new_id))

    def engine_store(self) -> Store:
        """The store an engine of one call uses: the memory store itself, else a new handle."""
        return self.store if self.spec is None else open_spec(self.spec)

    def url(self) -> str:
        assert self.spec is not None
        kind, location, schema = self.spec
        return f"sqlite:///{location}" if kind == "sqlite" else f"{location}?schema={schema}"


SETTINGS = settings(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def test_no_row_breaks_a_call_or_runs_anything(store: Store) -> None:
    """Whatever rows are planted, each call (sync or async) hits on the latest row that must replay,
    its tool sees that row's argument as it was stored, and reading runs nothing."""
    rows = Rows(store)

    @settings(SETTINGS, max_examples=EXAMPLES)
    @given(data=st.data())
    def call(data: st.DataObject) -> None:
        rows.plant(data)
        seen: list[Any] = []
        engine = build_engine(rows.engine_store(), {"v": 1}, seen)
        mode = data.draw(st.sampled_from(["sync", "async"]), label="mode")
        try:
            with audited() as events:
                result = engine(TASK) if mode == "sync" else asyncio.run(engine.arun(TASK))
        finally:
            if rows.spec is not None:
                engine.close()
        assert events == [], events
        expected_id, expected_argument = rows.expected
        assert (result.hit, result.trajectory_id) == (True, expected_id), result.reason
        assert len(seen) == 1 and codec.fingerprint(seen[0]) == codec.fingerprint(expected_argument)

    call()


COMMANDS = (("ls",), ("ls", "--json"), ("stats",), ("stats", "--json"), ("export", "-"))


def test_no_row_breaks_a_command_or_runs_anything(
    store: Store, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever rows are planted, ``ls``, ``show``, ``stats``, ``export``, ``report`` and ``import`` (of
    what export wrote) succeed and run nothing; ``export`` writes the good trajectory."""
    rows = Rows(store)
    if rows.spec is None:
        pytest.skip("the commands reach a durable store only (memory:// is a new store per command)")
    store_option = ("--store", rows.url())
    for argv in (*COMMANDS, ("show", rows.good)):  # once first: what a command imports lazily is imported
        assert run_cli(capsys, *argv, *store_option).status == 0

    @settings(SETTINGS, max_examples=CLI_EXAMPLES)
    @given(data=st.data())
    def commands(data: st.DataObject) -> None:
        rows.plant(data)
        report = ("report", "--out", str(tmp_path / "report.html"))
        for argv in (*COMMANDS, ("show", rows.good), ("show", rows.expected[0]), report):
            with audited(allow=frozenset({"open"})) as events:  # a command reads its version, writes a report
                ran = run_cli(capsys, *argv, *store_option)
            assert (ran.status, events) == (0, []), (argv, ran.err)
            if argv[0] == "export":
                assert rows.good in {json.loads(line)["id"] for line in ran.out.splitlines()}
                exported.write_text(ran.out)
        with audited(allow=frozenset({"open"})) as events:  # what export writes, import reads back
            ran = run_cli(capsys, "import", str(exported), "--store", f"sqlite:///{tmp_path / 'copy.db'}")
        assert (ran.status, events) == (0, []), ran.err

    exported = tmp_path / "export.jsonl"
    commands()
