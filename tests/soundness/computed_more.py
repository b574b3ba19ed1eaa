"""Red-team scenarios: computed values whose inputs each stay within the ranges the runs saw, the value not."""

from __future__ import annotations

import calendar
import datetime as dt

from pydantic import BaseModel

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import done, out, word

S: list[Scenario] = []
_N = [0]
T = lambda *a, **k: True  # noqa: E731


def _id(prefix: str) -> str:
    _N[0] += 1
    return f"{prefix}{_N[0]}q"


# two reads (a, b) from two different tools, then act(key, value) ------------------------------------------


def _read_a(w, key: str):
    return dict(w["a"])


def _read_b(w, key: str):
    return dict(w["b"])


def _act(w, key: str, value=None):
    w["acts"].append(value)
    return "ok"


def _tools():
    return [
        Tool("read_a", _read_a, check=T),
        Tool("read_b", _read_b, check=T),
        Tool("act", _act, check=T),
    ]


def _two(compute, answer=None):
    """read_a, read_b, then act(value=compute(a, b)) unless None; answer f'done {v}' (or answer(a, b, v))."""

    def policy(text: str, ctx: str, h: list[Step]):
        k = word(text, "key")
        if not done(h, "read_a"):
            return Call("read_a", {"key": k})
        if not done(h, "read_b"):
            return Call("read_b", {"key": k})
        a, b = out(h, "read_a"), out(h, "read_b")
        v = compute(a, b)
        if v is not None and not done(h, "act"):
            return Call("act", {"key": k, "value": v})
        return Answer(answer(a, b, v) if answer else f"done {k}")

    return policy


def _run(a, b, harmless=False):
    k = _id("k")
    return Run(f"handle key {k}", {"a": a, "b": b, "acts": []}, {"key": k}, harmless=harmless)


def _sc(name, compute, recs, probes, doc, front="core", answer=None, **kw):
    return Scenario(name, "computed", front, _tools(), _two(compute, answer), recs, probes, doc=doc, **kw)


# 1. sum of two numbers read by two different tools --------------------------------------------------------
S.append(
    _sc(
        "rt10g_sum_two_steps_core",
        lambda a, b: a["price"] + b["shipping"],
        [
            _run({"price": 10}, {"shipping": 5}),
            _run({"price": 20}, {"shipping": 8}),
            _run({"price": 30}, {"shipping": 3}),
        ],
        [
            _run({"price": 20}, {"shipping": 8}, harmless=True),
            _run({"price": 20}, {"shipping": 5}),
            _run({"price": 25}, {"shipping": 4}),
        ],
        "act(price + shipping) from two tools; probe (20, 5): each in range, the sum 25 unseen",
    )
)

# 2. a discount percentage (read elsewhere) applied to a price ----------------------------------------------
S.append(
    _sc(
        "rt10g_discount_pct_core",
        lambda a, b: round(a["price"] * (100 - b["pct"]) / 100, 2),
        [
            _run({"price": 80}, {"pct": 10}),
            _run({"price": 120}, {"pct": 25}),
            _run({"price": 200}, {"pct": 15}),
        ],
        [
            _run({"price": 120}, {"pct": 25}, harmless=True),
            _run({"price": 120}, {"pct": 10}),
            _run({"price": 200}, {"pct": 25}),
        ],
        "act(price * (100 - pct) / 100); probe price and pct from different runs",
    )
)

# 3. tax computed then rounded ------------------------------------------------------------------------------
S.append(
    _sc(
        "rt10g_tax_rounded_core",
        lambda a, b: round(a["subtotal"] * b["rate"], 2),
        [
            _run({"subtotal": 19.99}, {"rate": 0.0825}),
            _run({"subtotal": 49.5}, {"rate": 0.07}),
            _run({"subtotal": 100.0}, {"rate": 0.1}),
        ],
        [
            _run({"subtotal": 49.5}, {"rate": 0.07}, harmless=True),
            _run({"subtotal": 49.5}, {"rate": 0.0825}),
            _run({"subtotal": 60.0}, {"rate": 0.08}),
        ],
        "act(round(subtotal * rate, 2)); probe mixes a subtotal and a rate of different runs",
    )
)

# 4. unit conversion of one value read: kg -> g with a fractional kg in range -------------------------------
S.append(
    _sc(
        "rt10g_kg_to_g_core",
        lambda a, b: int(a["kg"] * 1000) if b["ok"] else None,
        [_run({"kg": 2}, {"ok": True}), _run({"kg": 3}, {"ok": True}), _run({"kg": 5}, {"ok": True})],
        [
            _run({"kg": 3}, {"ok": True}, harmless=True),
            _run({"kg": 4}, {"ok": True}),
            _run({"kg": 2.5}, {"ok": True}),
        ],
        "act(int(kg * 1000)); probe kg=4 (in range) -> 4000",
    )
)

# 5. hours -> minutes as an answer text (langchain) ---------------------------------------------------------
S.append(
    _sc(
        "rt10g_hours_to_minutes_answer_langchain",
        lambda a, b: None,
        [_run({"hours": 1.5}, {"n": 1}), _run({"hours": 2.0}, {"n": 2}), _run({"hours": 4.0}, {"n": 3})],
        [_run({"hours": 2.0}, {"n": 2}, harmless=True), _run({"hours": 3.0}, {"n": 2})],
        "answer f'{hours * 60} minutes'; probe hours=3.0 (in range)",
        front="langchain",
        answer=lambda a, b, v: f"That is {int(a['hours'] * 60)} minutes over {b['n']} sessions.",
    )
)

# 6. due = issued + terms days, from two tools --------------------------------------------------------------
S.append(
    _sc(
        "rt10g_due_date_terms_core",
        lambda a, b: (dt.date.fromisoformat(a["issued"]) + dt.timedelta(days=b["terms"])).isoformat(),
        [
            _run({"issued": "2026-03-01"}, {"terms": 30}),
            _run({"issued": "2026-03-10"}, {"terms": 15}),
            _run({"issued": "2026-03-20"}, {"terms": 45}),
        ],
        [
            _run({"issued": "2026-03-10"}, {"terms": 15}, harmless=True),
            _run({"issued": "2026-03-10"}, {"terms": 30}),
            _run({"issued": "2026-03-15"}, {"terms": 20}),
        ],
        "act(issued + terms days); probe an issued date and terms each within range, the due unseen",
    )
)

# 7. end of month of a date read ----------------------------------------------------------------------------


def _eom(a, b):
    d = dt.date.fromisoformat(a["day"])
    return d.replace(day=calendar.monthrange(d.year, d.month)[1]).isoformat()


S.append(
    _sc(
        "rt10g_end_of_month_core",
        _eom,
        [
            _run({"day": "2026-01-10"}, {"n": 1}),
            _run({"day": "2026-03-05"}, {"n": 2}),
            _run({"day": "2026-05-20"}, {"n": 3}),
        ],
        [
            _run({"day": "2026-03-05"}, {"n": 2}, harmless=True),
            _run({"day": "2026-02-14"}, {"n": 2}),
            _run({"day": "2026-04-02"}, {"n": 1}),
        ],
        "act(end of the date's month); probe a February date in range -> 02-28",
    )
)

# 8. next business day (+1, Friday +3) with records holding both ----------------------------------------------


def _nbd(a, b):
    d = dt.date.fromisoformat(a["day"])
    step = {4: 3, 5: 2}.get(d.weekday(), 1)
    return (d + dt.timedelta(days=step)).isoformat()


S.append(
    _sc(
        "rt10g_next_business_day_core",
        _nbd,
        # 2026-03-02 Mon, 03-06 Fri, 03-11 Wed, 03-20 Fri
        [
            _run({"day": "2026-03-02"}, {"n": 1}),
            _run({"day": "2026-03-06"}, {"n": 1}),
            _run({"day": "2026-03-11"}, {"n": 1}),
            _run({"day": "2026-03-20"}, {"n": 1}),
        ],
        [_run({"day": "2026-03-13"}, {"n": 1}), _run({"day": "2026-03-17"}, {"n": 1})],
        "act(next business day); runs saw +1 and +3; probe Friday 03-13 and Tuesday 03-17",
    )
)

# 9. f-string with arithmetic in a later argument (percent done) ---------------------------------------------
S.append(
    _sc(
        "rt10g_fstring_percent_arg_core",
        lambda a, b: f"{a['done']} of {b['total']} done ({a['done'] * 100 // b['total']}%)",
        [
            _run({"done": 2}, {"total": 10}),
            _run({"done": 5}, {"total": 20}),
            _run({"done": 9}, {"total": 12}),
        ],
        [
            _run({"done": 5}, {"total": 20}, harmless=True),
            _run({"done": 5}, {"total": 10}),
            _run({"done": 6}, {"total": 12}),
        ],
        "act(f'{done} of {total} done ({done*100//total}%)'); the numbers copy, the percent is computed",
    )
)

# 10. a count of list items (two lists, two tools) passed as an argument --------------------------------------
S.append(
    _sc(
        "rt10g_count_two_lists_core",
        lambda a, b: len(a["items"]) + len(b["items"]),
        [
            _run({"items": ["x1"]}, {"items": ["y1", "y2"]}),
            _run({"items": ["x1", "x2", "x3"]}, {"items": ["y1"]}),
            _run({"items": ["x1", "x2"]}, {"items": ["y1", "y2", "y3"]}),
        ],
        [
            _run({"items": ["x1", "x2", "x3"]}, {"items": ["y1"]}, harmless=True),
            _run({"items": ["x1", "x2"]}, {"items": ["y1", "y2"]}),
            _run({"items": ["x1", "x2", "x3"]}, {"items": ["y1", "y2", "y3"]}),
        ],
        "act(len(a) + len(b)); runs saw totals 3, 4, 5; probe (2, 2) -> 4 and (3, 3) -> 6",
    )
)

# 11. max over two lists read by two tools ---------------------------------------------------------------------
S.append(
    _sc(
        "rt10g_max_two_lists_core",
        lambda a, b: max(max(a["v"]), max(b["v"])),
        [
            _run({"v": [3, 9]}, {"v": [4, 5]}),
            _run({"v": [1, 2]}, {"v": [7, 8]}),
            _run({"v": [6, 10]}, {"v": [2, 3]}),
        ],
        [
            _run({"v": [1, 2]}, {"v": [7, 8]}, harmless=True),
            _run({"v": [3, 9]}, {"v": [7, 8]}),
            _run({"v": [3, 6]}, {"v": [2, 5]}),
        ],
        "act(max over both lists); probe the max moves between lists, each value in range",
    )
)

# 12. min(balance, cap): equals one operand in some runs, the other in others ---------------------------------
S.append(
    _sc(
        "rt10g_min_equals_operand_core",
        lambda a, b: min(a["balance"], b["cap"]),
        [
            _run({"balance": 50}, {"cap": 100}),
            _run({"balance": 150}, {"cap": 100}),
            _run({"balance": 80}, {"cap": 120}),
        ],
        [
            _run({"balance": 150}, {"cap": 100}, harmless=True),
            _run({"balance": 150}, {"cap": 120}),
            _run({"balance": 110}, {"cap": 100}),
        ],
        "act(min(balance, cap)); some runs copy balance, some cap; probe (150, 120) -> 120, (110, 100) -> 100",
    )
)

# 13. a constant equal to a computed value by coincidence (a + b == 100 in every run) ----------------------------
S.append(
    _sc(
        "rt10g_constant_equals_sum_core",
        lambda a, b: 100 if a["x"] > 0 else 0,
        [_run({"x": 30}, {"y": 70}), _run({"x": 40}, {"y": 60}), _run({"x": 55}, {"y": 45})],
        [_run({"x": 35}, {"y": 50}, harmless=True), _run({"x": 45}, {"y": 50}, harmless=True)],
        "act(100) a constant; x + y == 100 in every run; probe x + y != 100: the agent still passes 100",
        tradeoff="x + y == 100 in every run: the constant 100 may be their sum, so a sound engine misses when it moves",
    )
)

# 14. a computed value equal to a constant in every run (x + y == 100), probe the sum moves ----------------------
S.append(
    _sc(
        "rt10g_sum_equals_constant_core",
        lambda a, b: a["x"] + b["y"],
        [_run({"x": 30}, {"y": 70}), _run({"x": 40}, {"y": 60}), _run({"x": 55}, {"y": 45})],
        [_run({"x": 45}, {"y": 55}, harmless=True), _run({"x": 35}, {"y": 50}), _run({"x": 50}, {"y": 60})],
        "act(x + y); x + y == 100 in every run (a constant by the look of it); probe x + y == 85",
    )
)

# 15. difference of two list totals ---------------------------------------------------------------------------
S.append(
    _sc(
        "rt10g_diff_of_list_totals_core",
        lambda a, b: sum(a["v"]) - sum(b["v"]),
        [
            _run({"v": [10, 20]}, {"v": [5, 5]}),
            _run({"v": [30, 40]}, {"v": [10, 20]}),
            _run({"v": [15, 25]}, {"v": [8, 2]}),
        ],
        [
            _run({"v": [30, 40]}, {"v": [10, 20]}, harmless=True),
            _run({"v": [30, 20]}, {"v": [10, 5]}),
            _run({"v": [15, 40]}, {"v": [8, 20]}),
        ],
        "act(sum(a) - sum(b)); each item within range; probe totals mixed",
    )
)

# 16. average = total / count from two tools -------------------------------------------------------------------
S.append(
    _sc(
        "rt10g_average_core",
        lambda a, b: a["total"] / b["count"],
        [
            _run({"total": 100}, {"count": 4}),
            _run({"total": 90}, {"count": 3}),
            _run({"total": 200}, {"count": 8}),
        ],
        [
            _run({"total": 90}, {"count": 3}, harmless=True),
            _run({"total": 100}, {"count": 5}),
            _run({"total": 120}, {"count": 4}),
        ],
        "act(total / count); probe (100, 5) -> 20.0, unseen",
    )
)

# 17. product qty * unit, gated on a bound: computed value only decides (no arg) ---------------------------------
S.append(
    _sc(
        "rt10g_product_vs_budget_core",
        lambda a, b: "approve" if a["qty"] * b["unit"] <= 100 else "escalate",
        [_run({"qty": 2}, {"unit": 30}), _run({"qty": 5}, {"unit": 10}), _run({"qty": 4}, {"unit": 20})],
        [
            _run({"qty": 5}, {"unit": 10}, harmless=True),
            _run({"qty": 5}, {"unit": 30}),
            _run({"qty": 4}, {"unit": 30}),
        ],
        "act('approve' if qty * unit <= 100); every run approved (60, 50, 80); probe 5*30=150 -> escalate",
    )
)

# 18. a structured output (pydantic-ai) whose field is computed from two tools -----------------------------------


class Bill(BaseModel):
    """A bill the agent returns."""

    key: str
    total: float


def _bill_policy(text: str, ctx: str, h: list[Step]):
    k = word(text, "key")
    if not done(h, "read_a"):
        return Call("read_a", {"key": k})
    if not done(h, "read_b"):
        return Call("read_b", {"key": k})
    return Answer({"key": k, "total": out(h, "read_a")["price"] * out(h, "read_b")["qty"]})


S.append(
    Scenario(
        "rt10g_structured_product_pydantic_ai",
        "computed",
        "pydantic_ai",
        _tools(),
        _bill_policy,
        [
            _run({"price": 2.5}, {"qty": 4}),
            _run({"price": 4.0}, {"qty": 2}),
            _run({"price": 10.0}, {"qty": 3}),
        ],
        [
            _run({"price": 4.0}, {"qty": 2}, harmless=True),
            _run({"price": 4.0}, {"qty": 3}),
            _run({"price": 2.5}, {"qty": 2}),
        ],
        output_type=Bill,
        doc="structured total = price * qty; probe price and qty of different runs",
    )
)

# 19. a langchain answer holding a computed total of two tools ----------------------------------------------------
S.append(
    _sc(
        "rt10g_answer_total_langchain",
        lambda a, b: None,
        [_run({"price": 10}, {"fee": 2}), _run({"price": 20}, {"fee": 5}), _run({"price": 30}, {"fee": 1})],
        [
            _run({"price": 20}, {"fee": 5}, harmless=True),
            _run({"price": 20}, {"fee": 2}),
            _run({"price": 25}, {"fee": 3}),
        ],
        "answer f'Total {price + fee}'; probe mixes",
        front="langchain",
        answer=lambda a, b, v: f"Total due: {a['price'] + b['fee']} (price {a['price']}, fee {b['fee']}).",
    )
)

# 20. the same total in an answer that names no operands ----------------------------------------------------------
S.append(
    _sc(
        "rt10g_answer_total_only_langchain",
        lambda a, b: None,
        [_run({"price": 10}, {"fee": 2}), _run({"price": 20}, {"fee": 5}), _run({"price": 30}, {"fee": 1})],
        [
            _run({"price": 20}, {"fee": 5}, harmless=True),
            _run({"price": 20}, {"fee": 2}),
            _run({"price": 25}, {"fee": 3}),
        ],
        "answer f'Total {price + fee}' alone; probe mixes",
        front="langchain",
        answer=lambda a, b, v: f"Total due: {a['price'] + b['fee']}.",
    )
)

# 21. percentage as an answer (pydantic_ai, text output) ---------------------------------------------------------
S.append(
    _sc(
        "rt10g_percent_answer_pydantic_ai",
        lambda a, b: None,
        [
            _run({"part": 3}, {"whole": 10}),
            _run({"part": 5}, {"whole": 20}),
            _run({"part": 8}, {"whole": 16}),
        ],
        [
            _run({"part": 5}, {"whole": 20}, harmless=True),
            _run({"part": 5}, {"whole": 10}),
            _run({"part": 4}, {"whole": 16}),
        ],
        "answer f'{part * 100 // whole}%'; probe mixes",
        front="pydantic_ai",
        answer=lambda a, b, v: f"{a['part'] * 100 // b['whole']}% complete.",
    )
)

# 22. dollars -> cents of a sum of two tools' values ------------------------------------------------------------
S.append(
    _sc(
        "rt10g_cents_of_sum_core",
        lambda a, b: round((a["dollars"] + b["tip"]) * 100),
        [
            _run({"dollars": 12.5}, {"tip": 2.0}),
            _run({"dollars": 20.0}, {"tip": 3.5}),
            _run({"dollars": 15.25}, {"tip": 1.0}),
        ],
        [
            _run({"dollars": 20.0}, {"tip": 3.5}, harmless=True),
            _run({"dollars": 20.0}, {"tip": 2.0}),
            _run({"dollars": 16.0}, {"tip": 3.0}),
        ],
        "act(round((dollars + tip) * 100)); probe mixes",
    )
)

# 23. months added to a date (renewal = start + term months), both read ------------------------------------------


def _add_months(a, b):
    d = dt.date.fromisoformat(a["start"])
    m = d.month - 1 + b["months"]
    y, m = d.year + m // 12, m % 12 + 1
    return d.replace(year=y, month=m, day=min(d.day, calendar.monthrange(y, m)[1])).isoformat()


S.append(
    _sc(
        "rt10g_renewal_months_core",
        _add_months,
        [
            _run({"start": "2026-01-15"}, {"months": 1}),
            _run({"start": "2026-02-10"}, {"months": 12}),
            _run({"start": "2026-04-05"}, {"months": 6}),
        ],
        [
            _run({"start": "2026-02-10"}, {"months": 12}, harmless=True),
            _run({"start": "2026-02-10"}, {"months": 6}),
            _run({"start": "2026-03-01"}, {"months": 3}),
        ],
        "act(start + months); probe mixes",
    )
)

# 24. a computed value equal to an operand in some runs: price - discount, discount 0 in some -----------------
S.append(
    _sc(
        "rt10g_minus_zero_discount_core",
        lambda a, b: a["price"] - b["off"],
        [_run({"price": 50}, {"off": 0}), _run({"price": 80}, {"off": 0}), _run({"price": 60}, {"off": 10})],
        [
            _run({"price": 70}, {"off": 0}, harmless=True),
            _run({"price": 70}, {"off": 5}),
            _run({"price": 50}, {"off": 10}),
        ],
        "act(price - off); two runs copy price (off 0), one subtracts; probe off 5",
    )
)

# ==== second batch: a computed value the same in every run, by a function no tracked combination is ==========
# (sum/difference/product/ratio of two are checked exactly; a rounded or weighted one is not)

import math  # noqa: E402

# 25. boxes = ceil(qty / per_box): 2 in every run; probe the most qty in the smallest box -------------------
S.append(
    _sc(
        "rt10g_ceil_boxes_core",
        lambda a, b: math.ceil(a["qty"] / b["per_box"]),
        [
            _run({"qty": 10}, {"per_box": 6}),
            _run({"qty": 12}, {"per_box": 8}),
            _run({"qty": 20}, {"per_box": 12}),
        ],
        [
            _run({"qty": 11}, {"per_box": 7}, harmless=True),
            _run({"qty": 20}, {"per_box": 6}),
            _run({"qty": 18}, {"per_box": 8}),
        ],
        "act(ceil(qty / per_box)) = 2 in every run (ratios 1.67, 1.5, 1.67); probe 20/6 -> 4, 18/8 -> 3",
    )
)

# 25b. the same boxes in a LangChain answer ------------------------------------------------------------------
S.append(
    _sc(
        "rt10g_ceil_boxes_answer_langchain",
        lambda a, b: None,
        [
            _run({"qty": 10}, {"per_box": 6}),
            _run({"qty": 12}, {"per_box": 8}),
            _run({"qty": 20}, {"per_box": 12}),
        ],
        [_run({"qty": 11}, {"per_box": 7}, harmless=True), _run({"qty": 20}, {"per_box": 6})],
        "answer f'Ship in {ceil(qty / per_box)} boxes.' = 2 boxes every run; probe 20/6 -> 4 boxes",
        front="langchain",
        answer=lambda a, b, v: f"Ship in {math.ceil(a['qty'] / b['per_box'])} boxes.",
    )
)

# 26. a weighted sum: 2 adults' fare + a child's fare = 100 in every run ------------------------------------
S.append(
    _sc(
        "rt10g_weighted_sum_core",
        lambda a, b: 2 * a["adult"] + b["child"],
        [
            _run({"adult": 30}, {"child": 40}),
            _run({"adult": 20}, {"child": 60}),
            _run({"adult": 40}, {"child": 20}),
        ],
        [
            _run({"adult": 25}, {"child": 50}, harmless=True),
            _run({"adult": 30}, {"child": 60}),
            _run({"adult": 40}, {"child": 40}),
        ],
        "act(2 * adult + child) = 100 in every run; sum, difference, product, ratio all vary; probe (30, 60) -> 120",
    )
)

# 27. next version = max(local, remote) + 1: 11 in both runs, the max from either side ------------------------
S.append(
    _sc(
        "rt10g_max_plus_one_core",
        lambda a, b: max(a["local"], b["remote"]) + 1,
        [
            _run({"local": 10}, {"remote": 7}),
            _run({"local": 3}, {"remote": 10}),
            _run({"local": 10}, {"remote": 9}),
        ],
        [
            _run({"local": 10}, {"remote": 8}, harmless=True),
            _run({"local": 8}, {"remote": 9}),
            _run({"local": 5}, {"remote": 7}),
        ],
        "act(max(local, remote) + 1) = 11 in every run; probe (8, 9) -> 10",
    )
)

# 28. tax rounded to whole units: 5 in every run, products 5, 4.95, 4.8 ---------------------------------------
S.append(
    _sc(
        "rt10g_rounded_tax_same_core",
        lambda a, b: round(a["subtotal"] * b["rate"]),
        [
            _run({"subtotal": 100}, {"rate": 0.05}),
            _run({"subtotal": 55}, {"rate": 0.09}),
            _run({"subtotal": 48}, {"rate": 0.1}),
        ],
        [
            _run({"subtotal": 90}, {"rate": 0.06}, harmless=True),
            _run({"subtotal": 100}, {"rate": 0.1}),
            _run({"subtotal": 80}, {"rate": 0.09}),
        ],
        "act(round(subtotal * rate)) = 5 in every run; probe 100 * 0.1 -> 10",
    )
)

# 28b. the same through a pydantic-ai structured output -------------------------------------------------------


class Tax(BaseModel):
    """A tax the agent returns."""

    key: str
    tax: int


def _tax_policy(text: str, ctx: str, h: list[Step]):
    k = word(text, "key")
    if not done(h, "read_a"):
        return Call("read_a", {"key": k})
    if not done(h, "read_b"):
        return Call("read_b", {"key": k})
    return Answer({"key": k, "tax": round(out(h, "read_a")["subtotal"] * out(h, "read_b")["rate"])})


S.append(
    Scenario(
        "rt10g_rounded_tax_structured_pydantic_ai",
        "computed",
        "pydantic_ai",
        _tools(),
        _tax_policy,
        [
            _run({"subtotal": 100}, {"rate": 0.05}),
            _run({"subtotal": 55}, {"rate": 0.09}),
            _run({"subtotal": 48}, {"rate": 0.1}),
        ],
        [_run({"subtotal": 90}, {"rate": 0.06}, harmless=True), _run({"subtotal": 100}, {"rate": 0.1})],
        output_type=Tax,
        doc="structured tax = round(subtotal * rate) = 5 in every run; probe 100 * 0.1 -> 10",
    )
)

# 29. due at the end of the month of issued + terms (EOM terms): 03-31 in every run ---------------------------


def _eom_terms(a, b):
    d = dt.date.fromisoformat(a["issued"]) + dt.timedelta(days=b["terms"])
    return d.replace(day=calendar.monthrange(d.year, d.month)[1]).isoformat()


S.append(
    _sc(
        "rt10g_eom_after_terms_core",
        _eom_terms,
        [
            _run({"issued": "2026-03-01"}, {"terms": 20}),
            _run({"issued": "2026-03-15"}, {"terms": 10}),
            _run({"issued": "2026-03-05"}, {"terms": 15}),
        ],
        [
            _run({"issued": "2026-03-10"}, {"terms": 12}, harmless=True),
            _run({"issued": "2026-03-15"}, {"terms": 20}),
            _run({"issued": "2026-03-14"}, {"terms": 18}),
        ],
        "act(end of month of issued + terms) = 03-31 in every run; probe 03-15 + 20 -> 04-30",
    )
)

# 30. ship date = order date + processing days, rolled past a weekend: Monday 03-09 in every run -----------------


def _ship(a, b):
    d = dt.date.fromisoformat(a["ordered"]) + dt.timedelta(days=b["days"])
    while d.weekday() >= 5:
        d += dt.timedelta(days=1)
    return d.isoformat()


S.append(
    _sc(
        "rt10g_ship_rolled_to_monday_core",
        _ship,
        # 03-05 Thu, 03-06 Fri; 03-07 Sat, 03-08 Sun, 03-09 Mon
        [
            _run({"ordered": "2026-03-06"}, {"days": 1}),
            _run({"ordered": "2026-03-05"}, {"days": 2}),
            _run({"ordered": "2026-03-06"}, {"days": 3}),
            _run({"ordered": "2026-03-06"}, {"days": 2}),
        ],
        [
            _run({"ordered": "2026-03-05"}, {"days": 2}, harmless=True),
            _run({"ordered": "2026-03-05"}, {"days": 1}),
        ],
        "act(ordered + days, rolled to a weekday) = 03-09 in every run; probe Thu 03-05 + 1 -> Fri 03-06",
    )
)

# 31. a rounded percentage the same in every run (50%): part * 100 // whole ------------------------------------
S.append(
    _sc(
        "rt10g_floor_percent_same_core",
        lambda a, b: f"{a['part'] * 100 // b['whole']}% complete",
        [
            _run({"part": 5}, {"whole": 10}),
            _run({"part": 101}, {"whole": 200}),
            _run({"part": 51}, {"whole": 101}),
        ],
        [
            _run({"part": 50}, {"whole": 100}, harmless=True),
            _run({"part": 51}, {"whole": 100}),
            _run({"part": 5}, {"whole": 100}),
        ],
        "act(f'{part*100//whole}% complete') = '50%' in every run (ratios .5, .505, .505); probe 51/100 -> 51%",
    )
)
