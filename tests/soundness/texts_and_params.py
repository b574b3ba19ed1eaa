"""Red-team scenarios: what reaches a replay through the task text, declared params, learned templates
and the fronts' own context (instructions, structured outputs).

Template scenarios run with ``templates=True`` (``Scenario.options``); the others with the defaults.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from .harness import Answer, Call, Run, Scenario, Tool
from .kit import count, done, num, out, word

T = lambda *a, **k: True  # noqa: E731
TPL = {"templates": True}
S: list[Scenario] = []


def _sc(name, front, tools, policy, records, probes, doc, cls="params", **options):
    return Scenario(name, cls, front, tools, policy, records, probes, doc=doc, **options)


def _tool(name, fn):
    return Tool(name, fn, check=T)


# 1. a declared number param whose digits also stand in the text as another quantity ----------------------


def _stock(w, sku: str):
    return {"sku": sku, "on_hand": w["on_hand"]}


def _ship(w, sku: str, qty: int, service: str) -> str:
    w["shipped"].append((sku, qty, service))
    return "shipped"


SHIP_TOOLS = [_tool("get_stock", _stock), _tool("ship_units", _ship)]


def _ship_policy(text, ctx, h):
    sku = word(text, "sku")
    qty = num(text, "ship")
    days = num(text, "within")
    if not done(h, "get_stock"):
        return Call("get_stock", {"sku": sku})
    if not done(h, "ship_units"):
        return Call("ship_units", {"sku": sku, "qty": qty, "service": "express" if days <= 3 else "ground"})
    return Answer("Shipped.")


_K = [0]


def _ship_run(qty, days, harmless=False):
    _K[0] += 1
    sku = f"SKU-{_K[0]}00{_K[0]}"
    return Run(
        f"ship {qty} units of sku {sku} within {days} days",
        {"on_hand": 50, "shipped": []},
        {"sku": sku, "qty": qty},
        harmless=harmless,
    )


for front in ("core", "openai_agents"):
    S.append(
        _sc(
            f"rt7a_param_digits_twice_in_text_{front}",
            front,
            SHIP_TOOLS,
            _ship_policy,
            [_ship_run(3, 3), _ship_run(2, 2)],
            [_ship_run(3, 3, harmless=True), _ship_run(5, 5), _ship_run(9, 9)],
            "qty is a declared param copied into ship_units; the deadline in days is not declared but "
            "equalled qty in every recorded text, so the task key wrote it as {qty} too; probe 5 units "
            "within 5 days: ground, not express",
        )
    )

# 2. template: a threshold in the text flows into a call and is compared with an output ----------------------


def _audit(w, order: int, limit: int) -> str:
    w["audits"].append((order, limit))
    return "noted"


def _total(w, order: int):
    return {"order": order, "total": w["total"]}


def _refund(w, order: int) -> str:
    w["refunded"].append(order)
    return "refunded"


THRESH_TOOLS = [_tool("audit", _audit), _tool("get_total", _total), _tool("refund", _refund)]


def _thresh_policy(text, ctx, h):
    o = num(text, "order")
    lim = num(text, "under")
    if not done(h, "audit"):
        return Call("audit", {"order": o, "limit": lim})
    if not done(h, "get_total"):
        return Call("get_total", {"order": o})
    if out(h, "get_total")["total"] < lim:
        if not done(h, "refund"):
            return Call("refund", {"order": o})
        return Answer(f"Refunded order {o}.")
    return Answer(f"Order {o} needs approval.")


def _thresh(o, lim, total, harmless=False):
    return Run(
        f"refund order {o} if under {lim}",
        {"total": total, "audits": [], "refunded": []},
        harmless=harmless,
    )


for front in ("core", "langchain"):
    S.append(
        _sc(
            f"rt7a_tpl_threshold_slot_vs_output_{front}",
            front,
            THRESH_TOOLS,
            _thresh_policy,
            [_thresh(4471, 50, 40), _thresh(4480, 70, 65), _thresh(4475, 60, 52)],
            [_thresh(4478, 60, 45, harmless=True), _thresh(4473, 52, 60), _thresh(4476, 55, 55)],
            "plain texts, templates on: the limit flows into audit() so it is a slot; total < limit held "
            "in every run; probe limit 52 with total 60 (each in range), and a tie 55/55",
            cls="context",
            options=TPL,
        )
    )

# 3. template: two number slots whose order matters ----------------------------------------------------------


def _seats(w, flight: int, total: int):
    return {"flight": flight, "held": w["held"]}


def _release(w, flight: int, n: int) -> str:
    w["released"] += n
    return "released"


SEAT_TOOLS = [_tool("held_seats", _seats), _tool("release_seats", _release)]


def _seat_policy(text, ctx, h):
    n = num(text, "release")
    total = num(text, "of")
    f = num(text, "flight")
    if not done(h, "held_seats"):
        return Call("held_seats", {"flight": f, "total": total})
    if n > total:
        return Answer(f"Cannot release {n}: only {total} booked.")
    if not done(h, "release_seats"):
        return Call("release_seats", {"flight": f, "n": n})
    return Answer(f"Released {n} seats.")


def _seat(n, total, flight, harmless=False):
    return Run(
        f"release {n} of {total} seats on flight {flight}",
        {"held": 12, "released": 0},
        harmless=harmless,
    )


for front in ("core", "pydantic_ai"):
    S.append(
        _sc(
            f"rt7a_tpl_two_slots_order_{front}",
            front,
            SEAT_TOOLS,
            _seat_policy,
            [_seat(2, 5, 7001), _seat(6, 9, 7009), _seat(4, 8, 7004)],
            [_seat(3, 7, 7005, harmless=True), _seat(6, 5, 7003)],
            "templates on: n and total both flow (total into held_seats, n into release_seats); n < total "
            "in every run; probe 6 of 5, each within its range",
            cls="relations",
            options=TPL,
        )
    )

# 4. template: two account numbers that must differ -------------------------------------------------------------


def _acct(w, account: int):
    return {"account": account, "balance": w["balance"]}


def _transfer(w, source: int, target: int, amount: int) -> str:
    w["moves"].append((source, target, amount))
    return "moved"


ACCT_TOOLS = [_tool("get_account", _acct), _tool("transfer", _transfer)]


def _acct_policy(text, ctx, h):
    a = num(text, "account")
    b = num(text, "to account")
    amt = num(text, "move")
    if a == b:
        return Answer("Source and target are the same account: nothing to do.")
    if not done(h, "get_account"):
        return Call("get_account", {"account": a})
    if not done(h, "transfer"):
        return Call("transfer", {"source": a, "target": b, "amount": amt})
    return Answer(f"Moved {amt}.")


def _move(a, b, amt, harmless=False):
    return Run(
        f"move {amt} from account {a} to account {b}",
        {"balance": 900, "moves": []},
        harmless=harmless,
    )


S.append(
    _sc(
        "rt7a_tpl_two_accounts_equal_core",
        "core",
        ACCT_TOOLS,
        _acct_policy,
        [_move(1002, 1007, 40), _move(1009, 1003, 60), _move(1004, 1006, 50)],
        [_move(1005, 1006, 45, harmless=True), _move(1005, 1005, 45)],
        "templates on: from and to accounts are number slots; they differed in every run; probe the "
        "same account twice: the agent makes no call",
        cls="relations",
        options=TPL,
    )
)

# 5. template: a word slot that flows into a call and picks a branch too -----------------------------------


def _room(w, room: str):
    return {"room": room, "temp": w["temp"]}


def _set_mode(w, room: str, mode: str) -> str:
    w["modes"].append((room, mode))
    return "set"


def _alarm_off(w, room: str) -> str:
    w["alarms_off"].append(room)
    return "alarm off"


MODE_TOOLS = [_tool("read_room", _room), _tool("set_mode", _set_mode), _tool("disarm_alarm", _alarm_off)]


def _mode_policy(text, ctx, h):
    room = word(text, "room")
    mode = word(text, "to")
    if not done(h, "read_room"):
        return Call("read_room", {"room": room})
    if not done(h, "set_mode"):
        return Call("set_mode", {"room": room, "mode": mode})
    if mode == "vacation" and not done(h, "disarm_alarm"):
        return Call("disarm_alarm", {"room": room})
    return Answer(f"{room} set to {mode}.")


def _mode(room, mode, harmless=False):
    return Run(f"set room {room} to {mode}", {"temp": 21, "modes": [], "alarms_off": []}, harmless=harmless)


S.append(
    _sc(
        "rt7a_tpl_word_slot_branch_core",
        "core",
        MODE_TOOLS,
        _mode_policy,
        [_mode("kitchen", "eco"), _mode("garage", "comfort"), _mode("cellar", "boost")],
        [_mode("kitchen", "comfort", harmless=True), _mode("garage", "vacation")],
        "templates on: the mode word flows into set_mode, three values seen; 'vacation' also disarms",
        cls="params",
        options=TPL,
    )
)

# 6. template: a date slot compared with a date a tool returns --------------------------------------------------


def _order(w, order: int):
    return {"order": order, "ready_on": w["ready"]}


def _schedule(w, order: int, day: str) -> str:
    w["scheduled"].append((order, day))
    return "scheduled"


DATE_TOOLS = [_tool("get_order", _order), _tool("schedule_delivery", _schedule)]


def _date_policy(text, ctx, h):
    o = num(text, "order")
    day = re.search(r"on (\d{4}-\d\d-\d\d)", text).group(1)
    if not done(h, "get_order"):
        return Call("get_order", {"order": o})
    if day < out(h, "get_order")["ready_on"]:
        return Answer(f"Order {o} is not ready by {day}.")
    if not done(h, "schedule_delivery"):
        return Call("schedule_delivery", {"order": o, "day": day})
    return Answer(f"Scheduled for {day}.")


def _deliver(o, day, ready, harmless=False):
    return Run(
        f"schedule delivery of order {o} on {day}", {"ready": ready, "scheduled": []}, harmless=harmless
    )


S.append(
    _sc(
        "rt7a_tpl_date_slot_vs_output_core",
        "core",
        DATE_TOOLS,
        _date_policy,
        [
            _deliver(5512, "2024-06-20", "2024-06-10"),
            _deliver(5520, "2024-06-28", "2024-06-25"),
            _deliver(5515, "2024-06-24", "2024-06-14"),
        ],
        [
            _deliver(5517, "2024-06-25", "2024-06-18", harmless=True),
            _deliver(5514, "2024-06-22", "2024-06-24"),
        ],
        "templates on: the delivery day flows into schedule_delivery; it was after ready_on in every run; "
        "probe a day before ready_on, each within its range",
        cls="relations",
        options=TPL,
    )
)

# 7. template: a unit word that flows, beside a number, converted for a decision ------------------------------


def _quote(w, parcel: str, weight: int, unit: str):
    return {"parcel": parcel, "zone": w["zone"]}


def _book(w, parcel: str, weight: int, unit: str, heavy: bool) -> str:
    w["booked"].append((parcel, weight, unit, heavy))
    return "booked"


UNIT_TOOLS = [_tool("quote", _quote), _tool("book_courier", _book)]


def _unit_policy(text, ctx, h):
    found = re.search(r"parcel (\S+) of (\d+) (\w+)", text)
    parcel, weight, unit = found.group(1), int(found.group(2)), found.group(3)
    kg = weight if unit == "kilos" else weight * 0.4536
    if not done(h, "quote"):
        return Call("quote", {"parcel": parcel, "weight": weight, "unit": unit})
    if not done(h, "book_courier"):
        return Call("book_courier", {"parcel": parcel, "weight": weight, "unit": unit, "heavy": kg > 10})
    return Answer("Booked.")


def _parcel(p, weight, unit, harmless=False):
    return Run(f"send parcel {p} of {weight} {unit}", {"zone": "A", "booked": []}, harmless=harmless)


S.append(
    _sc(
        "rt7a_tpl_unit_word_core",
        "core",
        UNIT_TOOLS,
        _unit_policy,
        [
            _parcel("PX-101", 5, "kilos"),
            _parcel("PX-102", 20, "pounds"),
            _parcel("PX-103", 8, "kilos"),
            _parcel("PX-104", 12, "pounds"),
        ],
        [_parcel("PX-105", 7, "kilos", harmless=True), _parcel("PX-106", 18, "kilos")],
        "templates on: weight and unit both flow into the calls; heavy (> 10 kg) was False in every run; "
        "18 was seen only with lbs; probe 18 kg",
        cls="params",
        options=TPL,
    )
)

# 8. declared list param with a duplicate: the agent adds each distinct item once -------------------------


def _cart(w, cart: str):
    return {"cart": cart, "open": True}


def _add(w, cart: str, item: str) -> str:
    w["items"].append(item)
    return "added"


LIST_TOOLS = [_tool("open_cart", _cart), _tool("add_item", _add)]


def _list_policy(text, ctx, h):
    c = word(text, "cart")
    items = list(dict.fromkeys(re.search(r"items (.*)$", text).group(1).split(", ")))
    if not done(h, "open_cart"):
        return Call("open_cart", {"cart": c})
    k = count(h, "add_item")
    if k < len(items):
        return Call("add_item", {"cart": c, "item": items[k]})
    return Answer(f"Added {len(items)} items.")


def _cart_run(c, items, harmless=False):
    return Run(
        f"for cart {c} add items {', '.join(items)}",
        {"items": []},
        {"cart": c, "items": list(items)},
        harmless=harmless,
    )


for front in ("core", "langchain"):
    S.append(
        _sc(
            f"rt7a_param_list_duplicate_{front}",
            front,
            LIST_TOOLS,
            _list_policy,
            [_cart_run("C-7001", ["SKU-11", "SKU-12"]), _cart_run("C-7002", ["SKU-21", "SKU-22"])],
            [
                _cart_run("C-7003", ["SKU-31", "SKU-32"], harmless=True),
                _cart_run("C-7004", ["SKU-41", "SKU-41"]),
            ],
            "a declared list param of item ids, each added once: the runs' two items differed; probe a "
            "list of one id twice: the agent adds it once",
            cls="params",
        )
    )

# 9. two declared number params both copied on; their order decides ------------------------------------------


def _hold(w, booking: str, deposit: int) -> str:
    w["holds"].append(deposit)
    return "held"


def _charge(w, booking: str, amount: int) -> str:
    w["charged"].append(amount)
    return "charged"


def _read_booking(w, booking: str):
    return {"booking": booking, "state": "open"}


DEP_TOOLS = [_tool("read_booking", _read_booking), _tool("hold_deposit", _hold), _tool("charge", _charge)]


def _dep_policy(text, ctx, h):
    b = word(text, "booking")
    dep = num(text, "deposit")
    budget = num(text, "budget")
    if not done(h, "read_booking"):
        return Call("read_booking", {"booking": b})
    if not done(h, "hold_deposit"):
        return Call("hold_deposit", {"booking": b, "deposit": dep})
    if dep <= budget and not done(h, "charge"):
        return Call("charge", {"booking": b, "amount": budget})
    return Answer("Done." if dep <= budget else "Deposit held; budget too small to charge.")


def _dep(b, dep, budget, harmless=False):
    return Run(
        f"for booking {b} hold deposit {dep} then charge budget {budget}",
        {"holds": [], "charged": []},
        {"booking": b, "deposit": dep, "budget": budget},
        harmless=harmless,
    )


S.append(
    _sc(
        "rt7a_param_two_numbers_order_core",
        "core",
        DEP_TOOLS,
        _dep_policy,
        [_dep("BK-1001", 30, 100), _dep("BK-1002", 60, 80), _dep("BK-1003", 45, 90)],
        [_dep("BK-1004", 40, 95, harmless=True), _dep("BK-1005", 70, 50), _dep("BK-1006", 200, 120)],
        "deposit and budget are declared number params, both copied into calls; deposit <= budget in "
        "every run; probe deposit 70 with budget 50, and 200 with 120",
        cls="relations",
    )
)

# 10. a declared param None where runs had a code --------------------------------------------------------


def _basket(w, basket: str):
    return {"basket": basket, "total": w["total"]}


def _apply(w, basket: str, code: Any) -> str:
    w["codes"].append(code)
    return "applied"


def _pay(w, basket: str) -> str:
    w["paid"] = True
    return "paid"


CODE_TOOLS = [_tool("read_basket", _basket), _tool("apply_code", _apply), _tool("pay_basket", _pay)]


def _code_policy(text, ctx, h):
    b = word(text, "basket")
    m = re.search(r"code (\S+)", text)
    code = None if m is None or m.group(1) == "none" else m.group(1)
    if not done(h, "read_basket"):
        return Call("read_basket", {"basket": b})
    if not done(h, "apply_code"):
        return Call("apply_code", {"basket": b, "code": code if code is not None else "NONE-0000"})
    if code is None:
        return Answer("No code given: nothing paid.")
    if not done(h, "pay_basket"):
        return Call("pay_basket", {"basket": b})
    return Answer("Paid.")


def _code_run(b, code, harmless=False):
    return Run(
        f"pay basket {b} with code {code if code else 'none'}",
        {"total": 80, "codes": [], "paid": False},
        {"basket": b, "code": code},
        harmless=harmless,
    )


S.append(
    _sc(
        "rt7a_param_none_for_code_core",
        "core",
        CODE_TOOLS,
        _code_policy,
        [_code_run("BS-1001", "SAVE-1111"), _code_run("BS-1002", "SAVE-2222")],
        [_code_run("BS-1003", "SAVE-3333", harmless=True), _code_run("BS-1004", None)],
        "a declared code param (an identity, free) copied on; probe code None: the agent applies a "
        "placeholder and does not pay",
        cls="params",
    )
)

# 11. pydantic-ai structured output: the verdict lives only in the answer ----------------------------------


class Verdict(BaseModel):
    claim: str
    approved: bool
    payout: int


def _claim(w, claim: str):
    return {"claim": claim, "amount": w["amount"], "cover": w["cover"]}


CLAIM_TOOLS = [_tool("read_claim", _claim)]


def _claim_policy(text, ctx, h):
    c = word(text, "claim")
    if not done(h, "read_claim"):
        return Call("read_claim", {"claim": c})
    o = out(h, "read_claim")
    ok = o["amount"] <= o["cover"]
    return Answer({"claim": c, "approved": ok, "payout": o["amount"] if ok else 0})


def _claim_run(c, amount, cover, harmless=False):
    return Run(f"assess claim {c}", {"amount": amount, "cover": cover}, {"claim": c}, harmless=harmless)


S.append(
    Scenario(
        "rt7a_structured_verdict_pydantic_ai",
        "relations",
        "pydantic_ai",
        CLAIM_TOOLS,
        _claim_policy,
        [_claim_run("CL-1001", 300, 500), _claim_run("CL-1002", 550, 600), _claim_run("CL-1003", 420, 450)],
        [_claim_run("CL-1004", 350, 520, harmless=True), _claim_run("CL-1005", 540, 480)],
        output_type=Verdict,
        doc="a read-only run whose decision is only in the structured answer (approved, payout); "
        "amount <= cover in every run; probe 540 against 480, each within its range",
    )
)

# 12. smolagents with templates: the instructions differ between the proving runs and the probe ----------


def _limit_ctx(w):
    return f"You are the refunds desk. Refund automatically up to {w['cap']} EUR."


def _cap_policy(text, ctx, h):
    o = num(text, "order")
    cap = int(re.search(r"automatically up to (\d+)", ctx).group(1)) if "automatically up to" in ctx else 0
    if not done(h, "get_total"):
        return Call("get_total", {"order": o})
    if out(h, "get_total")["total"] <= cap:
        if not done(h, "refund"):
            return Call("refund", {"order": o})
        return Answer(f"Refunded order {o}.")
    return Answer(f"Order {o} escalated.")


def _cap_run(o, total, cap, harmless=False):
    return Run(
        f"refund order {o}", {"total": total, "cap": cap, "audits": [], "refunded": []}, harmless=harmless
    )


for front in ("smolagents", "openai_agents"):
    S.append(
        Scenario(
            f"rt7a_tpl_instructions_cap_{front}",
            "context",
            front,
            THRESH_TOOLS,
            _cap_policy,
            [_cap_run(6001, 40, 100), _cap_run(6009, 80, 100), _cap_run(6004, 60, 100)],
            [_cap_run(6005, 50, 100, harmless=True), _cap_run(6006, 70, 50)],
            context=_limit_ctx,
            options=TPL,
            doc="templates on: the refund cap lives in the instructions (100 in every run); probe the same "
            "text shape with a total in range under a cap of 50",
        )
    )

# 13. template + arithmetic: the answer multiplies a slot by an output ------------------------------------------


def _rate(w, hotel: int):
    return {"hotel": hotel, "rate": w["rate"]}


def _reserve(w, hotel: int, nights: int) -> str:
    w["reserved"].append((hotel, nights))
    return "reserved"


HOTEL_TOOLS = [_tool("get_rate", _rate), _tool("reserve", _reserve)]


def _hotel_policy(text, ctx, h):
    hotel = num(text, "hotel")
    nights = num(text, "for")
    if not done(h, "get_rate"):
        return Call("get_rate", {"hotel": hotel})
    if not done(h, "reserve"):
        return Call("reserve", {"hotel": hotel, "nights": nights})
    return Answer(f"Reserved: total {nights * out(h, 'get_rate')['rate']} EUR.")


def _hotel(hotel, nights, rate, harmless=False):
    return Run(f"book hotel {hotel} for {nights} nights", {"rate": rate, "reserved": []}, harmless=harmless)


S.append(
    Scenario(
        "rt7a_tpl_answer_slot_times_output_openai_agents",
        "computed",
        "openai_agents",
        HOTEL_TOOLS,
        _hotel_policy,
        [_hotel(301, 2, 100), _hotel(309, 4, 100), _hotel(305, 3, 100)],
        [_hotel(303, 2, 100, harmless=True), _hotel(304, 3, 120)],
        options=TPL,
        doc="templates on: the answer is nights (a slot) times the rate read; the rate was 100 in every "
        "run (so a total of nights*100 may look like a product of the slot by a constant); probe rate 120",
    )
)

# 14. declared param that only reaches the answer, and a text with a quantity word ----------------------------


def _inv(w, sku: str):
    return {"sku": sku, "on_hand": w["on_hand"]}


def _reorder(w, sku: str, qty: int) -> str:
    w["orders"].append((sku, qty))
    return "ordered"


INV_TOOLS = [_tool("stock_level", _inv), _tool("reorder", _reorder)]


def _inv_policy(text, ctx, h):
    sku = word(text, "sku")
    target = num(text, "to")
    dozen = "dozen" in text
    if not done(h, "stock_level"):
        return Call("stock_level", {"sku": sku})
    want = target * (12 if dozen else 1) - out(h, "stock_level")["on_hand"]
    if want > 0 and not done(h, "reorder"):
        return Call("reorder", {"sku": sku, "qty": want})
    return Answer(f"Stock of {sku} topped up.")


def _inv_run(sku, target, unit, on_hand, harmless=False):
    return Run(
        f"top up sku {sku} to {target} {unit}",
        {"on_hand": on_hand, "orders": []},
        {"sku": sku, "target": target},
        harmless=harmless,
    )


S.append(
    _sc(
        "rt7a_param_unit_word_in_text_core",
        "core",
        INV_TOOLS,
        _inv_policy,
        [_inv_run("SKU-5001", 40, "units", 10), _inv_run("SKU-5002", 30, "units", 5)],
        [_inv_run("SKU-5003", 35, "units", 8, harmless=True), _inv_run("SKU-5004", 35, "dozen", 8)],
        "target is a declared param; the reorder qty is target - on_hand; probe the text says 'dozen': "
        "the agent orders 35*12 - 8",
        cls="computed",
    )
)

# 15. langchain with templates: a negation word flows as part of a note ---------------------------------------


def _ticket(w, ticket: int):
    return {"ticket": ticket, "state": w["state"]}


def _note(w, ticket: int, note: str) -> str:
    w["notes"].append(note)
    return "noted"


def _close(w, ticket: int) -> str:
    w["closed"].append(ticket)
    return "closed"


NOTE_TOOLS = [_tool("get_ticket", _ticket), _tool("add_note", _note), _tool("close_ticket", _close)]


def _note_policy(text, ctx, h):
    t = num(text, "ticket")
    flag = word(text, "flag")
    if not done(h, "get_ticket"):
        return Call("get_ticket", {"ticket": t})
    if not done(h, "add_note"):
        return Call("add_note", {"ticket": t, "note": f"customer flag: {flag}"})
    if flag != "unresolved" and not done(h, "close_ticket"):
        return Call("close_ticket", {"ticket": t})
    return Answer(f"Ticket {t} handled ({flag}).")


def _note_run(t, flag, harmless=False):
    return Run(
        f"handle ticket {t} with flag {flag}", {"state": "open", "notes": [], "closed": []}, harmless=harmless
    )


S.append(
    _sc(
        "rt7a_tpl_flag_word_in_note_langchain",
        "langchain",
        NOTE_TOOLS,
        _note_policy,
        [_note_run(8001, "resolved"), _note_run(8002, "satisfied"), _note_run(8003, "thanked")],
        [_note_run(8004, "resolved", harmless=True), _note_run(8005, "unresolved")],
        "templates on: the flag word flows into a note inside a longer text; three flags seen; "
        "probe 'unresolved': the agent does not close",
        options=TPL,
    )
)
