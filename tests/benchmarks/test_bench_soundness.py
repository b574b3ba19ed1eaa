"""The soundness benchmark's harness on a few scenarios: its table adds up and names the baseline."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_soundness as bench

from soundness import BY_NAME, SCENARIOS

FEW = ["gold_refund_core", "identity_user_id_core", "timestamp_core", "task_w1_1_int_output_memory_core"]


def test_the_table_counts_every_probe_of_each_class_in_both_check_modes(tmp_path: Path) -> None:
    """Each class row counts its scenarios, and its hits, partial replays and misses add up to its probes."""
    scenarios = [BY_NAME[name] for name in FEW]
    reports = bench.run_all(scenarios, bench.baseline_available(), tmp_path)
    assert {checks for checks, _ in reports} == {"narrow", "none"}
    for batch in reports.values():
        by_class, total, _hidden = bench.tally(batch)
        assert set(by_class) == {"branches", "identities", "harmless", "task_w1_1"}
        assert total.scenarios == len(FEW)
        probes = sum(len(s.probes) for s in scenarios)
        assert total.hits + total.partial + total.misses == probes
        assert total.harmless == probes - len(BY_NAME["gold_refund_core"].probes)
    text = bench.table(reports)
    assert "| branches" in text and "**total**" in text


def test_quick_mode_takes_a_few_scenarios_of_every_class() -> None:
    """--quick keeps at most two scenarios per class and every class."""
    chosen = bench.quick(SCENARIOS)
    assert {s.cls for s in chosen} == {s.cls for s in SCENARIOS}
    assert all(sum(1 for s in chosen if s.cls == c.cls) <= bench.QUICK_PER_CLASS for c in chosen)


def test_the_script_prints_its_table_and_says_whether_a_baseline_ran(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The script runs the scenarios named and says which baseline stands beside the figures."""
    assert bench.main(["--only", "gold_refund_core", "timestamp_core"]) == 0
    printed = capsys.readouterr().out
    assert "2 scenarios" in printed and "| harmless" in printed
    if bench.baseline_available():
        assert "observations='ignored'" in printed
    else:
        assert "baseline: n/a" in printed


def test_a_baseline_run_stands_in_brackets_beside_each_figure(tmp_path: Path) -> None:
    """Each cell shows the figure and, in brackets, the baseline's (observations ignored, as 0.2.0)."""
    reports = bench.run_all([BY_NAME["gold_refund_core"]], True, tmp_path)
    assert set(reports) == {(c, k) for c in ("narrow", "none") for k in ("now", "today")}
    row = next(line for line in bench.table(reports).splitlines() if line.startswith("| branches"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "0 (1)" and cells[4] == "0/2/0 (2/0/0)", row
