"""The demo's agent: what its scripted LLM decides and costs, the request stream, and the agent loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from muscle_mem.demo.agent import SupportAgent
from muscle_mem.demo.desk import Desk
from muscle_mem.demo.llm import SYSTEM_PROMPT, TOOLS, ScriptedLLM, count_tokens
from muscle_mem.demo.policy import Answer, Request, ToolCall, Transcript, UnknownRequest, decide
from muscle_mem.demo.workload import Workload


class Recorder:
    """A desk proxy that remembers the calls the agent makes."""

    def __init__(self, desk: Desk) -> None:
        self.desk = desk
        self.calls: list[tuple[str, tuple[Any, ...], Any]] = []

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.desk, name)

        def call(*args: Any) -> Any:
            out = method(*args)
            self.calls.append((name, args, out))
            return out

        return call


@pytest.fixture
def desk(tmp_path: Path) -> Desk:
    return Desk.create(tmp_path / "desk.db", seed=2, customers=12)


def customer(desk: Desk, plan: str = "Growth") -> dict[str, Any]:
    for c in desk.customers():
        if c["status"] == "active":
            if c["plan"] != plan:
                desk.change_plan(c["id"], plan)
            return desk.customer(c["id"])  # type: ignore[return-value]
    raise AssertionError("no active customer")


def fast_llm(seed: int = 0) -> ScriptedLLM:
    return ScriptedLLM(speed=1e6, seed=seed)


def solve(desk: Desk, text: str) -> tuple[Any, list[tuple[str, tuple[Any, ...], Any]]]:
    recorder = Recorder(desk)
    answer = SupportAgent(recorder, fast_llm())(text)  # type: ignore[arg-type]
    return answer, recorder.calls


# -- understanding requests ------------------------------------------------------------------------


def test_requests_are_parsed_from_text() -> None:
    assert Request.parse("Refund $12.50 to ada@example.com: it broke").fields == {
        "amount": "12.50",
        "email": "ada@example.com",
        "reason": "it broke",
    }
    assert Request.parse("Move ada@example.com to the Growth plan").fields == {
        "email": "ada@example.com",
        "plan": "Growth",
    }
    assert Request.parse("Sign up Ada Lovelace <ada@example.com>").name == "Ada Lovelace"
    assert Request.parse("ada@example.com confirms that ticket TCK-5001 is resolved").ticket == "TCK-5001"
    with pytest.raises(UnknownRequest):
        Request.parse("Please write me a poem")


# -- the agent on the desk -------------------------------------------------------------------------


def test_a_refund_within_the_limit_is_issued_noted_and_closed(desk: Desk) -> None:
    c = customer(desk)
    answer, calls = solve(desk, f"Refund $12.50 to {c['email']}: it broke")
    assert [name for name, _, _ in calls] == [
        "lookup_customer",
        "refund_policy",
        "create_ticket",
        "issue_refund",
        "add_note",
        "close_ticket",
    ]
    ticket = calls[2][2]
    assert answer == {"ticket": ticket, "outcome": "refunded", "refund": calls[3][2]["refund_id"]}
    assert desk.get_ticket(ticket)["status"] == "closed"  # type: ignore[index]
    assert desk.get_ticket(ticket)["notes"] == ["Refunded $12.50: it broke"]  # type: ignore[index]


def test_a_suspended_account_is_escalated_without_refund(desk: Desk) -> None:
    c = customer(desk)
    desk.set_status(c["id"], "suspended")
    answer, calls = solve(desk, f"Refund $12.50 to {c['email']}: it broke")
    assert "issue_refund" not in [name for name, _, _ in calls]
    assert answer["outcome"] == "escalated"
    assert answer["team"] == "trust-and-safety"
    assert desk.refund_status(answer["ticket"]) is None


def test_a_refund_above_the_limit_goes_to_billing(desk: Desk) -> None:
    c = customer(desk, "Starter")
    answer, calls = solve(desk, f"Refund $25.01 to {c['email']}: it broke")
    assert "issue_refund" not in [name for name, _, _ in calls]
    assert (answer["outcome"], answer["team"]) == ("escalated", "billing")
    answer, _ = solve(desk, f"Refund $25.00 to {c['email']}: it broke")
    assert answer["outcome"] == "refunded"


def test_a_held_refund_is_escalated(desk: Desk) -> None:
    c = customer(desk)
    desk.flag_for_review(c["id"])
    answer, _ = solve(desk, f"Refund $12.50 to {c['email']}: it broke")
    assert (answer["outcome"], answer["team"]) == ("escalated", "billing")
    assert desk.refund_status(answer["ticket"]) == "held"


def test_plan_changes(desk: Desk) -> None:
    c = customer(desk, "Starter")
    answer, calls = solve(desk, f"Move {c['email']} to the Growth plan")
    assert answer["outcome"] == "changed"
    assert desk.customer(c["id"])["plan"] == "Growth"  # type: ignore[index]
    assert desk.get_ticket(answer["ticket"])["status"] == "closed"  # type: ignore[index]
    before = desk.state()
    answer, _ = solve(desk, f"Move {c['email']} to the Growth plan")
    assert answer == {"customer": c["id"], "outcome": "unchanged"}
    assert desk.state() == before
    desk.set_status(c["id"], "suspended")
    answer, calls = solve(desk, f"Move {c['email']} to the Enterprise plan")
    assert answer["outcome"] == "blocked"
    assert "change_plan" not in [name for name, _, _ in calls]


def test_signups(desk: Desk) -> None:
    answer, _ = solve(desk, "Sign up Ada Lovelace <ada.new@example.com>")
    assert answer["outcome"] == "registered"
    assert desk.lookup_customer("ada.new@example.com")["id"] == answer["customer"]  # type: ignore[index]
    before = desk.state()
    answer, _ = solve(desk, "Sign up Ada Lovelace <ada.new@example.com>")
    assert answer["outcome"] == "already registered"
    assert desk.state() == before


def test_closing_tickets(desk: Desk) -> None:
    c = customer(desk)
    ticket = desk.create_ticket(c["id"], "Cannot log in")
    answer, _ = solve(desk, f"{c['email']} confirms that ticket {ticket} is resolved")
    assert answer == {"ticket": ticket, "outcome": "closed"}
    before = desk.state()
    answer, _ = solve(desk, f"{c['email']} confirms that ticket {ticket} is resolved")
    assert answer == {"ticket": ticket, "outcome": "already closed"}
    assert desk.state() == before
    escalated = desk.create_ticket(c["id"], "Chargeback")
    desk.escalate_ticket(escalated, "billing")
    answer, _ = solve(desk, f"{c['email']} confirms that ticket {escalated} is resolved")
    assert answer["outcome"] == "left escalated"
    assert desk.ticket(escalated)["status"] == "escalated"  # type: ignore[index]


def test_the_policy_resumes_from_any_prefix_of_its_own_transcript(desk: Desk) -> None:
    c = customer(desk)
    text = f"Refund $12.50 to {c['email']}: it broke"
    _, calls = solve(desk, text)
    request = Request.parse(text)
    for done in range(len(calls)):
        transcript = Transcript()
        for name, args, out in calls[:done]:
            transcript.add(name, args, out)
        assert decide(request, transcript) == ToolCall(calls[done][0], calls[done][1])
    full = Transcript()
    for name, args, out in calls:
        full.add(name, args, out)
    assert isinstance(decide(request, full), Answer)


def test_the_policy_writes_only_what_the_request_says(desk: Desk) -> None:
    """Notes and subjects are built from the request alone, so a replay with new params writes the new ones."""
    c = customer(desk)
    _, calls = solve(desk, f"Refund $12.50 to {c['email']}: it broke")
    texts = [a for _, args, _ in calls for a in args if isinstance(a, str) and " " in a]
    assert texts == ["Refund request: it broke", "Refunded $12.50: it broke"]


# -- the scripted LLM ------------------------------------------------------------------------------


def test_token_counts_grow_with_text() -> None:
    assert count_tokens("") == 0
    assert count_tokens("hello") == 2
    assert count_tokens("a, b") == 3
    assert 800 < count_tokens(SYSTEM_PROMPT) < 2000
    for tool in TOOLS:
        assert f'"name": "{tool}"' in SYSTEM_PROMPT


def test_llm_latency_is_a_models_divided_by_speed() -> None:
    slept: list[float] = []
    llm = ScriptedLLM(speed=1.0, seed=3, sleep=slept.append)
    text = "Refund $12.50 to ada@example.com: it broke"
    transcript = Transcript()
    first = llm.decide(text, transcript)
    assert first.action == ToolCall("lookup_customer", ("ada@example.com",))
    assert first.usage.calls == 1
    assert first.usage.tokens == llm.usage.tokens
    transcript.add(
        "lookup_customer", ("ada@example.com",), {"id": "CUS-1001", "plan": "Growth", "status": "active"}
    )
    llm.decide(text, transcript)
    assert all(0.2 <= s <= 0.8 for s in slept), slept
    assert llm.usage.calls == 2
    assert llm.usage.prompt_tokens > 2 * count_tokens(SYSTEM_PROMPT)
    assert 20 < llm.usage.completion_tokens < 200
    fast: list[float] = []
    ScriptedLLM(speed=10.0, seed=3, sleep=fast.append).decide(text, Transcript())
    assert fast[0] == pytest.approx(slept[0] / 10)
    with pytest.raises(ValueError, match="speed"):
        ScriptedLLM(speed=0)


def test_prompt_tokens_grow_with_the_transcript() -> None:
    short = count_tokens(ScriptedLLM.prompt("x", Transcript()))
    transcript = Transcript()
    transcript.add("get_ticket", ("TCK-5001",), {"id": "TCK-5001", "status": "open", "notes": ["a"] * 20})
    assert count_tokens(ScriptedLLM.prompt("x", transcript)) > short + 20


# -- the request stream ----------------------------------------------------------------------------


def test_workload_is_deterministic_and_understood(tmp_path: Path) -> None:
    streams = []
    for name in ("a", "b"):
        desk = Desk.create(tmp_path / f"{name}.db", seed=4)
        streams.append(list(Workload(desk, seed=4).tasks(60)))
    assert streams[0] == streams[1]
    tasks = streams[0]
    assert {t.kind for t in tasks} == {"refund", "close", "plan", "signup"}
    assert any(t.event for t in tasks)
    for task in tasks:
        request = Request.parse(task.text)
        assert request.kind == task.kind
        assert request.fields == task.params
        assert task.tags == [task.kind]


def test_workload_events_change_the_desk(desk: Desk) -> None:
    before = desk.state()
    tasks = list(Workload(desk, seed=1, change_rate=1.0).tasks(12))
    assert all(t.event for t in tasks if t.kind in ("refund", "close"))
    assert desk.state() != before
