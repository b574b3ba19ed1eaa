"""``muscle-mem show ID --family``: what every run of a task saw at each step, and which way each went."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_support import run_cli
from muscle_mem import Engine, current_run


def refund_desk(path: Path) -> tuple[Engine, dict[str, dict[str, object]]]:
    """An engine on a SQLite file whose agent refunds an active customer and escalates a suspended one."""
    customers: dict[str, dict[str, object]] = {}
    engine = Engine(f"sqlite:///{path}")

    @engine.tool()
    def lookup(email: str) -> dict[str, object]:
        return dict(customers[email])

    @engine.tool()
    def refund(customer_id: str, amount: float) -> str:
        return "refunded"

    @engine.tool()
    def escalate(customer_id: str) -> str:
        return "escalated"

    def agent(task: str, email: str, amount: float) -> str:
        done = current_run().steps  # a partial replay looked the customer up already
        customer = done[0].output if done else lookup(email)
        if customer["status"] == "active":
            return refund(customer["id"], amount)
        return escalate(customer["id"])

    engine.set_agent(agent)
    return engine, customers


def test_the_family_shows_identities_free_ranges_and_the_leaf_that_chose_the_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ids are free, amounts a range, and the status that sent runs two ways is shown per way."""
    path = tmp_path / "cache.db"
    engine, customers = refund_desk(path)
    runs = [("a@x.io", "active", 12.5), ("b@x.io", "active", 40.0), ("c@x.io", "suspended", 20.0)]
    for number, (email, status, amount) in enumerate(runs):
        customers[email] = {"id": f"cus_{number}", "status": status, "balance": amount * 2}
        result = engine("refund the customer", email, amount, params={"email": email, "amount": amount})
        assert result.stored, result
    stored = result.trajectory_id
    engine.close()
    assert stored is not None

    ran = run_cli(capsys, "--store", f"sqlite:///{path}", "show", stored, "--family")

    assert ran.status == 0, ran.err
    family = ran.out[ran.out.index("family") :]
    assert "3 runs of this task, which went 2 way(s):" in family
    assert "A: lookup → escalate (1 run)" in family and "B: lookup → refund (2 runs)" in family  # shown first
    assert "output['id']: an identity, free" in family
    assert "output['status']: differs by way: always 'suspended' (A); always 'active' (B)" in family
    assert "output['balance']: differs by way: always 40.0 (A); from 25.0 to 80.0 (B)" in family
    assert "went on as A (1), B (2)" in family


def test_without_family_show_prints_one_trajectory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The family's evidence is printed only when asked for."""
    path = tmp_path / "cache.db"
    engine, customers = refund_desk(path)
    customers["a@x.io"] = {"id": "cus_1", "status": "active", "balance": 3.0}
    result = engine("refund the customer", "a@x.io", 1.5, params={"email": "a@x.io", "amount": 1.5})
    engine.close()
    assert result.trajectory_id is not None

    ran = run_cli(capsys, "--store", f"sqlite:///{path}", "show", result.trajectory_id)

    assert ran.status == 0 and "went on as" not in ran.out and "step 0" in ran.out
