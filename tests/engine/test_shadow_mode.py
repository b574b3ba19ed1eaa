"""Shadow mode: the agent always runs, and each run is compared with what a replay would have done."""

from __future__ import annotations

import pytest

from conftest import StoreSpec, open_spec
from modes_desk import AGENT_TOKENS, ask, refund_desk
from muscle_mem import Check, Engine, MissReason, Secret, Verdict


def test_shadow_agrees_on_an_unchanged_world_and_stores_every_run() -> None:
    """The agent runs every time; a replay would have made the same calls and answer, and evidence grows."""
    engine = refund_desk(mode="shadow")
    results = [ask(engine, n) for n in range(1, 5)]
    assert [r.hit for r in results] == [False] * 4
    assert all(r.fallback and r.stored and r.miss_reason is MissReason.SHADOW for r in results)
    assert [r.output for r in results] == [f"refunded {n}" for n in range(1, 5)]
    verdicts = [r.shadow.verdict if r.shadow else None for r in results]
    assert verdicts == [Verdict.MISSED, Verdict.AGREED, Verdict.AGREED, Verdict.AGREED]
    assert (
        results[0].shadow is not None and results[0].shadow.reason == "no trajectory is stored for this task"
    )
    assert len(engine.store) == 4


def test_shadow_names_the_step_where_an_agent_reading_what_no_tool_shows_branches_otherwise() -> None:
    """The agent denies under a policy no tool output shows: a replay would have refunded at step 1."""
    engine = refund_desk(mode="shadow")
    ask(engine, 1)
    ask(engine, 2)
    engine.desk["refunds"] = False  # type: ignore[attr-defined]
    result = ask(engine, 3)
    assert result.output == "denied 3"
    assert result.shadow is not None
    assert (result.shadow.verdict, result.shadow.step) == (Verdict.DISAGREED, 1)
    assert (result.shadow.expected, result.shadow.actual) == ("refund(3)", "deny(3)")


def test_a_changed_status_a_replay_observes_is_a_miss_and_a_disagreement_when_observations_are_ignored() -> (
    None
):
    """A lookup's status changes and the agent denies: a replay comparing observations would have
    handed the task over; one going by its checks alone would have refunded."""
    for observations, verdict in (("compared", Verdict.MISSED), ("ignored", Verdict.DISAGREED)):
        engine = refund_desk(mode="shadow", observations=observations)
        ask(engine, 1)
        ask(engine, 2)
        engine.desk["status"][3] = "lost"  # type: ignore[attr-defined]
        shadow = ask(engine, 3).shadow
        assert shadow is not None and shadow.verdict is verdict, observations
        assert shadow.step == 1
        if verdict is Verdict.DISAGREED:
            assert (shadow.expected, shadow.actual) == ("refund(3)", "deny(3)")
        else:
            assert shadow.reason is not None and "step 0 lookup" in shadow.reason


def test_a_different_answer_is_a_disagreement_at_the_answer() -> None:
    """Same calls, another answer (the agent words it from what no tool shows): the answer step disagrees."""
    engine = refund_desk(mode="shadow")
    ask(engine, 1)
    ask(engine, 2)
    engine.set_agent(lambda task: "refund pending")  # makes no tool call
    shadow = ask(engine, 3).shadow
    assert shadow is not None and shadow.verdict is Verdict.DISAGREED
    assert (shadow.step, shadow.expected, shadow.actual) == (0, "lookup(3)", "the agent answered")


def test_the_shadow_report_counts_each_family_from_the_store_across_workers_and_restarts(
    durable: StoreSpec,
) -> None:
    """Runs, agreements, the first disagreement and what replays would have saved, read back by a later engine."""
    first = refund_desk(open_spec(durable), mode="shadow")
    second = refund_desk(open_spec(durable), mode="shadow")
    ask(first, 1)
    ask(second, 2)
    ask(first, 3)
    second.desk["refunds"] = False  # type: ignore[attr-defined]
    ask(second, 4)  # a replay would have refunded
    ask(second, 5)  # a replay would have denied, as the latest run did
    first.close()
    second.close()
    later = refund_desk(open_spec(durable))
    try:
        report = later.shadow_report()
        (family,) = report.families
        assert (family.runs, family.agreements, family.disagreements, family.misses) == (5, 3, 1, 1)
        assert family.task == "refund order {order_id}"
        assert family.first_disagreement is not None
        assert (family.first_disagreement.step, family.first_disagreement.expected) == (1, "refund(4)")
        assert family.first_disagreement.actual == "deny(4)"
        assert family.tokens_saved == 3 * sum(AGENT_TOKENS)
        assert family.seconds_saved >= 0.0
        assert family.agreement_rate == pytest.approx(3 / 5)
        assert report.total.runs == 5
    finally:
        later.close()


def test_replay_mode_judges_nothing() -> None:
    """The default mode replays as before: no shadow verdict, no shadow figures."""
    engine = refund_desk()
    assert engine.mode == "replay"
    ask(engine, 1)
    result = ask(engine, 2)
    assert result.hit and result.shadow is None
    assert engine.shadow_report().families == ()


def test_a_pre_check_is_judged_by_what_the_agents_call_captured() -> None:
    """The replay's pre-check of the agent's own call passes on the snapshot that call took."""
    engine = Engine(mode="shadow")
    desk = {"open": True}

    @engine.tool(pre_check=Check.equal(lambda order_id: desk["open"]))
    def refund(order_id: int) -> str:
        return f"refunded {order_id}"

    engine.set_agent(lambda task: refund(int(task.split()[-1])))
    verdicts = []
    for n, is_open in ((1, True), (2, True), (3, False)):
        desk["open"] = is_open
        shadow = engine(f"refund order {n}", params={"order_id": n}).shadow
        verdicts.append((shadow.verdict, shadow.step) if shadow else None)
    assert verdicts == [(Verdict.MISSED, 0), (Verdict.AGREED, None), (Verdict.MISSED, 0)]


def test_a_check_of_a_call_the_agent_did_not_make_is_a_disagreement_never_agreed() -> None:
    """A newer recorded branch checks what the agent's run never captured: had the check passed (nothing
    says it would not), the replay would have made that call where the agent made another, so the run
    is a disagreement (it sends a proven family back to shadow), never an agreement."""
    engine = Engine(mode="shadow")
    policy = {"refunds": True}

    @engine.tool()
    def lookup(order_id: int) -> dict[str, object]:
        return {"id": order_id, "status": "delivered"}

    @engine.tool()
    def refund(order_id: int) -> str:
        return f"refunded {order_id}"

    @engine.tool(pre_check=Check.equal(lambda order_id: "deny desk"))
    def deny(order_id: int) -> str:
        return f"denied {order_id}"

    def agent(task: str) -> str:
        n = int(task.split()[-1])
        lookup(n)
        return refund(n) if policy["refunds"] else deny(n)

    engine.set_agent(agent)
    engine("refund order 1", params={"order_id": 1})
    policy["refunds"] = False
    engine("refund order 2", params={"order_id": 2})
    policy["refunds"] = True
    shadow = engine("refund order 3", params={"order_id": 3}).shadow
    assert shadow is not None and shadow.verdict is Verdict.DISAGREED
    assert (shadow.step, shadow.expected, shadow.actual, shadow.reason) == (
        1,
        "deny(3)",
        "refund(3)",
        "unless the check of tool 'deny', which the agent's run did not capture, stopped the replay",
    )


async def test_an_async_agent_is_shadowed_too() -> None:
    engine = Engine(mode="shadow")

    @engine.tool()
    async def lookup(order_id: int) -> str:
        return "delivered"

    async def agent(task: str) -> str:
        return await lookup(int(task.split()[-1]))

    engine.set_agent(agent)
    first = await engine.arun("look up order 1", params={"order_id": 1})
    second = await engine.arun("look up order 2", params={"order_id": 2})
    assert first.shadow is not None and first.shadow.verdict is Verdict.MISSED
    assert second.shadow is not None and second.shadow.verdict is Verdict.AGREED


def test_a_disagreement_never_shows_a_secret_param() -> None:
    """The calls a verdict quotes, in the result and in the store's events, name a secret, never show it."""
    engine = Engine(mode="shadow")
    policy = {"refunds": True}
    key = "pw-7f3a9c1e5b"

    @engine.tool()
    def refund(order_id: int, api_key: str) -> str:
        return f"refunded {order_id}"

    @engine.tool()
    def deny(order_id: int, api_key: str) -> str:
        return f"denied {order_id}"

    def agent(task: str) -> str:
        n = int(task.split()[-1])
        return refund(n, key) if policy["refunds"] else deny(n, key)

    engine.set_agent(agent)
    for n in (1, 2, 3):
        policy["refunds"] = n != 3
        shadow = engine(f"refund order {n}", params={"order_id": n, "api_key": Secret(key)}).shadow
    assert shadow is not None and shadow.verdict is Verdict.DISAGREED
    assert shadow.expected is not None and shadow.actual is not None
    assert key not in shadow.expected + shadow.actual and "api_key" in shadow.expected
    engine.flush()
    assert all(key not in str(event) for event in engine.store.events())  # type: ignore[attr-defined]
