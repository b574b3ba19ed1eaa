"""Multi-tool red-team scenarios (core front)."""

from __future__ import annotations

import copy

from .harness import Answer, Call, Run, Tool
from .kit import calls, count, done, num, out, sc, word

S = []

# ---- A. book the second cheapest offer (its id flows) ----------------------------------------------------


def list_offers(w, trip: str):
    return {"trip": trip, "offers": copy.deepcopy(w["offers"])}


def book(w, offer_id: str):
    w["booked"].append(offer_id)
    return {"booked": offer_id}


OFFER_TOOLS = [
    Tool("list_offers", list_offers, check=lambda w, trip: True),
    Tool("book", book, check=lambda w, offer_id: True),
]


def second_cheapest(text, ctx, h):
    t = word(text, "trip")
    if not done(h, "list_offers"):
        return Call("list_offers", {"trip": t})
    offers = sorted(out(h, "list_offers")["offers"], key=lambda o: o["price"])
    if not done(h, "book"):
        return Call("book", {"offer_id": offers[1]["id"]})
    return Answer(f"Booked {offers[1]['id']}.")


def _trip(n, prices):
    offers = [{"id": f"off-{n}{i}", "price": p} for i, p in enumerate(prices)]
    return Run(
        f"book the second cheapest offer for trip tr-{n}",
        {"offers": offers, "booked": []},
        {"trip": f"tr-{n}"},
    )


S.append(
    sc(
        "rt2_second_cheapest_core",
        "choices",
        OFFER_TOOLS,
        second_cheapest,
        [_trip(1, [10, 20, 30]), _trip(2, [30, 20, 10])],
        [_trip(3, [12, 20, 28]), _trip(4, [10, 20, 15])],
        "book the second cheapest; records pick index 1 from both orders; probe index 2 is second",
    )
)


def cheapest(text, ctx, h):
    t = word(text, "trip")
    if not done(h, "list_offers"):
        return Call("list_offers", {"trip": t})
    offers = sorted(out(h, "list_offers")["offers"], key=lambda o: o["price"])
    if not done(h, "book"):
        return Call("book", {"offer_id": offers[0]["id"]})
    return Answer(f"Booked {offers[0]['id']}.")


def _trip1(n, prices):
    offers = [{"id": f"off-{n}{i}", "price": p} for i, p in enumerate(prices)]
    return Run(
        f"book the cheapest offer for trip tr-{n}", {"offers": offers, "booked": []}, {"trip": f"tr-{n}"}
    )


S.append(
    sc(
        "rt2_cheapest_of_three_core",
        "choices",
        OFFER_TOOLS,
        cheapest,
        [_trip1(1, [10, 20, 30]), _trip1(2, [12, 30, 20])],
        [_trip1(3, [11, 25, 25]), _trip1(4, [12, 20, 11]), _trip1(5, [12, 11, 30])],
        "book the cheapest: records index 0; probes where another index is cheapest",
    )
)

# ---- B. dict keyed by ids: revoke every admin (loop over keys) ----------------------------------------------


def get_roles(w, team: str):
    return {"team": team, "roles": dict(w["roles"])}


def revoke(w, user_id: str):
    w["revoked"].append(user_id)
    return "revoked"


ROLE_TOOLS = [
    Tool("get_roles", get_roles, check=lambda w, team: True),
    Tool("revoke", revoke, check=lambda w, user_id: True),
]


def revoke_admins(text, ctx, h):
    t = word(text, "team")
    if not done(h, "get_roles"):
        return Call("get_roles", {"team": t})
    admins = [u for u, r in out(h, "get_roles")["roles"].items() if r == "admin"]
    done_ids = [c["user_id"] for c in calls(h, "revoke")]
    for u in admins:
        if u not in done_ids:
            return Call("revoke", {"user_id": u})
    return Answer(f"Revoked {len(admins)} admins.")


def _team(n, roles):
    return Run(f"revoke admin rights in team tm-{n}", {"roles": roles, "revoked": []}, {"team": f"tm-{n}"})


S.append(
    sc(
        "rt2_revoke_admins_dict_keys_core",
        "loops",
        ROLE_TOOLS,
        revoke_admins,
        [
            _team(1, {"usr_11": "admin", "usr_12": "viewer"}),
            _team(2, {"usr_21": "admin", "usr_22": "viewer"}),
        ],
        [
            _team(3, {"usr_31": "admin", "usr_32": "viewer"}),
            _team(4, {"usr_41": "viewer", "usr_42": "admin"}),
            _team(5, {"usr_52": "viewer", "usr_51": "admin"}),
        ],
        "revoke the admins of a dict keyed by user id; probes: admin under the other key",
    )
)


def revoke_first(text, ctx, h):
    t = word(text, "team")
    if not done(h, "get_roles"):
        return Call("get_roles", {"team": t})
    first = next(iter(out(h, "get_roles")["roles"]))
    if not done(h, "revoke"):
        return Call("revoke", {"user_id": first})
    return Answer(f"Revoked {first}.")


def _team1(n, roles):
    return Run(
        f"revoke the first listed member of team tm-{n}", {"roles": roles, "revoked": []}, {"team": f"tm-{n}"}
    )


S.append(
    sc(
        "rt2_first_listed_key_core",
        "choices",
        ROLE_TOOLS,
        revoke_first,
        [
            _team1(1, {"usr_11": "admin", "usr_12": "viewer"}),
            _team1(2, {"usr_21": "admin", "usr_22": "viewer"}),
        ],
        [_team1(3, {"usr_32": "viewer", "usr_31": "admin"})],
        "revoke the first listed key; probe the same content, keys in another order (documented: key order is not observed)",
    )
)

# ---- C. a loop: same length, membership changed ----------------------------------------------------------------


def list_members(w, team: str):
    return {"team": team, "members": copy.deepcopy(w["members"])}


def remind(w, user_id: str):
    w["reminded"].append(user_id)
    return "sent"


MEM_TOOLS = [
    Tool("list_members", list_members, check=lambda w, team: True),
    Tool("remind", remind, check=lambda w, user_id: True),
]


def remind_overdue(text, ctx, h):
    t = word(text, "team")
    if not done(h, "list_members"):
        return Call("list_members", {"team": t})
    due = [m["id"] for m in out(h, "list_members")["members"] if m["overdue_days"] > 7]
    sent = [c["user_id"] for c in calls(h, "remind")]
    for u in due:
        if u not in sent:
            return Call("remind", {"user_id": u})
    return Answer(f"Reminded {len(due)}.")


def _mem(n, days):
    ms = [{"id": f"usr_{n}{i}", "overdue_days": d} for i, d in enumerate(days)]
    return Run(f"remind overdue members of team tm-{n}", {"members": ms, "reminded": []}, {"team": f"tm-{n}"})


S.append(
    sc(
        "rt2_loop_membership_core",
        "loops",
        MEM_TOOLS,
        remind_overdue,
        [_mem(1, [10, 3, 9]), _mem(2, [20, 5, 8])],
        [_mem(3, [15, 4, 12]), _mem(4, [10, 8, 3]), _mem(5, [12, 20, 9])],
        "remind members overdue > 7 days; probes: the overdue ones move index",
    )
)

# ---- D. read your writes: withdraw then read again ------------------------------------------------------------


def balance(w, account: str):
    return {"account": account, "balance": w["balance"]}


def withdraw(w, account: str, amount: int):
    w["balance"] -= amount + w["fee"]
    return "ok"


def notify_low(w, account: str):
    w["notified"].append(account)
    return "notified"


RYW_TOOLS = [
    Tool("balance", balance, check=lambda w, account: True),
    Tool("withdraw", withdraw, check=lambda w, account, amount: True),
    Tool("notify_low", notify_low, check=lambda w, account: True),
]


def ryw_policy(text, ctx, h):
    a = word(text, "account")
    if not done(h, "balance"):
        return Call("balance", {"account": a})
    if not done(h, "withdraw"):
        return Call("withdraw", {"account": a, "amount": 30})
    if count(h, "balance") < 2:
        return Call("balance", {"account": a})
    before = next(o for n, _, o in h if n == "balance")["balance"]
    after = out(h, "balance")["balance"]
    if before - after != 30:
        if not done(h, "notify_low"):
            return Call("notify_low", {"account": a})
        return Answer("Fee charged: reported.")
    return Answer("Withdrew 30.")


def _ryw(n, bal, fee=0):
    return Run(
        f"withdraw 30 from account acc-{n}",
        {"balance": bal, "fee": fee, "notified": []},
        {"account": f"acc-{n}"},
    )


S.append(
    sc(
        "rt2_read_your_writes_core",
        "relations",
        RYW_TOOLS,
        ryw_policy,
        [_ryw(1, 100), _ryw(2, 90)],
        [_ryw(3, 95), _ryw(4, 100, fee=5)],
        "withdraw 30, read again; a fee makes the difference 35",
    )
)

# ---- E. task text number not declared as param ------------------------------------------------------------------


def get_total(w, order: str):
    return {"order": order, "total": w["total"]}


def refund(w, order: str):
    w["refunded"].append(order)
    return "refunded"


TASKNUM_TOOLS = [
    Tool("get_total", get_total, check=lambda w, order: True),
    Tool("refund", refund, check=lambda w, order: True),
]


def tasknum_policy(text, ctx, h):
    o = word(text, "order")
    lim = num(text, "under")
    if not done(h, "get_total"):
        return Call("get_total", {"order": o})
    if out(h, "get_total")["total"] < lim:
        if not done(h, "refund"):
            return Call("refund", {"order": o})
        return Answer("Refunded.")
    return Answer("Needs approval.")


def _tn(n, total, lim, params=True):
    return Run(
        f"refund order ord-{n} if under {lim}",
        {"total": total, "refunded": []},
        {"order": f"ord-{n}"} if params else {},
    )


S.append(
    sc(
        "rt2_task_number_threshold_core",
        "context",
        TASKNUM_TOOLS,
        tasknum_policy,
        [_tn(1, 40, 50), _tn(2, 45, 50)],
        [_tn(3, 42, 50), _tn(4, 45, 44)],
        "threshold in the task text (not a param); probe 'under 44' with total 45",
    )
)

S.append(
    sc(
        "rt2_task_number_threshold_template_core",
        "context",
        TASKNUM_TOOLS,
        tasknum_policy,
        [_tn(1, 40, 50, False), _tn(2, 45, 60, False), _tn(5, 30, 55, False)],
        [_tn(3, 42, 55, False), _tn(4, 45, 44, False), _tn(6, 58, 55, False)],
        "plain texts (templates): the threshold differs between records; probe 'under 44' with total 45",
    )
)

# ---- F. two tools that must agree --------------------------------------------------------------------------------


def catalog(w, sku: str):
    return {"sku": sku, "unit_price": w["price"]}


def cart(w, cart_id: str):
    return {"cart": cart_id, "qty": w["qty"], "line_total": w["line"]}


def checkout(w, cart_id: str):
    w["checked_out"].append(cart_id)
    return "ok"


CART_TOOLS = [
    Tool("catalog", catalog, check=lambda w, sku: True),
    Tool("cart", cart, check=lambda w, cart_id: True),
    Tool("checkout", checkout, check=lambda w, cart_id: True),
]


def cart_policy(text, ctx, h):
    s, c = word(text, "sku"), word(text, "cart")
    if not done(h, "catalog"):
        return Call("catalog", {"sku": s})
    if not done(h, "cart"):
        return Call("cart", {"cart_id": c})
    p, k = out(h, "catalog")["unit_price"], out(h, "cart")
    if p * k["qty"] == k["line_total"]:
        if not done(h, "checkout"):
            return Call("checkout", {"cart_id": c})
        return Answer("Checked out.")
    return Answer("Price mismatch: asking the customer.")


def _cart(n, price, qty, line):
    return Run(
        f"check out cart crt-{n} of sku sku-{n}",
        {"price": price, "qty": qty, "line": line, "checked_out": []},
        {"cart": f"crt-{n}", "sku": f"sku-{n}"},
    )


S.append(
    sc(
        "rt2_cross_tool_product_core",
        "relations",
        CART_TOOLS,
        cart_policy,
        [_cart(1, 10, 2, 20), _cart(2, 15, 3, 45)],
        [_cart(3, 12, 3, 36), _cart(4, 10, 3, 40)],
        "price (one tool) * qty == line_total (another); probe 10*3 != 40",
    )
)

# ---- G. a template word slot that steers --------------------------------------------------------------------------


def set_priority(w, ticket: str, level: str):
    w["levels"].append((ticket, level))
    return "set"


def page_oncall(w, ticket: str):
    w["paged"].append(ticket)
    return "paged"


PRIO_TOOLS = [
    Tool("set_priority", set_priority, check=lambda w, ticket, level: True),
    Tool("page_oncall", page_oncall, check=lambda w, ticket: True),
]


def prio_policy(text, ctx, h):
    t, lv = word(text, "ticket"), word(text, "to")
    if not done(h, "set_priority"):
        return Call("set_priority", {"ticket": t, "level": lv})
    if lv in ("critical", "urgent") and not done(h, "page_oncall"):
        return Call("page_oncall", {"ticket": t})
    return Answer("Done.")


def _prio(n, lv):
    return Run(f"set ticket TCK-{n} to {lv}", {"levels": [], "paged": []}, {})


S.append(
    sc(
        "rt2_template_level_steers_core",
        "params",
        PRIO_TOOLS,
        prio_policy,
        [_prio(1001, "low"), _prio(1002, "high"), _prio(1003, "medium")],
        [_prio(1004, "high"), _prio(1005, "critical")],
        "plain text: the level word flows into the call; a new level (critical) also pages",
    )
)

# ---- H. sum of a list vs an amount from another tool, list items each in range -----------------------------------


def list_items(w, order: str):
    return {"order": order, "items": [{"sku": f"s{i}", "price": p} for i, p in enumerate(w["prices"])]}


def get_card(w, order: str):
    return {"order": order, "credit_left": w["credit"]}


def charge(w, order: str):
    w["charged"].append(order)
    return "charged"


SUM_TOOLS = [
    Tool("list_items", list_items, check=lambda w, order: True),
    Tool("get_card", get_card, check=lambda w, order: True),
    Tool("charge", charge, check=lambda w, order: True),
]


def sum_policy(text, ctx, h):
    o = word(text, "order")
    if not done(h, "list_items"):
        return Call("list_items", {"order": o})
    if not done(h, "get_card"):
        return Call("get_card", {"order": o})
    total = sum(i["price"] for i in out(h, "list_items")["items"])
    if total <= out(h, "get_card")["credit_left"]:
        if not done(h, "charge"):
            return Call("charge", {"order": o})
        return Answer("Charged.")
    return Answer("Not enough credit.")


def _sum(n, prices, credit):
    return Run(
        f"charge order ord-{n}", {"prices": prices, "credit": credit, "charged": []}, {"order": f"ord-{n}"}
    )


S.append(
    sc(
        "rt2_list_total_vs_credit_core",
        "computed",
        SUM_TOOLS,
        sum_policy,
        [_sum(1, [10, 20], 35), _sum(2, [25, 15], 60)],
        [_sum(3, [20, 18], 50), _sum(4, [25, 20], 44)],
        "charge when the list total <= credit (another tool); probe total 45 (in [30,40]? no) vs credit 44",
    )
)

S.append(
    sc(
        "rt2_list_total_vs_credit_in_range_core",
        "computed",
        SUM_TOOLS,
        sum_policy,
        [_sum(1, [10, 30], 41), _sum(2, [25, 15], 60)],
        [_sum(3, [20, 20], 50), _sum(4, [25, 15], 41)],
        "list total 40 in both runs (constant), credit varies; probe [25,15] total 40 vs credit 41 is fine; [control]",
    )
)
