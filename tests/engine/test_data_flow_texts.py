"""Values inside strings: an output or a param met in a later string replays fresh, or the replay stops."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest

from muscle_mem import Engine, MissReason


def test_an_earlier_output_inside_a_string_argument_is_replayed_fresh() -> None:
    """An id a tool returned, formatted into a later string (a mail body, the answer), is a template part of
    that output: the replay writes the fresh id."""
    engine = Engine()
    numbers = itertools.count(1042)
    mails: list[str] = []

    @engine.tool()
    def create_ticket(title: str) -> str:
        return f"TCK-{next(numbers)}"

    @engine.tool()
    def email(to: str, body: str) -> None:
        mails.append(body)

    def agent(task: str) -> str:
        ticket = create_ticket("printer broken")
        email("it@corp.com", f"Your ticket {ticket} was created")
        return f"created {ticket}"

    engine.set_agent(agent)
    engine("open a ticket for the broken printer")
    second = engine("open a ticket for the broken printer")
    assert mails[-1] == "Your ticket TCK-1043 was created", (
        f"ticket TCK-1043 was created but the replay emailed {mails[-1]!r} (answer {second.output!r})"
    )


def test_a_plain_word_an_earlier_tool_returned_never_changes_a_later_string() -> None:
    """A status ``open`` a tool returned, met in ``open the door`` (a coincidence) and in ``reopen`` (inside a
    word): with the same status, a replay sends the recorded text; once it changed, a miss, never
    ``closed the door``."""
    engine = Engine()
    status = {"value": "open"}
    sent: list[str] = []

    @engine.tool()
    def ticket_status(ticket: str) -> str:
        return status["value"]

    @engine.tool()
    def post(text: str) -> str:
        sent.append(text)
        return "posted"

    def agent(task: str) -> str:
        ticket_status("TCK-1042")
        post("please open the door and reopen the window")
        return "done"

    engine.set_agent(agent)
    assert engine("tidy the office").stored
    assert engine("tidy the office").hit
    status["value"] = "closed"
    assert not engine("tidy the office").hit
    assert sent == ["please open the door and reopen the window"] * 3


def test_an_answer_echoing_a_capitalised_status_replays_while_the_status_is_the_same() -> None:
    """An answer echoing a capitalised status a tool returned (``Order status: Shipped``) is stored: the next
    call misses once the status changed and replays while it is the same."""
    engine = Engine()
    statuses = itertools.chain(["Shipped"], itertools.repeat("Delivered"))

    @engine.tool()
    def status(order_id: str) -> str:
        return next(statuses)

    def agent(task: str) -> str:
        return f"Order status: {status('A-1')}"

    engine.set_agent(agent)
    first = engine("where is my order")
    assert first.stored, "an answer echoing the tool's status was refused"
    second = engine("where is my order")  # the status changed: a miss (the guard), never the old text
    assert second.output == "Order status: Delivered" and not second.hit
    assert engine("where is my order").hit  # the same status again: a replay, with the same text


def test_a_lower_case_status_echoed_in_a_later_string_is_never_replayed_stale() -> None:
    """A lower-case status a tool returned, echoed in a later string, is never replayed once it changed: an
    order now ``pending`` is never answered ``shipped``."""
    engine = Engine()
    statuses = iter(["shipped", "pending", "pending"])

    @engine.tool()
    def status(order_id: str) -> str:
        return next(statuses)

    def agent(task: str) -> str:
        return f"Your order has {status('A-1')}"

    engine.set_agent(agent)
    engine("where is my order")
    second = engine("where is my order")
    assert second.output in ("Your order has pending",), f"replayed {second.output!r}"


def test_output_words_are_looked_up_not_matched_one_pattern_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """Storing a run whose tools returned 15,000 capitalised words compiles no pattern per word: the words of a
    later string are looked up among them."""
    engine = Engine()

    @engine.tool()
    def search(q: str) -> list[str]:
        out = []
        for i in range(500):
            s, k = "", i + 1000 * int(q.split()[-1])
            while k:
                s += chr(97 + k % 26)
                k //= 26
            out.append("N" + s)
        return out

    def agent(task: str) -> str:
        for i in range(30):
            search(f"query number {i}")
        return "done"

    engine.set_agent(agent)
    compiled: list[str] = []
    compile_pattern = re.compile

    def counting(pattern: Any, flags: int = 0) -> re.Pattern[Any]:
        compiled.append(str(pattern))
        return compile_pattern(pattern, flags)

    monkeypatch.setattr(re, "compile", counting)
    result = engine("search everything")
    assert result.stored
    assert len(compiled) < 30, f"{len(compiled)} patterns compiled to store a 30-step run"


def test_an_output_number_inside_a_string_param_does_not_hide_the_param() -> None:
    """A param wins over an output whose text it contains: the date param ``2024-05-01`` stays a param although
    a tool returned 2024, and the next call books its own date."""
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


def test_a_param_equal_to_an_output_word_replays_only_while_they_agree() -> None:
    """The new plan is a param and also a word a tool returned (the current plan): a category word
    the runs showed one value of, so another plan is the agent's to handle, from the first step."""
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
    assert not result.hit and result.steps_replayed == 0
    assert result.miss_reason is MissReason.OBSERVATION_CHANGED
    assert "param 'plan': 'Growth', recorded 'Enterprise'" in str(result.reason)
    assert subjects == ["switch to Enterprise", "switch to Growth"]


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


def test_a_uuid_output_inside_a_later_string_is_replayed_fresh() -> None:
    """A UUID a tool returned, written into a later string, is replayed as the UUID the tool returns now."""
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


def test_a_plain_word_a_tool_returned_never_changes_the_agents_fixed_text() -> None:
    """A plain word a tool returned (the account type ``business``) met in the agent's fixed text (``Thanks for
    your business!``) is never rewritten: the next customer's mail keeps the agent's text."""
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
    assert not replayed.hit and replayed.steps_replayed == 2
    assert "step 1 open_tickets output: a list of 2, recorded a list of 1" in str(replayed.reason)
    assert all(body == f"We opened {ticket} for you." for ticket, body in mails), mails
    assert [ticket for ticket, _ in mails] == ["TCK-1042", "TCK-1044"]  # the agent mailed its own ticket


def test_an_output_reference_is_not_shadowed_by_a_param_template() -> None:
    """An argument equal to an earlier output is a reference to it even when it contains a param's value
    (``John-17``): the replay for Jane passes the fresh ``Jane-18``."""
    counter = itertools.count(17)
    activated: list[str] = []
    engine = Engine("memory://")

    @engine.tool()
    def create_user(name: str) -> str:
        return f"{name}-{next(counter)}"

    @engine.tool()
    def activate(user_id: str) -> bool:
        activated.append(user_id)
        return True

    def agent(task: str) -> str:
        uid = create_user(task.split()[-1])
        activate(uid)
        return uid

    engine.set_agent(agent)
    first = engine("create user John", params={"name": "John"})
    second = engine("create user Jane", params={"name": "Jane"})
    assert first.output == "John-17"
    assert second.hit
    assert activated == ["John-17", "Jane-18"], "the replay must pass create_user's fresh output"
    assert second.output == "Jane-18"


def test_a_name_param_echoed_by_a_tool_and_repeated_in_the_answer_replays_for_the_next_name() -> None:
    engine = Engine()
    ids = iter(["usr_1", "usr_2"])

    @engine.tool()
    def onboard(name: str) -> dict[str, str]:
        return {"id": next(ids), "name": name}

    def agent(task: str, name: str) -> str:
        user = onboard(name)
        return f"onboarded {user['name']} as {user['id']}"

    engine.set_agent(agent)
    assert engine("onboard Ada", "Ada", params={"name": "Ada"}).stored
    hit = engine("onboard Bob", "Bob", params={"name": "Bob"})
    assert hit.hit and hit.output == "onboarded Bob as usr_2"
