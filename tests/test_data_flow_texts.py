"""Values inside strings: an output or a param met in a later string replays fresh, or the replay stops."""

from __future__ import annotations

import itertools

from muscle_mem import Engine


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
