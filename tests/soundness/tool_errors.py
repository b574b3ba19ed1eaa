"""Branches on a tool's error: the agent saw an exception, went on from it, and a replay cannot see it.

Every front the harness drives hands a tool's error to the agent as a text that starts with
``Error`` (LangGraph's tool node does; the plain agent's loop does the same), and the policies branch on it.
"""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import calls, done, out


class Declined(Exception):
    pass


def failed(output: Any) -> bool:
    """Whether a call's output is the error the agent was handed."""
    return isinstance(output, str) and output.startswith("Error")


# ---- a declined charge: "declined" mailed, nothing charged ------------------------------------------------


def charge(w: dict[str, Any], amount: int) -> str:
    if w["flaky"]:
        w["flaky"] -= 1
        raise TimeoutError("the processor timed out")
    if w["funds"] < amount:
        raise Declined("insufficient funds")
    w["funds"] -= amount
    w["charged"].append(amount)
    return "charged"


def notify(w: dict[str, Any], text: str) -> str:
    w["mails"].append(text)
    return "sent"


PAY_TOOLS = [
    Tool("charge", charge, check=lambda w, amount: w["funds"] >= amount),
    Tool("notify", notify, check=lambda w, text: True),
]


def declined_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "charge"):
        return Call("charge", {"amount": 10})
    verdict = "declined" if failed(out(h, "charge")) else "paid"
    if not done(h, "notify"):
        return Call("notify", {"text": verdict})
    return Answer(verdict)


def retry_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    """A transient error is retried with the same call, up to three times."""
    tries = calls(h, "charge")
    if not tries or (failed(out(h, "charge")) and len(tries) < 3):
        return Call("charge", {"amount": 10})
    verdict = "declined" if failed(out(h, "charge")) else "paid"
    if not done(h, "notify"):
        return Call("notify", {"text": verdict})
    return Answer(verdict)


def pay_world(funds: int, flaky: int = 0) -> dict[str, Any]:
    return {"funds": funds, "flaky": flaky, "charged": [], "mails": []}


def _pay(world: dict[str, Any], **kw: Any) -> Run:
    return Run("charge the monthly fee", world, **kw)


# ---- a guessed id that failed: the agent created the user -------------------------------------------------


def send_welcome(w: dict[str, Any], user_id: str) -> str:
    if user_id not in w["users"]:
        raise KeyError(f"no user {user_id}")
    w["welcomed"].append(user_id)
    return "welcomed"


def create_user(w: dict[str, Any], name: str) -> dict[str, Any]:
    user_id = f"usr_{len(w['users']) + 1}"
    w["users"][user_id] = name
    return {"id": user_id}


USER_TOOLS = [
    Tool("send_welcome", send_welcome, check=lambda w, user_id: True),
    Tool("create_user", create_user, check=lambda w, name: True),
]


def guess_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    """Welcome the user by the id it usually has; create the user first if that fails."""
    welcomes = calls(h, "send_welcome")
    if not welcomes:
        return Call("send_welcome", {"user_id": "usr_ada"})
    if failed(out(h, "send_welcome")) and not done(h, "create_user"):
        return Call("create_user", {"name": "Ada"})
    if done(h, "create_user") and len(welcomes) < 2:
        return Call("send_welcome", {"user_id": out(h, "create_user")["id"]})
    return Answer("welcomed")


def user_world(existing: bool) -> dict[str, Any]:
    return {"users": {"usr_ada": "Ada"} if existing else {}, "welcomed": []}


def _welcome(world: dict[str, Any], **kw: Any) -> Run:
    return Run("welcome Ada", world, **kw)


SCENARIOS = [
    Scenario(
        "declined_charge_core",
        "branches",
        "core",
        PAY_TOOLS,
        declined_policy,
        [_pay(pay_world(0)), _pay(pay_world(100))],
        [_pay(pay_world(100)), _pay(pay_world(0)), _pay(pay_world(50), harmless=True)],
        doc="Recorded with the charge declined (the agent mailed 'declined'); now the funds cover it.",
    ),
    Scenario(
        "declined_charge_langchain",
        "branches",
        "langchain",
        PAY_TOOLS,
        declined_policy,
        [_pay(pay_world(0))],
        [_pay(pay_world(100)), _pay(pay_world(0))],
        doc="The same through LangGraph, whose tool node hands the model the error as a message.",
    ),
    Scenario(
        "timeout_retried_core",
        "branches",
        "core",
        PAY_TOOLS,
        retry_policy,
        [_pay(pay_world(100, flaky=1))],
        [_pay(pay_world(100), harmless=True), _pay(pay_world(100, flaky=2)), _pay(pay_world(5, flaky=1))],
        doc="Recorded through a timeout the agent retried: stored as the charge that went through.",
    ),
    Scenario(
        "guessed_id_failed_core",
        "branches",
        "core",
        USER_TOOLS,
        guess_policy,
        [_welcome(user_world(existing=False))],
        [_welcome(user_world(existing=True))],
        doc="Recorded when the guessed id did not exist (the agent created the user); now it exists.",
    ),
]
