"""The demo agent through the engine: replays are safe, resume where they stop, and are verified."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Engine, MissReason
from muscle_mem.demo.agent import SupportAgent, instrument
from muscle_mem.demo.desk import Desk
from muscle_mem.demo.llm import ScriptedLLM
from muscle_mem.demo.runner import DemoRunner, differences, reason_label

FAST = 1e5


class Setup:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path
        self.engine = Engine()
        Desk.create(tmp_path / "desk.db", seed=3, customers=16).close()
        self.desk = instrument(self.engine)(tmp_path / "desk.db")
        self.llm = ScriptedLLM(speed=FAST)
        self.engine.set_agent(SupportAgent(self.desk, self.llm)).set_context(self.desk)
        self.copies = 0

    def growth_customers(self) -> list[dict[str, Any]]:
        found = []
        for c in self.desk.customers():
            if c["status"] == "active":
                self.desk.change_plan(c["id"], "Growth")
                found.append(c)
        return found

    def refund(self, email: str, amount: str) -> tuple[Any, Any]:
        """The engine's result, and the agent alone's answer on a copy made before (its desk must match)."""
        self.copies += 1
        copy = self.desk.copy_to(self.tmp_path / f"copy{self.copies}.db")
        text = f"Refund ${amount} to {email}: it broke"
        result = self.engine(
            text, tags=["refund"], params={"amount": amount, "email": email, "reason": "it broke"}
        )
        alone = SupportAgent(copy, ScriptedLLM(speed=FAST))(text)
        assert differences(self.desk.state(), copy.state()) == []
        assert result.output == alone
        return result, alone


def test_replays_are_safe_flow_data_and_resume(tmp_path: Path) -> None:
    s = Setup(tmp_path)
    ada, bob, cy, dee = s.growth_customers()[:4]

    first, _ = s.refund(ada["email"], "12.50")
    assert not first.hit
    assert first.steps_replayed == 0

    calls = s.llm.usage.calls
    second, _ = s.refund(bob["email"], "19.99")  # below every limit, as the first: the same decisions
    assert second.hit
    assert second.steps_replayed == 6
    assert s.llm.usage.calls == calls  # no LLM call on a full hit
    assert second.output["ticket"] != first.output["ticket"]  # the fresh ticket id flowed through

    s.desk.set_status(cy["id"], "suspended")
    third, _ = s.refund(cy["email"], "18.00")
    assert not third.hit
    assert third.steps_replayed == 1  # the lookup shows the suspended account
    assert third.reason == "step 0 lookup_customer output['status']: 'suspended', recorded 'active'"
    assert third.output["team"] == "trust-and-safety"

    s.desk.set_refund_limit("Growth", 2_000)
    fourth, _ = s.refund(bob["email"], "24.00")
    assert fourth.steps_replayed == 2  # the policy shows the lowered limit
    assert fourth.reason == "step 1 refund_policy output['Growth']: 20, recorded 100"
    assert [n for n in s.desk.get_ticket(fourth.output["ticket"])["notes"]] == [  # type: ignore[index]
        "Requested $24.00 is above the plan's refund limit."
    ]

    s.desk.set_refund_limit("Growth", 10_000)
    s.desk.flag_for_review(dee["id"])
    fifth, _ = s.refund(dee["email"], "9.90")
    assert fifth.steps_replayed == 4
    assert "post-check of tool 'issue_refund'" in (fifth.reason or "")
    assert fifth.output["outcome"] == "escalated"
    # resumed, not restarted: one ticket and one refund for this request
    tickets = [t for t in s.desk.tickets() if t["customer_id"] == dee["id"] and t["amount_cents"] == 990]
    assert len(tickets) == 1


@pytest.fixture
def small_stream(tmp_path: Path) -> Any:
    with DemoRunner(tmp_path / "work", f"sqlite:///{tmp_path / 'cache.db'}", seed=7, speed=FAST) as runner:
        seen: list[Any] = []
        runner.stream(30, seen.append)
        verified: list[Any] = []
        tally = runner.finish(verified.append)
        yield tally, seen, verified


def test_a_small_stream_hits_and_catches_changes_safely(small_stream: Any) -> None:
    tally, seen, verified = small_stream
    assert len(seen) == len(tally.outcomes) == 30
    assert tally.count("hit") > 0
    changed = [o for o in tally.outcomes if o.task.event]
    assert any(
        o.kind != "hit" and not (o.result.reason or "").startswith("no trajectory is stored") for o in changed
    )
    assert tally.count("partial") > 0
    replayed = [o for o in tally.outcomes if o.result.steps_replayed]
    assert {o.index for o in verified} == {o.index for o in replayed}
    assert all(o.alone is not None for o in replayed)
    assert tally.unsafe == []
    assert tally.llm_avoided.calls > 0
    assert tally.spent_tokens_counted == tally.llm_spent.tokens > 0  # the engine counts what the LLM spent
    assert tally.seconds_without_cache > 0
    assert sum(tally.reasons().values()) == tally.count("partial") + tally.count("miss")


def test_without_checks_the_verification_finds_no_unsafe_replay(tmp_path: Path) -> None:
    with DemoRunner(tmp_path / "work", "memory://", seed=7, speed=FAST, checks=False) as runner:
        runner.stream(30)
        tally = runner.finish()
    assert not tally.unsafe and tally.count("hit") > 0


def test_without_checks_or_observations_the_verification_finds_unsafe_replays(tmp_path: Path) -> None:
    options = {"checks": False, "observations": False}
    with DemoRunner(tmp_path / "work", "memory://", seed=7, speed=FAST, **options) as runner:
        runner.stream(30)
        tally = runner.finish()
    assert tally.unsafe
    assert all(o.differences for o in tally.unsafe)


def test_differences_name_the_rows() -> None:
    live = {"tickets": [("T1", "open")], "notes": []}
    alone = {"tickets": [("T1", "closed")], "notes": []}
    assert differences(live, live) == []
    assert differences(live, alone) == [
        "tickets: ('T1', 'open') only after the replay",
        "tickets: ('T1', 'closed') only from the agent alone",
    ]


def test_reasons_are_grouped_by_kind_and_tool() -> None:
    """A miss's line in the demo's table is its kind of cause, with the tool to blame if there is one."""
    assert reason_label(MissReason.PRE_CHECK_FAILED, "add_note") == "pre_check_failed (add_note)"
    assert reason_label(MissReason.NO_TRAJECTORY, None) == "no_trajectory"
