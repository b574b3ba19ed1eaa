"""A store outage never stalls nor breaks a call: the agent serves it, and caching resumes after.

Each PostgreSQL test puts a fault-injecting proxy (tests/faultproxy.py) between the engine and the
server. Durations are asserted against the configured bound: a correctness bound (no call waits
longer than ``store_timeout`` for its store), with slack for a loaded machine.
"""

from __future__ import annotations

import logging
import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import POSTGRES_URL, drop_schema
from faultproxy import FaultProxy
from muscle_mem import Engine, MissReason, NotStoredReason, Result

STORE_TIMEOUT = 1.0
BOUND = STORE_TIMEOUT + 1.5
"""The most seconds a call may take here: the store's share, and slack for the agent and the machine."""
RETRY = 0.2


@pytest.fixture
def url(proxy: FaultProxy) -> Iterator[str]:
    """A store URL through the proxy, on a fresh schema."""
    from psycopg.conninfo import conninfo_to_dict

    info = conninfo_to_dict(POSTGRES_URL)
    schema = f"mm_test_{uuid.uuid4().hex[:12]}"
    login = info.get("user", "postgres")
    yield f"postgresql://{login}@{proxy.address}/{info.get('dbname', 'test')}?schema={schema}"
    drop_schema(schema)


def desk_engine(url: str, **options: Any) -> tuple[Engine, list[str]]:
    """An engine whose agent closes the ticket the task names with one tool call; the runs it made."""
    engine = Engine(url, store_timeout=STORE_TIMEOUT, store_retry=RETRY, **options)
    runs: list[str] = []

    @engine.tool()
    def close(ticket: str) -> str:
        return f"closed {ticket}"

    def agent(task: str, ticket: str) -> str:
        runs.append(task)
        return close(ticket)

    engine.set_agent(agent)
    return engine, runs


def timed(call: Callable[[], Result]) -> Result:
    """The call's result, asserting it returned within :data:`BOUND`."""
    started = time.monotonic()
    result = call()
    assert time.monotonic() - started < BOUND
    return result


def served_uncached(result: Result, ticket: str) -> None:
    assert not result.hit and result.output == f"closed {ticket}" and not result.stored
    assert result.miss_reason is MissReason.STORE_UNAVAILABLE
    assert result.not_stored_reason is NotStoredReason.STORE_UNAVAILABLE


def until_back(engine: Engine, call: Callable[[], Result]) -> Result:
    """Call until the engine uses its store again (the probe runs in the background); that result."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        result = timed(call)
        if result.miss_reason is not MissReason.STORE_UNAVAILABLE:
            return result
        time.sleep(RETRY / 2)
    raise AssertionError("the engine never used its store again")


def outage_lines(caplog: pytest.LogCaptureFixture) -> tuple[list[str], list[str]]:
    """The breaker's warnings: outages begun, and ended."""
    lines = [r.getMessage() for r in caplog.records if r.name == "muscle_mem.cache._breaker"]
    return [m for m in lines if m.startswith("the store is unavailable")], [
        m for m in lines if m.startswith("the store is back")
    ]


@pytest.mark.postgres
@pytest.mark.parametrize("fault", ["refuse", "hang"])
def test_an_engine_starts_while_its_store_is_down_and_resumes_when_it_is_back(
    fault: str, proxy: FaultProxy, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Engine(url) constructs within the bound, the agent serves calls, and the store is used once back."""
    getattr(proxy, fault)()
    with caplog.at_level(logging.WARNING, logger="muscle_mem"):
        started = time.monotonic()
        engine, runs = desk_engine(url)
        assert time.monotonic() - started < BOUND
        assert not engine.store_available
        for _ in range(3):
            served_uncached(timed(lambda: engine("close T-1", "T-1", params={"ticket": "T-1"})), "T-1")
        proxy.restore()
        call = lambda: engine("close T-1", "T-1", params={"ticket": "T-1"})  # noqa: E731
        assert until_back(engine, call).stored
        agent_runs = len(runs)
        assert timed(call).hit
        assert engine("close T-2", "T-2", params={"ticket": "T-2"}).hit
    begun, ended = outage_lines(caplog)
    assert len(begun) == 1 and len(ended) == 1
    assert engine.metrics.store_outages == 1 and engine.metrics.store_errors == 0
    assert len(runs) == agent_runs
    engine.close()


@pytest.mark.postgres
@pytest.mark.parametrize("fault", ["refuse", "hang"])
def test_an_outage_mid_run_delays_no_call_past_the_bound(
    fault: str, proxy: FaultProxy, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The call that meets the outage waits the bound at most; the next ones skip the store at once."""
    engine, runs = desk_engine(url)
    call = lambda: engine("close T-1", "T-1", params={"ticket": "T-1"})  # noqa: E731
    assert call().stored and call().hit
    with caplog.at_level(logging.WARNING, logger="muscle_mem"):
        getattr(proxy, fault)()
        for ticket in ("T-2", "T-3", "T-4"):
            served_uncached(timed(lambda t=ticket: engine("close T", t, params={"ticket": t})), ticket)
        assert not engine.store_available
        proxy.restore()
        assert until_back(engine, call).hit  # what was stored before the outage replays again
    begun, ended = outage_lines(caplog)
    assert len(begun) == 1 and len(ended) == 1
    assert runs[:4] == ["close T-1", "close T", "close T", "close T"]
    assert engine.metrics.misses_by_reason[MissReason.STORE_UNAVAILABLE] >= 3
    engine.close()


@pytest.mark.postgres
def test_a_connection_cut_mid_query_is_replaced_within_the_call(
    proxy: FaultProxy, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A query whose connection is cut is retried once on a new connection: the call is still a hit."""
    engine, runs = desk_engine(url)
    call = lambda: engine("close T-1", "T-1", params={"ticket": "T-1"})  # noqa: E731
    assert call().stored
    with caplog.at_level(logging.WARNING, logger="muscle_mem"):
        proxy.cut_next_query()
        assert timed(call).hit
        proxy.cut_next_query()
        assert timed(lambda: engine("close T-9", "T-9")).stored  # a write cut mid-query, retried
    assert engine.metrics.store_outages == 0 and engine.store_available
    assert outage_lines(caplog) == ([], [])
    assert runs == ["close T-1", "close T-9"]
    engine.close()


@pytest.mark.postgres
def test_a_restarted_server_brings_recording_and_replay_back(proxy: FaultProxy, url: str) -> None:
    """After a restart (every connection dropped, refused a while, then accepted), new runs are
    recorded and replayed again, and the events of the outage reach the store."""
    engine, runs = desk_engine(url)
    assert engine("close T-1", "T-1", params={"ticket": "T-1"}).stored
    proxy.refuse()
    served_uncached(timed(lambda: engine("close T-1", "T-1", params={"ticket": "T-1"})), "T-1")
    proxy.restore()
    task = lambda: engine("reopen R-1", "R-1")  # noqa: E731
    assert until_back(engine, task).stored
    assert timed(task).hit
    assert timed(lambda: engine("close T-5", "T-5", params={"ticket": "T-5"})).hit
    engine.journal.flush()
    reasons = [e.miss_reason for e in engine.store.events()]
    assert MissReason.STORE_UNAVAILABLE.value in reasons
    assert runs[0] == "close T-1" and runs[-1] == "reopen R-1"
    engine.close()


@pytest.mark.postgres
def test_a_wrong_database_still_fails_at_construction(proxy: FaultProxy) -> None:
    """Only an outage is forgiven: a database that does not exist is a configuration error."""
    from muscle_mem import StoreError

    with pytest.raises(StoreError, match='database "mm_no_such_database" does not exist'):
        Engine(f"postgresql://postgres@{proxy.address}/mm_no_such_database", store_timeout=STORE_TIMEOUT)


def test_a_locked_sqlite_file_delays_a_call_by_the_bound_at_most(tmp_path: Path) -> None:
    """A file another process holds locked: the call waits for it within the bound (all of its writes
    together), the agent's answer is returned unstored, and the next call after the lock stores."""
    path = tmp_path / "cache.db"
    engine, runs = desk_engine(f"sqlite:///{path}")
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        time.sleep(1.1)  # the journal's interval passes: the call also flushes its events
        result = timed(lambda: engine("close T-1", "T-1", params={"ticket": "T-1"}))
        assert result.output == "closed T-1" and not result.stored
        assert result.not_stored_reason is NotStoredReason.STORE_ERROR
        assert "locked" in (result.not_stored or "")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert engine("close T-1", "T-1", params={"ticket": "T-1"}).stored
    assert engine("close T-2", "T-2", params={"ticket": "T-2"}).hit
    assert runs == ["close T-1", "close T-1"]
    engine.close()
