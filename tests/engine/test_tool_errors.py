"""A run whose agent went on from a tool that raised is stored only when it called the tool again the same way.

The exception is something the agent saw and decided on; a trajectory holds only the calls that
returned, so a replay could not see it. A retry with the same arguments is safe to store: the replay
makes the call, and stops if it raises.
"""

from __future__ import annotations

import asyncio

from muscle_mem import Engine, NotStoredReason, current_run


class Declined(Exception):
    pass


class Payments:
    """A payment desk whose charges fail while the funds are short."""

    def __init__(self) -> None:
        self.funds = 0
        self.flaky = 0
        """Charges that fail before one goes through (a transient outage)."""
        self.done: list[str] = []

    def charge(self, amount: int) -> str:
        if self.flaky:
            self.flaky -= 1
            raise TimeoutError("the processor timed out")
        if self.funds < amount:
            raise Declined("insufficient funds")
        self.funds -= amount
        self.done.append(f"charged {amount}")
        return "ok"

    def notify(self, text: str) -> str:
        self.done.append(f"notified {text}")
        return "sent"


def engine_for(desk: Payments, agent_kind: str) -> Engine:
    engine = Engine()
    charge = engine.register(desk.charge, name="charge")
    notify = engine.register(desk.notify, name="notify")

    def declined_or_paid(task: str) -> str:
        try:
            charge(10)
        except Declined:
            notify("declined")
            return "declined"
        notify("paid")
        return "paid"

    def retried(task: str) -> str:
        run = current_run()
        charged = run is not None and any(step.tool == "charge" for step in run.steps)  # resumed
        for _ in range(0 if charged else 5):
            try:
                charge(10)
                break
            except TimeoutError:
                continue
        notify("paid")
        return "paid"

    def smaller(task: str) -> str:
        try:
            charge(10)
        except Declined:
            charge(5)
        notify("paid")
        return "paid"

    def gave_up(task: str) -> str:
        try:
            charge(10)
        except Declined:
            return "declined"
        return "paid"

    agents = {
        "declined_or_paid": declined_or_paid,
        "retried": retried,
        "smaller": smaller,
        "gave_up": gave_up,
    }
    engine.set_agent(agents[agent_kind])
    return engine


def test_a_run_that_went_on_from_a_declined_charge_is_not_stored() -> None:
    """Stored, the run would mail "declined" without charging to a customer who can pay now."""
    desk = Payments()
    engine = engine_for(desk, "declined_or_paid")
    first = engine("charge 10")
    assert first.output == "declined" and desk.done == ["notified declined"]
    assert not first.stored and first.not_stored_reason is NotStoredReason.TOOL_RAISED
    assert first.not_stored is not None and "tool 'charge' raised" in first.not_stored
    desk.funds, desk.done = 100, []
    paid = engine("charge 10")
    assert not paid.hit and paid.stored and desk.done == ["charged 10", "notified paid"]
    desk.funds, desk.done = 0, []
    short = engine("charge 10")
    assert not short.hit and short.output == "declined" and desk.done == ["notified declined"]
    assert short.reason is not None and "raised Declined" in short.reason
    desk.funds, desk.done = 50, []
    again = engine("charge 10")
    assert again.hit and desk.done == ["charged 10", "notified paid"]


def test_a_retry_with_the_same_arguments_is_stored_as_the_call_that_returned() -> None:
    desk = Payments()
    desk.funds, desk.flaky = 100, 2
    engine = engine_for(desk, "retried")
    first = engine("charge 10")
    assert first.stored and [c.tool for c in first.calls] == ["charge", "notify"]
    desk.done = []
    at_once = engine("charge 10")  # the recorded run saw two errors first: the agent may have decided on them
    assert not at_once.hit and at_once.steps_replayed == 1
    assert at_once.reason is not None and "raise first" in at_once.reason
    assert desk.done == ["charged 10", "notified paid"], "charged once, then the agent went on"
    desk.done = []
    hit = engine("charge 10")  # the agent's own run without errors covers it now
    assert hit.hit and desk.done == ["charged 10", "notified paid"]
    desk.flaky, desk.done = 1, []
    stopped = engine("charge 10")
    assert not stopped.hit and stopped.reason is not None and "raised TimeoutError" in stopped.reason
    assert desk.done == ["charged 10", "notified paid"], "the agent retried, as it does alone"


def test_a_call_made_again_with_other_arguments_is_no_retry() -> None:
    """``charge(5)`` after ``charge(10)`` was declined: replayed, it would charge 5 to a customer who can pay 10."""
    desk = Payments()
    desk.funds = 7
    engine = engine_for(desk, "smaller")
    result = engine("charge 10")
    assert desk.done == ["charged 5", "notified paid"]
    assert not result.stored and result.not_stored_reason is NotStoredReason.TOOL_RAISED


def test_an_agent_that_returns_after_the_error_is_not_stored() -> None:
    """Stored, the run would be a trajectory of no steps answering "declined" to anyone."""
    desk = Payments()
    engine = engine_for(desk, "gave_up")
    result = engine("charge 10")
    assert result.output == "declined"
    assert not result.stored and result.not_stored_reason is NotStoredReason.TOOL_RAISED
    assert result.not_stored is not None and "then returned" in result.not_stored
    assert len(engine.store) == 0


def test_an_async_tool_that_raised_counts_alike() -> None:
    desk = Payments()
    engine = Engine()

    @engine.tool()
    async def charge(amount: int) -> str:
        return desk.charge(amount)

    @engine.tool()
    async def notify(text: str) -> str:
        return desk.notify(text)

    async def agent(task: str) -> str:
        try:
            await charge(10)
        except Declined:
            await notify("declined")
            return "declined"
        return "paid"

    engine.set_agent(agent)
    result = asyncio.run(engine.arun("charge 10"))
    assert result.output == "declined"
    assert not result.stored and result.not_stored_reason is NotStoredReason.TOOL_RAISED


def _mailer(retries: bool) -> tuple[Engine, list[str], dict[str, bool]]:
    """A desk whose mail tool sends, then times out while the server is slow; the agent retries or not."""
    engine, sent, server = Engine(), list[str](), {"slow": False}

    @engine.tool()
    def lookup(user: str) -> dict[str, str]:
        return {"user": user, "status": "active"}

    @engine.tool()
    def send_mail(user: str) -> str:
        sent.append(user)
        if server["slow"]:
            raise TimeoutError("timed out after sending")
        return "sent"

    def agent(task: str, user: str) -> str:
        run = current_run()
        if run is None or not run.steps:
            lookup(user)
        for _ in range(2 if retries else 1):
            try:
                return send_mail(user)
            except TimeoutError:
                continue
        return "mail may have failed"

    engine.set_agent(agent)
    return engine, sent, server


def test_a_replayed_call_that_raised_is_not_run_again_by_the_agent_taking_over() -> None:
    """The agent alone sent once and saw the timeout; taking over, it gets the timeout, not a second send."""
    engine, sent, server = _mailer(retries=False)
    assert engine("mail the user", "ada", params={"user": "ada"}).stored
    server["slow"] = True
    result = engine("mail the user", "ada", params={"user": "ada"})
    assert not result.hit and result.steps_replayed == 1
    assert result.output == "mail may have failed" and sent == ["ada", "ada"]  # once at recording, once now


def test_an_agent_that_retries_a_replayed_call_that_raised_runs_it_again_as_it_would_alone() -> None:
    engine, sent, server = _mailer(retries=True)
    engine("mail the user", "ada", params={"user": "ada"})
    server["slow"] = True
    result = engine("mail the user", "ada", params={"user": "ada"})
    assert result.output == "mail may have failed" and sent == ["ada", "ada", "ada"]  # alone: two tries
