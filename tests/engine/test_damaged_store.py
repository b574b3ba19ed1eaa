"""A damaged store is an outage: ``Engine(url)`` and every call go on, the agent serves, logged once."""

from __future__ import annotations

import logging

import pytest
from test_signed_records import sql, url_of

from conftest import StoreSpec, open_spec
from muscle_mem import Engine, MissReason
from muscle_mem.stores import postgres, sqlite

DAMAGE = {
    "lowered_schema_version": "UPDATE {s}meta SET value = '4' WHERE key = 'schema_version'",
    "unreadable_schema_version": "UPDATE {s}meta SET value = 'seven' WHERE key = 'schema_version'",
    "newer_schema_version": "UPDATE {s}meta SET value = '999' WHERE key = 'schema_version'",
    "dropped_table": "DROP TABLE {s}usage",
    "foreign_column": "ALTER TABLE {s}steps RENAME COLUMN signature TO sig",
}
"""How a store's schema is damaged (or made hostile) by SQL, by name."""


def _damaged(durable: StoreSpec, how: str) -> None:
    """A store with one recorded trajectory, then damaged ``how``."""
    store = open_spec(durable)
    store.close()
    engine = _engine(durable)
    assert engine("write the report").stored
    engine.close()
    sql(durable, DAMAGE[how])


def _engine(durable: StoreSpec, calls: list[str] | None = None) -> Engine:
    engine = Engine(url_of(durable), store_retry=60.0)
    done = [] if calls is None else calls

    @engine.tool()
    def write(name: str) -> str:
        done.append(name)
        return f"wrote {name}"

    engine.set_agent(lambda task: write(task.rpartition(" ")[2]))
    return engine


@pytest.mark.parametrize("how", sorted(DAMAGE))
def test_a_damaged_schema_is_an_outage_never_an_exception(
    durable: StoreSpec, how: str, logs: pytest.LogCaptureFixture
) -> None:
    """A schema that cannot be migrated or used: ``Engine(url)`` starts, each call is the agent's.

    The calls end with ``STORE_UNAVAILABLE``, nothing is raised, and the outage is logged once.
    """
    _damaged(durable, how)
    calls: list[str] = []
    engine = _engine(durable, calls)
    try:
        results = [engine("write the report"), engine("write the summary")]
    finally:
        engine.close()
    assert [r.output for r in results] == ["wrote report", "wrote summary"]
    assert all(not r.hit and r.miss_reason is MissReason.STORE_UNAVAILABLE for r in results)
    assert calls == ["report", "summary"]
    outages = [r for r in logs.records if r.levelno >= logging.WARNING and "unavailable" in r.getMessage()]
    assert len(outages) == 1, [r.getMessage() for r in logs.records]


def test_a_newer_schema_says_to_upgrade(durable: StoreSpec, logs: pytest.LogCaptureFixture) -> None:
    """A store written by a newer version is refused, never misread: its outage says to upgrade."""
    _damaged(durable, "newer_schema_version")
    engine = _engine(durable)
    try:
        assert engine("write the report").miss_reason is MissReason.STORE_UNAVAILABLE
    finally:
        engine.close()
    assert "upgrade muscle-mem" in logs.text


def test_the_damaged_store_is_used_again_once_repaired(durable: StoreSpec) -> None:
    """The outage ends with the damage: a later engine migrates nothing twice, and the cache replays."""
    _damaged(durable, "lowered_schema_version")
    first = _engine(durable)
    try:
        assert first("write the report").miss_reason is MissReason.STORE_UNAVAILABLE
    finally:
        first.close()
    version = sqlite.SCHEMA_VERSION if durable[0] == "sqlite" else postgres.SCHEMA_VERSION
    sql(durable, "UPDATE {s}meta SET value = ? WHERE key = 'schema_version'", (str(version),))
    second = _engine(durable)
    try:
        assert second("write the report").hit
    finally:
        second.close()
