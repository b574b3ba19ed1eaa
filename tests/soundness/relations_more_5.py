"""A param against an output leaf, each value seen in some recorded run."""

from __future__ import annotations

from .harness import Answer, Call, Run, Tool
from .kit import done, out, sc, word
from .relations_more_1 import grun, gsc

S = []


def stock(w, sku: str):
    return {"sku": sku, "in_stock": w["stock"]}


def reserve(w, sku: str, qty: int):
    w["reserved"].append((sku, qty))
    return "reserved"


ST_TOOLS = [
    Tool("stock", stock, check=lambda w, sku: True),
    Tool("reserve", reserve, check=lambda w, sku, qty: True),
]


def st_policy(text, ctx, h):
    s, q = word(text, "sku"), int(word(text, "reserve"))
    if not done(h, "stock"):
        return Call("stock", {"sku": s})
    if q <= out(h, "stock")["in_stock"]:
        if not done(h, "reserve"):
            return Call("reserve", {"sku": s, "qty": q})
        return Answer("Reserved.")
    return Answer("Not enough stock.")


def _st(n, qty, stk):
    return Run(
        f"reserve {qty} of sku sku-{n}", {"stock": stk, "reserved": []}, {"sku": f"sku-{n}", "qty": qty}
    )


S.append(
    sc(
        "rt2_mixed_seen_number_param_core",
        "params",
        ST_TOOLS,
        st_policy,
        [_st(1, 2, 5), _st(2, 8, 10)],
        [_st(3, 4, 9), _st(4, 8, 5)],
        "reserve qty (a declared number param) only if <= in_stock; probe qty 8 (seen), stock 5 (seen)",
    )
)

S.append(
    gsc(
        "rt2_mixed_seen_word_param_core",
        lambda o, t: o["region"] == word(t, "region"),
        [
            grun({"region": "eu"}, "ship order {oid} if it sits in region eu", region="eu"),
            grun({"region": "us"}, "ship order {oid} if it sits in region us", region="us"),
        ],
        [grun({"region": "us"}, "ship order {oid} if it sits in region eu", region="eu")],
        "ship when the output region equals the region param (equal in both runs); probe param eu, output us",
        cls="params",
    )
)

S.append(
    gsc(
        "rt2_mixed_seen_text_param_core",
        lambda o, t: o["address"] == t.split("to ", 1)[1],
        [
            grun({"address": "1 Main St"}, "ship order {oid} to 1 Main St", to="1 Main St"),
            grun({"address": "9 Elm Rd"}, "ship order {oid} to 9 Elm Rd", to="9 Elm Rd"),
        ],
        [grun({"address": "9 Elm Rd"}, "ship order {oid} to 1 Main St", to="1 Main St")],
        "ship when the address on file equals the address param; probe param '1 Main St', output '9 Elm Rd'",
        cls="params",
    )
)
