"""Opening a store is quiet: creating and migrating a new store logs nothing at INFO or above."""

from __future__ import annotations

import logging

import pytest

from conftest import StoreSpec, open_spec


def test_a_new_durable_store_logs_nothing_at_info(
    durable: StoreSpec, caplog: pytest.LogCaptureFixture
) -> None:
    """The migrations that set up a new SQLite file or PostgreSQL schema are logged at DEBUG only."""
    with caplog.at_level(logging.DEBUG, logger="muscle_mem"):
        open_spec(durable).close()
    loud = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert loud == []
    assert any("schema version" in r.getMessage() for r in caplog.records)
