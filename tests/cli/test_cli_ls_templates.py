"""``muscle-mem ls`` lists the templates learned from the agent's runs, their slots and the runs that proved them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import run_cli
from muscle_mem import Engine


def test_ls_shows_each_template_with_its_slots_and_proving_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    with Engine(url, templates=True) as engine:

        @engine.tool()
        def refund(order_id: int) -> str:
            return "ok"

        engine.set_agent(lambda task: refund(int(task.split()[-1])))
        for order_id in (100, 300, 200):
            engine(f"refund order {order_id}")
        engine.set_agent(lambda task: refund(int(task.split()[2])) and "later")
        engine("refund order 7 later")
    ran = run_cli(capsys, "ls", "--store", url)
    assert ran.status == 0
    assert "2 templates learned" in ran.out
    proven = next(
        line for line in ran.out.splitlines() if "refund order {1} " in line and "later" not in line
    )
    assert "100..300" in proven and "100; 300" in proven
    unproven = next(line for line in ran.out.splitlines() if "refund order {1} later" in line)
    assert "7 only" in unproven and "not yet proven" in unproven


def test_ls_json_stays_an_array_of_trajectories(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    with Engine(url, templates=True) as engine:

        @engine.tool()
        def refund(order_id: int) -> str:
            return "ok"

        engine.set_agent(lambda task: refund(int(task.split()[-1])))
        engine("refund order 100")
    ran = run_cli(capsys, "ls", "--json", "--store", url)
    assert ran.status == 0
    rows = json.loads(ran.out)
    assert isinstance(rows, list) and all(set(row) >= {"id", "task"} for row in rows)
    assert "templates learned" not in ran.out and "{1}" not in ran.out
