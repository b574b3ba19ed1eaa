"""A replay is spared comparing an output only where an earlier replay passed the same output after the same history."""

from __future__ import annotations

from typing import Any

import pytest

from muscle_mem import Engine, MissReason
from muscle_mem.model._observations import Observer


def _desk(world: dict[str, Any]) -> Engine:
    """A task that looks up the current user, then reads the owner of their ticket and answers with it."""
    engine = Engine()

    @engine.tool()
    def current_user() -> str:
        return str(world["user"])

    @engine.tool()
    def ticket_owner(user: str) -> Any:
        return world["owner"]

    def agent(task: str) -> str:
        user = current_user()
        owner = ticket_owner(user)
        return f"owner {owner}"

    engine.set_agent(agent)
    return engine


def test_the_same_outputs_replay_again_without_being_compared_anew(monkeypatch: pytest.MonkeyPatch) -> None:
    """The second replay of identical outputs reaches the verdicts the first did, and flattens none of them."""
    world: dict[str, Any] = {"user": "u-100", "owner": "u-100"}
    engine = _desk(world)
    assert not engine("who owns my ticket").hit
    assert engine("who owns my ticket").hit
    flattened: list[int] = []
    original = Observer.flatten

    def counting(self: Observer, step: int, output: Any) -> Any:
        flattened.append(step)
        return original(self, step, output)

    monkeypatch.setattr(Observer, "flatten", counting)
    result = engine("who owns my ticket")
    assert result.hit and result.output == "owner u-100"
    assert flattened == []


def test_a_remembered_output_after_another_history_is_compared() -> None:
    """An output an earlier replay passed is judged anew when what came before it differs.

    The owner read is the user looked up in the recorded run; a new user whose ticket is owned by the
    old one breaks that relation, though the owner is the very value an earlier replay passed.
    """
    world: dict[str, Any] = {"user": "u-100", "owner": "u-100"}
    engine = _desk(world)
    engine("who owns my ticket")
    assert engine("who owns my ticket").hit  # the verdict on ("u-100", "u-100") is remembered
    world["user"] = "u-200"
    result = engine("who owns my ticket")
    assert not result.hit
    assert result.miss_reason is MissReason.OBSERVATION_CHANGED, result.reason


def test_an_equal_output_of_another_type_is_compared() -> None:
    """``True`` after a remembered ``1`` (equal in Python) is compared as what it is: another observation."""
    world: dict[str, Any] = {"user": "u-100", "owner": 1}
    engine = _desk(world)
    engine("who owns my ticket")
    assert engine("who owns my ticket").hit
    world["owner"] = True
    result = engine("who owns my ticket")
    assert not result.hit
    assert result.miss_reason is MissReason.OBSERVATION_CHANGED, result.reason
