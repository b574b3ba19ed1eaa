"""A full hit renews what a plain-compare pre-check is judged against, in this process only."""

from __future__ import annotations

from pathlib import Path

import pytest

from muscle_mem import Check, Engine


class Clock:
    def __init__(self) -> None:
        self.now = 0.0


def within_a_second(current: float, candidate: float) -> bool:
    return current - candidate <= 1.0


def window_engine(
    clock: Clock, store: str | None = None, *, renew: bool = True, **options: object
) -> tuple[Engine, list[str]]:
    """An engine whose one tool's pre-check passes within one second of the candidate snapshot."""
    engine = Engine(store, **options)  # type: ignore[arg-type]
    agent_runs: list[str] = []

    @engine.tool(name="greet", pre_check=Check(lambda name: clock.now, within_a_second, renew=renew))
    def greet(name: str) -> str:
        return f"hello {name}"

    def agent(name: str) -> str:
        agent_runs.append(name)
        return greet(name)

    engine.set_agent(agent)
    return engine, agent_runs


def test_a_hit_within_the_window_moves_the_window_to_the_hit() -> None:
    clock = Clock()
    engine, agent_runs = window_engine(clock)
    assert not engine("ada")
    clock.now = 0.9
    assert engine("ada")
    clock.now = 1.8  # 1.8 s after the recording, 0.9 s after the hit
    assert engine("ada")
    clock.now = 3.0  # 1.2 s after the last hit
    assert not engine("ada")
    assert agent_runs == ["ada", "ada"]  # the agent ran only on the misses


def test_renew_false_counts_the_window_from_the_agents_run() -> None:
    clock = Clock()
    strict, _ = window_engine(clock, renew=False)
    assert not strict("ada")
    clock.now = 0.9
    assert strict("ada")
    clock.now = 1.8
    assert not strict("ada")


def test_ignored_observations_do_not_renew() -> None:
    clock = Clock()
    engine, _ = window_engine(clock, observations="ignored")
    assert not engine("ada")
    clock.now = 0.9
    assert engine("ada")
    clock.now = 1.8
    assert not engine("ada")


def test_a_new_engine_on_the_same_store_judges_against_the_recording(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'cache.db'}"
    clock = Clock()
    first, _ = window_engine(clock, url)
    assert not first("ada")
    clock.now = 0.9
    assert first("ada")
    first.close()
    second, _ = window_engine(clock, url)
    clock.now = 1.8
    result = second("ada")
    assert not result and "pre-check" in (result.reason or "")


def test_an_equality_check_never_renews() -> None:
    assert Check.equal(lambda: 1).renew is False


def test_renew_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="renew must be True or False"):
        Check(lambda: 1, lambda a, b: True, renew=1)  # type: ignore[arg-type]
