"""A replay is spared comparing an output only where an earlier replay passed the same output after the same history."""

from __future__ import annotations

from typing import Any

import pytest

from muscle_mem import Engine, MissReason
from muscle_mem.model._observations import Observer


def _flattened_outputs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The steps whose outputs are flattened (compared) from now on, noted as they are."""
    flattened: list[int] = []
    original = Observer.flatten

    def counting(self: Observer, step: int, output: Any) -> Any:
        flattened.append(step)
        return original(self, step, output)

    monkeypatch.setattr(Observer, "flatten", counting)
    return flattened


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
    flattened = _flattened_outputs(monkeypatch)
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


def _owners(world: dict[str, Any]) -> Engine:
    """A task with a declared param: read the owner of the user's ticket, answer with it."""
    engine = Engine()

    @engine.tool()
    def ticket_owner(user: str) -> Any:
        return world["owner"]

    def agent(task: str) -> str:
        return f"owner {ticket_owner(task.split()[-1])}"

    engine.set_agent(agent)
    return engine


def test_a_replay_with_the_same_params_is_spared_the_comparisons(monkeypatch: pytest.MonkeyPatch) -> None:
    """With params equal in type and value, the outputs an earlier replay passed are not compared again."""
    world: dict[str, Any] = {"owner": "u-100"}
    engine = _owners(world)
    engine("who owns the ticket of u-100", params={"user": "u-100"})
    assert engine("who owns the ticket of u-100", params={"user": "u-100"}).hit
    flattened = _flattened_outputs(monkeypatch)
    result = engine("who owns the ticket of u-100", params={"user": "u-100"})
    assert result.hit and result.output == "owner u-100"
    assert flattened == []


def test_a_remembered_output_with_other_params_is_compared() -> None:
    """An output passed with one user's params is judged anew with another's: the relation to the param is held.

    The recorded run read an owner equal to the user asked about; asked about another user whose
    ticket is still owned by the first, the relation flips, though that output passed before.
    """
    world: dict[str, Any] = {"owner": "u-100"}
    engine = _owners(world)
    engine("who owns the ticket of u-100", params={"user": "u-100"})
    assert engine("who owns the ticket of u-100", params={"user": "u-100"}).hit  # remembered with u-100
    result = engine("who owns the ticket of u-200", params={"user": "u-200"})
    assert not result.hit
    assert result.miss_reason is MissReason.OBSERVATION_CHANGED, result.reason


ACCOUNT = {"id": "acc-1", "plan": "Growth", "limits": [10, 2.5], "vip": False}


def _records(world: dict[str, Any]) -> Engine:
    """A task whose tool returns a record (a dict with a list), read by the agent."""
    engine = Engine()

    @engine.tool()
    def account() -> dict[str, Any]:
        return world["account"]

    @engine.tool()
    def notify(plan: str) -> str:
        return "sent"

    def agent(task: str) -> str:
        found = account()
        notify(found["plan"])
        return "done"

    engine.set_agent(agent)
    return engine


def test_a_record_passed_before_is_not_compared_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dict output equal, part by part and type by type, to one a replay passed after the same history is spared."""
    world: dict[str, Any] = {"account": dict(ACCOUNT, limits=[10, 2.5])}
    engine = _records(world)
    engine("notify the account")
    assert engine("notify the account").hit
    world["account"] = dict(ACCOUNT, limits=[10, 2.5])  # equal, not the same object
    flattened = _flattened_outputs(monkeypatch)
    assert engine("notify the account").hit
    assert flattened == []


@pytest.mark.parametrize(
    "changed",
    [
        {**ACCOUNT, "vip": 0},  # equal in Python: 0 == False
        {**ACCOUNT, "limits": [10.0, 2.5]},  # 10.0 == 10
        {**ACCOUNT, "limits": (10, 2.5)},  # a tuple, not a list
        {**ACCOUNT, "limits": [10, -2.5]},
        {"plan": "Growth", "id": "acc-1", "limits": [10, 2.5], "vip": False},  # another key order
    ],
)
def test_a_record_equal_only_in_python_is_compared(
    changed: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A record ``==`` to a remembered one but not part for part alike is compared, and judged as with nothing remembered."""
    remembering_world: dict[str, Any] = {"account": dict(ACCOUNT)}
    remembering = _records(remembering_world)
    remembering("notify the account")
    assert remembering("notify the account").hit  # the verdict on ACCOUNT is remembered
    fresh_world: dict[str, Any] = {"account": dict(ACCOUNT)}
    fresh = _records(fresh_world)
    fresh("notify the account")  # recorded, never replayed: nothing remembered
    flattened = _flattened_outputs(monkeypatch)
    remembering_world["account"] = fresh_world["account"] = changed
    with_memory = remembering("notify the account")
    assert flattened  # compared, not taken from the memory
    without = fresh("notify the account")
    assert (with_memory.hit, with_memory.miss_reason) == (without.hit, without.miss_reason)


def test_a_record_changed_in_place_after_a_replay_is_judged_changed() -> None:
    """The very object a replay passed, changed in place since, is not taken for what was remembered."""
    record = dict(ACCOUNT, limits=[10, 2.5])
    world: dict[str, Any] = {"account": record}
    engine = _records(world)
    engine("notify the account")
    assert engine("notify the account").hit
    record["plan"] = "Enterprise"  # the same object the edge passed, changed in place
    result = engine("notify the account")
    assert not result.hit and result.miss_reason is MissReason.OBSERVATION_CHANGED, result.reason
