"""The AgentDojo replay-safety harness on a few tasks (skipped when agentdojo is not installed)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import bench_agentdojo as bench
from _lib import agentdojo_harness as harness
from _lib import agentdojo_perturb as perturb

harness.freeze_clock()
VERSION, SUITES = harness.load_suites()


def _args(checks: str = "all") -> argparse.Namespace:
    return argparse.Namespace(quick=True, no_params=False, checks=checks)


@pytest.mark.parametrize("suite", ["banking", "workspace"])
def test_recorded_tasks_replay_in_full_on_the_same_environment_and_safely_after_perturbations(
    suite: str,
) -> None:
    """Each recorded task is a full hit on a fresh copy of its environment, and no run ends unlike the oracle's."""
    unsafe: list[bench.Unsafe] = []
    tally = bench.run_suite(suite, SUITES[suite], _args(), unsafe)
    assert tally.tasks == bench.QUICK_TASKS
    assert tally.stored == tally.tasks
    assert tally.reuse == tally.tasks
    assert tally.runs == tally.tasks * len(perturb.PERTURBATIONS[suite]) - tally.skipped
    assert tally.hits + tally.partial + tally.misses == tally.runs
    assert unsafe == [] and tally.unsafe == 0


def test_two_runs_on_equal_environments_end_in_equal_environments() -> None:
    """The pinned clock makes the e-mails and files a task writes the same in every run."""
    suite = SUITES["workspace"]
    task = (
        suite.user_tasks["user_task_13"]
        if "user_task_13" in suite.user_tasks
        else next(iter(suite.user_tasks.values()))
    )
    base = suite.load_and_inject_default_environment({})
    first, second = base.model_copy(deep=True), base.model_copy(deep=True)
    calls = harness.plan(task, base)
    assert harness.run_alone(suite, calls, first) == harness.run_alone(suite, calls, second)
    assert harness.plain(first) == harness.plain(second)


def test_params_are_the_ground_truth_values_the_prompt_spells_out() -> None:
    """A value becomes a param only where the prompt has it whole (100 is not inside 1000)."""
    calls = [
        harness.planned(
            "send_money", {"recipient": "GB29NWBK60161331926819", "amount": 100.0, "date": "2022-03-01"}
        ),
        harness.planned("get_most_recent_transactions", {"n": 100}),
    ]
    found = harness.params_for("Send 1000 to GB29NWBK60161331926819 on 2022-03-01.", calls)
    assert found == {"p0": "2022-03-01", "p1": "GB29NWBK60161331926819"}


def test_a_perturbation_changes_what_a_read_returns() -> None:
    """Adding a transaction changes the history a read returns, so its pre-check tells the two apart."""
    suite = SUITES["banking"]
    env = suite.load_and_inject_default_environment({})
    before = harness.run_alone(suite, [harness.planned("get_most_recent_transactions", {"n": 100})], env)
    perturb.banking_new_transactions(env)
    after = harness.run_alone(suite, [harness.planned("get_most_recent_transactions", {"n": 100})], env)
    assert harness.plain(before) != harness.plain(after)


def test_shadow_mode_replays_nothing_and_agrees_where_a_replay_would_hit() -> None:
    """In shadow mode the oracle runs every time; each run a replay would have hit in full is an agreement."""
    replay_args, shadow_args = _args(), _args()
    shadow_args.mode = "shadow"
    replayed = bench.run_suite("banking", SUITES["banking"], replay_args, [])
    shadowed = bench.run_suite("banking", SUITES["banking"], shadow_args, [])
    assert shadowed.reuse == shadowed.hits == shadowed.partial == 0
    assert shadowed.agreed + shadowed.disagreed + shadowed.shadow_missed == shadowed.tasks + shadowed.runs
    assert shadowed.disagreed == 0 and shadowed.unsafe == 0
    assert shadowed.agreed == replayed.reuse + replayed.hits
