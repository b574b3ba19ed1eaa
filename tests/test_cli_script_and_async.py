"""The CLI (export --python, import) and the async path, found in review: each test failed before
its fix (the docstrings say what went wrong)."""

from __future__ import annotations

import asyncio
import datetime
import json
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cli_support import run_cli
from muscle_mem import Check, Engine, NotStoredReason


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _load_function(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<export>", "exec"), namespace)
    functions = [v for k, v in namespace.items() if callable(v) and not k.startswith("__")]
    assert len(functions) == 1
    return functions[0]


# async path


async def test_a_tool_call_still_in_flight_when_the_agent_returns_keeps_the_run_from_being_stored() -> None:
    """The agent starts a tool with ``asyncio.create_task`` and returns before it finishes. The call
    completes after the run has ended, so the stored trajectory lacks it (recording.py appends a call
    only when it completes, and ``Run.recording`` is never switched off: the late call is appended to
    a run that is already stored). The next call of the task is then a full hit that never makes
    the call: ``notify`` is not run for the second customer. A run with a tool call in flight when
    the agent returns cannot be stored faithfully, as a call from a worker thread cannot."""
    engine = Engine()
    done: list[str] = []

    @engine.tool()
    async def charge(customer: str) -> str:
        await asyncio.sleep(0.01)
        done.append(f"charge {customer}")
        return f"receipt-{customer}"

    @engine.tool()
    async def notify(customer: str) -> str:
        await asyncio.sleep(0.05)  # finishes after the agent has returned
        done.append(f"notify {customer}")
        return "sent"

    background: set[asyncio.Task[Any]] = set()

    async def agent(task: str, customer: str) -> str:
        background.add(asyncio.create_task(notify(customer)))  # fire and forget
        return await charge(customer)

    engine.set_agent(agent)
    await engine.arun("charge", "cust-1111", params={"customer": "cust-1111"})
    await asyncio.gather(*background)
    assert done == ["charge cust-1111", "notify cust-1111"]  # what the agent did

    done.clear()
    result = await engine.arun("charge", "cust-2222", params={"customer": "cust-2222"})
    await asyncio.sleep(0.1)
    await asyncio.gather(*background)
    # a replay must do what the agent did, or the agent must do it again
    assert "notify cust-2222" in done, f"replayed without the in-flight call: {result}, {done}"


async def test_a_tool_called_after_its_run_ended_removes_the_trajectory_it_missed() -> None:
    """A task the agent did not await calls a tool after the run was stored: that trajectory misses
    the call, so the engine removes it (and logs why); the next call is a miss, not a replay."""
    engine = Engine()
    sent: list[str] = []

    @engine.tool()
    async def close(ticket: str) -> str:
        return "closed"

    @engine.tool()
    async def notify(who: str) -> str:
        sent.append(who)
        return "ok"

    pending: list[asyncio.Task[str]] = []

    async def later() -> str:
        await asyncio.sleep(0.01)
        return await notify("ann")

    async def agent(task: str) -> str:
        await close("T-1")
        pending.append(asyncio.create_task(later()))
        return "done"

    engine.set_agent(agent)
    first = await engine.arun("close T-1")
    assert first.stored and first.trajectory_id is not None
    await pending.pop()  # notify runs after the run ended
    assert sent == ["ann"]
    assert engine.store.get(first.trajectory_id) is None
    assert engine.metrics.not_stored_by_reason == {NotStoredReason.CALLED_AFTER_RUN: 1}
    second = await engine.arun("close T-1")
    assert not second.hit
    await pending.pop()


async def test_a_sync_tool_with_an_async_pre_check_is_cached_under_arun_or_refused() -> None:
    """Under ``arun`` the replay awaits an async capture of a sync tool (replay.drive_async), but
    recording does not: ``Run.record`` calls ``_capture``, which stores the coroutine object (never
    awaited: a RuntimeWarning), so the snapshot "cannot encode <class 'coroutine'>" and the task is
    never cached, with a log that does not say why. Either record it (await the capture in the
    async wrapper) or refuse the combination when the tool is registered."""
    engine = Engine()
    state = {"page": "home"}

    async def page(x: str) -> str:
        return state["page"]

    try:

        @engine.tool(pre_check=Check.equal(page))
        def click(x: str) -> str:
            return f"clicked-{x}"

    except TypeError:
        return  # refused up front, with a clear error: fine

    async def agent(task: str) -> str:
        return click("button-1")

    engine.set_agent(agent)
    first = await engine.arun("click it")
    assert first.stored, "a sync tool with an async pre-check is never cached under arun"
    second = await engine.arun("click it")
    assert second.hit


# export --python


def test_export_python_of_stdlib_values_is_runnable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tool called with a ``datetime.date``, a ``Decimal`` and ``float('inf')`` (values the codec
    stores): ``export --python`` writes their reprs (``datetime.date(2024, 1, 2)``, ``Decimal('1.50')``,
    ``inf``) without importing anything, so the exported function compiles but raises NameError when
    run. A class the CLI process has not imported comes out as ``Opaque(kind=..., ...)``, also an
    undefined name. script.render should emit the imports its constants need (``import datetime``,
    ``from decimal import Decimal``, ``float('inf')``) and mark an undecodable constant explicitly."""
    store = tmp_path / "cache.db"
    engine = Engine(_url(store))

    @engine.tool()
    def book(day: datetime.date, amount: Decimal, limit: float) -> str:
        return "booked-0001"

    engine.set_agent(lambda task: book(datetime.date(2024, 1, 2), Decimal("1.50"), float("inf")))
    result = engine("book the room")
    engine.close()
    assert result.stored

    ran = run_cli(capsys, "export", "--python", str(result.trajectory_id), "--store", _url(store))
    assert ran.status == 0, ran.err
    calls: list[tuple[Any, ...]] = []
    function = _load_function(ran.out)
    tools = SimpleNamespace(book=lambda *args: calls.append(args) or "booked-0001")
    assert function(tools) == "booked-0001"  # NameError: name 'datetime' is not defined
    assert calls == [(datetime.date(2024, 1, 2), Decimal("1.50"), float("inf"))]


def test_export_python_with_a_param_named_getattr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A tool whose name is not an identifier is called as ``getattr(tools, 'send mail')(...)``
    (script._callee), but ``getattr`` is not reserved by script._Names: a param named ``getattr``
    becomes the function's keyword parameter and shadows the builtin, so the exported function calls
    the param's value. Reserve ``getattr`` (or every name the generated code uses)."""
    store = tmp_path / "cache.db"
    engine = Engine(_url(store))

    @engine.tool(name="send mail")
    def send_mail(to: str) -> str:
        return "queued"

    engine.set_agent(lambda task: send_mail("ann.lee@example.org"))
    result = engine("mail", params={"getattr": "ann.lee@example.org"})
    engine.close()
    assert result.stored

    ran = run_cli(capsys, "export", "--python", str(result.trajectory_id), "--store", _url(store))
    assert ran.status == 0, ran.err
    sent: list[str] = []
    tools = SimpleNamespace(**{"send mail": lambda to: sent.append(to) or "queued"})
    function = _load_function(ran.out)
    assert function(tools, getattr="ann.lee@example.org") == "queued"  # TypeError: 'str' is not callable
    assert sent == ["ann.lee@example.org"]


# import


def _exported_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    store = tmp_path / "source.db"
    engine = Engine(_url(store))

    @engine.tool()
    def lookup(email: str) -> dict[str, str]:
        return {"id": "cust_000417"}

    @engine.tool()
    def refund(customer_id: str) -> str:
        return "R-1"

    def agent(task: str, email: str) -> str:
        return refund(lookup(email)["id"])

    engine.set_agent(agent)
    assert engine("refund", "ann.lee@example.org", params={"email": "ann.lee@example.org"}).stored
    engine.close()
    ran = run_cli(capsys, "export", "--store", _url(store))
    assert ran.status == 0, ran.err
    record: dict[str, Any] = json.loads(ran.out.splitlines()[0])
    assert record["steps"][1]["args"][0] == {"output": 0, "path": [["key", "id"]]}
    return record


@pytest.mark.parametrize(
    "bad_arg",
    [
        {"output": -1},  # no step -1: export --python reads a variable before it is assigned
        {"output": 1},  # the step itself, not an earlier one
        {"output": 0, "path": [["index", "id"]]},  # not a path kind ("key", "attr", "item")
        {"template": [["bogus", "email"]]},  # not a template part ("text", "param")
    ],
)
def test_import_refuses_an_argument_that_is_not_a_valid_reference(
    bad_arg: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``import`` checks each line (trajectory.from_record) but accepts an output reference to a step
    that is not an earlier one (negative, itself, later), an unknown path kind and an unknown template
    part kind, and exits 0. Such a trajectory then gives `export --python` a function that fails
    (UnboundLocalError for step -1) or an error like ``muscle-mem: error: 'email'`` (a bare KeyError),
    and a replay of ``output -1`` passes the previous step's output. _arg_from should check the kinds,
    and from_record that each output reference points to an earlier step; import should then name
    the line, exit 2 and add nothing."""
    record = _exported_line(tmp_path, capsys)
    record["steps"][1]["args"][0] = bad_arg
    source = tmp_path / "bad.jsonl"
    source.write_text(json.dumps(record) + "\n")
    target = tmp_path / "target.db"
    ran = run_cli(capsys, "import", str(source), "--store", _url(target))
    assert ran.status == 2, f"accepted with status {ran.status}: {ran.out}"
    assert len(ran.err.strip().splitlines()) == 1 and "line 1" in ran.err


def test_export_python_of_an_output_inside_a_string(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ticket id a tool returned, written inside a later string, is a template part that refers to
    that output: the exported function formats the fresh id, and ``show`` says it is data flow."""
    store = tmp_path / "cache.db"
    engine = Engine(_url(store))

    @engine.tool()
    def create_ticket(subject: str) -> str:
        return "TCK-1042"

    @engine.tool()
    def send_mail(body: str) -> str:
        return "sent"

    def agent(task: str) -> str:
        ticket = create_ticket("printer jam")
        send_mail(f"We opened {ticket} for you.")
        return f"created {ticket}"

    engine.set_agent(agent)
    result = engine("report the printer jam")
    engine.close()
    assert result.stored

    shown = run_cli(capsys, "show", str(result.trajectory_id), "--store", _url(store))
    assert shown.status == 0 and "template of data flow" in shown.out
    ran = run_cli(capsys, "export", "--python", str(result.trajectory_id), "--store", _url(store))
    assert ran.status == 0, ran.err
    mails: list[str] = []
    tools = SimpleNamespace(
        create_ticket=lambda subject: "TCK-2001", send_mail=lambda body: mails.append(body)
    )
    assert _load_function(ran.out)(tools) == "created TCK-2001"
    assert mails == ["We opened TCK-2001 for you."]
