"""Numbers and dates each within the range seen, whose decision is not a threshold on one of them."""

from __future__ import annotations

import datetime
from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, num, out, sc

# ---- 1. a delivery date on a weekend is moved (a date within range, another weekday) -----------------------


def get_delivery(w: dict[str, Any], order_id: int) -> dict[str, Any]:
    return {"order_id": order_id, "date": w["date"], "carrier": "dhl"}


def move_delivery(w: dict[str, Any], order_id: int, reason: str) -> str:
    w["moved"].append((order_id, reason))
    return "moved to monday"


def confirm_delivery(w: dict[str, Any], order_id: int) -> str:
    w["confirmed"].append(order_id)
    return "confirmed"


DELIVERY_TOOLS = [
    Tool("get_delivery", get_delivery, check=lambda w, order_id: True),
    Tool("move_delivery", move_delivery, check=lambda w, order_id, reason: True),
    Tool("confirm_delivery", confirm_delivery, check=lambda w, order_id: True),
]


def weekend_policy(text: str, ctx: str, h: list[Step]):
    oid = num(text, "order")
    if not done(h, "get_delivery"):
        return Call("get_delivery", {"order_id": oid})
    day = datetime.date.fromisoformat(out(h, "get_delivery")["date"])
    if day.weekday() >= 5:
        if not done(h, "move_delivery"):
            return Call("move_delivery", {"order_id": oid, "reason": "the depot is closed at weekends"})
        return Answer("Moved the delivery to a weekday.")
    if not done(h, "confirm_delivery"):
        return Call("confirm_delivery", {"order_id": oid})
    return Answer("Delivery confirmed.")


def _deliv(oid: int, date: str) -> Run:
    return Run(
        f"schedule the delivery of order {oid}",
        {"date": date, "moved": [], "confirmed": []},
        {"order_id": oid},
    )


# ---- 2. outside business hours, email instead of calling (a timestamp seen twice) ---------------------------


def get_callback(w: dict[str, Any], ticket: int) -> dict[str, Any]:
    return {"ticket": ticket, "requested_at": w["at"], "phone": "+44 20 7946 0018"}


def call_customer(w: dict[str, Any], ticket: int) -> str:
    w["calls"].append(ticket)
    return "calling"


def email_customer(w: dict[str, Any], ticket: int, body: str) -> str:
    w["emails"].append((ticket, body))
    return "sent"


HOURS_TOOLS = [
    Tool("get_callback", get_callback, check=lambda w, ticket: True),
    Tool("call_customer", call_customer, check=lambda w, ticket: True),
    Tool("email_customer", email_customer, check=lambda w, ticket, body: True),
]


def hours_policy(text: str, ctx: str, h: list[Step]):
    t = num(text, "ticket")
    if not done(h, "get_callback"):
        return Call("get_callback", {"ticket": t})
    at = datetime.datetime.fromisoformat(out(h, "get_callback")["requested_at"].replace("Z", "+00:00"))
    if 9 <= at.hour < 17:
        if not done(h, "call_customer"):
            return Call("call_customer", {"ticket": t})
        return Answer("Calling the customer back.")
    if not done(h, "email_customer"):
        return Call("email_customer", {"ticket": t, "body": "We will call you in office hours."})
    return Answer("Emailed: outside office hours.")


def _cb(t: int, at: str) -> Run:
    return Run(f"handle the callback of ticket {t}", {"at": at, "calls": [], "emails": []}, {"ticket": t})


# ---- 3. even house numbers are on the east route (parity within the range seen) -----------------------------


def get_address(w: dict[str, Any], parcel: int) -> dict[str, Any]:
    return {"parcel": parcel, "street": "Mill Lane", "house_number": w["house"]}


def assign_route(w: dict[str, Any], parcel: int, route: str) -> str:
    w["routes"].append((parcel, route))
    return "assigned"


ROUTE_TOOLS = [
    Tool("get_address", get_address, check=lambda w, parcel: True),
    Tool("assign_route", assign_route, check=lambda w, parcel, route: True),
]


def route_policy(text: str, ctx: str, h: list[Step]):
    p = num(text, "parcel")
    if not done(h, "get_address"):
        return Call("get_address", {"parcel": p})
    if not done(h, "assign_route"):
        side = "east" if out(h, "get_address")["house_number"] % 2 == 0 else "west"
        return Call("assign_route", {"parcel": p, "route": side})
    return Answer("Routed.")


def _parcel(p: int, house: int) -> Run:
    return Run(f"route parcel {p}", {"house": house, "routes": []}, {"parcel": p})


# ---- 4. a cart's total over 100 needs approval (each price within range, their sum not) -------------------


def get_cart(w: dict[str, Any], cart: int) -> dict[str, Any]:
    return {"cart": cart, "lines": [{"sku": s, "price": p} for s, p in w["lines"]]}


def checkout(w: dict[str, Any], cart: int) -> str:
    w["checked_out"].append(cart)
    return "paid"


def ask_approval(w: dict[str, Any], cart: int) -> str:
    w["approvals"].append(cart)
    return "approval requested"


CART_TOOLS = [
    Tool("get_cart", get_cart, check=lambda w, cart: True),
    Tool("checkout", checkout, check=lambda w, cart: True),
    Tool("ask_approval", ask_approval, check=lambda w, cart: True),
]


def cart_policy(text: str, ctx: str, h: list[Step]):
    c = num(text, "cart")
    if not done(h, "get_cart"):
        return Call("get_cart", {"cart": c})
    total = sum(line["price"] for line in out(h, "get_cart")["lines"])
    if total > 100:
        if not done(h, "ask_approval"):
            return Call("ask_approval", {"cart": c})
        return Answer("Sent for approval.")
    if not done(h, "checkout"):
        return Call("checkout", {"cart": c})
    return Answer("Checked out.")


def _cart(c: int, a: int, b: int) -> Run:
    return Run(
        f"check out cart {c}",
        {"lines": [("pen", a), ("ink", b)], "checked_out": [], "approvals": []},
        {"cart": c},
    )


# ---- 5. |reading - setpoint| > 5 raises an alarm (a non-monotone decision on two numbers) ---------------


def read_sensor(w: dict[str, Any], room: int) -> dict[str, Any]:
    return {"room": room, "reading": w["reading"], "setpoint": w["setpoint"]}


def raise_alarm(w: dict[str, Any], room: int) -> str:
    w["alarms"].append(room)
    return "alarm raised"


ALARM_TOOLS = [
    Tool("read_sensor", read_sensor, check=lambda w, room: True),
    Tool("raise_alarm", raise_alarm, check=lambda w, room: True),
]


def alarm_policy(text: str, ctx: str, h: list[Step]):
    r = num(text, "room")
    if not done(h, "read_sensor"):
        return Call("read_sensor", {"room": r})
    s = out(h, "read_sensor")
    if abs(s["reading"] - s["setpoint"]) > 5:
        if not done(h, "raise_alarm"):
            return Call("raise_alarm", {"room": r})
        return Answer("Alarm raised.")
    return Answer("Room is fine.")


def _room(r: int, reading: int, setpoint: int) -> Run:
    return Run(f"check room {r}", {"reading": reading, "setpoint": setpoint, "alarms": []}, {"room": r})


# ---- 6. amount <= balance, with 50 other numbers read first (past the relations' bound) -------------------


def get_statement(w: dict[str, Any], account: int) -> dict[str, Any]:
    stats = {f"m{i:02d}": 100 + i for i in range(50)}
    return {"account": account, "metrics": stats, "z_amount": w["amount"]}


def get_funds(w: dict[str, Any], account: int) -> dict[str, Any]:
    return {"account": account, "balance": w["balance"]}


def pay_statement(w: dict[str, Any], account: int) -> str:
    w["paid"].append(account)
    return "paid"


FUNDS_TOOLS = [
    Tool("get_statement", get_statement, check=lambda w, account: True),
    Tool("get_funds", get_funds, check=lambda w, account: True),
    Tool("pay_statement", pay_statement, check=lambda w, account: True),
]


def funds_policy(text: str, ctx: str, h: list[Step]):
    a = num(text, "account")
    if not done(h, "get_statement"):
        return Call("get_statement", {"account": a})
    if not done(h, "get_funds"):
        return Call("get_funds", {"account": a})
    if out(h, "get_statement")["z_amount"] <= out(h, "get_funds")["balance"]:
        if not done(h, "pay_statement"):
            return Call("pay_statement", {"account": a})
        return Answer("Paid.")
    return Answer("Not enough funds.")


def _stmt(a: int, amount: int, balance: int) -> Run:
    return Run(
        f"pay the statement of account {a}",
        {"amount": amount, "balance": balance, "paid": []},
        {"account": a},
    )


# ---- 7. the same without the padding (control) ------------------------------------------------------------


def get_statement_small(w: dict[str, Any], account: int) -> dict[str, Any]:
    return {"account": account, "z_amount": w["amount"]}


SMALL_FUNDS_TOOLS = [
    Tool("get_statement", get_statement_small, check=lambda w, account: True),
    FUNDS_TOOLS[1],
    FUNDS_TOOLS[2],
]


# ---- 8. a < x < b: a param between two outputs (three values) ---------------------------------------------


def get_limits(w: dict[str, Any], zone: int) -> dict[str, Any]:
    return {"zone": zone, "low": w["low"], "high": w["high"]}


def set_temp(w: dict[str, Any], zone: int, temp: int) -> str:
    w["set"].append((zone, temp))
    return "set"


LIMIT_TOOLS = [
    Tool("get_limits", get_limits, check=lambda w, zone: True),
    Tool("set_temp", set_temp, check=lambda w, zone, temp: True),
]


def limit_policy(text: str, ctx: str, h: list[Step]):
    z, t = num(text, "zone"), num(text, "to")
    if not done(h, "get_limits"):
        return Call("get_limits", {"zone": z})
    lim = out(h, "get_limits")
    if lim["low"] <= t <= lim["high"]:
        if not done(h, "set_temp"):
            return Call("set_temp", {"zone": z, "temp": t})
        return Answer(f"Zone {z} set to {t}.")
    return Answer(f"{t} is outside the zone's limits.")


def _zone(z: int, t: int, low: int, high: int) -> Run:
    return Run(f"set zone {z} to {t}", {"low": low, "high": high, "set": []}, {"zone": z, "temp": t})


SCENARIOS = [
    sc(
        "rt_weekend_date_core",
        "branches",
        DELIVERY_TOOLS,
        weekend_policy,
        [_deliv(1, "2024-06-01"), _deliv(2, "2024-06-09")],  # a Saturday, a Sunday
        [_deliv(3, "2024-06-08"), _deliv(4, "2024-06-05")],  # a Saturday, a Wednesday
        "Move a delivery that falls on a weekend; Sat 06-01 and Sun 06-09 recorded, Wed 06-05 lies between.",
    ),
    sc(
        "rt_business_hours_core",
        "branches",
        HOURS_TOOLS,
        hours_policy,
        [_cb(1, "2024-06-03T20:15:00Z"), _cb(2, "2024-06-04T22:40:00Z")],
        [_cb(3, "2024-06-05T19:00:00Z"), _cb(4, "2024-06-06T10:30:00Z")],
        "Email outside office hours, call within; two evening timestamps recorded, a morning one now.",
    ),
    sc(
        "rt_business_hours_range_core",
        "branches",
        HOURS_TOOLS,
        hours_policy,
        [_cb(1, "2024-06-03T07:15:00Z"), _cb(2, "2024-06-03T20:40:00Z")],
        [_cb(3, "2024-06-03T12:00:00Z")],
        "The same with the probe's time inside the recorded range (07:15-20:40 on one day).",
    ),
    sc(
        "rt_house_number_parity_core",
        "branches",
        ROUTE_TOOLS,
        route_policy,
        [_parcel(1, 2), _parcel(2, 8)],
        [_parcel(3, 6), _parcel(4, 5)],
        "East route for even house numbers (2, 8 recorded); 5 lies between and is odd.",
    ),
    sc(
        "rt_cart_sum_core",
        "relations",
        CART_TOOLS,
        cart_policy,
        [_cart(1, 10, 80), _cart(2, 80, 10)],
        [_cart(3, 40, 40), _cart(4, 80, 80)],
        "Approval when the cart's total is over 100; 10+80 and 80+10 recorded, 80+80 now.",
    ),
    sc(
        "rt_abs_difference_core",
        "relations",
        ALARM_TOOLS,
        alarm_policy,
        [_room(1, 30, 20), _room(2, 20, 30)],
        [_room(3, 31, 20), _room(4, 25, 25)],
        "Alarm when |reading - setpoint| > 5; (30,20) and (20,30) alarmed; (25,25) is inside both ranges.",
    ),
    sc(
        "rt_relation_past_48_numbers_core",
        "relations",
        FUNDS_TOOLS,
        funds_policy,
        [_stmt(1, 30, 60), _stmt(2, 80, 200), _stmt(3, 50, 100)],
        [_stmt(4, 60, 150), _stmt(5, 70, 65)],
        "amount <= balance, with 50 constant metrics read before the amount: 70 against 65 flips the relation.",
    ),
    sc(
        "rt_relation_small_control_core",
        "relations",
        SMALL_FUNDS_TOOLS,
        funds_policy,
        [_stmt(1, 30, 60), _stmt(2, 80, 200), _stmt(3, 50, 100)],
        [_stmt(4, 60, 150), _stmt(5, 70, 65)],
        "Control for the one above: the same relation without the padding.",
    ),
    sc(
        "rt_param_between_outputs_core",
        "relations",
        LIMIT_TOOLS,
        limit_policy,
        [_zone(1, 20, 15, 25), _zone(2, 22, 18, 30), _zone(3, 19, 16, 21)],
        [_zone(4, 21, 17, 24), _zone(5, 22, 17, 21)],
        "low <= temp <= high, three values; the probe's temp is above high, each within its range.",
    ),
]
