"""Frozen mode: what is stored is replayed, and nothing is written (no run, no use statistics, no event)."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import pytest

from conftest import StoreSpec, open_spec
from modes_desk import ask, refund_desk
from muscle_mem import NotStoredReason, StoreError
from muscle_mem.stores import SQLiteStore
from muscle_mem.stores.base import Event


def record_two_refunds(store: Any) -> None:
    recorder = refund_desk(store)
    ask(recorder, 1)
    assert ask(recorder, 2).hit
    recorder.close()


def use_frozen(engine: Any) -> None:
    """A hit, a miss in a known family (a status no run saw) and a new task, then a flush."""
    hit = ask(engine, 3)
    assert hit.hit and hit.output == "refunded 3"
    engine.desk["status"][4] = "lost"
    known = ask(engine, 4)
    new = engine("close order 5")
    for missed in (known, new):
        assert not missed.hit and missed.fallback
        assert not missed.stored and missed.trajectory_id is None
        assert missed.not_stored_reason is NotStoredReason.FROZEN
    assert known.output == "denied 4"
    engine.flush()


def digests(folder: Path) -> dict[str, str]:
    """Each file's digest, but the empty write-ahead log SQLite may make beside a file it reads."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if not (p.name.endswith(("-wal", "-shm")) and p.stat().st_size in (0, 32768))
    }


def test_a_frozen_engine_on_a_read_only_sqlite_file_replays_and_writes_nothing(
    tmp_path: Path, logs: pytest.LogCaptureFixture
) -> None:
    """The URL is opened with SQLite's read-only mode; the files are the same bytes after the calls."""
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    record_two_refunds(url)
    before = digests(tmp_path)
    engine = refund_desk(url, mode="frozen")
    assert isinstance(engine.store, SQLiteStore) and engine.store.read_only
    with pytest.raises(StoreError, match="readonly"):
        engine.store.log_events([Event(at=0.0, task="t", task_key="k", hit=False)])
    logs.clear()
    use_frozen(engine)
    engine.close()
    assert [r for r in logs.records if r.levelno >= logging.WARNING] == []
    assert digests(tmp_path) == before
    reader = SQLiteStore(tmp_path / "cache.db")
    assert (len(reader), len(reader.events())) == (1, 2)
    reader.close()


def test_a_frozen_engine_writes_no_row_of_a_postgres_store(postgres_spec: StoreSpec) -> None:
    """Every table of the schema holds the same rows after the calls."""
    record_two_refunds(open_spec(postgres_spec))
    before = table_digests(postgres_spec)
    engine = refund_desk(open_spec(postgres_spec), mode="frozen")
    use_frozen(engine)
    engine.close()
    assert table_digests(postgres_spec) == before


def table_digests(spec: StoreSpec) -> dict[str, tuple[int, str]]:
    """Each table of the spec's schema: its row count and a digest of its rows."""
    import psycopg
    from psycopg import sql

    _, url, schema = spec
    found = {}
    with psycopg.connect(url) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s ORDER BY 1", (schema,)
        ).fetchall()
        for (table,) in tables:
            query = sql.SQL(
                "SELECT count(*), md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM {} t"
            )
            count, digest = conn.execute(query.format(sql.Identifier(schema, table))).fetchone()  # type: ignore[misc]
            found[table] = (count, digest)
    assert found, f"no table in schema {schema}"
    return found


def test_a_frozen_engine_given_a_store_object_writes_nothing_to_it() -> None:
    """No trajectory, no use statistics, no event: the memory store is as it was."""
    engine = refund_desk()
    ask(engine, 1)
    engine.flush()
    store = engine.store
    (summary,) = store.summaries()  # type: ignore[attr-defined]
    events = len(store.events())  # type: ignore[attr-defined]
    use_frozen(refund_desk(store, mode="frozen"))
    (after,) = store.summaries()  # type: ignore[attr-defined]
    assert (len(store), after.usage.hits, len(store.events())) == (1, summary.usage.hits, events)  # type: ignore[attr-defined]


def test_a_frozen_engine_needs_its_sqlite_file_to_exist(tmp_path: Path) -> None:
    from muscle_mem.stores import NoStore

    with pytest.raises(NoStore):
        refund_desk(f"sqlite:///{tmp_path / 'missing.db'}", mode="frozen")
    assert list(tmp_path.iterdir()) == []
