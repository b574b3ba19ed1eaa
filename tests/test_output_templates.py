"""Output templates (outputs and params inside later strings), found in review: each test failed
before its fix (the docstrings say what went wrong)."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from cli_support import run_cli
from muscle_mem import Engine


def _url(path: Path) -> str:
    return f"sqlite:///{path}"


def _load_function(source: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<export>", "exec"), namespace)
    functions = [v for k, v in namespace.items() if callable(v) and not k.startswith("__")]
    assert len(functions) == 1
    return functions[0]


def test_an_output_number_inside_a_string_param_does_not_hide_the_param() -> None:
    """_template splits on output texts *before* string params: a tool that returned the year 2024
    turns the ``2024`` inside the date param ``2024-05-01`` into an output part, and what is left
    (``-05-01``) no longer contains the param, so the date is stored as a constant. The next call,
    for 2024-12-24, is a hit that books 2024-05-01. An output match overlapping a param occurrence
    should give way to the param (match params and outputs together, longest first), or the run
    should be refused as Unreplayable."""
    engine = Engine()
    booked: list[str] = []

    @engine.tool()
    def current_year() -> int:
        return 2024

    @engine.tool()
    def book(note: str) -> None:
        booked.append(note)

    def agent(task: str, date: str) -> str:
        current_year()
        book(f"delivery on {date}")
        return "ok"

    engine.set_agent(agent)
    engine("book delivery", "2024-05-01", params={"date": "2024-05-01"})
    engine("book delivery", "2024-12-24", params={"date": "2024-12-24"})
    assert booked[-1] == "delivery on 2024-12-24", f"booked {booked[-1]!r} for 2024-12-24"


def test_an_int_param_formatted_with_decimals_is_never_replayed_stale() -> None:
    """A number param is templated only where it stands whole: ``1042`` inside ``1042.00`` is not
    (whole_number refuses ``.\\d`` after it), and nothing else notices the param in the string, so
    ``charge 1042.00`` is stored as a constant and the call with amount 5000 charges 1042.00. A
    number param (or a distinctive output number) found in a string but not as a whole number should
    make the run Unreplayable (as ``_converted_param`` does for a number equal to a string param)."""
    engine = Engine()
    charged: list[str] = []

    @engine.tool()
    def charge(memo: str) -> None:
        charged.append(memo)

    def agent(task: str, amount: int) -> str:
        charge(f"charge {amount:.2f} USD")
        return "ok"

    engine.set_agent(agent)
    engine("charge the customer", 1042, params={"amount": 1042})
    engine("charge the customer", 5000, params={"amount": 5000})
    assert charged[-1] == "charge 5000.00 USD", f"amount 5000 was charged as {charged[-1]!r}"


def test_an_int_output_formatted_with_decimals_is_never_replayed_stale() -> None:
    """``quote()`` returned 1042 and the agent wrote ``total 1042.50``: the integer part may be the
    quote or the agent's constant, so it replays only while the quote is 1042; a fresh quote of 5000
    stops the replay, and the agent writes ``total 5000.50``."""
    engine = Engine()
    prices = itertools.count(1042, 3958)
    invoices: list[str] = []

    @engine.tool()
    def quote(item: str) -> int:
        return next(prices)

    @engine.tool()
    def invoice(line: str) -> None:
        invoices.append(line)

    def agent(task: str) -> str:
        base = quote("sofa")
        invoice(f"total {base}.50")
        return "ok"

    engine.set_agent(agent)
    engine("invoice the sofa")
    replayed = engine("invoice the sofa")
    assert not replayed.hit and replayed.steps_replayed == 1 and "disagree" in str(replayed.reason)
    assert invoices == ["total 1042.50", "total 8958.50"]  # the agent resumed with a quote of its own


def test_a_plain_word_of_eight_letters_is_not_taken_from_a_later_string() -> None:
    """_distinctive counts any text of 8 characters or more, plain words too: a tool returned the
    account type ``business`` and the agent's fixed sign-off ``Thanks for your business!`` became
    a template of that output. For a personal account the hit mails ``Thanks for your personal!``.
    A word of letters only is as much a coincidence at 8 letters as ``open`` is at 4; it should
    need a digit, ``@``, ``-``, ``_`` or ``/`` (or be matched only when the whole string is it)."""
    engine = Engine()
    types = itertools.chain(["business"], itertools.repeat("personal"))
    mails: list[str] = []

    @engine.tool()
    def account_type(email: str) -> str:
        return next(types)

    @engine.tool()
    def send(email: str, body: str) -> None:
        mails.append(body)

    def agent(task: str, email: str) -> str:
        account_type(email)
        send(email, "Thanks for your business!")
        return "ok"

    engine.set_agent(agent)
    engine("thank the customer", "ann@example.org", params={"email": "ann@example.org"})
    engine("thank the customer", "bob@example.org", params={"email": "bob@example.org"})
    assert mails[-1] == "Thanks for your business!", f"the replay mailed {mails[-1]!r}"


def test_a_text_held_by_two_outputs_replays_only_while_they_agree() -> None:
    """The new ticket's id is in the mail body and also in the ``open_tickets()`` list: both are its
    origins. At replay the list holds two tickets, so the mail's value cannot be confirmed: the
    replay stops before mailing, never mailing the wrong ticket."""
    engine = Engine()
    numbers = itertools.count(1042)
    store: list[str] = []
    mails: list[tuple[str, str]] = []

    @engine.tool()
    def create_ticket(title: str) -> dict[str, str]:
        ticket = f"TCK-{next(numbers)}"
        store.append(ticket)
        return {"id": ticket}

    @engine.tool()
    def open_tickets() -> list[str]:
        return list(store)

    @engine.tool()
    def mail(ticket_id: str, body: str) -> None:
        mails.append((ticket_id, body))

    def agent(task: str) -> str:
        ticket = create_ticket("printer")["id"]
        open_tickets()
        mail(ticket, f"We opened {ticket} for you.")
        return "ok"

    engine.set_agent(agent)
    engine("open a printer ticket")
    replayed = engine("open a printer ticket")
    assert not replayed.hit and replayed.steps_replayed == 2 and "now holds 2" in str(replayed.reason)
    assert all(body == f"We opened {ticket} for you." for ticket, body in mails), mails
    assert [ticket for ticket, _ in mails] == ["TCK-1042", "TCK-1044"]  # the agent mailed its own ticket


def test_export_python_of_an_output_under_a_key_with_a_quote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """script._Expr writes an output part as ``{lookup_result[<repr of key>]}`` inside ``f"..."``:
    for a key with a single quote, repr uses double quotes, and on Python 3.10/3.11 (the package
    supports >=3.10) an f-string expression cannot reuse the enclosing quote: the exported module
    does not compile. Bind the value to a variable first, or use ``str.format``/concatenation."""
    store = tmp_path / "cache.db"
    engine = Engine(_url(store))

    @engine.tool()
    def lookup(email: str) -> dict[str, str]:
        return {"customer's id": "cust_000417"}

    @engine.tool()
    def note(text: str) -> None:
        return None

    def agent(task: str, email: str) -> str:
        found = lookup(email)
        note(f"refund for {found[chr(99) + 'ustomer' + chr(39) + 's id']}")
        return "ok"

    engine.set_agent(agent)
    result = engine("refund", "ann@example.org", params={"email": "ann@example.org"})
    engine.close()
    assert result.stored
    ran = run_cli(capsys, "export", "--python", str(result.trajectory_id), "--store", _url(store))
    assert ran.status == 0, ran.err
    notes: list[str] = []
    tools = SimpleNamespace(lookup=lambda email: {"customer's id": "cust_999"}, note=notes.append)
    _load_function(ran.out)(tools, email="bob@example.org")
    assert notes == ["refund for cust_999"]


def test_a_uuid_output_inside_a_later_string_is_never_replayed_stale() -> None:
    """A uuid.UUID output is referable anywhere as a whole value (_reference_kind: "any"), but
    _Provenance.add_output puts only str and int values in ``texts``: the order id written into the
    mail is a constant, and the hit for the second order mails the first order's id. UUIDs (by
    ``str()``, as _filled formats them) should be template texts too, or the run refused."""
    import uuid

    engine = Engine()
    ids = iter([uuid.UUID(int=1), uuid.UUID(int=2)])
    mails: list[str] = []

    @engine.tool()
    def create_order(item: str) -> uuid.UUID:
        return next(ids)

    @engine.tool()
    def mail(body: str) -> None:
        mails.append(body)

    def agent(task: str) -> str:
        order = create_order("sofa")
        mail(f"order {order} placed")
        return "ok"

    engine.set_agent(agent)
    engine("order a sofa")
    engine("order a sofa")
    assert mails[-1] == f"order {uuid.UUID(int=2)} placed", f"order 2 was mailed as {mails[-1]!r}"


def test_a_param_equal_to_an_output_word_replays_only_while_they_agree() -> None:
    """The new plan is a param and also a word a tool returned (the current plan): the text is bound
    to both, so the next customer's replay stops there and the agent writes the plan asked for."""
    engine = Engine()
    subjects: list[str] = []

    @engine.tool()
    def current_plan(email: str) -> str:
        return "Enterprise"

    @engine.tool()
    def open_ticket(subject: str) -> str:
        subjects.append(subject)
        return "TCK-1"

    def agent(task: str, plan: str) -> str:
        current_plan("ann@example.org")
        return open_ticket(f"switch to {plan}")

    engine.set_agent(agent)
    engine("change the plan", "Enterprise", params={"plan": "Enterprise"})
    result = engine("change the plan", "Growth", params={"plan": "Growth"})
    assert not result.hit and result.steps_replayed == 1 and "disagree" in str(result.reason)
    assert subjects == ["switch to Enterprise", "switch to Growth"]
