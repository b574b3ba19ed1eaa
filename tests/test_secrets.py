"""Secrets never reach the store, and short or numeric secrets still let a run be stored."""

from __future__ import annotations

import functools
import json

import pytest

from muscle_mem import Engine, Secret
from muscle_mem.trajectory import to_record


def _records(engine: Engine) -> str:
    return json.dumps([to_record(engine.store.get(s.id)) for s in engine.store.summaries()])  # type: ignore[arg-type]


def test_a_short_numeric_secret_passed_as_a_param_is_stored_as_a_reference() -> None:
    engine = Engine()
    calls: list[tuple[str, int]] = []

    @engine.tool()
    def unlock(user: str, pin: int) -> str:
        calls.append((user, pin))
        return "unlocked"

    engine.set_agent(lambda task, user, pin: unlock(user, pin))
    first = engine("unlock the door", "ada", 7, params={"user": "ada", "pin": Secret(7)})
    assert first.stored
    assert '"param": "pin"' in _records(engine)
    second = engine("unlock the door", "bob", 4, params={"user": "bob", "pin": Secret(4)})
    assert second.hit and calls[-1] == ("bob", 4)


def test_a_secret_passed_in_another_case_is_a_param_in_that_form_never_its_value(
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine = Engine()
    shouted: list[str] = []

    @engine.tool()
    def shout(text: str) -> str:
        shouted.append(text)
        return text

    engine.set_agent(lambda task, word: shout(word.upper()))
    first = engine("shout it", "hunter22", params={"word": Secret("hunter22")})
    assert first.output == "HUNTER22" and first.stored
    assert "hunter22" not in json.dumps(to_record(engine.store.get(first.trajectory_id))).casefold()
    second = engine("shout it", "swordfish", params={"word": Secret("swordfish")})
    assert second.hit and second.output == "SWORDFISH" and shouted == ["HUNTER22", "SWORDFISH"]
    assert "hunter22" not in caplog.text.casefold()


def test_partials_and_callable_objects_get_stable_default_names() -> None:
    engine = Engine()

    def send(channel: str, text: str) -> str:
        return f"{channel}:{text}"

    class Notifier:
        def __call__(self, text: str) -> str:
            return text

    partial_tool = engine.register(functools.partial(send, "ops"))
    object_tool = engine.register(Notifier())
    engine.set_agent(lambda task: (partial_tool("hi"), object_tool("there")))
    engine("notify")
    names = [step.tool for step in engine.store.get(next(engine.store.summaries()).id).steps]  # type: ignore[union-attr]
    assert names == [
        "send",
        "Notifier",
    ]
