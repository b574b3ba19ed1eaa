"""The public surface: the names the package exports, the run an agent sees, errors, names, logs."""

from __future__ import annotations

import logging
import warnings
from typing import Any

import pytest

import muscle_mem
from muscle_mem import (
    CodecError,
    Engine,
    MuscleMemError,
    RecordError,
    RunView,
    StoreError,
    current_run,
)
from muscle_mem.model.trajectory import from_record


def test_every_exported_name_is_importable() -> None:
    assert all(hasattr(muscle_mem, name) for name in muscle_mem.__all__)


def test_the_run_an_agent_sees_is_a_read_only_view() -> None:
    engine = Engine()
    seen: list[RunView] = []

    @engine.tool()
    def lookup(email: str) -> dict[str, str]:
        return {"id": "usr_1"}

    def agent(task: str, email: str) -> str:
        lookup(email)
        run = current_run()
        assert run is not None
        seen.append(run)
        run.tokens += 120
        with pytest.raises(AttributeError):
            run.task = "something else"  # type: ignore[misc]
        with pytest.raises(TypeError):
            run.params["email"] = "eve@example.com"  # type: ignore[index]
        return str(run.steps[0].output["id"])

    engine.set_agent(agent)
    result = engine("find", "ann@example.com", params={"email": "ann@example.com"})
    view = seen[0]
    assert result.output == "usr_1" and view.engine is engine
    assert view.task == "find, {email}" and view.params == {"email": "ann@example.com"}
    assert [(s.tool, s.args, s.replayed) for s in view.steps] == [("lookup", ("ann@example.com",), False)]
    assert engine.metrics.agent_tokens == 120


def test_an_agent_resumes_from_the_steps_by_their_plain_tool_names() -> None:
    """A tool defined inside a function is named after itself, as the agent calls it."""
    engine = Engine()
    made: list[str] = []

    def build() -> Any:
        @engine.tool()
        def reserve(room: str) -> str:
            made.append(room)
            return f"R-{room}"

        return reserve

    reserve = build()

    def agent(task: str) -> str:
        run = current_run()
        done = {s.tool: s.output for s in run.steps} if run is not None else {}
        return str(done["reserve"] if "reserve" in done else reserve("r7"))

    engine.set_agent(agent)
    assert engine("reserve a room").output == "R-r7"
    assert engine("reserve a room").hit and made == ["r7", "r7"]


def test_the_library_errors_share_one_base() -> None:
    for error in (CodecError, StoreError, RecordError):
        assert issubclass(error, MuscleMemError)
    with pytest.raises(MuscleMemError):
        from_record({"format": 99})


def test_log_messages_carry_no_hand_written_prefix(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="muscle_mem")
    engine = Engine()

    @engine.tool()
    def close(ticket: str) -> str:
        return "closed"

    engine.set_agent(lambda task: close("T-1"))
    engine("close T-1")
    engine("close T-1")
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("muscle_mem")]
    assert messages and not any(m.startswith("muscle_mem") for m in messages)


def test_a_tool_of_another_engine_called_inside_a_run_is_named_once_in_the_log(
    caplog: pytest.LogCaptureFixture,
) -> None:
    shop, other = Engine(), Engine()

    @other.tool()
    def audit(what: str) -> str:
        return "audited"

    @shop.tool()
    def charge(amount: int) -> str:
        return "charged"

    shop.set_agent(lambda task: (audit("charge"), charge(25))[1])
    shop("charge 25")
    shop("charge 25 again")
    notes = [r for r in caplog.records if "belongs to another engine" in r.getMessage()]
    assert len(notes) == 1 and notes[0].levelno == logging.WARNING and "'audit'" in notes[0].getMessage()


def test_pydantic_outputs_raise_no_deprecation_warning() -> None:
    pydantic = pytest.importorskip("pydantic")

    class Order(pydantic.BaseModel):  # type: ignore[misc, name-defined]
        id: str
        total: int

    engine = Engine()

    @engine.tool()
    def get_order(number: int) -> Any:
        return Order(id=f"ord-{number}", total=10)

    @engine.tool()
    def refund(order_id: str) -> str:
        return "refunded"

    engine.set_agent(lambda task, number: refund(get_order(number).id))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine("refund", 1, params={"number": 1})
        assert engine("refund", 2, params={"number": 2}).hit
