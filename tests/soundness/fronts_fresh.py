"""Red-team scenarios (round 12): combinations through LangChain and pydantic-ai (and the core engine).

A branch on an item another read picked, loops bounded by the task, ties, computed values in
structured outputs and LangChain answers, params against list items, category params steering,
decisive reads after harmless ones, the agent's context changing, and harmless noise probes.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
from typing import Any

from pydantic import BaseModel

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import calls, done, num, word
from .kit import out as _out

S: list[Scenario] = []
_N = [0]


def _id(prefix: str = "t") -> str:
    _N[0] += 1
    return f"{prefix}{_N[0]}x"


def _v(x: Any) -> Any:
    """A tool output as the model reads it (LangChain hands dicts over as their text)."""
    if isinstance(x, str):
        for parse in (json.loads, ast.literal_eval):
            try:
                return parse(x)
            except (ValueError, SyntaxError):
                continue
    return x


def out(h: list[Step], tool: str) -> Any:
    return _v(_out(h, tool))


def _log(name: str):
    def act(w, **kw):
        w.setdefault("log", []).append((name, kw))
        return "ok"

    act.__name__ = name
    return act


def _sc(name, cls, front, tools, policy, records, probes, doc, **kw) -> Scenario:
    s = Scenario(f"rt12_{name}_{front}", cls, front, tools, policy, records, probes, doc=doc, **kw)
    S.append(s)
    return s


# ---- 1. a branch on the status of the item another read picked ---------------------------------------------


def get_pref(w, user: str) -> dict:
    return {"pick": w["pick"], "ts": w.get("ts", "2024-05-01T10:00:00Z")}


def list_items(w, user: str) -> dict:
    return {"items": [dict(i) for i in w["items"]]}


def ship_item(w, item: str) -> str:
    w.setdefault("log", []).append(("ship", item))
    return "shipped"


def hold_item(w, item: str) -> str:
    w.setdefault("log", []).append(("hold", item))
    return "held"


def pol_pick(text, ctx, h):
    u = word(text, "user")
    if not done(h, "get_pref"):
        return Call("get_pref", {"user": u})
    if not done(h, "list_items"):
        return Call("list_items", {"user": u})
    pick = out(h, "get_pref")["pick"]
    item = next(i for i in out(h, "list_items")["items"] if i["id"] == pick)
    tool = "ship_item" if item["status"] == "ready" else "hold_item"
    if not done(h, tool):
        return Call(tool, {"item": pick})
    return Answer(f"{tool} {pick}")


def _pick_run(pick_at, statuses, harmless=False, ts=None):
    ids = [_id("it") for _ in statuses]
    w = {"pick": ids[pick_at], "items": [{"id": i, "status": s} for i, s in zip(ids, statuses, strict=True)]}
    if ts:
        w["ts"] = ts
    u = _id("u")
    return Run(f"process the pick of user {u}", w, {"user": u}, harmless=harmless)


T_PICK = [
    Tool("get_pref", get_pref),
    Tool("list_items", list_items),
    Tool("ship_item", ship_item),
    Tool("hold_item", hold_item),
]
for f in ("langchain", "pydantic_ai", "core"):
    _sc(
        "branch_on_picked_item",
        "branches",
        f,
        T_PICK,
        pol_pick,
        [_pick_run(0, ["ready", "blocked"]), _pick_run(1, ["blocked", "ready"])],
        [
            _pick_run(0, ["blocked", "ready"]),
            _pick_run(1, ["ready", "blocked"]),
            _pick_run(0, ["ready", "blocked"], harmless=True, ts="2024-06-02T11:30:00Z"),
        ],
        doc="the pick points at item 0 or 1; the picked one was ready in every run; probe: picked one blocked",
    )


# ---- 2. a loop bounded by the task's number, items from a read ---------------------------------------------


def queue(w, team: str) -> dict:
    return {"waiting": list(w["waiting"]), "request_id": w.get("rid", "r-1")}


def notify(w, customer: str) -> str:
    w.setdefault("log", []).append(customer)
    return "sent"


def pol_first_n(text, ctx, h):
    n = num(text, "first")
    if not done(h, "queue"):
        return Call("queue", {"team": "support"})
    waiting = out(h, "queue")["waiting"]
    sent = [c["customer"] for c in calls(h, "notify")]
    todo = [c for c in waiting[:n] if c not in sent]
    if todo:
        return Call("notify", {"customer": todo[0]})
    return Answer(f"notified {len(sent)}")


def _q_run(n, length, harmless=False, rid="r-1"):
    return Run(
        f"notify the first {n} customers waiting",
        {"waiting": [_id("c") for _ in range(length)], "rid": rid},
        {"n": n},
        harmless=harmless,
    )


T_Q = [Tool("queue", queue), Tool("notify", notify)]
for f in ("langchain", "pydantic_ai"):
    _sc(
        "loop_bound_from_task",
        "loops",
        f,
        T_Q,
        pol_first_n,
        [_q_run(2, 3), _q_run(2, 4), _q_run(2, 5)],
        [_q_run(2, 1), _q_run(2, 4, harmless=True, rid="r-77"), _q_run(2, 2, harmless=True)],
        doc="notify the first 2 of a queue of 3-5; probe: a queue of 1 (one call), of 4 with another request id",
    )
    _sc(
        "loop_bound_param_varies",
        "loops",
        f,
        T_Q,
        pol_first_n,
        [_q_run(2, 5), _q_run(3, 3), _q_run(4, 4)],
        [_q_run(3, 5), _q_run(2, 3), _q_run(4, 4, harmless=True)],
        doc="the bound is the task's number, runs where it and the queue length tie; probe n=3 of 5",
    )


# ---- 3. a choice by criterion, ties broken by a second field -------------------------------------------------


def offers(w, route: str) -> dict:
    return {"offers": [dict(o) for o in w["offers"]]}


def book(w, offer: str) -> str:
    w.setdefault("log", []).append(offer)
    return "booked"


def pol_tie(text, ctx, h):
    if not done(h, "offers"):
        return Call("offers", {"route": word(text, "route")})
    os_ = out(h, "offers")["offers"]
    best = min(os_, key=lambda o: (o["price"], -o["rating"]))
    if not done(h, "book"):
        return Call("book", {"offer": best["id"]})
    return Answer(f"booked at {best['price']}")


def _tie_run(pr, harmless=False):
    rt = _id("r")
    return Run(
        f"book route {rt}",
        {"offers": [{"id": _id("of"), "price": p, "rating": r} for p, r in pr]},
        {"route": rt},
        harmless=harmless,
    )


T_TIE = [Tool("offers", offers), Tool("book", book)]
for f in ("pydantic_ai", "langchain"):
    _sc(
        "tie_broken_by_rating",
        "choices",
        f,
        T_TIE,
        pol_tie,
        [_tie_run([(100, 3), (120, 5), (140, 4)]), _tie_run([(90, 4), (130, 2), (110, 5)])],
        [
            _tie_run([(100, 3), (100, 5), (140, 4)]),
            _tie_run([(95, 4), (125, 2), (135, 5)], harmless=True),
        ],
        doc="cheapest, ties by rating; every run's cheapest was first; probe ties 0 and 1, 1 rated better",
    )


# ---- 4. a computed value through a pydantic-ai structured output ---------------------------------------------


class Progress(BaseModel):
    done: int
    total: int
    percent: int
    summary: str


def tasks(w, project: str) -> dict:
    return {"tasks": [dict(t) for t in w["tasks"]]}


def pol_progress(text, ctx, h):
    if not done(h, "tasks"):
        return Call("tasks", {"project": word(text, "project")})
    ts = out(h, "tasks")["tasks"]
    d = sum(1 for t in ts if t["state"] == "done")
    pct = d * 100 // len(ts)
    return Answer({"done": d, "total": len(ts), "percent": pct, "summary": f"{d}/{len(ts)} done ({pct}%)"})


def _prog_run(states, harmless=False):
    pj = _id("p")
    return Run(
        f"report project {pj}",
        {"tasks": [{"id": _id("tk"), "state": s} for s in states]},
        {"project": pj},
        harmless=harmless,
    )


_sc(
    "structured_done_percent",
    "computed",
    "pydantic_ai",
    [Tool("tasks", tasks)],
    pol_progress,
    [_prog_run(["done", "open", "done", "open"]), _prog_run(["open", "done", "done", "open"])],
    [_prog_run(["done", "done", "done", "open"]), _prog_run(["open", "done", "open", "done"], harmless=True)],
    output_type=Progress,
    doc="count of done (2 in every run) and a percentage in a structured output; probe 3 of 4 done",
)


class Bill(BaseModel):
    net: float
    vat: float
    gross: float


def net_rate(w, order: str) -> dict:
    return {"net": w["net"], "vat_pct": w["vat_pct"]}


def pol_vat(text, ctx, h):
    if not done(h, "net_rate"):
        return Call("net_rate", {"order": word(text, "order")})
    o = out(h, "net_rate")
    vat = round(o["net"] * o["vat_pct"] / 100, 2)
    return Answer({"net": o["net"], "vat": vat, "gross": round(o["net"] + vat, 2)})


def _vat_run(net, pct, harmless=False):
    o = _id("o")
    return Run(f"bill order {o}", {"net": net, "vat_pct": pct}, {"order": o}, harmless=harmless)


_sc(
    "structured_vat_gross",
    "computed",
    "pydantic_ai",
    [Tool("net_rate", net_rate)],
    pol_vat,
    [_vat_run(100.0, 20), _vat_run(50.0, 10), _vat_run(80.0, 25)],
    [_vat_run(100.0, 10), _vat_run(50.0, 10, harmless=True), _vat_run(60.0, 20)],
    output_type=Bill,
    doc="vat = net * pct / 100, gross = net + vat in a structured output; probes mix net and pct",
)


# ---- 5. LangChain answers with computed values: days between dates, an average, a unit conversion ---------


def invoice(w, inv: str) -> dict:
    return {"issued": w["issued"], "due": w["due"], "trace": w.get("trace", "a1")}


def pol_days(text, ctx, h):
    if not done(h, "invoice"):
        return Call("invoice", {"inv": word(text, "invoice")})
    o = out(h, "invoice")
    days = (dt.date.fromisoformat(o["due"]) - dt.date.fromisoformat(o["issued"])).days
    return Answer(f"Invoice is payable within {days} days (due {o['due']}).")


def _days_run(issued, due, harmless=False, trace="a1"):
    i = _id("i")
    return Run(
        f"explain invoice {i}",
        {"issued": issued, "due": due, "trace": trace},
        {"invoice": i},
        harmless=harmless,
    )


_sc(
    "answer_days_between",
    "computed",
    "langchain",
    [Tool("invoice", invoice)],
    pol_days,
    [_days_run("2024-03-01", "2024-03-31"), _days_run("2024-03-10", "2024-04-09")],
    [
        _days_run("2024-03-05", "2024-03-20"),
        _days_run("2024-03-02", "2024-04-01", harmless=True, trace="zz9"),
    ],
    doc="answer: due - issued in days (30 in every run); probe 15 days",
)


def readings(w, sensor: str) -> dict:
    return {"celsius": w["c"], "at": w.get("at", "2024-01-01T00:00:00Z")}


def set_display(w, fahrenheit: float) -> str:
    w.setdefault("log", []).append(fahrenheit)
    return "ok"


def pol_f(text, ctx, h):
    if not done(h, "readings"):
        return Call("readings", {"sensor": word(text, "sensor")})
    c = out(h, "readings")["celsius"]
    f = round(c * 9 / 5 + 32, 1)
    if not done(h, "set_display"):
        return Call("set_display", {"fahrenheit": f})
    return Answer(f"{c}C is {f}F")


def _f_run(c, harmless=False, at="2024-01-01T00:00:00Z"):
    s = _id("s")
    return Run(f"show sensor {s}", {"c": c, "at": at}, {"sensor": s}, harmless=harmless)


for f in ("langchain", "pydantic_ai"):
    _sc(
        "celsius_to_fahrenheit",
        "computed",
        f,
        [Tool("readings", readings), Tool("set_display", set_display)],
        pol_f,
        [_f_run(20), _f_run(30), _f_run(10)],
        [_f_run(25), _f_run(20, harmless=True, at="2024-02-02T03:04:05Z")],
        doc="set_display(c * 9/5 + 32); probe 25 in range",
    )


def scores(w, cls: str) -> dict:
    return {"scores": list(w["scores"])}


def pol_avg(text, ctx, h):
    if not done(h, "scores"):
        return Call("scores", {"cls": word(text, "class")})
    s = out(h, "scores")["scores"]
    return Answer(f"Class average {sum(s) / len(s):.1f} over {len(s)} students; best {max(s)}")


def _avg_run(s, harmless=False):
    k = _id("k")
    return Run(f"summarise class {k}", {"scores": s}, {"class": k}, harmless=harmless)


_sc(
    "answer_average_max",
    "computed",
    "langchain",
    [Tool("scores", scores)],
    pol_avg,
    [_avg_run([70, 80, 90]), _avg_run([60, 90, 75]), _avg_run([80, 70, 60])],
    [_avg_run([70, 90, 60]), _avg_run([60, 90, 75], harmless=True)],
    doc="answer: average and max of scores; probe items each in range, average 73.3",
)


# ---- 6. a param against an item of a list ---------------------------------------------------------------------


def claims(w, account: str) -> dict:
    return {"claims": [dict(c) for c in w["claims"]]}


def approve(w, claim: str) -> str:
    w.setdefault("log", []).append(("approve", claim))
    return "approved"


def escalate(w, claim: str) -> str:
    w.setdefault("log", []).append(("escalate", claim))
    return "escalated"


def pol_limit(text, ctx, h):
    limit = num(text, "limit")
    if not done(h, "claims"):
        return Call("claims", {"account": word(text, "account")})
    cs = out(h, "claims")["claims"]
    handled = {a["claim"] for n in ("approve", "escalate") for a in calls(h, n)}
    for c in cs:
        if c["id"] not in handled:
            return Call("approve" if c["amount"] <= limit else "escalate", {"claim": c["id"]})
    return Answer(f"handled {len(cs)}")


def _claim_run(limit, amounts, harmless=False):
    ac = _id("a")
    return Run(
        f"review account {ac} with limit {limit}",
        {"claims": [{"id": _id("cl"), "amount": a} for a in amounts]},
        {"account": ac, "limit": limit},
        harmless=harmless,
    )


T_CL = [Tool("claims", claims), Tool("approve", approve), Tool("escalate", escalate)]
for f in ("langchain", "pydantic_ai"):
    _sc(
        "param_vs_list_item",
        "relations",
        f,
        T_CL,
        pol_limit,
        [_claim_run(50, [20, 70]), _claim_run(100, [80, 120]), _claim_run(80, [40, 90])],
        [_claim_run(50, [70, 120]), _claim_run(100, [60, 90]), _claim_run(80, [30, 100], harmless=True)],
        doc="approve items <= the task's limit; item 0 below and item 1 above in every run; probe 70 > 50",
    )


# ---- 7. a category param steering a branch, against a category read ------------------------------------------


def required(w, feature: str) -> dict:
    return {"tier": w["tier"], "feature": feature}


def enable(w, feature: str) -> str:
    w.setdefault("log", []).append(("enable", feature))
    return "on"


def upsell(w, feature: str) -> str:
    w.setdefault("log", []).append(("upsell", feature))
    return "offer sent"


_RANK = {"free": 0, "pro": 1, "team": 2, "enterprise": 3}


def pol_tier(text, ctx, h):
    plan = word(text, "plan")
    feat = word(text, "feature")
    if not done(h, "required"):
        return Call("required", {"feature": feat})
    need = out(h, "required")["tier"]
    tool = "enable" if _RANK[plan] >= _RANK[need] else "upsell"
    if not done(h, tool):
        return Call(tool, {"feature": feat})
    return Answer(tool)


def _tier_run(plan, need, harmless=False):
    ft = _id("f")
    return Run(
        f"on plan {plan} turn on feature {ft}",
        {"tier": need},
        {"plan": plan, "feature": ft},
        harmless=harmless,
    )


T_TIER = [Tool("required", required), Tool("enable", enable), Tool("upsell", upsell)]
for f in ("langchain", "pydantic_ai"):
    _sc(
        "category_param_rank",
        "params",
        f,
        T_TIER,
        pol_tier,
        [_tier_run("team", "pro"), _tier_run("enterprise", "team"), _tier_run("pro", "pro")],
        [
            _tier_run("pro", "team"),
            _tier_run("team", "team", harmless=True),
            _tier_run("enterprise", "pro", harmless=True),
        ],
        doc="enable when the plan ranks at or above the tier a read requires; probe pro vs team (each seen)",
    )


# ---- 8. the decisive read comes after two harmless ones -------------------------------------------------------


def profile(w, cust: str) -> dict:
    return {"cust": cust, "since": w.get("since", "2020-01-01"), "request_id": w.get("rid", "q1")}


def history(w, cust: str) -> dict:
    return {"orders": w.get("orders", 3), "fetched_at": w.get("at", "2024-05-05T05:05:05Z")}


def risk(w, cust: str) -> dict:
    return {"score": w["score"], "band": w["band"]}


def grant(w, cust: str, amount: int) -> str:
    w.setdefault("log", []).append(("grant", cust, amount))
    return "granted"


def review(w, cust: str) -> str:
    w.setdefault("log", []).append(("review", cust))
    return "queued"


def pol_risk(text, ctx, h):
    c = word(text, "customer")
    amt = num(text, "credit")
    for t in ("profile", "history", "risk"):
        if not done(h, t):
            return Call(t, {"cust": c})
    r = out(h, "risk")
    ok = r["band"] in ("low", "medium") and r["score"] < 600
    tool, args = ("grant", {"cust": c, "amount": amt}) if ok else ("review", {"cust": c})
    if not done(h, tool):
        return Call(tool, args)
    return Answer(tool)


def _risk_run(score, band, harmless=False, **noise):
    c = _id("c")
    return Run(
        f"customer {c} asks credit 500",
        {"score": score, "band": band, **noise},
        {"customer": c, "credit": 500},
        harmless=harmless,
    )


T_RISK = [
    Tool(n, fn)
    for n, fn in (
        ("profile", profile),
        ("history", history),
        ("risk", risk),
        ("grant", grant),
        ("review", review),
    )
]
for f in ("langchain", "pydantic_ai"):
    _sc(
        "decisive_third_read",
        "branches",
        f,
        T_RISK,
        pol_risk,
        [_risk_run(300, "low"), _risk_run(550, "medium"), _risk_run(420, "low")],
        [
            _risk_run(580, "low", harmless=True, rid="q999", at="2025-01-01T00:00:00Z", since="2019-02-02"),
            _risk_run(450, "high"),
            _risk_run(610, "medium"),
            _risk_run(500, "medium", harmless=True, orders=7),
        ],
        doc="grant when band low/medium and score < 600; two noisy reads first; probe band high (unseen) / 610",
    )


# ---- 9. the agent's own context (system prompt / instructions) changes -----------------------------------------


def refund_req(w, ticket: str) -> dict:
    return {"amount": w["amount"]}


def refund(w, ticket: str, amount: int) -> str:
    w.setdefault("log", []).append(("refund", amount))
    return "refunded"


def escalate_t(w, ticket: str) -> str:
    w.setdefault("log", []).append(("escalate",))
    return "escalated"


def pol_ctx(text, ctx, h):
    cap = num(ctx, "refunds up to")
    t = word(text, "ticket")
    if not done(h, "refund_req"):
        return Call("refund_req", {"ticket": t})
    a = out(h, "refund_req")["amount"]
    tool, args = ("refund", {"ticket": t, "amount": a}) if a <= cap else ("escalate_t", {"ticket": t})
    if not done(h, tool):
        return Call(tool, args)
    return Answer(tool)


def _ctx(w):
    return f"You are the refund desk. You may issue refunds up to {w['cap']} dollars. Now: {w.get('now', '09:00')}."


def _ctx_run(cap, amount, harmless=False, now="09:00"):
    t = _id("tk")
    return Run(
        f"handle ticket {t}", {"cap": cap, "amount": amount, "now": now}, {"ticket": t}, harmless=harmless
    )


T_CTX = [Tool("refund_req", refund_req), Tool("refund", refund), Tool("escalate_t", escalate_t)]
for f in ("langchain", "pydantic_ai"):
    _sc(
        "context_cap_changes",
        "context",
        f,
        T_CTX,
        pol_ctx,
        [_ctx_run(100, 40), _ctx_run(100, 90)],
        [_ctx_run(50, 90), _ctx_run(100, 60, harmless=True), _ctx_run(100, 70, harmless=True, now="14:37")],
        context=_ctx,
        doc="the cap lives in the system prompt; probe cap 50 amount 90 (escalate); probe a new clock in it",
    )


# ---- 10. harmless noise: key order, unrelated field, float noise, ids ------------------------------------------


def quote(w, sku: str) -> dict:
    return dict(w["quote"])


def buy(w, sku: str, price: float) -> str:
    w.setdefault("log", []).append((sku, price))
    return "bought"


def pol_buy(text, ctx, h):
    s = word(text, "sku")
    if not done(h, "quote"):
        return Call("quote", {"sku": s})
    q = out(h, "quote")
    if q["price"] <= 50 and q["stock"] > 0 and not done(h, "buy"):
        return Call("buy", {"sku": s, "price": q["price"]})
    return Answer("bought" if done(h, "buy") else "skipped")


def _buy_run(quote, harmless=False):
    s = _id("sk")
    return Run(f"buy sku {s} if cheap", {"quote": quote}, {"sku": s}, harmless=harmless)


for f in ("langchain", "pydantic_ai", "core"):
    _sc(
        "harmless_noise",
        "harmless",
        f,
        [Tool("quote", quote), Tool("buy", buy)],
        pol_buy,
        [
            _buy_run({"price": 20.5, "stock": 3, "currency": "EUR", "req": "r-1"}),
            _buy_run({"price": 35.25, "stock": 10, "currency": "EUR", "req": "r-2"}),
        ],
        [
            _buy_run({"req": "r-9", "currency": "EUR", "stock": 5, "price": 30.0}, harmless=True),
            _buy_run(
                {"price": 30.000000000000004, "stock": 5, "currency": "EUR", "req": "r-3"}, harmless=True
            ),
            _buy_run(
                {"price": 25.0, "stock": 4, "currency": "EUR", "req": "r-4", "warehouse": "w7"}, harmless=True
            ),
            _buy_run({"price": 25.0, "stock": 0, "currency": "EUR", "req": "r-5"}),
        ],
        doc="key order, float noise, an unrelated field, another request id; and stock 0",
    )


# ---- 11. a loop over a list that grew, a filter on each item -----------------------------------------------


def inbox(w, box: str) -> dict:
    return {"messages": [dict(m) for m in w["messages"]]}


def archive(w, msg: str) -> str:
    w.setdefault("log", []).append(msg)
    return "archived"


def pol_archive(text, ctx, h):
    if not done(h, "inbox"):
        return Call("inbox", {"box": word(text, "box")})
    ms = out(h, "inbox")["messages"]
    did = {a["msg"] for a in calls(h, "archive")}
    for m in ms:
        if m["read"] and m["age_days"] > 30 and m["id"] not in did:
            return Call("archive", {"msg": m["id"]})
    return Answer(f"archived {len(did)}")


def _arch_run(items, harmless=False):
    b = _id("b")
    return Run(
        f"clean box {b}",
        {"messages": [{"id": _id("m"), "read": r, "age_days": a} for r, a in items]},
        {"box": b},
        harmless=harmless,
    )


for f in ("langchain", "pydantic_ai"):
    _sc(
        "loop_filter_list_grew",
        "loops",
        f,
        [Tool("inbox", inbox), Tool("archive", archive)],
        pol_archive,
        [
            _arch_run([(True, 40), (False, 50)]),
            _arch_run([(True, 60), (True, 10), (False, 90)]),
        ],
        [
            _arch_run([(True, 45), (False, 70), (True, 35)]),
            _arch_run([(True, 50), (True, 20), (True, 31)]),
            _arch_run([(True, 55), (False, 60)], harmless=True),
        ],
        doc="archive read messages older than 30 days; probe: a grown list whose new item qualifies",
    )


# ---- 12. max of a list passed on; count over a list in the answer -------------------------------------------


def bids(w, lot: str) -> dict:
    return {"bids": [dict(b) for b in w["bids"]]}


def accept(w, lot: str, amount: int) -> str:
    w.setdefault("log", []).append(amount)
    return "accepted"


def pol_bid(text, ctx, h):
    lot = word(text, "lot")
    if not done(h, "bids"):
        return Call("bids", {"lot": lot})
    bs = [b["amount"] for b in out(h, "bids")["bids"] if b["valid"]]
    if bs and not done(h, "accept"):
        return Call("accept", {"lot": lot, "amount": max(bs)})
    return Answer(f"accepted {max(bs) if bs else 0} of {len(bs)} valid bids")


def _bid_run(bs, harmless=False):
    lt = _id("l")
    return Run(
        f"close lot {lt}",
        {"bids": [{"amount": a, "valid": v} for a, v in bs]},
        {"lot": lt},
        harmless=harmless,
    )


for f in ("pydantic_ai", "langchain"):
    _sc(
        "max_of_valid_bids",
        "computed",
        f,
        [Tool("bids", bids), Tool("accept", accept)],
        pol_bid,
        [
            _bid_run([(100, True), (150, True), (120, False)]),
            _bid_run([(200, True), (130, True), (90, False)]),
        ],
        [
            _bid_run([(100, True), (130, True), (180, False)]),
            _bid_run([(150, True), (140, True), (100, False)], harmless=True),
        ],
        doc="accept the max of valid bids (the invalid one below it in every run); probe invalid above",
    )


# ---- 13. date arithmetic: business days ahead, through pydantic-ai and LangChain -------------------------------


def order_date(w, order: str) -> dict:
    return {"placed": w["placed"]}


def schedule(w, order: str, ship_on: str) -> str:
    w.setdefault("log", []).append(ship_on)
    return "scheduled"


def _add_business(d: dt.date, n: int) -> dt.date:
    while n:
        d += dt.timedelta(days=1)
        if d.weekday() < 5:
            n -= 1
    return d


def pol_bd(text, ctx, h):
    o = word(text, "order")
    n = num(text, "in")
    if not done(h, "order_date"):
        return Call("order_date", {"order": o})
    d = _add_business(dt.date.fromisoformat(out(h, "order_date")["placed"]), n)
    if not done(h, "schedule"):
        return Call("schedule", {"order": o, "ship_on": d.isoformat()})
    return Answer(d.isoformat())


def _bd_run(placed, harmless=False):
    o = _id("o")
    return Run(
        f"ship order {o} in 2 business days", {"placed": placed}, {"order": o, "days": 2}, harmless=harmless
    )


for f in ("pydantic_ai", "langchain"):
    _sc(
        "business_days_ahead",
        "computed",
        f,
        [Tool("order_date", order_date), Tool("schedule", schedule)],
        pol_bd,
        [_bd_run("2024-06-03"), _bd_run("2024-06-04"), _bd_run("2024-06-05")],
        [_bd_run("2024-06-06"), _bd_run("2024-06-04", harmless=True)],
        doc="ship_on = placed + 2 business days (= +2 calendar days Mon-Wed); probe Thursday -> Monday",
    )


# ---- 14. relation between two reads decides: stock of the chosen warehouse vs qty ordered elsewhere ----------


def warehouses(w, sku: str) -> dict:
    return {"stock": dict(w["stock"]), "preferred": w["preferred"]}


def order_lines(w, order: str) -> dict:
    return {"qty": w["qty"], "sku": "sk1"}


def reserve(w, where: str, qty: int) -> str:
    w.setdefault("log", []).append((where, qty))
    return "reserved"


def pol_wh(text, ctx, h):
    o = word(text, "order")
    if not done(h, "order_lines"):
        return Call("order_lines", {"order": o})
    if not done(h, "warehouses"):
        return Call("warehouses", {"sku": "sk1"})
    q = out(h, "order_lines")["qty"]
    wh = out(h, "warehouses")
    where = wh["preferred"] if wh["stock"][wh["preferred"]] >= q else max(wh["stock"], key=wh["stock"].get)
    if not done(h, "reserve"):
        return Call("reserve", {"where": where, "qty": q})
    return Answer(where)


def _wh_run(qty, stock, pref, harmless=False):
    o = _id("o")
    return Run(
        f"fill order {o}", {"qty": qty, "stock": stock, "preferred": pref}, {"order": o}, harmless=harmless
    )


for f in ("langchain", "pydantic_ai"):
    _sc(
        "preferred_stock_vs_qty",
        "relations",
        f,
        [Tool("order_lines", order_lines), Tool("warehouses", warehouses), Tool("reserve", reserve)],
        pol_wh,
        [
            _wh_run(5, {"north": 10, "south": 3}, "north"),
            _wh_run(8, {"north": 2, "south": 20}, "south"),
            _wh_run(4, {"north": 6, "south": 9}, "north"),
        ],
        [
            _wh_run(7, {"north": 6, "south": 9}, "north"),
            _wh_run(5, {"north": 9, "south": 3}, "north", harmless=True),
        ],
        doc="reserve at the preferred warehouse (a category picking a dict key) if its stock covers qty",
    )


# ---- 15. percentage change in an f-string argument --------------------------------------------------------------


def prices(w, sku: str) -> dict:
    return {"old": w["old"], "new": w["new"]}


def post(w, text: str) -> str:
    w.setdefault("log", []).append(text)
    return "posted"


def pol_pct(text, ctx, h):
    s = word(text, "sku")
    if not done(h, "prices"):
        return Call("prices", {"sku": s})
    p = out(h, "prices")
    ch = round((p["new"] - p["old"]) * 100 / p["old"])
    if not done(h, "post"):
        return Call("post", {"text": f"Price moved {ch:+d}% to {p['new']}"})
    return Answer(f"{ch:+d}%")


def _pct_run(old, new, harmless=False):
    s = _id("s")
    return Run(f"announce sku {s}", {"old": old, "new": new}, {"sku": s}, harmless=harmless)


for f in ("langchain", "pydantic_ai"):
    _sc(
        "fstring_percent_change",
        "computed",
        f,
        [Tool("prices", prices), Tool("post", post)],
        pol_pct,
        [_pct_run(100, 110), _pct_run(200, 220), _pct_run(50, 55)],
        [_pct_run(100, 120), _pct_run(150, 165, harmless=True)],
        doc="post f'{pct:+d}%' (10 in every run); probe 100 -> 120 (each in range)",
    )


# ---- 16. the count of items in the answer of an empty-after-filter list --------------------------------------


def alerts(w, svc: str) -> dict:
    return {"alerts": [dict(a) for a in w["alerts"]], "generated": w.get("gen", "2024-01-01T00:00:00Z")}


def page(w, alert: str) -> str:
    w.setdefault("log", []).append(alert)
    return "paged"


def pol_page(text, ctx, h):
    if not done(h, "alerts"):
        return Call("alerts", {"svc": word(text, "service")})
    al = out(h, "alerts")["alerts"]
    sev = [a for a in al if a["sev"] == "critical"]
    paged = {c["alert"] for c in calls(h, "page")}
    for a in sev:
        if a["id"] not in paged:
            return Call("page", {"alert": a["id"]})
    return Answer(f"{len(sev)} critical of {len(al)}")


def _al_run(sevs, harmless=False, gen="2024-01-01T00:00:00Z"):
    sv = _id("sv")
    return Run(
        f"triage service {sv}",
        {"alerts": [{"id": _id("al"), "sev": s} for s in sevs], "gen": gen},
        {"service": sv},
        harmless=harmless,
    )


for f in ("langchain", "pydantic_ai"):
    _sc(
        "count_critical_answer",
        "computed",
        f,
        [Tool("alerts", alerts), Tool("page", page)],
        pol_page,
        [_al_run(["critical", "warning", "info"]), _al_run(["warning", "critical", "info"])],
        [
            _al_run(["critical", "info", "warning"]),
            _al_run(["critical", "warning", "info"], harmless=True, gen="2025-05-05T05:05:05Z"),
        ],
        doc="page critical alerts; answer counts them; probe: items permuted",
    )


# ==== round 2: sharper attacks ==================================================================================

# ---- 17. renewal one month on, every recorded month of 30 days -------------------------------------------------


def contract(w, contract: str) -> dict:
    return {"ends": w["ends"]}


def renew(w, contract: str, until: str) -> str:
    w.setdefault("log", []).append(until)
    return "renewed"


def _plus_month(d: dt.date) -> dt.date:
    y, m = (d.year, d.month + 1) if d.month < 12 else (d.year + 1, 1)
    return d.replace(year=y, month=m)


def pol_month(text, ctx, h):
    c = word(text, "contract")
    if not done(h, "contract"):
        return Call("contract", {"contract": c})
    until = _plus_month(dt.date.fromisoformat(out(h, "contract")["ends"])).isoformat()
    if not done(h, "renew"):
        return Call("renew", {"contract": c, "until": until})
    return Answer(f"renewed until {until}")


def _month_run(ends, harmless=False):
    c = _id("ct")
    return Run(f"renew contract {c} for a month", {"ends": ends}, {"contract": c}, harmless=harmless)


for f in ("pydantic_ai", "langchain"):
    _sc(
        "plus_one_month_30day_months",
        "computed",
        f,
        [Tool("contract", contract), Tool("renew", renew)],
        pol_month,
        [_month_run("2024-04-10"), _month_run("2024-06-05"), _month_run("2024-09-20")],
        [_month_run("2024-05-10"), _month_run("2024-08-15"), _month_run("2024-06-20", harmless=True)],
        doc="until = ends + 1 month; every recorded month had 30 days (+30 days); probe May (31 days)",
    )


# ---- 18. business days ahead, recorded Mon/Tue/Wed over three weeks -----------------------------------------

for f in ("pydantic_ai", "langchain"):
    _sc(
        "business_days_spread",
        "computed",
        f,
        [Tool("order_date", order_date), Tool("schedule", schedule)],
        pol_bd,
        [_bd_run("2024-06-03"), _bd_run("2024-06-11"), _bd_run("2024-06-19")],
        [_bd_run("2024-06-13"), _bd_run("2024-06-12", harmless=True)],
        doc="placed + 2 business days, recorded Mon/Tue/Wed (+2 calendar days); probe a Thursday in range",
    )


# ---- 19. a category param chooses which number of a read is compared -------------------------------------------


def metrics(w, host: str) -> dict:
    return {"cpu": w["cpu"], "mem": w["mem"]}


def scale_up(w, host: str) -> str:
    w.setdefault("log", []).append(host)
    return "scaled"


def pol_metric(text, ctx, h):
    host = word(text, "host")
    m = word(text, "on")
    if not done(h, "metrics"):
        return Call("metrics", {"host": host})
    if out(h, "metrics")[m] > 80 and not done(h, "scale_up"):
        return Call("scale_up", {"host": host})
    return Answer("scaled" if done(h, "scale_up") else "fine")


def _metric_run(metric, cpu, mem, harmless=False):
    hst = _id("h")
    return Run(
        f"check host {hst} scale on {metric}",
        {"cpu": cpu, "mem": mem},
        {"host": hst, "metric": metric},
        harmless=harmless,
    )


for f in ("langchain", "pydantic_ai"):
    _sc(
        "category_param_picks_field",
        "params",
        f,
        [Tool("metrics", metrics), Tool("scale_up", scale_up)],
        pol_metric,
        [
            _metric_run("cpu", 90, 50),
            _metric_run("mem", 50, 95),
            _metric_run("cpu", 85, 60),
            _metric_run("mem", 55, 88),
        ],
        [_metric_run("cpu", 55, 90), _metric_run("mem", 88, 60), _metric_run("cpu", 88, 55, harmless=True)],
        doc="scale when the param-named metric > 80; probe: the other metric high, the named one low",
    )


# ---- 20. a category read chooses which number is compared -------------------------------------------------------


def sensor(w, dev: str) -> dict:
    return {"primary": w["primary"], "a": w["a"], "b": w["b"]}


def alarm(w, dev: str) -> str:
    w.setdefault("log", []).append(dev)
    return "alarm"


def pol_primary(text, ctx, h):
    d = word(text, "device")
    if not done(h, "sensor"):
        return Call("sensor", {"dev": d})
    s = out(h, "sensor")
    if s[s["primary"]] > 100 and not done(h, "alarm"):
        return Call("alarm", {"dev": d})
    return Answer("alarm" if done(h, "alarm") else "ok")


def _prim_run(primary, a, b, harmless=False):
    dv = _id("d")
    return Run(f"watch device {dv}", {"primary": primary, "a": a, "b": b}, {"device": dv}, harmless=harmless)


for f in ("langchain", "pydantic_ai"):
    _sc(
        "category_read_picks_field",
        "relations",
        f,
        [Tool("sensor", sensor), Tool("alarm", alarm)],
        pol_primary,
        [_prim_run("a", 120, 50), _prim_run("b", 40, 130), _prim_run("a", 150, 70), _prim_run("b", 60, 110)],
        [_prim_run("a", 60, 120), _prim_run("b", 130, 70), _prim_run("a", 130, 60, harmless=True)],
        doc="alarm when the reading the 'primary' field names > 100; probe: primary a low, b high",
    )


# ---- 21. the max valid bid; validity varies per position ------------------------------------------------------


def pol_bid0(text, ctx, h):
    lot = word(text, "lot")
    if not done(h, "bids"):
        return Call("bids", {"lot": lot})
    bs = out(h, "bids")["bids"]
    best = max((b for b in bs if b["valid"]), key=lambda b: b["amount"])
    if not done(h, "accept"):
        return Call("accept", {"lot": lot, "amount": best["amount"]})
    return Answer(f"accepted {best['amount']}")


for f in ("pydantic_ai", "langchain"):
    _sc(
        "argmax_valid_flags_vary",
        "choices",
        f,
        [Tool("bids", bids), Tool("accept", accept)],
        pol_bid0,
        [
            _bid_run([(150, True), (100, True), (100, True)]),
            _bid_run([(150, True), (170, False), (100, True)]),
            _bid_run([(150, True), (120, True), (160, False)]),
        ],
        [
            _bid_run([(150, True), (160, True), (100, True)]),
            _bid_run([(150, True), (110, True), (155, True)]),
            _bid_run([(150, True), (110, False), (100, True)], harmless=True),
        ],
        doc="accept the max valid bid, 150 at [0] in every run; invalid bids above it; probe a valid one above",
    )


# ---- 22. loop bound from the task text, no params declared, templates on -----------------------------------------


def _q_run_tpl(n, length, harmless=False):
    return Run(
        f"notify the first {n} customers waiting",
        {"waiting": [_id("c") for _ in range(length)]},
        harmless=harmless,
    )


for f in ("langchain", "pydantic_ai"):
    _sc(
        "loop_bound_text_templates",
        "loops",
        f,
        T_Q,
        pol_first_n,
        [_q_run_tpl(2, 4), _q_run_tpl(3, 4), _q_run_tpl(2, 5), _q_run_tpl(3, 5)],
        [_q_run_tpl(2, 4, harmless=True), _q_run_tpl(4, 5), _q_run_tpl(3, 2)],
        options={"templates": True},
        doc="the loop bound only in the task text (templates); probe a bound of 4 and a short queue",
    )


# ---- 23. noise that varies in every recorded run (fair harmless probes) ---------------------------------------


def pol_buy2(text, ctx, h):
    s = word(text, "sku")
    if not done(h, "quote"):
        return Call("quote", {"sku": s})
    q = out(h, "quote")
    if q["price"] <= 50 and not done(h, "buy"):
        return Call("buy", {"sku": s, "price": q["price"]})
    return Answer("bought" if done(h, "buy") else "skipped")


def _q(price, i, **extra):
    return {
        "price": price,
        "request_id": f"req-{i:04d}-ab{i}",
        "fetched_at": f"2024-0{1 + i % 8}-1{i % 9}T1{i % 9}:2{i % 9}:00Z",
        "latency_ms": 30 + 7 * i,
        **extra,
    }


for f in ("langchain", "pydantic_ai", "core"):
    _sc(
        "harmless_varied_noise",
        "harmless",
        f,
        [Tool("quote", quote), Tool("buy", buy)],
        pol_buy2,
        [_buy_run(_q(20.5, 1)), _buy_run(_q(35.25, 2)), _buy_run(_q(28.0, 3))],
        [
            _buy_run(_q(30.0, 5), harmless=True),
            _buy_run(dict(reversed(list(_q(25.0, 6).items()))), harmless=True),
            _buy_run(_q(0.1 + 0.2 + 29.7, 7), harmless=True),
            _buy_run(_q(60.0, 8)),
        ],
        doc="request ids, timestamps, latencies vary in every run; probes: new noise, key order, float noise",
    )


# ---- 24. structured output with a computed bool against a param ------------------------------------------------


class Verdict(BaseModel):
    total: int
    within: bool


def cart(w, cart: str) -> dict:
    return {"items": list(w["items"])}


def pol_cart(text, ctx, h):
    budget = num(text, "budget")
    if not done(h, "cart"):
        return Call("cart", {"cart": word(text, "cart")})
    t = sum(out(h, "cart")["items"])
    return Answer({"total": t, "within": t <= budget})


def _cart_run(items, budget, harmless=False):
    c = _id("ca")
    return Run(
        f"check cart {c} against budget {budget}",
        {"items": items},
        {"cart": c, "budget": budget},
        harmless=harmless,
    )


_sc(
    "structured_total_vs_param",
    "computed",
    "pydantic_ai",
    [Tool("cart", cart)],
    pol_cart,
    [_cart_run([30, 20], 100), _cart_run([40, 50], 100), _cart_run([10, 60], 80)],
    [_cart_run([40, 50], 80), _cart_run([30, 20], 80, harmless=True)],
    output_type=Verdict,
    doc="total and total <= budget param; probe 90 against 80 (each in range)",
)


# ---- 25. a LangChain answer: the percentage of done items, counts varying -----------------------------------------


def pol_pct_answer(text, ctx, h):
    if not done(h, "tasks"):
        return Call("tasks", {"project": word(text, "project")})
    ts = out(h, "tasks")["tasks"]
    d = sum(1 for t in ts if t["state"] == "done")
    return Answer(f"{d * 100 // len(ts)}% done")


_sc(
    "answer_percent_lengths_vary",
    "computed",
    "langchain",
    [Tool("tasks", tasks)],
    pol_pct_answer,
    [
        _prog_run(["done", "open"]),
        _prog_run(["open", "done", "done", "open"]),
        _prog_run(["done", "done", "open", "open"]),
    ],
    [_prog_run(["done", "open", "open"]), _prog_run(["open", "done"], harmless=True)],
    doc="answer the share done (50% in every run, lengths 2 and 4); probe 1 of 3",
)


# ---- 26. a text param the agent copies on also steers a branch -----------------------------------------------


def create_ticket(w, title: str, priority: str) -> dict:
    w.setdefault("log", []).append(("ticket", priority))
    return {"ticket": f"T-{len(w['log'])}"}


def page_oncall(w, ticket: str) -> str:
    w.setdefault("log", []).append(("page", ticket))
    return "paged"


def pol_prio(text, ctx, h):
    p = word(text, "priority")
    ttl = word(text, "titled")
    if not done(h, "create_ticket"):
        return Call("create_ticket", {"title": ttl, "priority": p})
    t = out(h, "create_ticket")["ticket"]
    if p in ("urgent", "high") and not done(h, "page_oncall"):
        return Call("page_oncall", {"ticket": t})
    return Answer(f"filed {t}")


def _prio_run(p, harmless=False):
    t = _id("tt")
    return Run(
        f"file a ticket titled {t} with priority {p}", {}, {"title": t, "priority": p}, harmless=harmless
    )


for f in ("langchain", "pydantic_ai"):
    _sc(
        "text_param_copied_and_steers",
        "params",
        f,
        [Tool("create_ticket", create_ticket), Tool("page_oncall", page_oncall)],
        pol_prio,
        [_prio_run("urgent"), _prio_run("high"), _prio_run("low"), _prio_run("normal")],
        [_prio_run("normal"), _prio_run("urgent", harmless=True), _prio_run("medium")],
        doc="priority param copied into create_ticket and deciding the page; probe each seen value, and a new one",
    )


# ---- 27. a number param picks the list item compared (an index) ------------------------------------------------


def order_items(w, order: str) -> dict:
    return {"lines": [dict(x) for x in w["lines"]], "stock": w["stock"]}


def confirm(w, order: str, line: int) -> str:
    w.setdefault("log", []).append(("confirm", line))
    return "confirmed"


def backorder(w, order: str, line: int) -> str:
    w.setdefault("log", []).append(("backorder", line))
    return "backordered"


def pol_line(text, ctx, h):
    o = word(text, "order")
    ln = num(text, "line")
    if not done(h, "order_items"):
        return Call("order_items", {"order": o})
    r = out(h, "order_items")
    tool = "confirm" if r["lines"][ln - 1]["qty"] <= r["stock"] else "backorder"
    if not done(h, tool):
        return Call(tool, {"order": o, "line": ln})
    return Answer(tool)


def _line_run(ln, qtys, stock, harmless=False):
    o = _id("o")
    return Run(
        f"confirm order {o} line {ln}",
        {"lines": [{"sku": _id("sku"), "qty": q} for q in qtys], "stock": stock},
        {"order": o, "line": ln},
        harmless=harmless,
    )


for f in ("langchain", "pydantic_ai"):
    _sc(
        "index_param_picks_item",
        "relations",
        f,
        [Tool("order_items", order_items), Tool("confirm", confirm), Tool("backorder", backorder)],
        pol_line,
        [
            _line_run(1, [5, 50], 10),
            _line_run(2, [50, 5], 10),
            _line_run(1, [8, 40], 20),
            _line_run(2, [40, 8], 20),
        ],
        [_line_run(1, [50, 5], 10), _line_run(2, [8, 40], 20), _line_run(1, [5, 40], 10, harmless=True)],
        doc="the line param picks which qty is compared to stock; probe: the other line's qty, each seen",
    )


# ---- 28. today's reading picked by a date param from a dict keyed by dates --------------------------------------


def daily(w, site: str) -> dict:
    return {"by_day": dict(w["by_day"])}


def shed_load(w, site: str) -> str:
    w.setdefault("log", []).append(site)
    return "shed"


def pol_day(text, ctx, h):
    s = word(text, "site")
    day = word(text, "on")
    if not done(h, "daily"):
        return Call("daily", {"site": s})
    if out(h, "daily")["by_day"][day] > 100 and not done(h, "shed_load"):
        return Call("shed_load", {"site": s})
    return Answer("shed" if done(h, "shed_load") else "normal")


def _day_run(day, by_day, harmless=False):
    s = _id("st")
    return Run(f"balance site {s} on {day}", {"by_day": by_day}, {"site": s, "day": day}, harmless=harmless)


for f in ("pydantic_ai", "langchain"):
    _sc(
        "date_param_keys_dict",
        "relations",
        f,
        [Tool("daily", daily), Tool("shed_load", shed_load)],
        pol_day,
        [
            _day_run("2024-07-01", {"2024-07-01": 150, "2024-07-02": 60}),
            _day_run("2024-07-02", {"2024-07-01": 70, "2024-07-02": 140}),
            _day_run("2024-07-01", {"2024-07-01": 130, "2024-07-02": 80}),
        ],
        [
            _day_run("2024-07-01", {"2024-07-01": 70, "2024-07-02": 140}),
            _day_run("2024-07-02", {"2024-07-01": 150, "2024-07-02": 60}),
            _day_run("2024-07-01", {"2024-07-01": 140, "2024-07-02": 70}, harmless=True),
        ],
        doc="the date param names the dict key read; probe: the other day's load high",
    )


# ---- 29. top-k by score, k from the task param ---------------------------------------------------------------------


def candidates(w, role: str) -> dict:
    return {"people": [dict(p) for p in w["people"]]}


def invite(w, person: str) -> str:
    w.setdefault("log", []).append(person)
    return "invited"


def pol_topk(text, ctx, h):
    k = num(text, "top")
    if not done(h, "candidates"):
        return Call("candidates", {"role": word(text, "role")})
    ppl = sorted(out(h, "candidates")["people"], key=lambda p: -p["score"])[:k]
    did = {c["person"] for c in calls(h, "invite")}
    for p in ppl:
        if p["id"] not in did:
            return Call("invite", {"person": p["id"]})
    return Answer(f"invited {len(did)}")


def _topk_run(k, sc_, harmless=False):
    r = _id("ro")
    return Run(
        f"invite the top {k} for role {r}",
        {"people": [{"id": _id("pp"), "score": s} for s in sc_]},
        {"k": k, "role": r},
        harmless=harmless,
    )


for f in ("langchain", "pydantic_ai"):
    _sc(
        "top_k_by_score",
        "choices",
        f,
        [Tool("candidates", candidates), Tool("invite", invite)],
        pol_topk,
        [_topk_run(2, [90, 80, 70]), _topk_run(1, [85, 95, 60]), _topk_run(2, [70, 95, 88])],
        [_topk_run(2, [85, 80, 88]), _topk_run(1, [90, 80, 70]), _topk_run(2, [95, 90, 60], harmless=True)],
        doc="invite the k best; probe mixes positions of the best",
    )


def confirm_nl(w, order: str) -> str:
    w.setdefault("log", []).append("confirm")
    return "confirmed"


def backorder_nl(w, order: str) -> str:
    w.setdefault("log", []).append("backorder")
    return "backordered"


def pol_line_nl(text, ctx, h):
    o = word(text, "order")
    ln = num(text, "line")
    if not done(h, "order_items"):
        return Call("order_items", {"order": o})
    r = out(h, "order_items")
    tool = "confirm_nl" if r["lines"][ln - 1]["qty"] <= r["stock"] else "backorder_nl"
    if not done(h, tool):
        return Call(tool, {"order": o})
    return Answer(tool)


for f in ("langchain", "pydantic_ai"):
    _sc(
        "index_param_not_copied",
        "relations",
        f,
        [
            Tool("order_items", order_items),
            Tool("confirm_nl", confirm_nl),
            Tool("backorder_nl", backorder_nl),
        ],
        pol_line_nl,
        [
            _line_run(1, [5, 50], 10),
            _line_run(2, [50, 5], 10),
            _line_run(1, [8, 40], 20),
            _line_run(2, [40, 8], 20),
        ],
        [_line_run(1, [50, 5], 10), _line_run(2, [8, 40], 20), _line_run(2, [40, 8], 10, harmless=True)],
        doc="the line param (not copied) picks which qty is compared to stock; probe: the other line's qty",
    )


def _host_run(host_at, loads, harmless=False):
    hosts = [_id("h-") for _ in loads]
    s = hosts[host_at]
    return Run(
        f"balance site {s} on {s}",
        {"by_day": dict(zip(hosts, loads, strict=True))},
        {"site": s},
        harmless=harmless,
    )


for f in ("pydantic_ai", "langchain"):
    _sc(
        "host_param_keys_dict",
        "relations",
        f,
        [Tool("daily", daily), Tool("shed_load", shed_load)],
        pol_day,
        [_host_run(0, [150, 60]), _host_run(1, [70, 140]), _host_run(0, [130, 80])],
        [_host_run(0, [70, 140]), _host_run(1, [150, 60]), _host_run(0, [140, 70], harmless=True)],
        doc="an identity param names the dict key read; probe: the other key's load high",
    )


# ---- 30. the reading of the day a date param names, in a list of dated readings ---------------------------------


def readings_list(w, site: str) -> dict:
    return {"readings": [{"day": d, "load": v} for d, v in w["readings"]]}


def pol_day_list(text, ctx, h):
    s = word(text, "site")
    day = word(text, "on")
    if not done(h, "readings_list"):
        return Call("readings_list", {"site": s})
    r = next(x for x in out(h, "readings_list")["readings"] if x["day"] == day)
    if r["load"] > 100 and not done(h, "shed_load"):
        return Call("shed_load", {"site": s})
    return Answer("shed" if done(h, "shed_load") else "normal")


def _dl_run(day, readings, harmless=False):
    s = _id("st")
    return Run(
        f"balance site {s} on {day}", {"readings": readings}, {"site": s, "day": day}, harmless=harmless
    )


_D1, _D2 = "2024-07-01", "2024-07-02"
for f in ("langchain", "pydantic_ai"):
    _sc(
        "date_param_picks_list_item",
        "relations",
        f,
        [Tool("readings_list", readings_list), Tool("shed_load", shed_load)],
        pol_day_list,
        [
            _dl_run(_D1, [(_D1, 150), (_D2, 60)]),
            _dl_run(_D2, [(_D1, 70), (_D2, 140)]),
            _dl_run(_D1, [(_D1, 130), (_D2, 80)]),
        ],
        [
            _dl_run(_D1, [(_D1, 70), (_D2, 140)]),
            _dl_run(_D2, [(_D1, 150), (_D2, 60)]),
            _dl_run(_D1, [(_D1, 140), (_D2, 70)], harmless=True),
        ],
        doc="the date param picks the list item whose day it is; probe: the other day's load high",
    )
