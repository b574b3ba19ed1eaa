"""Relations between values that each equal a value some recorded run saw (mixed across runs)."""

from __future__ import annotations

from .harness import Answer, Call, Run, Tool
from .kit import done, out, sc, word
from .relations_more_1 import grun, gsc

S = []

S.append(
    gsc(
        "rt2_mixed_seen_order_core",
        lambda o, t: o["amount"] <= o["balance"],
        [grun({"amount": 10, "balance": 20}), grun({"amount": 30, "balance": 40})],
        [grun({"amount": 15, "balance": 35}, harmless=True), grun({"amount": 30, "balance": 20})],
        "ship when amount <= balance (kept in both runs); probe amount 30 (run 2), balance 20 (run 1)",
    )
)

S.append(
    gsc(
        "rt2_mixed_seen_text_equality_core",
        lambda o, t: o["currency"] == o["account_currency"],
        [
            grun({"currency": "EUR", "account_currency": "EUR"}),
            grun({"currency": "USD", "account_currency": "USD"}),
        ],
        [
            grun({"currency": "USD", "account_currency": "USD"}, harmless=True),
            grun({"currency": "EUR", "account_currency": "USD"}),
        ],
        "ship when the currencies match (equal in both runs); probe EUR vs USD, each seen",
        cls="relations",
    )
)

S.append(
    gsc(
        "rt2_mixed_seen_sum_core",
        lambda o, t: o["a"] + o["b"] == 100,
        [grun({"a": 40, "b": 60}), grun({"a": 30, "b": 70})],
        [grun({"a": 40, "b": 70})],
        "the guide's own example: a constant sum of 100; probe 40 and 70 (each seen)",
        cls="relations",
    )
)


def get_ticket(w, ticket: str):
    return {"ticket": ticket, "owner_id": w["owner"]}


def get_reply(w, ticket: str):
    return {"ticket": ticket, "author_id": w["author"]}


def close(w, ticket: str):
    w["closed"].append(ticket)
    return "closed"


TK_TOOLS = [
    Tool("get_ticket", get_ticket, check=lambda w, ticket: True),
    Tool("get_reply", get_reply, check=lambda w, ticket: True),
    Tool("close", close, check=lambda w, ticket: True),
]


def tk_policy(text, ctx, h):
    t = word(text, "ticket")
    if not done(h, "get_ticket"):
        return Call("get_ticket", {"ticket": t})
    if not done(h, "get_reply"):
        return Call("get_reply", {"ticket": t})
    if out(h, "get_reply")["author_id"] == out(h, "get_ticket")["owner_id"]:
        if not done(h, "close"):
            return Call("close", {"ticket": t})
        return Answer("Closed: the owner replied.")
    return Answer("Waiting for the owner.")


def _tk(n, owner, author):
    return Run(
        f"close ticket TCK-{n} if its owner replied",
        {"owner": owner, "author": author, "closed": []},
        {"ticket": f"TCK-{n}"},
    )


S.append(
    sc(
        "rt2_mixed_seen_identity_equality_core",
        "identities",
        TK_TOOLS,
        tk_policy,
        [_tk(1001, "usr_1", "usr_1"), _tk(1002, "usr_2", "usr_2")],
        [_tk(1003, "usr_3", "usr_3"), _tk(1004, "usr_1", "usr_2")],
        "close when the reply's author is the owner; probe owner usr_1, author usr_2 (both seen)",
    )
)


def _iso_ok(o, t):
    return o["ready_on"] <= word(t, "by")


S.append(
    gsc(
        "rt2_mixed_seen_iso_date_param_core",
        _iso_ok,
        [
            grun({"ready_on": "2024-06-05"}, "ship order {oid} if ready by 2024-06-10", by="2024-06-10"),
            grun({"ready_on": "2024-06-15"}, "ship order {oid} if ready by 2024-06-20", by="2024-06-20"),
        ],
        [grun({"ready_on": "2024-06-15"}, "ship order {oid} if ready by 2024-06-10", by="2024-06-10")],
        "ISO date output <= ISO date param; probe: each seen, order reversed",
        cls="relations",
    )
)
