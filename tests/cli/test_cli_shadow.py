"""``stats`` and ``report`` show how shadow runs compared with what a replay would have done."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import run_cli
from modes_desk import ask, refund_desk


def fill(path: Path) -> str:
    """A SQLite store with four shadow runs of one family: nothing stored, two agreements, a disagreement."""
    url = f"sqlite:///{path}"
    engine = refund_desk(url, mode="shadow")
    for n in (1, 2, 3):
        ask(engine, n)
    engine.desk["refunds"] = False  # type: ignore[attr-defined]
    ask(engine, 4)
    engine.close()
    return url


def test_stats_shows_the_agreements_and_the_first_disagreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = fill(tmp_path / "cache.db")
    out = run_cli(capsys, "stats", "--store", url).out
    assert "Shadow runs: 2 of 4 agreed with what a replay would have done" in out
    assert "refund order {order_id}" in out
    assert "refund order {order_id}, step 1: refund(4) / agent: deny(4)" in out


def test_stats_json_has_the_shadow_figures_of_each_family(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = fill(tmp_path / "cache.db")
    figures = json.loads(run_cli(capsys, "stats", "--store", url, "--json").out)["shadow"]
    (family,) = figures["families"]
    assert (family["runs"], family["agreements"], family["disagreements"], family["misses"]) == (4, 2, 1, 1)
    assert family["streak"] == 0 and family["agreement_rate"] == 0.5
    assert family["first_disagreement"]["step"] == 1
    assert (family["first_disagreement"]["expected"], family["first_disagreement"]["actual"]) == (
        "refund(4)",
        "deny(4)",
    )
    assert family["tokens_saved"] == 2 * 1100
    assert figures["total"]["runs"] == 4


def test_the_report_has_a_shadow_section(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = fill(tmp_path / "cache.db")
    page = tmp_path / "report.html"
    assert run_cli(capsys, "report", "--store", url, "--out", str(page)).status == 0
    html = page.read_text()
    assert "Shadow runs: 2 of 4 agreed with a replay" in html
    assert "step 1: refund(4) / agent: deny(4)" in html


def test_stats_without_shadow_runs_shows_no_shadow_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    engine = refund_desk(url)
    ask(engine, 1)
    engine.close()
    assert "Shadow runs" not in run_cli(capsys, "stats", "--store", url).out
