"""Signed records through the engine: a row rewritten or moved by SQL is never replayed."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import StoreSpec
from muscle_mem import Engine
from muscle_mem.stores import Signable, Store
from muscle_mem.stores.signing import ENV, SigningKeyError

KEY = "engine-signing-key-0123456789abcdef"
NEW_KEY = "engine-signing-key-two-0123456789ab"
RECIPIENTS = {"greeting": "alice@example.com", "invoice": "bob@example.com"}


def url_of(spec: StoreSpec) -> str:
    kind, location, schema = spec
    return f"sqlite:///{location}" if kind == "sqlite" else f"{location}?schema={schema}"


def sql(spec: StoreSpec, statement: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Run one statement on the store's tables as an attacker with SQL access would; returns its rows."""
    kind, location, schema = spec
    if kind == "sqlite":
        with sqlite3.connect(location) as db:
            return db.execute(statement.replace("{s}", ""), args).fetchall()
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        cursor = conn.execute(statement.replace("{s}", f'"{schema}".').replace("?", "%s"), args)
        return cursor.fetchall() if cursor.description else []


@dataclass
class Worker:
    """An engine with one tool, ``send``; its agent sends the task's message to its recipient."""

    engine: Engine
    sent: list[str] = field(default_factory=list)

    def __call__(self, kind: str) -> bool:
        """Run ``send the <kind>``; True on a full hit."""
        return self.engine(f"send the {kind}").hit


@pytest.fixture
def workers(durable: StoreSpec) -> Iterator[Callable[..., Worker]]:
    """Makes workers on one durable store (``signing_key`` passed through), closing them at the end."""
    made: list[Worker] = []

    def make(**options: object) -> Worker:
        engine = Engine(url_of(durable), **options)  # type: ignore[arg-type]
        worker = Worker(engine)

        @engine.tool()
        def send(to: str, body: str) -> str:
            worker.sent.append(to)
            return f"sent {body} to {to}"

        engine.set_agent(lambda task: send(RECIPIENTS[task.rpartition(" ")[2]], "hello"))
        made.append(worker)
        return worker

    yield make
    for worker in made:
        worker.engine.close()


def _refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and r.getMessage().startswith("refusing trajectory")
    ]


def test_a_row_rewritten_by_sql_is_never_replayed(
    workers: Callable[..., Worker], durable: StoreSpec, logs: pytest.LogCaptureFixture
) -> None:
    """With a key, an argument changed in the stored JSON: the agent runs instead, counted, named once."""
    assert not workers(signing_key=KEY)("greeting")
    [(tid,)] = sql(durable, "SELECT id FROM {s}trajectories")
    sql(
        durable,
        "UPDATE {s}trajectories SET record = replace(record, 'alice@example.com', 'mallory@evil.test')",
    )
    victim = workers(signing_key=KEY)
    assert not victim("greeting")
    assert victim.sent == ["alice@example.com"]
    assert victim.engine.metrics.rejected_records == 1
    assert victim("greeting")  # the agent's run was stored signed: it replays
    assert victim.sent == ["alice@example.com"] * 2
    assert victim.engine.metrics.rejected_records == 1
    assert _refusals(logs) == [_refusals(logs)[0]] and str(tid) in _refusals(logs)[0]
    assert "mallory" not in logs.text


@pytest.mark.parametrize("with_its_field", [False, True], ids=["row-moved", "row-and-record-moved"])
def test_a_record_moved_to_another_task_key_is_refused(
    workers: Callable[..., Worker], durable: StoreSpec, with_its_field: bool
) -> None:
    """A valid record filed under another task key (its field rewritten too, or not) never replays.

    The step index still files the record's steps under the task it was signed for, so the record is
    met, refused and counted when that task runs; the task it was moved to finds nothing to replay.
    """
    writer = workers(signing_key=KEY)
    assert not writer("greeting") and not writer("invoice")
    (greeting, greeting_key), (invoice, invoice_key) = sql(
        durable, "SELECT id, task_key FROM {s}trajectories ORDER BY rev"
    )
    sql(durable, "DELETE FROM {s}trajectories WHERE id = ?", (invoice,))
    sql(durable, "UPDATE {s}trajectories SET task_key = ? WHERE id = ?", (invoice_key, greeting))
    if with_its_field:
        sql(
            durable,
            "UPDATE {s}trajectories SET record = replace(record, ?, ?) WHERE id = ?",
            (f'"task_key":"{greeting_key}"', f'"task_key":"{invoice_key}"', greeting),
        )
    victim = workers(signing_key=KEY)
    assert not victim("invoice")
    assert victim.sent == ["bob@example.com"]
    assert not victim("greeting")
    assert victim.sent == ["bob@example.com", "alice@example.com"]
    assert victim.engine.metrics.rejected_records == 1


def test_the_same_rewrite_is_ignored_without_a_key(
    workers: Callable[..., Worker], durable: StoreSpec
) -> None:
    """No key: unsigned and signed rows load as before, but a record rewritten by SQL is not replayed.

    Without a key nothing tells the rewritten record from a genuine one, yet its step index rows,
    written with the original record, no longer agree with it: the engine ignores it (a miss, logged,
    not counted as a rejected signature) instead of replaying the rewritten argument.
    """
    assert not workers()("greeting")
    assert not workers(signing_key=KEY)("invoice")
    sql(
        durable,
        "UPDATE {s}trajectories SET record = replace(record, 'alice@example.com', 'carol@example.com')",
    )
    reader = workers()
    assert not reader("greeting")
    assert reader("invoice")
    assert reader.sent == ["alice@example.com", "bob@example.com"]
    assert reader.engine.metrics.rejected_records == 0


def test_key_rotation_old_keys_verify_the_first_signs(workers: Callable[..., Worker]) -> None:
    """With keys [new, old], records signed with the old key replay and new ones are signed with the new."""
    assert not workers(signing_key=KEY)("greeting")
    rotated = workers(signing_key=[NEW_KEY, KEY])
    assert rotated("greeting")
    assert not rotated("invoice")
    retired = workers(signing_key=NEW_KEY.encode())
    assert retired("invoice")
    assert not retired("greeting")
    assert retired.engine.metrics.rejected_records == 1


def test_the_environment_variable_is_honoured(
    workers: Callable[..., Worker], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``$MUSCLE_MEM_SIGNING_KEY`` signs and verifies when ``signing_key`` is not given."""
    monkeypatch.delenv(ENV, raising=False)
    assert not workers()("greeting")  # unsigned
    monkeypatch.setenv(ENV, f"{NEW_KEY}, {KEY}")
    from_env = workers()
    assert not from_env("greeting")  # the unsigned row is refused
    assert from_env.engine.metrics.rejected_records == 1
    assert workers(signing_key=NEW_KEY)("greeting")  # and the run it stored is signed with the first key
    monkeypatch.setenv(ENV, "too short")
    with pytest.raises(SigningKeyError, match="fewer than 16"):
        workers()


def test_the_key_never_appears_in_logs_reprs_events_or_the_store(
    workers: Callable[..., Worker], durable: StoreSpec, logs: pytest.LogCaptureFixture
) -> None:
    """Recording, replaying and refusing with a key: the key is in no log, repr, event or stored row."""
    writer = workers(signing_key=[KEY, NEW_KEY])
    assert not writer("greeting") and writer("greeting")
    sql(durable, "UPDATE {s}trajectories SET record = replace(record, 'hello', 'HELLO')")
    reader = workers(signing_key=KEY)
    assert not reader("greeting")
    for worker in (writer, reader):
        worker.engine.journal.flush()
    store = reader.engine.store
    assert isinstance(store, Signable) and isinstance(store, Store) and store.signer is not None
    seen = [
        logs.text,
        repr(writer.engine),
        repr(store),
        repr(store.signer),
        repr(reader.engine.metrics),
        *(repr(e) for e in store.events()),
        *(r.text for r in store.records()),
        *(
            str(row)
            for table in ("meta", "tasks", "usage", "events")
            for row in sql(durable, f"SELECT * FROM {{s}}{table}")
        ),
    ]
    assert _refusals(logs) and reader.engine.metrics.rejected_records == 1
    for text in seen:
        assert KEY not in text and NEW_KEY not in text
    if durable[0] == "sqlite":
        files = Path(durable[1]).parent.iterdir()
        assert all(KEY.encode() not in f.read_bytes() for f in files if f.is_file())
