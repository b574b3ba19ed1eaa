"""The demo's environment: a support-desk CRM on a real SQLite file."""

from __future__ import annotations

from pathlib import Path

import pytest

from muscle_mem.demo.desk import PLANS, Desk, DeskError, to_cents, to_dollars


@pytest.fixture
def desk(tmp_path: Path) -> Desk:
    return Desk.create(tmp_path / "desk.db", seed=1, customers=12)


def active(desk: Desk) -> dict[str, str]:
    return next(c for c in desk.customers() if c["status"] == "active")


def test_amounts_convert_both_ways() -> None:
    assert to_cents("42.50") == 4250
    assert to_cents("7") == 700
    assert to_dollars(4250) == "42.50"
    assert to_dollars(5) == "0.05"
    for bad in ("", "abc", "-3.00", "0", "1.005"):
        with pytest.raises(DeskError):
            to_cents(bad)


def test_create_is_deterministic_per_seed(tmp_path: Path) -> None:
    a = Desk.create(tmp_path / "a.db", seed=5).state()
    b = Desk.create(tmp_path / "b.db", seed=5).state()
    c = Desk.create(tmp_path / "c.db", seed=6).state()
    assert a == b
    assert a != c
    assert len(a["customers"]) == 40
    assert {row[0] for row in a["plans"]} == set(PLANS)


def test_opening_a_missing_desk_fails(tmp_path: Path) -> None:
    with pytest.raises(DeskError, match="no support desk"):
        Desk(tmp_path / "missing.db")


def test_lookup_and_create_customer(desk: Desk) -> None:
    customer_id = desk.create_customer("Ada Lovelace", "ada@example.com", "Growth")
    assert customer_id.startswith("CUS-")
    assert desk.lookup_customer("ada@example.com") == {
        "id": customer_id,
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "plan": "Growth",
        "status": "active",
    }
    assert desk.lookup_customer("nobody@example.com") is None
    with pytest.raises(DeskError, match="already exists"):
        desk.create_customer("Ada again", "ada@example.com")
    with pytest.raises(DeskError, match="unknown plan"):
        desk.create_customer("Bob", "bob@example.com", "Platinum")


def test_ticket_lifecycle(desk: Desk) -> None:
    customer = active(desk)
    ticket_id = desk.create_ticket(customer["id"], "Refund request", "12.30")
    desk.add_note(ticket_id, "looking into it")
    ticket = desk.get_ticket(ticket_id)
    assert ticket is not None
    assert ticket["status"] == "open"
    assert ticket["amount"] == "12.30"
    assert ticket["notes"] == ["looking into it"]
    desk.escalate_ticket(ticket_id, "billing")
    assert desk.ticket(ticket_id)["status"] == "escalated"  # type: ignore[index]
    with pytest.raises(DeskError, match="not open"):
        desk.escalate_ticket(ticket_id, "billing")
    desk.close_ticket(ticket_id)
    with pytest.raises(DeskError, match="already closed"):
        desk.close_ticket(ticket_id)
    with pytest.raises(DeskError, match="no ticket"):
        desk.add_note("TCK-1", "lost")
    with pytest.raises(DeskError, match="no customer"):
        desk.create_ticket("CUS-1", "who?")


def test_refunds_follow_the_account_and_the_processor(desk: Desk) -> None:
    customer = active(desk)
    ticket_id = desk.create_ticket(customer["id"], "Refund", "10.00")
    first = desk.issue_refund(customer["id"], "10.00", ticket_id)
    assert first["status"] == "issued"
    assert desk.refund_status(ticket_id) == "issued"
    desk.flag_for_review(customer["id"])
    assert desk.issue_refund(customer["id"], "10.00", ticket_id)["status"] == "held"
    assert desk.refund_status(ticket_id) == "held"
    desk.set_status(customer["id"], "suspended")
    with pytest.raises(DeskError, match="suspended"):
        desk.issue_refund(customer["id"], "10.00", ticket_id)


def test_a_refused_request_changes_nothing(desk: Desk) -> None:
    customer = active(desk)
    ticket_id = desk.create_ticket(customer["id"], "Refund", "10.00")
    desk.set_status(customer["id"], "suspended")
    before = desk.state()
    with pytest.raises(DeskError):
        desk.issue_refund(customer["id"], "10.00", ticket_id)
    assert desk.state() == before


def test_change_plan_reports_the_previous_plan(desk: Desk) -> None:
    customer = active(desk)
    other = next(p for p in PLANS if p != customer["plan"])
    assert desk.change_plan(customer["id"], other) == {"previous": customer["plan"], "plan": other}
    assert desk.change_plan(customer["id"], other) == {"previous": other, "plan": other}
    with pytest.raises(DeskError, match="unknown plan"):
        desk.change_plan(customer["id"], "Platinum")


def test_policy_is_read_in_dollars_and_set_in_cents(desk: Desk) -> None:
    assert desk.refund_policy() == {plan: to_dollars(cents) for plan, cents in PLANS.items()}
    desk.set_refund_limit("Growth", 1_234)
    assert desk.refund_policy()["Growth"] == "12.34"
    assert desk.refund_limit("Growth") == 1_234
    with pytest.raises(DeskError):
        desk.set_refund_limit("Platinum", 1)


def test_copy_is_equal_and_independent(desk: Desk, tmp_path: Path) -> None:
    copy = desk.copy_to(tmp_path / "copy.db")
    assert copy.state() == desk.state()
    customer = active(copy)
    copy.create_ticket(customer["id"], "only in the copy")
    assert copy.state() != desk.state()
    assert len(copy.tickets()) == len(desk.tickets()) + 1
