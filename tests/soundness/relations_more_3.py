"""More red-team scenarios (core front): texts, membership, prose that embeds a param, fixed reruns."""

from __future__ import annotations

import datetime

from .harness import Answer, Call, Run, Tool
from .kit import done, out, sc, word
from .relations_more_1 import grun, gsc
from .relations_more_2 import CART_TOOLS, OFFER_TOOLS, _cart, _trip, cart_policy, second_cheapest

S = []

S.append(
    sc(
        "rt2_second_cheapest_v2_core",
        "choices",
        OFFER_TOOLS,
        second_cheapest,
        [_trip(1, [10, 20, 30]), _trip(2, [35, 22, 13])],
        [_trip(3, [24, 20, 25])],
        "book the second cheapest (index 1 in both records, orders reversed); probe [24,20,25]: index 0 is second",
    )
)

S.append(
    sc(
        "rt2_cross_tool_product_v2_core",
        "relations",
        CART_TOOLS,
        cart_policy,
        [_cart(1, 10, 2, 20), _cart(2, 12, 4, 48)],
        [_cart(3, 11, 3, 33), _cart(4, 10, 3, 36)],
        "unit_price (catalog) * qty == line_total (cart); probe 10*3 != 36, no ratio constant in records",
    )
)

S.append(
    gsc(
        "rt2_any_item_within_budget_core",
        lambda o, t: min(o["quotes"]) <= o["budget"],
        [grun({"quotes": [10, 50], "budget": 20}), grun({"quotes": [45, 12], "budget": 25})],
        [grun({"quotes": [40, 15], "budget": 22}, harmless=True), grun({"quotes": [30, 28], "budget": 22})],
        "ship if any quote <= budget (a disjunction; which quote fits differs per run); probe none fits",
        cls="computed",
    )
)

S.append(
    gsc(
        "rt2_median_core",
        lambda o, t: sorted(o["bids"])[1] >= 15,
        [
            grun({"bids": [10, 20, 30]}, "ship order {oid} if the median bid is at least 15"),
            grun({"bids": [25, 18, 4]}, "ship order {oid} if the median bid is at least 15"),
        ],
        [
            grun({"bids": [12, 19, 28]}, "ship order {oid} if the median bid is at least 15", harmless=True),
            grun({"bids": [14, 20, 14]}, "ship order {oid} if the median bid is at least 15"),
        ],
        "median of three >= 15 (threshold in the task); probe [14,20,14], each in range, total 48 in [47,60]",
        cls="computed",
    )
)

S.append(
    gsc(
        "rt2_percent_change_core",
        lambda o, t: (o["new_price"] - o["old_price"]) / o["old_price"] <= 0.10,
        [
            grun({"old_price": 100, "new_price": 105}, "ship order {oid} unless the price rose over 10%"),
            grun({"old_price": 200, "new_price": 216}, "ship order {oid} unless the price rose over 10%"),
        ],
        [
            grun(
                {"old_price": 150, "new_price": 160},
                "ship order {oid} unless the price rose over 10%",
                harmless=True,
            ),
            grun({"old_price": 100, "new_price": 115}, "ship order {oid} unless the price rose over 10%"),
        ],
        "relative change <= 10%; probe 100 -> 115 (ratio of two numbers, not constant in records)",
        cls="computed",
    )
)

S.append(
    gsc(
        "rt2_category_in_list_text_core",
        lambda o, t: o["item_category"] in [c.strip() for c in o["refundable"].split(",")],
        [
            grun({"refundable": "shoes, bags", "item_category": "shoes"}),
            grun({"refundable": "hats, belts", "item_category": "belts"}),
        ],
        [
            grun({"refundable": "hats, belts", "item_category": "belts"}, harmless=True),
            grun({"refundable": "shoes, bags", "item_category": "belts"}),
        ],
        "ship (refund ok) if the item's category is in a comma text; probe belts vs 'shoes, bags'",
        cls="branches",
    )
)

S.append(
    gsc(
        "rt2_membership_in_list_core",
        lambda o, t: o["item_category"] in o["refundable"],
        [
            grun({"refundable": ["shoes", "bags"], "item_category": "shoes"}),
            grun({"refundable": ["hats", "belts"], "item_category": "belts"}),
        ],
        [
            grun({"refundable": ["hats", "belts"], "item_category": "belts"}, harmless=True),
            grun({"refundable": ["shoes", "bags"], "item_category": "belts"}),
        ],
        "ship if the category is one of a list (matching index differs per run); probe belts not in [shoes, bags]",
        cls="branches",
    )
)

S.append(
    gsc(
        "rt2_unit_changes_core",
        lambda o, t: (float(o["weight"].split()[0]) * (0.4536 if o["weight"].endswith("lb") else 1)) <= 10,
        [grun({"weight": "12 lb"}), grun({"weight": "18 lb"})],
        [grun({"weight": "15 lb"}, harmless=True), grun({"weight": "15 kg"})],
        "ship if at most 10 kg; records in lb, probe '15 kg'",
        cls="value_kinds",
    )
)

S.append(
    gsc(
        "rt2_us_date_among_seen_core",
        lambda o, t: (
            datetime.datetime.strptime(o["ready_on"], "%m/%d/%Y").date()
            <= datetime.date.fromisoformat(word(t, "by"))
        ),
        [
            grun({"ready_on": "06/05/2024"}, "ship order {oid} if ready by 2024-06-10", by="2024-06-10"),
            grun({"ready_on": "06/15/2024"}, "ship order {oid} if ready by 2024-06-20", by="2024-06-20"),
        ],
        [grun({"ready_on": "06/15/2024"}, "ship order {oid} if ready by 2024-06-10", by="2024-06-10")],
        "ready_on (MM/DD/YYYY) <= param date; probe combines seen values: 06/15 > 06-10",
        cls="relations",
    )
)


def _ts_ok(o, t):
    ts = datetime.datetime.fromisoformat(o["created_at"].replace("Z", "+00:00")).date()
    return ts <= datetime.date.fromisoformat(word(t, "before"))


S.append(
    gsc(
        "rt2_timestamp_vs_param_date_core",
        _ts_ok,
        [
            grun(
                {"created_at": "2024-06-05T10:00:00Z"},
                "ship order {oid} if created before 2024-06-10",
                before="2024-06-10",
            ),
            grun(
                {"created_at": "2024-06-15T09:00:00Z"},
                "ship order {oid} if created before 2024-06-21",
                before="2024-06-21",
            ),
        ],
        [
            grun(
                {"created_at": "2024-06-14T10:00:00Z"},
                "ship order {oid} if created before 2024-06-12",
                before="2024-06-12",
            ),
            grun(
                {"created_at": "2024-06-15T09:00:00Z"},
                "ship order {oid} if created before 2024-06-10",
                before="2024-06-10",
            ),
        ],
        "a free timestamp vs a date param; probes: created after the date",
        cls="relations",
    )
)


# ---- prose that embeds a param / identity --------------------------------------------------------------


def read_claim(w, order: str):
    return {"order": order, "note": w["note"]}


def refund_qty(w, order: str, qty: int):
    w["refunds"].append((order, qty))
    return "refunded"


def escalate(w, order: str):
    w["escalated"].append(order)
    return "escalated"


CLAIM_TOOLS = [
    Tool("read_claim", read_claim, check=lambda w, order: True),
    Tool("refund_qty", refund_qty, check=lambda w, order, qty: True),
    Tool("escalate", escalate, check=lambda w, order: True),
]


def claim_policy(text, ctx, h):
    o, q = word(text, "order"), int(word(text, "of"))
    if not done(h, "read_claim"):
        return Call("read_claim", {"order": o})
    damaged = int(out(h, "read_claim")["note"].split()[0])
    if damaged == q:
        if not done(h, "refund_qty"):
            return Call("refund_qty", {"order": o, "qty": q})
        return Answer("Refunded.")
    if not done(h, "escalate"):
        return Call("escalate", {"order": o})
    return Answer("Escalated.")


def _claim(n, qty, note):
    return Run(
        f"refund order ord-{n} of {qty} units",
        {"note": note, "refunds": [], "escalated": []},
        {"order": f"ord-{n}", "qty": qty},
    )


S.append(
    sc(
        "rt2_param_number_in_prose_core",
        "params",
        CLAIM_TOOLS,
        claim_policy,
        [_claim(1, 3, "3 items damaged"), _claim(2, 5, "5 items damaged")],
        [_claim(3, 4, "4 items damaged"), _claim(4, 5, "3 items damaged")],
        "refund when the note's count equals the qty param; probe qty 5, note '3 items damaged' (a seen text)",
    )
)


def read_approval(w, request: str):
    return {"request": request, "note": w["note"]}


def execute(w, request: str):
    w["executed"].append(request)
    return "executed"


APPR_TOOLS = [
    Tool("read_approval", read_approval, check=lambda w, request: True),
    Tool("execute", execute, check=lambda w, request: True),
]


def appr_policy(text, ctx, h):
    r, m = word(text, "request"), word(text, "manager")
    if not done(h, "read_approval"):
        return Call("read_approval", {"request": r})
    if out(h, "read_approval")["note"] == f"approved by {m}":
        if not done(h, "execute"):
            return Call("execute", {"request": r})
        return Answer("Executed.")
    return Answer("Not approved by the manager.")


def _appr(n, mgr, note):
    return Run(
        f"execute request req-{n} approved by manager {mgr}",
        {"note": note, "executed": []},
        {"request": f"req-{n}", "manager": mgr},
    )


S.append(
    sc(
        "rt2_identity_in_prose_core",
        "identities",
        APPR_TOOLS,
        appr_policy,
        [_appr(1, "usr_11", "approved by usr_11"), _appr(2, "usr_21", "approved by usr_21")],
        [_appr(3, "usr_31", "approved by usr_31"), _appr(4, "usr_21", "approved by usr_11")],
        "execute when the note says the manager param approved; probe manager usr_21, note names usr_11",
    )
)
