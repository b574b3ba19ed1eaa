"""Secrets never reach the store, the events or the logs, and short or numeric secrets still let a run be stored."""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import pytest

from muscle_mem import Check, Engine, Secret, current_run
from muscle_mem.model.trajectory import to_record


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


def _payer(match: str) -> tuple[Engine, list[tuple[int, int]]]:
    """An engine whose agent reads the invoice number from the task text and the pin from a param."""
    engine = Engine(match=match)  # type: ignore[arg-type]
    paid: list[tuple[int, int]] = []

    @engine.tool()
    def pay(invoice: int, pin: int) -> str:
        paid.append((invoice, pin))
        return "paid"

    def agent(task: str) -> str:
        run = current_run()
        assert run is not None
        match_ = re.search(r"invoice (\d+)", task)
        assert match_ is not None
        pin = run.params["pin"]
        return pay(int(match_.group(1)), pin.get() if isinstance(pin, Secret) else pin)

    engine.set_agent(agent)
    return engine, paid


def test_a_secret_number_inside_a_longer_number_of_the_task_text_does_not_merge_tasks() -> None:
    """A secret number is templated in the task text only where it stands whole: with pin 4321 and 1234,
    ``pay invoice 43210`` and ``pay invoice 12340`` are two tasks."""
    engine, paid = _payer("exact")
    first = engine("pay invoice 43210 with the pin", params={"pin": Secret(4321)})
    assert first.stored
    paid.clear()
    engine("pay invoice 12340 with the pin", params={"pin": Secret(1234)})
    assert paid == [(12340, 1234)], paid


def test_redacting_a_short_secret_does_not_make_two_task_texts_equal() -> None:
    """A short secret is redacted from the task text only as a whole word, as the key templates it: with
    pins 5 and 6, ``pay invoice 512`` and ``pay invoice 612`` stay two texts for semantic matching."""
    engine, paid = _payer("semantic")
    first = engine("pay invoice 512 with the pin", params={"pin": Secret(5)})
    assert first.stored
    paid.clear()
    engine("pay invoice 612 with the pin", params={"pin": Secret(6)})
    assert paid == [(612, 6)], paid


def _all_text(store: Any) -> str:
    """Everything a store holds that a report or export could show: records, task texts, events."""
    parts = [json.dumps(to_record(t)) for s in store.summaries() if (t := store.get(s.id)) is not None]
    parts += list(store.tasks().values())
    parts += [repr(e) for e in store.events()]
    return "\n".join(parts)


def test_a_secret_in_a_replayed_tool_error_is_redacted_from_reason_events_and_logs(
    logs: pytest.LogCaptureFixture,
) -> None:
    """A replayed tool whose exception names its secret argument leaves the secret out of
    ``Result.reason``, the events and the logs."""
    engine = Engine()
    failures = {"left": 0}

    @engine.tool()
    def login(password: str) -> str:
        if failures["left"]:
            failures["left"] -= 1
            raise PermissionError(f"login refused for password {password!r}")
        return "session"

    current = {"pw": "first-horse-staple"}

    def agent(task: str) -> str:
        try:
            return login(current["pw"])
        except PermissionError:
            return login(current["pw"])  # the agent tries once more

    engine.set_agent(agent)
    assert engine("log in", params={"password": Secret(current["pw"])}).stored
    current["pw"] = "second-battery-staple"
    failures["left"] = 1  # the replayed call fails once; the agent gets its error, then succeeds
    result = engine("log in", params={"password": Secret(current["pw"])})
    engine.journal.flush()
    assert "second-battery-staple" not in (result.reason or "")
    assert "second-battery-staple" not in _all_text(engine.store)
    assert not any("second-battery-staple" in r.getMessage() for r in logs.records)


def test_a_secret_inside_a_container_argument_is_redacted_from_the_task_text(
    logs: pytest.LogCaptureFixture,
) -> None:
    """A secret inside a dict agent argument is redacted from the task text, so neither the store, the
    events nor the logs show it."""
    engine = Engine()

    @engine.tool()
    def noop(x: str) -> str:
        return x

    engine.set_agent(lambda creds: noop("ok-value"))
    engine({"user": "bob", "password": "s3cret-pass"}, params={"password": Secret("s3cret-pass")})
    engine.journal.flush()
    assert "s3cret-pass" not in _all_text(engine.store)
    assert not any("s3cret-pass" in r.getMessage() for r in logs.records)


def test_a_numeric_secret_in_the_task_string_never_reaches_the_tasks_table() -> None:
    """A numeric secret written in the task text (``pin 987654``) never reaches the tasks table, the
    trajectory record or the events."""
    engine = Engine()

    @engine.tool()
    def noop(x: str) -> str:
        return x

    engine.set_agent(lambda task: noop("ok-value"))
    engine("open the vault with pin 987654", params={"pin": Secret(987654)})
    engine.journal.flush()
    assert "987654" not in _all_text(engine.store)


def test_a_secret_under_a_bookkeeping_named_key_is_never_stored() -> None:
    """A secret in user data under a key named like a bookkeeping field (a snapshot ``{"id": token}``) is
    seen as a secret and never stored."""
    engine = Engine()
    token = "tok-abcdef123456"

    @engine.tool(pre_check=Check.equal(lambda token: {"id": token}))
    def use(token: str) -> str:
        return "done"

    engine.set_agent(lambda task: use(token))
    engine("use the token", params={"token": Secret(token)})
    assert token not in _all_text(engine.store)


@pytest.mark.parametrize(
    "secret",
    [b"supersecretkey99", 2**60 + 12345],
    ids=["bytes", "big-int"],
)
def test_a_secret_the_codec_encodes_is_still_recognised(secret: Any) -> None:
    """A secret the codec stores in another form (bytes as base64, ints beyond 2**53 as hex) is still
    recognised: a snapshot equal to it is never stored."""
    engine = Engine()

    @engine.tool(pre_check=Check.equal(lambda k: k))
    def sign(k: Any) -> str:
        return "signed"

    engine.set_agent(lambda task: sign(secret))
    result = engine("sign it", params={"k": Secret(secret)})
    assert not result.stored, "a snapshot equal to the secret was stored"
    for summary in engine.store.summaries():
        trajectory = engine.store.get(summary.id)
        assert trajectory is not None
        assert all(s.pre is None or s.pre.value != secret for s in trajectory.steps)


def test_a_secret_in_a_capture_error_is_redacted_from_the_logs(logs: pytest.LogCaptureFixture) -> None:
    """A pre-check capture whose exception names its secret argument leaves the secret out of the logs."""
    engine = Engine()

    def capture(password: str) -> str:
        raise RuntimeError(f"cannot read state for {password}")

    @engine.tool(pre_check=Check.equal(capture))
    def login(password: str) -> str:
        return "ok"

    engine.set_agent(lambda task: login("p4ssw0rd-xyz"))
    engine("log in", params={"password": Secret("p4ssw0rd-xyz")})
    assert not any("p4ssw0rd-xyz" in r.getMessage() for r in logs.records)
