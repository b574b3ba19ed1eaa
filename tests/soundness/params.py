"""Params: values computed from a param, equal to an operand or to a constant when recorded."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Front, Policy, Run, Scenario, Step, Tool
from .kit import done, num, out


def _p(
    name: str,
    front: Front,
    tools: list[Tool],
    policy: Policy,
    records: list[Run],
    probes: list[Run],
    doc: str,
) -> Scenario:
    return Scenario(name, "params", front, tools, policy, records, probes, doc=doc)


def _world() -> dict[str, Any]:
    return {"orders": [], "payments": [], "notes": [], "bookings": [], "fee": 0, "minimum": 50}


# ---- pay(qty * 40): a param nothing in the trajectory is bound to -----------------------------------------


def place_order(w: dict[str, Any], item: str, qty: int) -> dict[str, Any]:
    w["orders"].append((item, qty))
    return {"order": len(w["orders"]), "item": item}


def pay(w: dict[str, Any], amount: int) -> str:
    w["payments"].append(amount)
    return "paid"


ORDER_TOOLS = [
    Tool("place_order", place_order, check=lambda w, item, qty: True),
    Tool("pay", pay, check=lambda w, amount: True),
]


def chairs_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    qty = num(text, "buy")
    if not done(h, "pay"):
        return Call("pay", {"amount": qty * 40})
    return Answer("Paid for the chairs.")


def order_chairs_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    qty = num(text, "buy")
    if not done(h, "place_order"):
        return Call("place_order", {"item": "chair", "qty": qty})
    if not done(h, "pay"):
        return Call("pay", {"amount": qty * 40})
    return Answer("Order placed and paid.")


def _buy(qty: int) -> Run:
    return Run(f"buy {qty} chairs", _world(), {"qty": qty})


# ---- amount + fee with fee 0 -------------------------------------------------------------------------------


def get_fee(w: dict[str, Any], method: str) -> dict[str, Any]:
    return {"method": method, "fee": w["fee"]}


FEE_TOOLS = [Tool("get_fee", get_fee, check=lambda w, method: True), ORDER_TOOLS[1]]


def fee_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    amount = num(text, "pay")
    if not done(h, "get_fee"):
        return Call("get_fee", {"method": "card"})
    total = amount + out(h, "get_fee")["fee"]
    if not done(h, "pay"):
        return Call("pay", {"amount": total})
    return Answer(f"Paid {total}.")


def _fee(amount: int, fee: int) -> Run:
    return Run(f"pay {amount} by card", _world() | {"fee": fee}, {"amount": amount})


# ---- max(requested, minimum) -------------------------------------------------------------------------------


def get_minimum(w: dict[str, Any], item: str) -> dict[str, Any]:
    return {"item": item, "minimum": w["minimum"]}


MIN_TOOLS = [Tool("get_minimum", get_minimum, check=lambda w, item: True), ORDER_TOOLS[0]]


def minimum_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    requested = num(text, "order")
    if not done(h, "get_minimum"):
        return Call("get_minimum", {"item": "bolts"})
    qty = max(requested, out(h, "get_minimum")["minimum"])
    if not done(h, "place_order"):
        return Call("place_order", {"item": "bolts", "qty": qty})
    return Answer(f"Ordered {qty} bolts.")


def _minimum(requested: int, minimum: int) -> Run:
    return Run(f"order {requested} bolts", _world() | {"minimum": minimum}, {"qty": requested})


# ---- book(nights, 2): a small int param equal to a constant argument --------------------------------------


def book(w: dict[str, Any], nights: int, guests: int) -> str:
    w["bookings"].append((nights, guests))
    return "booked"


BOOK_TOOLS = [Tool("book", book, check=lambda w, nights, guests: True)]


def book_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    nights = num(text, "book")
    if not done(h, "book"):
        return Call("book", {"nights": nights, "guests": 2})  # the agent's default: a couple
    return Answer(f"Booked {nights} nights.")


def _book(nights: int) -> Run:
    return Run(f"book {nights} nights at the lodge", _world(), {"nights": nights})


# ---- "Ordered {qty} chairs for room 3": a param's number next to an equal constant -------------------------


def add_note(w: dict[str, Any], text: str) -> str:
    w["notes"].append(text)
    return "noted"


NOTE_TOOLS = [ORDER_TOOLS[0], Tool("add_note", add_note, check=lambda w, text: True)]


def note_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    qty = num(text, "order")
    if not done(h, "place_order"):
        return Call("place_order", {"item": "chair", "qty": qty})
    note = f"Ordered {qty} chairs for room 3"  # the agent's own room: it works from room 3
    if not done(h, "add_note"):
        return Call("add_note", {"text": note})
    return Answer(note)


def _note(qty: int) -> Run:
    return Run(f"order {qty} chairs", _world(), {"qty": qty})


SCENARIOS = [
    _p(
        "pay_qty_times_40_core",
        "core",
        ORDER_TOOLS,
        chairs_policy,
        [_buy(3)],
        [_buy(5)],
        "pay(qty * 40): qty is a param nothing in the trajectory is bound to.",
    ),
    _p(
        "order_then_pay_qty_times_40_core",
        "core",
        ORDER_TOOLS,
        order_chairs_policy,
        [_buy(3)],
        [_buy(5)],
        "place_order(qty) then pay(qty * 40): qty is bound to the order, the payment is a constant.",
    ),
    _p(
        "pay_qty_times_40_langchain",
        "langchain",
        ORDER_TOOLS,
        chairs_policy,
        [_buy(3)],
        [_buy(4)],
        "pay(qty * 40) through LangChain.",
    ),
    _p(
        "amount_plus_zero_fee_core",
        "core",
        FEE_TOOLS,
        fee_policy,
        [_fee(100, 0)],
        [_fee(100, 5), _fee(150, 0)],
        "amount + fee with fee 0 when recorded is not amount alone: the fee is now 5.",
    ),
    _p(
        "amount_plus_zero_fee_pydantic_ai",
        "pydantic_ai",
        FEE_TOOLS,
        fee_policy,
        [_fee(100, 0)],
        [_fee(120, 3)],
        "amount + fee through pydantic-ai, the fee now 3.",
    ),
    _p(
        "max_requested_minimum_core",
        "core",
        MIN_TOOLS,
        minimum_policy,
        [_minimum(80, 50)],
        [_minimum(80, 100), _minimum(30, 50)],
        "max(requested, minimum): the minimum now wins.",
    ),
    _p(
        "max_requested_minimum_langchain",
        "langchain",
        MIN_TOOLS,
        minimum_policy,
        [_minimum(20, 50)],
        [_minimum(90, 50)],
        "Recorded with the minimum winning; now the request does.",
    ),
    _p(
        "book_nights_two_guests_core",
        "core",
        BOOK_TOOLS,
        book_policy,
        [_book(2)],
        [_book(5)],
        "book(nights, 2) recorded with nights=2: the guests stay 2.",
    ),
    _p(
        "book_nights_two_guests_pydantic_ai",
        "pydantic_ai",
        BOOK_TOOLS,
        book_policy,
        [_book(2)],
        [_book(4)],
        "book(nights, 2) through pydantic-ai.",
    ),
    _p(
        "note_qty_next_to_room_3_core",
        "core",
        NOTE_TOOLS,
        note_policy,
        [_note(3)],
        [_note(5)],
        "'Ordered {qty} chairs for room 3' recorded with qty=3: the room stays 3.",
    ),
    _p(
        "note_qty_next_to_room_3_langchain",
        "langchain",
        NOTE_TOOLS,
        note_policy,
        [_note(3)],
        [_note(6)],
        "The same text through LangChain.",
    ),
]
