"""The circuit breaker: an outage opens it once, calls then skip the store, a probe closes it."""

from __future__ import annotations

import asyncio
import logging

import pytest

from conftest import OutageStore
from muscle_mem import Engine, MissReason
from muscle_mem.cache._breaker import Breaker
from muscle_mem.metrics import Metrics
from muscle_mem.stores import StoreUnavailable


class CountingStore(OutageStore):
    """An outage store that counts the reads of its revision."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def revision(self) -> int:
        self.reads += 1
        return super().revision()


def test_an_outage_opens_the_breaker_once_and_calls_then_skip_the_store(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The first failure opens it (one warning, one outage counted); later entries raise at once,
    without reading the store, until ``retry`` seconds have passed."""
    store, metrics = CountingStore(), Metrics()
    breaker = Breaker(store, metrics, timeout=1.0, retry=3600.0)
    store.down = True
    with caplog.at_level(logging.WARNING, logger="muscle_mem"):
        for _ in range(50):
            with pytest.raises(StoreUnavailable, match="Connection refused"), breaker:
                store.revision()
    assert not breaker.available and store.reads == 0
    assert metrics.store_outages == 1
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == ["the store is unavailable"]


def test_a_probe_that_reads_the_store_closes_the_breaker(caplog: pytest.LogCaptureFixture) -> None:
    store, metrics = CountingStore(), Metrics()
    breaker = Breaker(store, metrics, timeout=1.0, retry=3600.0)
    breaker.trip(StoreUnavailable("refused"))
    store.down = True
    assert not breaker.probe() and not breaker.available
    store.down = False
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="muscle_mem"):
        assert breaker.probe() and breaker.available
        assert breaker.probe()  # already closed: nothing more logged
    assert [r.getMessage().split(" after")[0] for r in caplog.records] == ["the store is back"]
    with breaker:
        assert store.revision() == 0


def test_an_engine_on_a_store_that_is_down_serves_calls_without_touching_it() -> None:
    """Once the outage is known, a call neither looks up, nor records, nor writes events."""
    store = CountingStore()
    engine = Engine(store, store_retry=3600.0)

    @engine.tool()
    def close(ticket: str) -> str:
        return f"closed {ticket}"

    engine.set_agent(lambda task: close("T-1"))
    store.down = True
    results = [engine("close T-1") for _ in range(5)]
    assert all(r.output == "closed T-1" and not r.stored for r in results)
    assert engine.metrics.misses_by_reason == {MissReason.STORE_UNAVAILABLE: 5}
    assert engine.metrics.store_outages == 1 and store.reads == 0
    assert not engine.store_available
    engine.journal.flush()
    store.down = False
    engine._breaker.probe()
    engine.journal.flush()
    assert [e.miss_reason for e in store.events()] == ["store_unavailable"] * 5  # kept for the store


@pytest.mark.parametrize("value", [0, -1.0, float("inf"), float("nan"), "5", True])
def test_store_times_must_be_positive_seconds(value: object) -> None:
    for option in ("store_timeout", "store_retry"):
        with pytest.raises(ValueError, match=f"{option} must be a positive number of seconds"):
            Engine(**{option: value})  # type: ignore[arg-type]


async def test_a_trajectory_to_remove_during_an_outage_is_removed_before_the_store_is_used_again() -> None:
    """A tool called after its run ended, while the store is down: the call is not raised to, and the
    trajectory that misses it is removed when the store is back, before any lookup can replay it."""
    store = OutageStore()
    engine = Engine(store, store_retry=3600.0)

    @engine.tool()
    async def close(ticket: str) -> str:
        return "closed"

    @engine.tool()
    async def notify(who: str) -> str:
        return "ok"

    pending: list[asyncio.Task[str]] = []

    async def agent(task: str) -> str:
        await close("T-1")
        pending.append(asyncio.create_task(notify("ann")))
        return "done"

    engine.set_agent(agent)
    first = await engine.arun("close T-1")
    assert first.stored and first.trajectory_id is not None
    store.down = True
    assert await pending.pop() == "ok"  # notify runs after the run ended, during the outage
    assert not engine.store_available
    store.down = False
    assert store.get(first.trajectory_id) is not None
    assert engine._breaker.probe()
    assert store.get(first.trajectory_id) is None
    assert not (await engine.arun("close T-1")).hit
