"""Computed values: a sum, a product, a percentage... must not replay as the recorded constant."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .harness import Answer, Call, Front, Policy, Run, Scenario, Step, Tool
from .kit import done, num, out, word


def _c(
    name: str,
    front: Front,
    tools: list[Tool],
    policy: Policy,
    text: str,
    records: list[dict[str, Any]],
    probes: list[dict[str, Any]],
    doc: str,
    params: Mapping[str, Any] | None = None,
    output_type: type | None = None,
) -> Scenario:
    p = dict(params or {})
    return Scenario(
        name,
        "computed",
        front,
        tools,
        policy,
        [Run(text, w, p) for w in records],
        [Run(text, w, p) for w in probes],
        output_type=output_type,
        doc=doc,
    )


def charge(w: dict[str, Any], account: str, amount: float) -> str:
    w["charges"].append((account, amount))
    return "charged"


CHARGE = Tool("charge", charge, check=lambda w, account, amount: w["card_ok"])

# ---- sum of a cart ----------------------------------------------------------------------------------------


def get_cart(w: dict[str, Any], cart_id: int) -> dict[str, Any]:
    return {"cart_id": cart_id, "items": [{"sku": s, "price": p} for s, p in w["cart"].items()]}


CART_TOOLS = [Tool("get_cart", get_cart, check=lambda w, cart_id: True), CHARGE]


def cart_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    cart = num(text, "cart")
    if not done(h, "get_cart"):
        return Call("get_cart", {"cart_id": cart})
    total = sum(i["price"] for i in out(h, "get_cart")["items"])
    if not done(h, "charge"):
        return Call("charge", {"account": "acme", "amount": total})
    return Answer(f"Charged {total} for cart {cart}.")


def cart(**prices: int) -> dict[str, Any]:
    return {"cart": dict(prices), "charges": [], "card_ok": True}


# ---- product: unit price times a quantity -----------------------------------------------------------------


def get_unit_price(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {"sku": sku, "unit": w["units"][sku]}


def invoice(w: dict[str, Any], sku: str, total: int) -> str:
    w["invoices"].append((sku, total))
    return "invoiced"


PRODUCT_TOOLS = [
    Tool("get_unit_price", get_unit_price, check=lambda w, sku: sku in w["units"]),
    Tool("invoice", invoice, check=lambda w, sku, total: w["ledger_open"]),
]


def product_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    qty, sku = num(text, "invoice"), word(text, "of")
    if not done(h, "get_unit_price"):
        return Call("get_unit_price", {"sku": sku})
    total = out(h, "get_unit_price")["unit"] * qty
    if not done(h, "invoice"):
        return Call("invoice", {"sku": sku, "total": total})
    return Answer(f"Invoiced {total} for {qty} {sku}.")


def units(widget: int) -> dict[str, Any]:
    return {"units": {"widget": widget}, "invoices": [], "ledger_open": True}


# ---- percentage, difference --------------------------------------------------------------------------------


def get_order(w: dict[str, Any], order_id: int) -> dict[str, Any]:
    return {"order_id": order_id, "amount": w["amount"]}


def refund(w: dict[str, Any], order_id: int, amount: float) -> str:
    w["refunds"].append((order_id, amount))
    return "refunded"


PERCENT_TOOLS = [
    Tool("get_order", get_order, check=lambda w, order_id: True),
    Tool("refund", refund, check=lambda w, order_id, amount: w["method"]),
]


def percent_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    order = num(text, "order")
    if not done(h, "get_order"):
        return Call("get_order", {"order_id": order})
    part = out(h, "get_order")["amount"] * 10 // 100
    if not done(h, "refund"):
        return Call("refund", {"order_id": order, "amount": part})
    return Answer(f"Refunded 10% of order {order}: {part}.")


def order(amount: int) -> dict[str, Any]:
    return {"amount": amount, "refunds": [], "method": "card"}


def get_wallet(w: dict[str, Any], account: str) -> dict[str, Any]:
    return {"account": account, "balance": w["balance"], "due": w["due"]}


def top_up(w: dict[str, Any], account: str, amount: int) -> str:
    w["topups"].append((account, amount))
    return "topped up"


DIFF_TOOLS = [
    Tool("get_wallet", get_wallet, check=lambda w, account: True),
    Tool("top_up", top_up, check=lambda w, account, amount: w["bank_up"]),
]


def diff_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    account = word(text, "account")
    if not done(h, "get_wallet"):
        return Call("get_wallet", {"account": account})
    wallet = out(h, "get_wallet")
    gap = wallet["due"] - wallet["balance"]
    if gap <= 0:
        return Answer("Nothing to top up.")
    if not done(h, "top_up"):
        return Call("top_up", {"account": account, "amount": gap})
    return Answer(f"Topped up {gap}.")


def wallet(balance: int, due: int) -> dict[str, Any]:
    return {"balance": balance, "due": due, "topups": [], "bank_up": True}


# ---- count, max, min ---------------------------------------------------------------------------------------


def list_open(w: dict[str, Any], team: str) -> list[dict[str, Any]]:
    return [{"id": t} for t in w["open"]]


def post_report(w: dict[str, Any], team: str, text: str) -> str:
    w["reports"].append((team, text))
    return "posted"


COUNT_TOOLS = [
    Tool("list_open", list_open, check=lambda w, team: True),
    Tool("post_report", post_report, check=lambda w, team, text: w["channel_up"]),
]


def count_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    team = word(text, "team")
    if not done(h, "list_open"):
        return Call("list_open", {"team": team})
    n = len(out(h, "list_open"))
    if not done(h, "post_report"):
        return Call("post_report", {"team": team, "text": f"{n} tickets open"})
    return Answer(f"Reported {n} open tickets.")


def open_tickets(*ids: int) -> dict[str, Any]:
    return {"open": list(ids), "reports": [], "channel_up": True}


def get_readings(w: dict[str, Any], sensor: str) -> list[float]:
    return list(w["readings"])


def alert(w: dict[str, Any], sensor: str, value: float) -> str:
    w["alerts"].append((sensor, value))
    return "alerted"


PEAK_TOOLS = [
    Tool("get_readings", get_readings, check=lambda w, sensor: True),
    Tool("alert", alert, check=lambda w, sensor, value: w["pager_up"]),
]


def peak_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    sensor, lowest = word(text, "sensor"), "lowest" in text
    if not done(h, "get_readings"):
        return Call("get_readings", {"sensor": sensor})
    values = out(h, "get_readings")
    value = min(values) if lowest else max(values)
    if not done(h, "alert"):
        return Call("alert", {"sensor": sensor, "value": value})
    return Answer(f"Alerted {value} on {sensor}.")


def readings(*values: float) -> dict[str, Any]:
    return {"readings": list(values), "alerts": [], "pager_up": True}


# ---- truncation, f-string arithmetic -----------------------------------------------------------------------


def get_email(w: dict[str, Any], message_id: int) -> dict[str, Any]:
    return {"id": message_id, "body": w["body"]}


def post_summary(w: dict[str, Any], text: str) -> str:
    w["posts"].append(text)
    return "posted"


TRUNC_TOOLS = [
    Tool("get_email", get_email, check=lambda w, message_id: True),
    Tool("post_summary", post_summary, check=lambda w, text: w["channel_up"]),
]


def trunc_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    mid = num(text, "email")
    if not done(h, "get_email"):
        return Call("get_email", {"message_id": mid})
    head = out(h, "get_email")["body"][:20]
    if not done(h, "post_summary"):
        return Call("post_summary", {"text": head})
    return Answer("Posted the summary.")


def email(body: str) -> dict[str, Any]:
    return {"body": body, "posts": [], "channel_up": True}


def get_stats(w: dict[str, Any], project: str) -> dict[str, Any]:
    return {"project": project, "open": w["open"], "closed": w["closed"]}


STATS_TOOLS = [Tool("get_stats", get_stats, check=lambda w, project: True)]


def stats_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    project = word(text, "project")
    if not done(h, "get_stats"):
        return Call("get_stats", {"project": project})
    s = out(h, "get_stats")
    return Answer(f"{project} has {s['open'] + s['closed']} tasks, {s['open']} of them open.")


# ---- date arithmetic from a clock tool ---------------------------------------------------------------------


def today(w: dict[str, Any]) -> str:
    return str(w["today"])


def schedule(w: dict[str, Any], what: str, date: str) -> str:
    w["scheduled"].append((what, date))
    return "scheduled"


CLOCK_TOOLS = [
    Tool("today", today, check=lambda w: True),
    Tool("schedule", schedule, check=lambda w, what, date: w["calendar_up"]),
]


def in_3_days_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "today"):
        return Call("today")
    due = (dt.date.fromisoformat(out(h, "today")) + dt.timedelta(days=3)).isoformat()
    if not done(h, "schedule"):
        return Call("schedule", {"what": "follow-up", "date": due})
    return Answer(f"Follow-up scheduled for {due}.")


def next_monday_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "today"):
        return Call("today")
    d = dt.date.fromisoformat(out(h, "today"))
    monday = (d + dt.timedelta(days=7 - d.weekday())).isoformat()
    if not done(h, "schedule"):
        return Call("schedule", {"what": "review", "date": monday})
    return Answer(f"Review booked for {monday}.")


def next_monday_from_stamp_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    """Next Monday from a clock that returns a timestamp (two runs in one week book the same day)."""
    if not done(h, "today"):
        return Call("today")
    d = dt.datetime.fromisoformat(str(out(h, "today")).replace("Z", "+00:00")).date()
    monday = (d + dt.timedelta(days=7 - d.weekday())).isoformat()
    if not done(h, "schedule"):
        return Call("schedule", {"what": "review", "date": monday})
    return Answer(f"Review booked for {monday}.")


def clock(day: str) -> dict[str, Any]:
    return {"today": day, "scheduled": [], "calendar_up": True}


# ---- unit conversion: dollars to cents ---------------------------------------------------------------------


def get_price(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {"sku": sku, "dollars": w["dollars"]}


def charge_cents(w: dict[str, Any], sku: str, cents: int) -> str:
    w["charges"].append((sku, cents))
    return "charged"


CENTS_TOOLS = [
    Tool("get_price", get_price, check=lambda w, sku: True),
    Tool("charge_cents", charge_cents, check=lambda w, sku, cents: w["card_ok"]),
]


def cents_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    sku = word(text, "for")
    if not done(h, "get_price"):
        return Call("get_price", {"sku": sku})
    cents = round(out(h, "get_price")["dollars"] * 100)
    if not done(h, "charge_cents"):
        return Call("charge_cents", {"sku": sku, "cents": cents})
    return Answer(f"Charged {cents} cents.")


def quote_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    sku = word(text, "of")
    if not done(h, "get_price"):
        return Call("get_price", {"sku": sku})
    return Answer(f"The total is {round(out(h, 'get_price')['dollars'] * 100)} cents.")


def dollars(price: float) -> dict[str, Any]:
    return {"dollars": price, "charges": [], "card_ok": True}


# ---- a pydantic-ai structured output: total = unit * qty ---------------------------------------------------


class Quote(BaseModel):
    """A quote the agent returns as a structured output."""

    sku: str
    qty: int
    total: int


def structured_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    qty, sku = num(text, "quote"), word(text, "of")
    if not done(h, "get_unit_price"):
        return Call("get_unit_price", {"sku": sku})
    return Answer({"sku": sku, "qty": qty, "total": out(h, "get_unit_price")["unit"] * qty})


SCENARIOS = [
    _c(
        "sum_of_cart_core",
        "core",
        CART_TOOLS,
        cart_policy,
        "check out cart 5",
        [cart(a=10, b=20)],
        [cart(a=10, b=25)],
        "charge(sum of prices): a price changed.",
        {"cart": 5},
    ),
    _c(
        "sum_of_cart_langchain",
        "langchain",
        CART_TOOLS,
        cart_policy,
        "check out cart 5",
        [cart(a=10, b=20)],
        [cart(a=10, b=20, c=7)],
        "The sum through LangChain: an item was added.",
        {"cart": 5},
    ),
    _c(
        "product_unit_times_qty_core",
        "core",
        PRODUCT_TOOLS,
        product_policy,
        "invoice 5 of widget",
        [units(12)],
        [units(15)],
        "invoice(unit * qty): the unit price changed.",
    ),
    _c(
        "percentage_core",
        "core",
        PERCENT_TOOLS,
        percent_policy,
        "refund 10% of order 77",
        [order(80)],
        [order(120)],
        "refund(10% of the amount): the amount changed.",
        {"order": 77},
    ),
    _c(
        "percentage_pydantic_ai",
        "pydantic_ai",
        PERCENT_TOOLS,
        percent_policy,
        "refund 10% of order 77",
        [order(80)],
        [order(300)],
        "The percentage through pydantic-ai.",
        {"order": 77},
    ),
    _c(
        "difference_core",
        "core",
        DIFF_TOOLS,
        diff_policy,
        "top up account main",
        [wallet(30, 100)],
        [wallet(50, 100), wallet(120, 100)],
        "top_up(due - balance): the balance changed (then covers the due).",
    ),
    _c(
        "count_core",
        "core",
        COUNT_TOOLS,
        count_policy,
        "report on team web",
        [open_tickets(1, 2, 3)],
        [open_tickets(1, 2, 3, 4)],
        "A count in a text: one more ticket is open.",
    ),
    _c(
        "max_core",
        "core",
        PEAK_TOOLS,
        peak_policy,
        "alert the peak of sensor s1",
        [readings(3.5, 7.25, 5.0)],
        [readings(3.5, 7.25, 9.5)],
        "alert(max of readings): a higher reading came in.",
    ),
    _c(
        "min_pydantic_ai",
        "pydantic_ai",
        PEAK_TOOLS,
        peak_policy,
        "alert the lowest of sensor s1",
        [readings(3.5, 7.25, 5.0)],
        [readings(1.5, 7.25, 5.0)],
        "alert(min of readings) through pydantic-ai: a lower reading.",
    ),
    _c(
        "truncation_core",
        "core",
        TRUNC_TOOLS,
        trunc_policy,
        "summarise email 9",
        [email("Server down since 9am, please look")],
        [email("All good now, closing this thread")],
        "post_summary(body[:20]): another body.",
        {"message": 9},
    ),
    _c(
        "fstring_arithmetic_core",
        "core",
        STATS_TOOLS,
        stats_policy,
        "count the tasks of project apollo",
        [{"open": 3, "closed": 4}],
        [{"open": 5, "closed": 4}],
        "An answer f'{open + closed} tasks': the open count changed.",
    ),
    _c(
        "date_plus_3_days_core",
        "core",
        CLOCK_TOOLS,
        in_3_days_policy,
        "schedule a follow-up",
        [clock("2026-12-04")],
        [clock("2026-12-10")],
        "schedule(today + 3 days) from a clock tool: another day.",
    ),
    _c(
        "next_monday_from_a_timestamp_core",
        "core",
        CLOCK_TOOLS,
        next_monday_from_stamp_policy,
        "book the weekly review",
        [clock("2026-12-03T09:00:00Z"), clock("2026-12-04T10:30:00Z")],
        [clock("2026-12-08T09:00:00Z"), clock("2026-12-03T15:00:00Z")],
        "schedule(next Monday) from a clock's timestamp; two runs in one week made the time look free.",
    ),
    _c(
        "next_monday_langchain",
        "langchain",
        CLOCK_TOOLS,
        next_monday_policy,
        "book the weekly review",
        [clock("2026-12-04")],
        [clock("2026-12-08")],
        "schedule(next Monday) from a clock tool, through LangChain.",
    ),
    _c(
        "dollars_to_cents_core",
        "core",
        CENTS_TOOLS,
        cents_policy,
        "charge the price for lamp",
        [dollars(15.5)],
        [dollars(12.25)],
        "charge_cents(dollars * 100): the price changed.",
    ),
    _c(
        "answer_total_in_cents_langchain",
        "langchain",
        CENTS_TOOLS,
        quote_policy,
        "quote the price of lamp",
        [dollars(15.5)],
        [dollars(17.0)],
        "A LangChain answer 'The total is 1550 cents': the price changed.",
    ),
    _c(
        "structured_total_pydantic_ai",
        "pydantic_ai",
        PRODUCT_TOOLS,
        structured_policy,
        "quote 4 of widget",
        [units(12)],
        [units(20)],
        "A pydantic-ai structured output total = unit * qty: the unit price changed.",
        output_type=Quote,
    ),
]
