"""Smoke test of the side-by-side benchmark's workload and report, against our engine only.

The benchmark itself (benchmarks/bench_vs_010.py) also runs the workload under muscle-mem 0.1.0 in
its own virtual environment; here nothing is installed: the same workload code runs on this project.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        name, BENCHMARKS / f"{name}.py" if name.startswith("bench_") else BENCHMARKS / "_lib" / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


workload = _load("vs010_workload")
driver = _load("bench_vs_010")

SMALL = [
    "--sizes",
    "1",
    "12",
    "--repeat",
    "5",
    "--budget",
    "0",
    "--miss-samples",
    "2",
    "--record-calls",
    "200",
]


@pytest.mark.parametrize("variant", ["plain", "equal"])
def test_hits_and_misses_are_measured(variant: str) -> None:
    row = workload.measure_size(variant, 12, repeat=5, budget=0.0, miss_samples=3)
    assert row["variant"] == variant and row["size"] == 12
    assert row["hit_repeats"] == 5 and row["miss_samples"] >= 3 and row["oldest_samples"] == 3
    assert row["hit_us"] > 0 and row["miss_us"] > 0 and row["oldest_hit_us"] > 0
    assert not row["fast_fill"]


def test_the_fast_fill_stores_what_real_misses_would(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(workload, "FULL_FILL_LIMIT", 4)
    work, timed, _ = workload.filled("plain", 9, 2)
    assert len(timed) == 2
    assert len(work.engine.store) == 9
    for state in (8, 0, 5):  # the last recorded, the oldest, one in between
        work.env["state"] = state
        result = work.engine(workload.TASK, tags=list(workload.TAGS))
        assert result.hit and result.steps_replayed == workload.STEPS
    work.env["state"] = 9  # never recorded: a miss, which the agent handles
    calls = len(work.agent_calls)
    assert not work.run() and len(work.agent_calls) == calls + 1


def test_a_hit_replays_without_the_agent_and_the_bodies_match() -> None:
    work, _, _ = workload.filled("equal", 3, 1)
    work.env["state"] = 2
    calls = len(work.agent_calls)
    result = work.engine(workload.TASK, tags=list(workload.TAGS))
    assert result.hit and len(work.agent_calls) == calls
    assert result.output == sum(body(7) for body in work.bodies)


def test_recording_overhead_is_measured() -> None:
    figures = workload.record_overhead(400, batch=50, runs=5)
    assert set(figures) == {"no_check_us", "pre_check_us", "end_to_end_us"}
    assert all(isinstance(v, float) for v in figures.values())


def test_our_engine_passes_every_clock_free_check() -> None:
    results = workload.correctness(None)
    assert set(results) == set(workload.CHECKS)
    failed = {name: r["detail"] for name, r in results.items() if not r["passed"]}
    assert not failed


def test_a_check_that_goes_otherwise_is_reported_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> Any:
        raise RuntimeError("boom")

    monkeypatch.setattr(workload, "CHECKS", {"broken": broken})
    assert workload.correctness(None) == {
        "broken": {"passed": False, "detail": "raised RuntimeError('boom')"}
    }


def test_the_workload_prints_only_its_json() -> None:
    result = driver.run_workload(Path(sys.executable), [*SMALL, "--no-timed-checks"])
    assert result["flavor"] == "ours" and result["module"].startswith(str(BENCHMARKS.parent / "src"))
    assert [(r["size"], r["variant"]) for r in result["hits"]] == [
        (1, "plain"),
        (1, "equal"),
        (12, "plain"),
        (12, "equal"),
    ]
    assert all(r["passed"] for r in result["checks"].values())


def test_the_report_renders(tmp_path: Path) -> None:
    ours = workload.main([*SMALL, "--no-timed-checks"])
    json.dumps(ours)  # what the worker prints must be JSON
    old = copy.deepcopy(ours)
    old.update(flavor="0.1.0", version="0.1.0", hits=[r for r in old["hits"] if r["variant"] == "plain"])
    old["checks"]["tags bucket tasks"] = {"passed": False, "detail": "hits [False, True | x]"}

    hits = driver.hit_table(old, ours)
    assert len(hits) == 2 + 2 and hits[2].startswith("| 1 |") and hits[3].startswith("| 12 |")
    assert "1.0×" in hits[2]  # the same figures on both sides: ratio 1
    checks = driver.check_table(old, ours)
    assert len(checks) == 2 + len(workload.CHECKS)
    tags_row = next(line for line in checks if line.startswith("| tags bucket tasks"))
    assert "**fail**" in tags_row and "0.1.0: hits [False, True / x]" in tags_row
    assert len(driver.record_table(old, ours)) == 2 + 3
    text = driver.markdown(old, ours, 1.0)
    assert "## Correctness" in text and "vs_010.png" in text

    pytest.importorskip("matplotlib")
    driver.plot(old, ours, tmp_path / "vs.png")
    assert (tmp_path / "vs.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_reference_environment_is_checked_not_assumed(tmp_path: Path) -> None:
    assert not driver.has_reference(tmp_path / "missing" / "bin" / "python")
    assert not driver.has_reference(Path(sys.executable))  # our interpreter has muscle-mem 0.2, not 0.1.0
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "bench_vs_010.py"), "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--quick" in done.stdout


def test_partial_results_merge_in_order() -> None:
    first = workload.main([*SMALL[:3], "--repeat", "5", "--budget", "0", "--parts", "hits"])
    merged = driver.merge(
        driver.merge({}, first), {"hits": [{"variant": "plain", "size": 99}], "checks": {"x": {}}}
    )
    assert [r["size"] for r in merged["hits"]] == [1, 1, 12, 12, 99]
    assert merged["checks"] == {"x": {}} and merged["flavor"] == "ours" and "record" not in merged


@pytest.mark.slow
def test_the_workload_runs_on_0_1_0_too_when_its_environment_exists() -> None:
    python = driver.venv_python(driver.VENV)
    if not driver.has_reference(python):
        pytest.skip(
            f"no muscle-mem 0.1.0 environment at {driver.VENV} (python benchmarks/bench_vs_010.py makes it)"
        )
    result = driver.run_workload(python, [*SMALL, "--no-timed-checks"])
    assert result["flavor"] == "0.1.0" and [r["variant"] for r in result["hits"]] == ["plain", "plain"]
    assert not result["checks"]["another task is not replayed (john → erik)"]["passed"]
    assert set(result["record"]) == {"no_check_us", "pre_check_us", "end_to_end_us"}


def test_a_size_measured_in_two_rounds_keeps_the_lower_medians() -> None:
    row = {"variant": "plain", "size": 10, "hit_us": 5.0, "oldest_hit_us": None, "miss_us": 9.0}
    row |= {"hit_repeats": 300, "hit_repeats_capped": False, "fill_seconds": 1.0, "miss_samples": 15}
    again = row | {
        "hit_us": 4.0,
        "oldest_hit_us": 7.0,
        "miss_us": 11.0,
        "hit_repeats": 20,
        "hit_repeats_capped": True,
    }
    merged = driver.merge(
        driver.merge({}, {"hits": [row], "record": {"no_check_us": 3.0}}),
        {"hits": [again], "record": {"no_check_us": 2.0}},
    )
    (combined,) = merged["hits"]
    assert (combined["hit_us"], combined["oldest_hit_us"], combined["miss_us"]) == (4.0, 7.0, 9.0)
    assert (combined["hit_repeats"], combined["hit_repeats_capped"], combined["rounds"]) == (320, True, 2)
    assert merged["record"] == {"no_check_us": 2.0}
    (third,) = driver.merge(merged, {"hits": [row]})["hits"]
    assert third["rounds"] == 3 and third["hit_repeats"] == 620 and third["hit_us"] == 4.0
