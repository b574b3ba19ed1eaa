"""Every scenario, in both check modes, judged against the agent alone on a copy of its world."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from . import ATTACKS, BY_NAME, SCENARIOS
from .harness import CHECK_MODES, CheckMode, Report, run_scenario
from .proven import Proven

FRAMEWORKS = {
    "langchain": "langgraph",
    "pydantic_ai": "pydantic_ai",
    "mcp_proxy": "mcp",
    "openai_agents": "agents",
    "smolagents": "smolagents",
}
CLASSES = {
    "branches",
    "loops",
    "computed",
    "choices",
    "params",
    "relations",
    "context",
    "identities",
    "task_w1_1",
    "mcp_proxy",
    "harmless",
}
_REPORTS: dict[tuple[str, CheckMode], Report] = {}


@pytest.fixture(scope="session")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("soundness")


def report_of(name: str, checks: CheckMode, store_dir: Path) -> Report:
    """The scenario's report with the engine's defaults (run once per session)."""
    scenario = BY_NAME[name]
    needs = FRAMEWORKS.get(scenario.front)
    if needs is not None and importlib.util.find_spec(needs) is None:
        pytest.skip(f"{scenario.front} is not installed")
    key = (name, checks)
    if key not in _REPORTS:
        _REPORTS[key] = run_scenario(scenario, checks, {}, store_dir)
    return _REPORTS[key]


JUDGED = [s.name for s in SCENARIOS if s.hidden_state is None]
HIDDEN = [s.name for s in SCENARIOS if s.hidden_state is not None]
HARMLESS = [s.name for s in SCENARIOS if any(p.harmless for p in s.probes) and s.tradeoff is None]


@pytest.mark.parametrize("checks", CHECK_MODES)
@pytest.mark.parametrize("name", JUDGED)
def test_no_run_ends_unlike_the_agent_alone(name: str, checks: CheckMode, store_dir: Path) -> None:
    """No run (recording or probe) leaves a world or an answer the agent alone would not have."""
    report = report_of(name, checks, store_dir)
    assert not report.unsafe, "\n".join(o.describe() for o in report.unsafe)


@pytest.mark.parametrize("checks", CHECK_MODES)
@pytest.mark.parametrize("name", HARMLESS)
def test_harmless_variation_replays_in_full(name: str, checks: CheckMode, store_dir: Path) -> None:
    """A probe a replay would get right (noise, an identity, the same task again) is a full hit."""
    report = report_of(name, checks, store_dir)
    assert not report.needless, "\n".join(o.describe() for o in report.needless)


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_proven_mode_replays_no_family_that_disagreed_in_shadow(name: str, store_dir: Path) -> None:
    """With proof=1 and no checks, a family replays only after an agreement, never after a disagreement,
    and no run ends unlike the agent alone: not even where state no tool output shows steers the agent."""
    scenario = BY_NAME[name]
    needs = FRAMEWORKS.get(scenario.front)
    if needs is not None and importlib.util.find_spec(needs) is None:
        pytest.skip(f"{scenario.front} is not installed")
    report = run_scenario(scenario, "none", {"mode": "proven", "proof": 1}, store_dir)
    tally = Proven()
    tally.add(name, report.events, 1, len(report.unsafe))
    assert tally.shadow_runs > 0
    assert (tally.unproven_replays, tally.replays_after_disagreement) == (0, 0)
    assert not report.unsafe, "\n".join(o.describe() for o in report.unsafe)


TRADEOFFS = [s.name for s in SCENARIOS if s.tradeoff is not None]


@pytest.mark.parametrize("name", TRADEOFFS)
def test_a_tradeoff_scenario_has_harmless_probes_and_says_why(name: str, store_dir: Path) -> None:
    """A harmless probe a sound engine must miss names why; its needless misses are counted, not failed."""
    report = report_of(name, "none", store_dir)
    assert BY_NAME[name].tradeoff and any(o.harmless for o in report.probes)


@pytest.mark.parametrize("name", HIDDEN)
def test_a_hidden_state_scenario_says_why_and_is_judged(name: str, store_dir: Path) -> None:
    """A scenario no principle can pass names the state no tool output shows, and still runs."""
    report = report_of(name, "none", store_dir)
    assert BY_NAME[name].hidden_state and report.probes


def test_the_suite_covers_every_class_a_third_of_it_through_frameworks() -> None:
    """At least 60 scenarios over every class, a third through LangChain and pydantic-ai."""
    assert len(SCENARIOS) >= 60
    assert {s.cls for s in SCENARIOS} == CLASSES
    framed = [s for s in SCENARIOS if s.front in ("langchain", "pydantic_ai")]
    assert {s.front for s in SCENARIOS} == {
        "core",
        "langchain",
        "pydantic_ai",
        "mcp_proxy",
        "openai_agents",
        "smolagents",
    }
    assert 3 * len(framed) >= len(SCENARIOS)
    assert all(s.probes and s.records for s in SCENARIOS)


@pytest.mark.parametrize("checks", CHECK_MODES)
@pytest.mark.parametrize("name", [s.name for s in ATTACKS])
def test_an_independent_attack_ends_no_run_unlike_the_agent_alone(
    name: str, checks: CheckMode, store_dir: Path
) -> None:
    """No run of an attacker's scenario leaves a world or an answer the agent alone would not have."""
    report = report_of(name, checks, store_dir)
    assert not report.unsafe, "\n".join(o.describe() for o in report.unsafe)
