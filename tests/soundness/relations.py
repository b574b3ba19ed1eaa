"""Relations between values: amount <= balance, author == owner, due before today."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Front, Policy, Run, Scenario, Step, Tool
from .kit import done, num, out


def _r(
    name: str,
    front: Front,
    tools: list[Tool],
    policy: Policy,
    records: list[Run],
    probes: list[Run],
    doc: str,
) -> Scenario:
    return Scenario(name, "relations", front, tools, policy, records, probes, doc=doc)


# ---- pay an invoice if its amount is within the balance ---------------------------------------------------


def get_invoice(w: dict[str, Any], invoice_id: int) -> dict[str, Any]:
    return {"invoice_id": invoice_id, "amount": w["amount"], "due": w.get("due", "2026-12-01")}


def get_balance(w: dict[str, Any], account: str) -> dict[str, Any]:
    return {"account": account, "balance": w["balance"]}


def pay_invoice(w: dict[str, Any], invoice_id: int, amount: int) -> str:
    w["balance"] -= amount
    w["paid"].append(invoice_id)
    return "paid"


PAY_TOOLS = [
    Tool("get_invoice", get_invoice, check=lambda w, invoice_id: True),
    Tool("get_balance", get_balance, check=lambda w, account: True),
    Tool("pay_invoice", pay_invoice, check=lambda w, invoice_id, amount: w["bank_up"]),
]


def pay_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    inv = num(text, "invoice")
    if not done(h, "get_invoice"):
        return Call("get_invoice", {"invoice_id": inv})
    if not done(h, "get_balance"):
        return Call("get_balance", {"account": "main"})
    amount, balance = out(h, "get_invoice")["amount"], out(h, "get_balance")["balance"]
    if amount > balance:
        return Answer(f"Invoice {inv} exceeds the balance.")
    if not done(h, "pay_invoice"):
        return Call("pay_invoice", {"invoice_id": inv, "amount": amount})
    return Answer(f"Paid invoice {inv}.")


def _pay(inv: int, amount: int, balance: int) -> Run:
    world = {"amount": amount, "balance": balance, "paid": [], "bank_up": True}
    return Run(f"pay invoice {inv}", world, {"invoice": inv})


# ---- close a ticket when its owner replied so ---------------------------------------------------------------


def get_ticket(w: dict[str, Any], ticket_id: int) -> dict[str, Any]:
    return {"ticket_id": ticket_id, "owner": w["owner"]}


def last_reply(w: dict[str, Any], ticket_id: int) -> dict[str, Any]:
    return {"author": w["author"], "body": "please close this"}


def close_ticket(w: dict[str, Any], ticket_id: int, by: str) -> str:
    w["closed"].append((ticket_id, by))
    return "closed"


OWNER_TOOLS = [
    Tool("get_ticket", get_ticket, check=lambda w, ticket_id: True),
    Tool("last_reply", last_reply, check=lambda w, ticket_id: True),
    Tool("close_ticket", close_ticket, check=lambda w, ticket_id, by: ticket_id not in w["locked"]),
]


def owner_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    tid = num(text, "ticket")
    if not done(h, "get_ticket"):
        return Call("get_ticket", {"ticket_id": tid})
    if not done(h, "last_reply"):
        return Call("last_reply", {"ticket_id": tid})
    owner, author = out(h, "get_ticket")["owner"], out(h, "last_reply")["author"]
    if author != owner:
        return Answer(f"Only the owner may close ticket {tid}.")
    if not done(h, "close_ticket"):
        return Call("close_ticket", {"ticket_id": tid, "by": owner})
    return Answer(f"Closed ticket {tid} for {owner}.")


def _close(tid: int, owner: str, author: str) -> Run:
    world = {"owner": owner, "author": author, "closed": [], "locked": []}
    return Run(f"close ticket {tid} if its owner asks", world, {"ticket": tid})


# ---- send a late notice when the due date is before today ---------------------------------------------------


def clock(w: dict[str, Any]) -> str:
    return str(w["today"])


def late_notice(w: dict[str, Any], invoice_id: int) -> str:
    w["notices"].append(invoice_id)
    return "sent"


LATE_TOOLS = [
    Tool("get_invoice", get_invoice, check=lambda w, invoice_id: True),
    Tool("clock", clock, check=lambda w: True),
    Tool("late_notice", late_notice, check=lambda w, invoice_id: w["mail_up"]),
]


def late_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    inv = num(text, "invoice")
    if not done(h, "get_invoice"):
        return Call("get_invoice", {"invoice_id": inv})
    if not done(h, "clock"):
        return Call("clock")
    if out(h, "get_invoice")["due"] >= out(h, "clock"):
        return Answer(f"Invoice {inv} is not late.")
    if not done(h, "late_notice"):
        return Call("late_notice", {"invoice_id": inv})
    return Answer(f"Sent a late notice for invoice {inv}.")


def _late(inv: int, due: str, today: str) -> Run:
    world = {"amount": 10, "due": due, "today": today, "notices": [], "mail_up": True}
    return Run(f"chase invoice {inv}", world, {"invoice": inv})


# ---- the account read is the account asked about --------------------------------------------------------


def find_account(w: dict[str, Any], email: str) -> dict[str, Any]:
    found = w["directory"][email]
    return {"id": found["id"], "email": found["email"]}


def close_account(w: dict[str, Any], account_id: str) -> str:
    w["closed"].append(account_id)
    return "closed"


ACCOUNT_TOOLS = [
    Tool("find_account", find_account, check=lambda w, email: email in w["directory"]),
    Tool("close_account", close_account, check=lambda w, account_id: account_id not in w["locked"]),
]


def account_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    email = text.rsplit(" ", 1)[-1]
    if not done(h, "find_account"):
        return Call("find_account", {"email": email})
    account = out(h, "find_account")
    if account["email"] != email:
        return Answer(f"The directory answered for {account['email']}, not {email}: not closing.")
    if not done(h, "close_account"):
        return Call("close_account", {"account_id": account["id"]})
    return Answer(f"Closed {account['id']}.")


def directory() -> dict[str, Any]:
    table = {
        "ada@x.io": {"id": "acc_1", "email": "ada@x.io"},
        "bob@x.io": {"id": "acc_2", "email": "bob@x.io"},
        "cy@x.io": {"id": "acc_3", "email": "cyrus@x.io"},
    }
    return {"directory": table, "closed": [], "locked": []}


def _account(email: str, harmless: bool = False) -> Run:
    return Run(f"close the account of {email}", directory(), {"email": email}, harmless=harmless)


def _pay_ok(inv: int, amount: int) -> Run:
    """A payment within what the family's runs showed: amount and balance in their ranges, amount below."""
    world = {"amount": amount, "balance": 150, "paid": [], "bank_up": True}
    return Run(f"pay invoice {inv}", world, {"invoice": inv}, harmless=True)


SCENARIOS = [
    _r(
        "amount_within_balance_core",
        "core",
        PAY_TOOLS,
        pay_policy,
        [_pay(31, 50, 100)],
        [_pay(32, 150, 100)],
        "Pay when amount <= balance; the amount now exceeds the balance.",
    ),
    _r(
        "amount_within_balance_family_core",
        "core",
        PAY_TOOLS,
        pay_policy,
        [_pay(31, 50, 100), _pay(32, 80, 200), _pay(33, 30, 60)],
        [_pay(34, 70, 65), _pay(35, 60, 150)],
        "Three runs paid with amounts 30-80 and balances 60-200; 70 against 65 is inside both ranges"
        " but the relation flips (the second probe, 60 against 150, may replay).",
    ),
    _r(
        "amount_within_balance_langchain",
        "langchain",
        PAY_TOOLS,
        pay_policy,
        [_pay(31, 50, 100)],
        [_pay(32, 120, 100)],
        "amount <= balance through LangChain.",
    ),
    _r(
        "author_is_owner_core",
        "core",
        OWNER_TOOLS,
        owner_policy,
        [_close(5, "ann", "ann")],
        [_close(6, "ann", "zed")],
        "Close when the reply's author is the ticket's owner; now someone else replied.",
    ),
    _r(
        "author_is_owner_family_core",
        "core",
        OWNER_TOOLS,
        owner_policy,
        [_close(5, "ann", "ann"), _close(6, "bob", "bob")],
        [_close(7, "cy", "dan")],
        "Two runs showed other owners (equal to the authors); the equality flips.",
    ),
    _r(
        "author_is_owner_pydantic_ai",
        "pydantic_ai",
        OWNER_TOOLS,
        owner_policy,
        [_close(5, "ann", "ann")],
        [_close(6, "bob", "eve")],
        "author == owner through pydantic-ai.",
    ),
    _r(
        "due_before_today_core",
        "core",
        LATE_TOOLS,
        late_policy,
        [_late(41, "2026-12-01", "2026-12-04")],
        [_late(42, "2026-12-10", "2026-12-04")],
        "A late notice when due < today; the due date is now after today.",
    ),
    _r(
        "account_read_is_account_asked_core",
        "core",
        ACCOUNT_TOOLS,
        account_policy,
        [_account("ada@x.io")],
        [_account("bob@x.io", harmless=True), _account("cy@x.io")],
        "The account read must be the one asked about (a leaf equal to a param); for cy it is not.",
    ),
    _r(
        "amounts_within_range_family_core",
        "core",
        PAY_TOOLS,
        pay_policy,
        [_pay_ok(31, 50), _pay_ok(32, 80), _pay_ok(33, 30)],
        [_pay_ok(34, 60)],
        "Three runs paid amounts 30-80 from a balance of 1000: the next amount within range replays.",
    ),
    Scenario(
        "amount_within_balance_family_restart_core",
        "relations",
        "core",
        PAY_TOOLS,
        pay_policy,
        [_pay(31, 50, 100), _pay(32, 80, 200), _pay(33, 30, 60)],
        [_pay(34, 70, 65), _pay_ok(35, 60)],
        store="sqlite",
        restart=True,
        doc="The relation family on SQLite, probed by another worker: the relation flips for 70 against 65.",
    ),
]
