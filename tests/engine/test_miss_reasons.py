"""Every miss names its cause as a MissReason: on the Result, in the metrics, in the events and in stats."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cli_support import run_cli
from conftest import OutageStore
from modes_desk import ask, refund_desk
from muscle_mem import Check, Engine, MissReason, Result
from muscle_mem.stores import MemoryStore

NOT_PRODUCED_YET = {MissReason.NO_SAFE_STEP, MissReason.AMBIGUOUS_ORIGIN}
"""Kinds no engine run here can cause: a node whose every candidate gives no reason, and origins that
disagree at replay (that check is being added to the replay)."""


class Desk:
    """A world whose state a test changes between the recording and the replay."""

    def __init__(self) -> None:
        self.status = "open"
        self.record: dict[str, str] = {"id": "cust-0001"}
        self.broken = False
        self.capture_breaks = False


def recorded(setup: Callable[[Engine, Desk], Callable[..., Any]], **options: Any) -> tuple[Engine, Desk]:
    """An engine whose agent was run once on the task "serve" (and stored), and the desk it works on."""
    engine, desk = Engine(**options), Desk()
    engine.set_agent(setup(engine, desk))
    assert engine("serve").stored
    return engine, desk


def checked_status(engine: Engine, desk: Desk) -> Callable[..., Any]:
    def status() -> str:
        if desk.capture_breaks:
            raise OSError("the screen is gone")
        return desk.status

    @engine.tool(pre_check=Check.equal(status))
    def close() -> str:
        desk.status = "closed"
        return "closed"

    return lambda task: close()


def post_checked(engine: Engine, desk: Desk) -> Callable[..., Any]:
    @engine.tool(post_check=Check(lambda: desk.status, lambda now, then: now == then))
    def close() -> str:
        if not desk.broken:
            desk.status = "closed"
        return "closed"

    return lambda task: close()


def raising(engine: Engine, desk: Desk) -> Callable[..., Any]:
    @engine.tool()
    def close() -> str:
        if desk.broken:
            raise RuntimeError("the desk is down")
        return "closed"

    return lambda task: close()


def data_flow(engine: Engine, desk: Desk) -> Callable[..., Any]:
    @engine.tool()
    def lookup() -> dict[str, str]:
        return dict(desk.record)

    @engine.tool()
    def charge(customer: str) -> str:
        return f"charged {customer}"

    return lambda task: charge(lookup()["id"])


def answer_flow(engine: Engine, desk: Desk) -> Callable[..., Any]:
    @engine.tool()
    def lookup() -> dict[str, str]:
        return dict(desk.record)

    return lambda task: lookup()["id"]


def check_miss(engine: Engine, result: Result, kind: MissReason, tool: str | None = None) -> None:
    assert not result.hit and result.fallback
    assert result.miss_reason is kind and result.reason
    assert result.miss_tool == tool
    assert engine.metrics.misses_by_reason[kind] >= 1
    assert engine.metrics.miss_reasons[kind.value] >= 1
    engine.journal.flush()
    assert engine.store.events()[-1].miss_reason == kind.value


def test_a_new_task_misses_with_no_trajectory() -> None:
    engine, _ = recorded(raising)
    check_miss(engine, engine("something else"), MissReason.NO_TRAJECTORY)


def test_a_changed_environment_misses_with_pre_check_failed() -> None:
    engine, desk = recorded(checked_status)
    desk.status = "closed"
    check_miss(engine, engine("serve"), MissReason.PRE_CHECK_FAILED, "close")


def test_a_capture_that_raises_at_replay_misses_with_pre_check_raised() -> None:
    engine, desk = recorded(checked_status)
    desk.status, desk.capture_breaks = "open", True
    check_miss(engine, engine("serve"), MissReason.PRE_CHECK_RAISED, "close")


def test_a_snapshot_that_cannot_be_fingerprinted_misses_with_snapshot_unhashable() -> None:
    engine, desk = recorded(checked_status)
    desk.status = object()  # type: ignore[assignment]
    check_miss(engine, engine("serve"), MissReason.SNAPSHOT_UNHASHABLE, "close")


def test_an_effect_that_did_not_happen_misses_with_post_check_failed() -> None:
    engine, desk = recorded(post_checked)
    desk.status, desk.broken = "open", True
    result = engine("serve")
    check_miss(engine, result, MissReason.POST_CHECK_FAILED, "close")
    assert result.steps_replayed == 1


def test_a_tool_that_raises_at_replay_misses_with_tool_raised() -> None:
    engine, desk = recorded(raising)
    desk.broken = True
    with pytest.raises(RuntimeError):  # the agent calls the same broken tool
        engine("serve")
    assert engine.metrics.misses_by_reason[MissReason.TOOL_RAISED] == 1
    engine.journal.flush()
    assert engine.store.events()[-1].miss_reason == MissReason.TOOL_RAISED.value


def test_a_changed_output_misses_with_observation_changed() -> None:
    engine, desk = recorded(data_flow)
    desk.record = {"name": "Ada"}
    with pytest.raises(KeyError):  # the agent reads the same missing field
        engine("serve")
    assert engine.metrics.misses_by_reason[MissReason.OBSERVATION_CHANGED] == 1


def test_an_output_a_later_step_needs_gone_misses_with_unresolved_value() -> None:
    """With observations ignored, the changed output is found when the next step's argument is rebuilt."""
    engine, desk = recorded(data_flow, observations="ignored")
    desk.record = {"name": "Ada"}
    with pytest.raises(KeyError):  # the agent reads the same missing field
        engine("serve")
    assert engine.metrics.misses_by_reason[MissReason.UNRESOLVED_VALUE] == 1


def test_an_answer_that_cannot_be_rebuilt_misses_with_answer_unresolved() -> None:
    """With observations ignored, the changed output is found when the answer is rebuilt."""
    engine, desk = recorded(answer_flow, observations="ignored")
    engine.set_agent(lambda task: "asked the customer")
    desk.record = {"name": "Ada"}
    check_miss(engine, engine("serve"), MissReason.ANSWER_UNRESOLVED)


def test_a_tool_another_engine_lacks_misses_with_tool_not_registered() -> None:
    store = MemoryStore()
    recorded(raising, store=store)
    other = Engine(store)

    @other.tool()
    def close_all() -> str:
        return "closed"

    other.set_agent(lambda task: close_all())
    check_miss(other, other("serve"), MissReason.TOOL_NOT_REGISTERED, "close")


def test_a_tool_changed_since_recording_misses_with_version_changed() -> None:
    store = MemoryStore()
    first = Engine(store)
    recorded_close = first.register(lambda: "closed", name="close", version="1")
    first.set_agent(lambda task: recorded_close())
    assert first("serve").stored
    second = Engine(store)
    close = second.register(lambda: "closed", name="close", version="2")
    second.set_agent(lambda task: close())
    check_miss(second, second("serve"), MissReason.VERSION_CHANGED, "close")


def test_a_task_that_cannot_be_keyed_misses_with_unkeyable_task() -> None:
    engine, _ = recorded(raising)
    engine.set_agent(lambda task, thing: "answered")
    check_miss(engine, engine("serve", object()), MissReason.UNKEYABLE_TASK)


def test_a_store_that_cannot_be_read_misses_with_store_error() -> None:
    engine, _ = recorded(raising)
    engine.store.close()
    result = engine("serve")
    assert result.miss_reason is MissReason.STORE_ERROR
    assert engine.metrics.misses_by_reason[MissReason.STORE_ERROR] == 1


def test_a_store_that_is_down_misses_with_store_unavailable() -> None:
    """An outage is not an error of the store: the miss says the store is unavailable, and why."""
    store = OutageStore()
    engine, _ = recorded(raising, store=store)
    store.down = True
    result = engine("serve")
    assert result.miss_reason is MissReason.STORE_UNAVAILABLE
    assert result.reason == "the store is unavailable: cannot connect to the test server: Connection refused"
    assert engine.metrics.misses_by_reason[MissReason.STORE_UNAVAILABLE] == 1
    assert engine.metrics.store_errors == 0 and engine.metrics.store_outages == 1


def test_a_shadow_run_says_the_agent_ran_because_of_the_mode() -> None:
    engine = refund_desk(mode="shadow")
    ask(engine, 1)
    result = ask(engine, 2)
    assert result.miss_reason is MissReason.SHADOW and result.fallback
    assert result.reason is not None and result.reason.startswith("shadow mode: the agent ran")
    assert engine.metrics.misses_by_reason[MissReason.SHADOW] == 2


def test_a_similar_task_is_its_own_kind_of_miss() -> None:
    """A text semantic matching finds similar to a stored one misses as SIMILAR_TASK, naming it."""
    engine = Engine(match="semantic")
    restart = engine.register(lambda: "restarted", name="restart")
    engine.set_agent(lambda task: restart())
    engine("please restart the web server")
    result = engine("restart the web server")
    assert result.miss_reason is MissReason.SIMILAR_TASK and result.miss_tool is None
    assert "'please restart the web server' is only a candidate" in (result.reason or "")
    assert engine.metrics.misses_by_reason[MissReason.SIMILAR_TASK] == 1


def test_every_kind_is_produced_by_some_run() -> None:
    """The tests above cover every member but the ones no engine run can cause yet."""
    covered = {
        MissReason.NO_TRAJECTORY,
        MissReason.PRE_CHECK_FAILED,
        MissReason.PRE_CHECK_RAISED,
        MissReason.POST_CHECK_FAILED,
        MissReason.TOOL_RAISED,
        MissReason.UNRESOLVED_VALUE,
        MissReason.ANSWER_UNRESOLVED,
        MissReason.TOOL_NOT_REGISTERED,
        MissReason.VERSION_CHANGED,
        MissReason.UNKEYABLE_TASK,
        MissReason.STORE_ERROR,
        MissReason.STORE_UNAVAILABLE,
        MissReason.SNAPSHOT_UNHASHABLE,
        MissReason.OBSERVATION_CHANGED,
        MissReason.SHADOW,
        MissReason.SIMILAR_TASK,
    }
    assert covered | NOT_PRODUCED_YET == set(MissReason)


def test_a_hit_has_no_miss_reason() -> None:
    engine, _ = recorded(raising)
    result = engine("serve")
    assert result.hit and result.miss_reason is None and result.miss_tool is None
    assert sum(engine.metrics.misses_by_reason.values()) == 1  # the recording run's


def test_stats_counts_misses_by_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    engine, desk = recorded(checked_status, store=url)
    desk.status = "closed"
    engine("serve")
    engine.close()
    figures = json.loads(run_cli(capsys, "stats", "--json", "--store", url).out)
    assert figures["miss_reasons"] == [["no_trajectory", 1], ["pre_check_failed", 1]]
    out = run_cli(capsys, "stats", "--store", url).out
    assert "pre_check_failed" in out and "no_trajectory" in out
