"""No PostgreSQL store operation waits past its bound: the store's timeout, the budget, the URL's timeouts.

A fault-injecting proxy (tests/faultproxy.py) stands between the store and the server. Durations are
asserted against the configured bound, with slack for a loaded machine.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator

import pytest

from conftest import POSTGRES_URL, SKIP_POSTGRES, drop_schema, trajectory
from faultproxy import FaultProxy
from muscle_mem.stores import PostgresStore, StoreError, StoreUnavailable, budget

pytestmark = pytest.mark.postgres

SLACK = 1.5


@pytest.fixture
def schema() -> Iterator[str]:
    if not POSTGRES_URL:
        pytest.skip(SKIP_POSTGRES)
    name = f"mm_test_{uuid.uuid4().hex[:12]}"
    yield name
    drop_schema(name)


def through(proxy: FaultProxy, query: str = "") -> str:
    """The test server's URL, through the proxy."""
    from psycopg.conninfo import conninfo_to_dict

    info = conninfo_to_dict(POSTGRES_URL)
    return f"postgresql://{info.get('user', 'postgres')}@{proxy.address}/{info.get('dbname', 'test')}{query}"


def test_an_operation_on_a_hung_network_ends_within_the_timeout(proxy: FaultProxy, schema: str) -> None:
    """A statement that gets no answer raises StoreUnavailable by the store's timeout; the store
    works again once the network does (a new pool)."""
    store = PostgresStore(through(proxy), schema=schema, timeout=1.0)
    try:
        store.add(trajectory())
        proxy.hang()
        started = time.monotonic()
        with pytest.raises(StoreUnavailable):
            store.revision()
        assert time.monotonic() - started < 1.0 + SLACK
        proxy.restore()
        assert len(store) == 1
    finally:
        store.close()


def test_a_budget_bounds_every_operation_of_its_scope(proxy: FaultProxy, schema: str) -> None:
    """Inside a budget, an operation waits what is left of it, less than the store's own timeout."""
    store = PostgresStore(through(proxy), schema=schema, timeout=30.0)
    try:
        proxy.hang()
        token = budget.start(0.5)
        try:
            for _ in range(2):  # the second finds the budget spent
                started = time.monotonic()
                with pytest.raises(StoreUnavailable):
                    store.revision()
                assert time.monotonic() - started < 0.5 + SLACK
        finally:
            budget.stop(token)
    finally:
        store.close()


def test_the_url_connect_timeout_bounds_opening_a_store(proxy: FaultProxy, schema: str) -> None:
    """A server that accepts and never answers: opening fails after the URL's connect_timeout, not the
    store's 30 s."""
    proxy.hang()
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="timeout expired"):
        PostgresStore(through(proxy, "?connect_timeout=2"), schema=schema, timeout=30.0)
    assert time.monotonic() - started < 2.0 + SLACK


def test_the_url_statement_timeout_cancels_a_statement_on_the_server(schema: str) -> None:
    """A write queued behind a lock is cancelled by the server after the URL's statement_timeout."""
    import psycopg

    store = PostgresStore(f"{POSTGRES_URL}?statement_timeout=300ms", schema=schema, timeout=30.0)
    try:
        store.add(trajectory(n=0))
        with psycopg.connect(POSTGRES_URL) as holder:
            holder.execute(f'SELECT * FROM "{schema}".tasks FOR UPDATE')  # the task's row: adds wait
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="statement timeout"):
                store.add(trajectory(n=1))
            assert time.monotonic() - started < 0.3 + SLACK
        store.add(trajectory(n=1))
        assert len(store) == 2
    finally:
        store.close()


@pytest.mark.parametrize("value", ["soon", "5 s", "-1", "1;DROP"])
def test_an_invalid_statement_timeout_is_a_clear_error(value: str) -> None:
    with pytest.raises(StoreError, match="invalid statement_timeout"):
        PostgresStore(f"postgresql://nobody@127.0.0.1:1/db?statement_timeout={value}", connect=False)


def test_a_store_made_without_connecting_connects_at_its_first_operation(
    proxy: FaultProxy, schema: str
) -> None:
    """connect=False: made while the server is down; operations raise StoreUnavailable at once until it
    is up, then the schema is created and used."""
    proxy.refuse()
    store = PostgresStore(through(proxy), schema=schema, timeout=1.0, connect=False)
    try:
        started = time.monotonic()
        with pytest.raises(StoreUnavailable, match="Connection refused"):
            store.revision()
        assert time.monotonic() - started < 1.0 + SLACK
        proxy.restore()
        t = trajectory()
        store.add(t)
        assert store.get(t.id) == t
    finally:
        store.close()


def test_threads_waiting_for_a_hung_server_are_each_bounded(proxy: FaultProxy, schema: str) -> None:
    """Several threads meet the hang at once (one connecting, the others waiting for it): each returns
    within its bound."""
    store = PostgresStore(through(proxy), schema=schema, timeout=1.0, pool_size=2)
    took: list[float] = []
    try:
        proxy.hang()

        def read() -> None:
            started = time.monotonic()
            with contextlib.suppress(StoreUnavailable):
                store.revision()
            took.append(time.monotonic() - started)

        threads = [threading.Thread(target=read) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert len(took) == 4 and max(took) < 1.0 + SLACK
    finally:
        store.close()
