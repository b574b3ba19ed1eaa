"""A run the engine does not store says why: on the Result, in the metrics, in the events and in stats."""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cli_support import run_cli
from conftest import OutageStore
from modes_desk import ask, refund_desk
from muscle_mem import Check, Engine, NotStoredReason, Result, Secret, current_run

NOT_PRODUCED = {NotStoredReason.RUN_PROBLEM}
"""The kind of a problem noted as plain text, which the engine itself never notes."""


def check_refused(engine: Engine, result: Result, kind: NotStoredReason) -> None:
    assert not result.hit and not result.stored and result.trajectory_id is None
    assert result.not_stored_reason is kind and result.not_stored
    assert engine.metrics.not_stored_by_reason == {kind: 1}
    assert len(engine.store) == 0
    engine.journal.flush()
    event = engine.store.events()[-1]
    assert (event.not_stored_reason, event.not_stored) == (kind.value, result.not_stored)


def test_a_stored_run_has_no_not_stored_reason() -> None:
    """``stored`` means the trajectory was written before the call returned: the store has it."""
    engine = Engine()

    @engine.tool()
    def close(ticket: str) -> str:
        return "closed"

    engine.set_agent(lambda task: close("T-1"))
    result = engine("close T-1")
    assert result.stored and result.not_stored is None and result.not_stored_reason is None
    assert result.trajectory_id is not None and engine.store.get(result.trajectory_id) is not None
    hit = engine("close T-1")
    assert hit.hit and not hit.stored and hit.not_stored is None and hit.not_stored_reason is None
    assert not engine.metrics.not_stored_by_reason


def test_an_agent_that_calls_no_tool_leaves_nothing_to_store() -> None:
    engine = Engine()
    engine.register(lambda: None, name="unused")
    engine.set_agent(lambda task: "42")
    check_refused(engine, engine("what is six times seven"), NotStoredReason.NO_TOOL_CALLS)


def test_an_unserializable_argument_is_an_unstorable_value() -> None:
    engine = Engine()

    @engine.tool()
    def send(message: Any) -> str:
        return "sent"

    engine.set_agent(lambda task: send(threading.Lock()))
    result = engine("send it")
    check_refused(engine, result, NotStoredReason.UNSTORABLE_VALUE)
    assert "argument 'message'" in (result.not_stored or "")


@dataclass(frozen=True)
class Note:
    text: str


def test_a_param_hidden_in_a_constant_is_unreplayable() -> None:
    engine = Engine()

    @engine.tool()
    def annotate(note: Note) -> str:
        return "noted"

    engine.set_agent(lambda task: annotate(Note("ann@example.com")))
    result = engine("annotate", params={"requester": "ann@example.com"})
    check_refused(engine, result, NotStoredReason.UNREPLAYABLE)
    assert "inside a Note, which a replay cannot rebuild" in (result.not_stored or "")


def test_a_capture_that_raises_while_recording_is_check_capture_failed() -> None:
    engine = Engine()

    def broken() -> str:
        raise OSError("no screen")

    @engine.tool(pre_check=Check.equal(broken))
    def click() -> str:
        return "clicked"

    engine.set_agent(lambda task: click())
    check_refused(engine, engine("click"), NotStoredReason.CHECK_CAPTURE_FAILED)


async def test_a_tool_still_running_when_the_agent_returns_is_not_stored() -> None:
    engine = Engine()

    @engine.tool()
    async def notify(who: str) -> str:
        await asyncio.sleep(0.05)
        return "sent"

    background: list[asyncio.Task[str]] = []

    async def agent(task: str) -> str:
        background.append(asyncio.create_task(notify("ann")))
        await asyncio.sleep(0)  # the call starts, and is still running when the agent returns
        return "queued"

    engine.set_agent(agent)
    check_refused(engine, await engine.arun("notify ann"), NotStoredReason.TOOL_STILL_RUNNING)
    await asyncio.gather(*background)


def test_a_tool_called_from_a_plain_thread_inside_another_call_is_a_call_outside_the_run() -> None:
    engine = Engine()

    @engine.tool()
    def refund(order: str) -> str:
        return "refunded"

    @engine.tool()
    def refund_all(orders: list[str]) -> str:
        worker = threading.Thread(target=refund, args=(orders[0],))  # no copied context
        worker.start()
        worker.join()
        return "done"

    engine.set_agent(lambda task: refund_all(["ord_1"]))
    check_refused(engine, engine("refund both"), NotStoredReason.CALL_OUTSIDE_RUN)


def test_a_tool_called_inside_another_engines_run_is_a_foreign_run() -> None:
    shop, helper = Engine(), Engine()

    @shop.tool()
    def charge(amount: int) -> str:
        return "charged"

    @helper.tool()
    def lookup(query: str) -> str:
        return query

    helper.set_agent(lambda task: (lookup(task), charge(2500))[1])
    shop.set_agent(lambda task: helper("take the payment"))
    check_refused(shop, shop("process the order"), NotStoredReason.FOREIGN_RUN)


def test_a_sub_task_handed_to_the_same_engine_is_not_part_of_the_run() -> None:
    engine = Engine()

    @engine.tool()
    def greet(who: str) -> str:
        return f"hello {who}"

    def agent(task: str) -> str:
        if task == "welcome":
            return greet("ann")
        engine("welcome")
        return greet("bob")

    engine.set_agent(agent)
    result = engine("onboard")
    assert result.not_stored_reason is NotStoredReason.SUB_TASK and not result.stored
    assert engine.metrics.not_stored_by_reason == {NotStoredReason.SUB_TASK: 1}  # the sub-task was stored


def test_a_task_that_cannot_be_keyed_is_not_stored() -> None:
    engine = Engine()

    @engine.tool()
    def send(text: str) -> str:
        return "sent"

    engine.set_agent(lambda task, thing: send("hi"))
    check_refused(engine, engine("send", object()), NotStoredReason.UNKEYABLE_TASK)


def test_a_secret_outside_a_param_reference_is_a_secret_leak() -> None:
    engine = Engine()

    @engine.tool()
    def login(password: str) -> str:
        return "in"

    engine.set_agent(lambda task: login("hunter2-correct-horsex"))  # not a whole word: no param
    result = engine("log in", params={"password": Secret("hunter2-correct-horse")})
    check_refused(engine, result, NotStoredReason.SECRET_LEAK)
    assert "hunter2" not in (result.not_stored or "").casefold()


def test_a_store_that_refuses_the_write_is_a_store_error(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine()

    @engine.tool()
    def close(ticket: str) -> str:
        return "closed"

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(engine.store, "add", refuse)
    engine.set_agent(lambda task: close("T-1"))
    result = engine("close T-1")
    check_refused(engine, result, NotStoredReason.STORE_ERROR)
    assert "disk full" in (result.not_stored or "")


def test_a_store_that_goes_down_before_the_write_is_store_unavailable() -> None:
    """The store went down while the agent worked: the run is served, not stored, and says why."""
    store = OutageStore()
    engine = Engine(store)

    @engine.tool()
    def close(ticket: str) -> str:
        store.down = True
        return "closed"

    engine.set_agent(lambda task: close("T-1"))
    result = engine("close T-1")
    assert result.output == "closed" and not result.stored
    assert result.not_stored_reason is NotStoredReason.STORE_UNAVAILABLE
    assert (
        result.not_stored == "the store is unavailable: cannot connect to the test server: Connection refused"
    )
    assert engine.metrics.not_stored_by_reason == {NotStoredReason.STORE_UNAVAILABLE: 1}


def test_an_agent_that_raises_is_counted_as_not_stored() -> None:
    engine = Engine()

    @engine.tool()
    def close(ticket: str) -> str:
        raise RuntimeError("the desk is down")

    engine.set_agent(lambda task: close("T-1"))
    with pytest.raises(RuntimeError):
        engine("close T-1")
    assert engine.metrics.not_stored_by_reason == {NotStoredReason.AGENT_RAISED: 1}
    engine.journal.flush()
    assert engine.store.events()[-1].not_stored_reason == NotStoredReason.AGENT_RAISED.value


def test_an_agent_may_keep_its_run_out_of_the_store_saying_why() -> None:
    engine = Engine()

    @engine.tool()
    def step(n: int) -> int:
        return n

    def agent(task: str) -> int:
        run = current_run()
        assert run is not None
        run.refuse("a step used a live handle the replay cannot rebuild")
        return step(1)

    engine.set_agent(agent)
    result = engine("do it")
    check_refused(engine, result, NotStoredReason.REFUSED)
    assert result.not_stored == "a step used a live handle the replay cannot rebuild"


def test_a_frozen_engine_stores_no_run() -> None:
    recorder = refund_desk()
    frozen = refund_desk(recorder.store, mode="frozen")
    result = ask(frozen, 1)
    assert not result.hit and not result.stored and result.trajectory_id is None
    assert result.not_stored_reason is NotStoredReason.FROZEN
    assert result.not_stored == "the engine is frozen (mode='frozen'): it stores nothing"
    assert frozen.metrics.not_stored_by_reason == {NotStoredReason.FROZEN: 1}
    frozen.flush()
    assert (len(frozen.store), frozen.store.events()) == (0, [])  # type: ignore[attr-defined]


def test_every_kind_is_produced_by_some_run() -> None:
    """The tests above cover every member but the one the engine never notes itself (a call after the
    run ended: test_async_runs)."""
    covered = {
        NotStoredReason.NO_TOOL_CALLS,
        NotStoredReason.UNSTORABLE_VALUE,
        NotStoredReason.UNREPLAYABLE,
        NotStoredReason.CHECK_CAPTURE_FAILED,
        NotStoredReason.TOOL_STILL_RUNNING,
        NotStoredReason.CALL_OUTSIDE_RUN,
        NotStoredReason.FOREIGN_RUN,
        NotStoredReason.SUB_TASK,
        NotStoredReason.UNKEYABLE_TASK,
        NotStoredReason.SECRET_LEAK,
        NotStoredReason.STORE_ERROR,
        NotStoredReason.STORE_UNAVAILABLE,
        NotStoredReason.AGENT_RAISED,
        NotStoredReason.TOOL_RAISED,  # test_tool_errors
        NotStoredReason.CALLED_AFTER_RUN,
        NotStoredReason.REFUSED,
        NotStoredReason.FROZEN,
    }
    assert covered | NOT_PRODUCED == set(NotStoredReason)


def test_stats_shows_why_runs_were_not_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    engine = Engine(url)

    @engine.tool()
    def send(message: Any) -> str:
        return "sent"

    engine.set_agent(lambda task: send(threading.Lock() if task == "send a lock" else task))
    assert engine("send hello").stored
    assert engine("send a lock").not_stored_reason is NotStoredReason.UNSTORABLE_VALUE
    engine.close()
    figures = json.loads(run_cli(capsys, "stats", "--json", "--store", url).out)
    assert (figures["calls"]["stored"], figures["calls"]["not_stored"]) == (1, 1)
    assert figures["not_stored_reasons"] == [["unstorable_value", 1]]
    out = run_cli(capsys, "stats", "--store", url).out
    assert "1 stored, 1 not stored" in out
    assert "Why runs were not stored" in out and "unstorable_value" in out
