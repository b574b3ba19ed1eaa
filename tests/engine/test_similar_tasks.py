"""A similar task is a candidate, never a replay on the guard's word: the agent solves it, its run is compared."""

from __future__ import annotations

import pytest

import semantic_pairs
from muscle_mem import Check, Engine, MissReason


def test_a_similar_task_is_a_candidate_the_agent_runs_and_then_its_own_text_replays() -> None:
    """A paraphrase of a stored task is never replayed on the guard's word: the agent solves it, its
    run is compared with the stored one and stored under its own text, which replays from then on."""
    engine = Engine(match="semantic")
    state = {"form": "open"}
    typed: list[str] = []

    @engine.tool(pre_check=Check.equal(lambda text: state["form"]))
    def type_name(text: str) -> None:
        typed.append(text)

    def agent(task: str, name: str) -> str:
        type_name(name)
        return "done"

    engine.set_agent(agent)
    engine("please fill in the form for Ada", "Ada", params={"name": "Ada"})
    candidate = engine("fill in the form for Bob", "Bob", params={"name": "Bob"})
    assert not candidate.hit and candidate.miss_reason is MissReason.SIMILAR_TASK
    assert "'please fill in the form for {name}, {name}' is only a candidate" in (candidate.reason or "")
    assert candidate.stored and typed == ["Ada", "Bob"]
    assert (engine.metrics.similar_agreed, engine.metrics.similar_disagreed) == (1, 0)
    assert engine("fill in the form for Cy", "Cy", params={"name": "Cy"}).hit
    state["form"] = "closed"  # the check still decides every step
    miss = engine("fill in the form for Di", "Di", params={"name": "Di"})
    assert not miss.hit and "pre-check" in (miss.reason or "")


def test_a_similar_task_whose_agent_does_otherwise_is_counted_as_a_disagreement() -> None:
    """When the agent's run of the similar text differs (here the guard merges two meanings that
    differ in a word it drops), the count says a replay would have been wrong, and nothing replayed."""
    engine = Engine(match="semantic")
    cancelled: list[str] = []

    @engine.tool()
    def cancel(when: str) -> None:
        cancelled.append(when)

    def agent(task: str) -> str:
        cancel("now" if task.endswith("now") else "at the end of the period")
        return "cancelled"

    engine.set_agent(agent)
    engine("cancel my subscription")
    result = engine("cancel my subscription now")
    assert not result.hit and result.miss_reason is MissReason.SIMILAR_TASK
    assert cancelled == ["at the end of the period", "now"]
    assert (engine.metrics.similar_agreed, engine.metrics.similar_disagreed) == (0, 1)
    assert engine("cancel my subscription now").hit and cancelled[-1] == "now"


@pytest.mark.parametrize(("first", "second", "same"), semantic_pairs.HELD_OUT)
def test_no_pair_kept_out_of_the_guards_tuning_is_replayed(first: str, second: str, same: bool) -> None:
    """Whatever the guard says of two texts, the second is solved by the agent the first time it comes."""
    engine = Engine(match="semantic")
    act = engine.register(lambda meant: meant, name="act")
    engine.set_agent(lambda task: act("first" if task == first or same else "second"))
    engine(first)
    result = engine(second)
    assert not result.hit and result.steps_replayed == 0
    assert result.miss_reason in (MissReason.SIMILAR_TASK, MissReason.NO_TRAJECTORY)
    assert engine.metrics.similar_disagreed == 0 or not same
