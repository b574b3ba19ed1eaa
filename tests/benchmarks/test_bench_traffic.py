"""The traffic benchmark on a little traffic: its figures add up, nothing is unsafe, templates serve hits."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_traffic as bench

FEW = ["refund an order", "share a file", "book a hotel", "post a message"]


def test_with_no_params_templates_serve_hits_and_nothing_is_unsafe() -> None:
    """Each family asked 8 times: its first two asks prove a template that serves later ones."""
    plain = bench.run_core(8, 3, "no params", FEW)
    declared = bench.run_core(8, 3, "params", FEW)
    for tally in (plain, declared):
        assert tally.asks == 8 * len(FEW) and tally.unsafe == 0
        assert tally.hits + tally.partial + tally.misses == tally.asks
    assert plain.template_hits == plain.hits > 0 and declared.template_hits == 0
    assert plain.misses >= 2 * len(FEW)  # no template replays before two runs proved it


def test_the_pydantic_ai_front_end_judges_the_same_traffic() -> None:
    pytest.importorskip("pydantic_ai")
    tally = bench.run_pydantic_ai(6, 3, "no params", FEW[:2])
    assert tally.asks == 12 and tally.unsafe == 0 and tally.template_hits > 0


def test_the_script_prints_both_modes_and_the_lookup_cost(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--asks", "4", "--only", "refund an order", "--fronts", "core", "--sizes", "10"]) == 0
    printed = capsys.readouterr().out
    assert (
        "| core | this code | no params | 4 |" in printed and "| core | this code | params | 4 |" in printed
    )
    assert "10 templates:" in printed
