"""``stats`` and ``report`` show the ledger: tokens in and out, requests, money at ``--price``, task families."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_support import run_cli
from muscle_mem import Engine, current_run


def fill(path: Path) -> str:
    """A SQLite store where one family missed once and hit twice, and another missed twice."""
    url = f"sqlite:///{path}"
    engine = Engine(url)

    @engine.tool()
    def lookup(email: str) -> str:
        return "usr_" + email.split("@")[0]

    def agent(task: str) -> str:
        user = lookup(task.split()[-1])
        run = current_run()
        assert run is not None
        run.add_usage(1500, 500, requests=3, model="gpt-4.1")
        return user

    engine.set_agent(agent)
    for email in ("ada@x.io", "bob@x.io", "cy@x.io"):
        engine(f"find {email}", params={"email": email})
    for text in ("an odd one", "another odd one"):
        engine(text)
    engine.close()
    return url


def test_stats_prices_the_tokens_and_ranks_the_families(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tokens come with their split and requests, money at the price given, families by savings and misses."""
    url = fill(tmp_path / "cache.db")
    out = run_cli(capsys, "stats", "--store", url, "--price", "gpt-4.1=2,8").out
    assert "6,000 spent (4,500 in, 1,500 out), 4,000 saved (3,000 in, 1,000 out)" in out
    assert "9 made, 6 saved" in out
    assert "0.021 spent, 0.014 saved" in out
    assert "Top task families by savings" in out and "find {email}" in out
    assert "Top task families by misses" in out and "an odd one" in out


def test_stats_json_holds_the_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--json`` carries the totals and the top families, each with its misses by reason."""
    url = fill(tmp_path / "cache.db")
    book = json.loads(run_cli(capsys, "stats", "--store", url, "--json", "--price", "gpt-4.1=2,8").out)[
        "ledger"
    ]
    assert book["priced"] and book["saved"]["money"] == pytest.approx(0.014)
    (top,) = book["top_savings"]
    assert (top["task"], top["hits"], top["saved"]["tokens"]) == ("find {email}", 2, 4000)
    assert [f["misses_by_reason"] for f in book["top_misses"]] == [{"no_trajectory": 1}] * 3


def test_a_price_not_written_model_in_out_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--price`` takes MODEL=IN,OUT per million tokens; anything else is a usage error."""
    url = fill(tmp_path / "cache.db")
    ran = run_cli(capsys, "stats", "--store", url, "--price", "gpt-4.1=2")
    assert ran.status == 2 and "is not MODEL=IN,OUT" in ran.err


def test_the_report_plots_money_and_lists_the_families(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With prices the report has a money chart and money columns; the families table either way."""
    url = fill(tmp_path / "cache.db")
    priced, plain = tmp_path / "priced.html", tmp_path / "plain.html"
    assert (
        run_cli(capsys, "report", "--store", url, "--out", str(priced), "--price", "gpt-4.1=2,8").status == 0
    )
    assert run_cli(capsys, "report", "--store", url, "--out", str(plain)).status == 0
    page = priced.read_text()
    assert "Money saved and spent, cumulative" in page and "money saved</th>" in page
    assert "Task families by savings" in page and "find {email}" in page
    assert "Money saved" not in plain.read_text()
