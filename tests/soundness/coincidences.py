"""Computed values whose constants agree across runs with different inputs (coincidence), and
computed values that should rebuild (concatenation, case)."""

from __future__ import annotations

import datetime
from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, out, sc, word

# ---- 1. a percentage from two counts: 1/2 and 2/4 are both 50% -------------------------------------------


def get_progress(w: dict[str, Any], project: str) -> dict[str, Any]:
    return {"project": project, "done": w["done"], "total": w["total"]}


def set_percent(w: dict[str, Any], project: str, percent: int) -> str:
    w["percent"] = percent
    return "updated"


PCT_TOOLS = [
    Tool("get_progress", get_progress, check=lambda w, project: True),
    Tool("set_percent", set_percent, check=lambda w, project, percent: True),
]


def pct_policy(text: str, ctx: str, h: list[Step]):
    p = word(text, "project")
    if not done(h, "get_progress"):
        return Call("get_progress", {"project": p})
    if not done(h, "set_percent"):
        g = out(h, "get_progress")
        return Call("set_percent", {"project": p, "percent": round(100 * g["done"] / g["total"])})
    return Answer("Progress updated.")


def _pct(p: str, d: int, t: int) -> Run:
    return Run(
        f"update the progress of project {p}", {"done": d, "total": t, "percent": None}, {"project": p}
    )


# ---- 2. what is left to pay: 100-40 and 90-30 are both 60 -------------------------------------------------


def get_invoice(w: dict[str, Any], invoice: str) -> dict[str, Any]:
    return {"invoice": invoice, "total": w["total"], "paid_so_far": w["paid"]}


def pay(w: dict[str, Any], invoice: str, amount: int) -> str:
    w["payments"].append(amount)
    return "paid"


REST_TOOLS = [
    Tool("get_invoice", get_invoice, check=lambda w, invoice: True),
    Tool("pay", pay, check=lambda w, invoice, amount: True),
]


def rest_policy(text: str, ctx: str, h: list[Step]):
    i = word(text, "invoice")
    if not done(h, "get_invoice"):
        return Call("get_invoice", {"invoice": i})
    if not done(h, "pay"):
        inv = out(h, "get_invoice")
        return Call("pay", {"invoice": i, "amount": inv["total"] - inv["paid_so_far"]})
    return Answer("Paid the rest.")


def _rest(i: str, total: int, paid: int) -> Run:
    return Run(f"settle invoice {i}", {"total": total, "paid": paid, "payments": []}, {"invoice": i})


# ---- 3. a due date: issued + terms (06-01 + 30 and 06-11 + 20 are both 07-01) ------------------------------


def get_terms(w: dict[str, Any], invoice: str) -> dict[str, Any]:
    return {"invoice": invoice, "issued": w["issued"], "terms_days": w["terms"]}


def set_reminder(w: dict[str, Any], invoice: str, on: str) -> str:
    w["reminders"].append(on)
    return "reminder set"


DUE_TOOLS = [
    Tool("get_terms", get_terms, check=lambda w, invoice: True),
    Tool("set_reminder", set_reminder, check=lambda w, invoice, on: True),
]


def due_policy(text: str, ctx: str, h: list[Step]):
    i = word(text, "invoice")
    if not done(h, "get_terms"):
        return Call("get_terms", {"invoice": i})
    if not done(h, "set_reminder"):
        t = out(h, "get_terms")
        due = datetime.date.fromisoformat(t["issued"]) + datetime.timedelta(days=t["terms_days"])
        return Call("set_reminder", {"invoice": i, "on": due.isoformat()})
    return Answer("Reminder set.")


def _due(i: str, issued: str, terms: int) -> Run:
    return Run(
        f"remind me of invoice {i}", {"issued": issued, "terms": terms, "reminders": []}, {"invoice": i}
    )


# ---- 4. a badge from first + last name (concatenation of two outputs: should rebuild) -------------------


def get_person(w: dict[str, Any], person: str) -> dict[str, Any]:
    return {"person": person, "first_name": w["first"], "last_name": w["last"]}


def make_badge(w: dict[str, Any], label: str) -> str:
    w["badges"].append(label)
    return "made"


CONCAT_TOOLS = [
    Tool("get_person", get_person, check=lambda w, person: True),
    Tool("make_badge", make_badge, check=lambda w, label: True),
]


def concat_policy(text: str, ctx: str, h: list[Step]):
    p = word(text, "person")
    if not done(h, "get_person"):
        return Call("get_person", {"person": p})
    if not done(h, "make_badge"):
        g = out(h, "get_person")
        return Call("make_badge", {"label": f"{g['last_name'].upper()}, {g['first_name']}"})
    return Answer("Badge made.")


def _person(p: str, first: str, last: str) -> Run:
    return Run(f"make a badge for person {p}", {"first": first, "last": last, "badges": []}, {"person": p})


# ---- 5. an answer computed from two outputs (a sum written in the answer) --------------------------------


def get_counts(w: dict[str, Any], board: str) -> dict[str, Any]:
    return {"board": board, "open": w["open"], "blocked": w["blocked"]}


COUNT_TOOLS = [Tool("get_counts", get_counts, check=lambda w, board: True)]


def count_policy(text: str, ctx: str, h: list[Step]):
    b = word(text, "board")
    if not done(h, "get_counts"):
        return Call("get_counts", {"board": b})
    c = out(h, "get_counts")
    return Answer(f"{c['open'] + c['blocked']} tickets need attention.")


def _board(b: str, o: int, bl: int) -> Run:
    return Run(f"summarise board {b}", {"open": o, "blocked": bl}, {"board": b})


# ---- 6. rounding a price to whole euros (within one rounding cell: a right replay) ----------------------


def get_quote(w: dict[str, Any], item: str) -> dict[str, Any]:
    return {"item": item, "price": w["price"]}


def bill(w: dict[str, Any], item: str, euros: int) -> str:
    w["billed"].append(euros)
    return "billed"


ROUND_TOOLS = [
    Tool("get_quote", get_quote, check=lambda w, item: True),
    Tool("bill", bill, check=lambda w, item, euros: True),
]


def round_policy(text: str, ctx: str, h: list[Step]):
    it = word(text, "item")
    if not done(h, "get_quote"):
        return Call("get_quote", {"item": it})
    if not done(h, "bill"):
        return Call("bill", {"item": it, "euros": round(out(h, "get_quote")["price"])})
    return Answer("Billed.")


def _quote(it: str, price: float) -> Run:
    return Run(f"bill item {it}", {"price": price, "billed": []}, {"item": it})


SCENARIOS = [
    sc(
        "rt_percent_coincidence_core",
        "computed",
        PCT_TOOLS,
        pct_policy,
        [_pct("pr-1", 1, 2), _pct("pr-2", 2, 4)],
        [_pct("pr-3", 2, 4), _pct("pr-4", 1, 4)],
        "percent = done/total; 1/2 and 2/4 both set 50, so the constant looks input-free; 1/4 is 25.",
    ),
    sc(
        "rt_difference_coincidence_core",
        "computed",
        REST_TOOLS,
        rest_policy,
        [_rest("in-1", 100, 40), _rest("in-2", 90, 30)],
        [_rest("in-3", 95, 35), _rest("in-4", 100, 30)],
        "pay(total - paid); 100-40 and 90-30 both pay 60; 100-30 is 70.",
    ),
    sc(
        "rt_due_date_coincidence_core",
        "computed",
        DUE_TOOLS,
        due_policy,
        [_due("in-1", "2024-06-01", 30), _due("in-2", "2024-06-11", 20)],
        [_due("in-3", "2024-06-06", 25), _due("in-4", "2024-06-11", 30)],
        "remind on issued + terms; 06-01+30 and 06-11+20 are both 07-01; 06-11+30 is 07-11.",
    ),
    sc(
        "rt_concat_upper_core",
        "computed",
        CONCAT_TOOLS,
        concat_policy,
        [_person("p-1", "Ada", "Lovelace")],
        [
            _person(
                "p-2",
                "Grace",
                "Hopper",
            ),
            _person("p-3", "Ada", "Lovelace"),
        ],
        "A badge 'LAST, First' from two outputs, one upper-cased: another person now.",
    ),
    sc(
        "rt_answer_sum_core",
        "computed",
        COUNT_TOOLS,
        count_policy,
        [_board("b-1", 3, 2), _board("b-2", 2, 3)],
        [_board("b-3", 3, 3)],
        "The answer writes open + blocked; 3+2 and 2+3 both say 5; 3+3 says 6.",
    ),
    sc(
        "rt_rounding_core",
        "computed",
        ROUND_TOOLS,
        round_policy,
        [_quote("it-1", 19.6), _quote("it-2", 20.4)],
        [_quote("it-3", 20.1), _quote("it-4", 20.6)],
        "bill(round(price)); 19.6 and 20.4 both bill 20; 20.1 replays right, 20.6 is out of range.",
    ),
]
