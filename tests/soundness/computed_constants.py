"""Red-team scenarios: constants of a call or answer the agent computed from numbers it read.

Computations of other shapes (roundings to tens or to 0.05, means, a rate applied, a relative change,
three inputs, the first of next month, the Monday after), constants written otherwise (a thousands
separator, a unit after the digits, a date inside a timestamp, the ninth number of a text, a 0 or a
1, a value equal to a declared param), and harmless coincidences a sound engine must stop on.
"""

from __future__ import annotations

import datetime as dt
import math

from pydantic import BaseModel

from .computed_more import _tools
from .harness import Answer, Call, Run, Scenario, Step
from .kit import done, out, word

S: list[Scenario] = []
_N = [0]


def _id() -> str:
    _N[0] += 1
    return f"r{_N[0]}q"


def _two(compute, answer=None):
    """read_a, read_b, then act(value=compute(a, b, params)) unless None; then answer."""

    def policy(text: str, ctx: str, h: list[Step]):
        k = word(text, "key")
        if not done(h, "read_a"):
            return Call("read_a", {"key": k})
        if not done(h, "read_b"):
            return Call("read_b", {"key": k})
        a, b = out(h, "read_a"), out(h, "read_b")
        v = compute(a, b, text)
        if v is not None and not done(h, "act"):
            return Call("act", {"key": k, "value": v})
        return Answer(answer(a, b, v, text) if answer else f"done {k}")

    return policy


def _run(a, b, harmless=False, extra: dict | None = None):
    k = _id()
    params = {"key": k, **(extra or {})}
    text = f"handle key {k}" + "".join(f" {n} {v}" for n, v in (extra or {}).items())
    return Run(text, {"a": a, "b": b, "acts": []}, params, harmless=harmless)


def _sc(name, compute, recs, probes, doc, front="core", answer=None, **kw):
    return Scenario(name, "computed", front, _tools(), _two(compute, answer), recs, probes, doc=doc, **kw)


def _d(s: str) -> dt.date:
    return dt.date.fromisoformat(s[:10])


# ---- A. computations the gate does not try ---------------------------------------------------------------------

# 1. a quote rounded to tens
S.append(
    _sc(
        "rt11_round_to_tens_core",
        lambda a, b, t: int(round((a["base"] + b["extras"]) / 10.0) * 10),
        [
            _run({"base": 100}, {"extras": 17}),
            _run({"base": 110}, {"extras": 9}),
            _run({"base": 105}, {"extras": 16}),
        ],
        [
            _run({"base": 110}, {"extras": 9}, harmless=True),
            _run({"base": 110}, {"extras": 17}),
            _run({"base": 108}, {"extras": 16}),
        ],
        "act(round((base+extras)/10)*10): 120 in every run; probe 127 -> 130",
    )
)

# 2. a cash price rounded to 0.05 (Swiss rounding)
S.append(
    _sc(
        "rt11_round_to_005_core",
        lambda a, b, t: round(round(a["unit"] * b["qty"] / 0.05) * 0.05, 2),
        [
            _run({"unit": 1.24}, {"qty": 4}),
            _run({"unit": 2.47}, {"qty": 2}),
            _run({"unit": 1.655}, {"qty": 3}),
        ],
        [
            _run({"unit": 2.47}, {"qty": 2}, harmless=True),
            _run({"unit": 1.655}, {"qty": 4}),
            _run({"unit": 1.3}, {"qty": 4}),
        ],
        "act(price*qty rounded to 0.05): 4.95 in every run; probe 6.62 -> 6.6",
    )
)

# 3. a rounded average of two ratings
S.append(
    _sc(
        "rt11_rounded_average_core",
        lambda a, b, t: round((a["score"] + b["score"]) / 2),
        [
            _run({"score": 3.0}, {"score": 4.5}),
            _run({"score": 4.0}, {"score": 4.2}),
            _run({"score": 3.6}, {"score": 3.2}),
        ],
        [
            _run({"score": 4.0}, {"score": 4.2}, harmless=True),
            _run({"score": 4.0}, {"score": 4.5}),
        ],
        "act(round(mean of two scores)): 4 in every run; probe 4.25 -> 4 (harmless-ish) and (4.0,4.5) -> 4",
    )
)

# 3b. the same, where the mean crosses a half
S.append(
    _sc(
        "rt11_rounded_average_crosses_core",
        lambda a, b, t: math.floor((a["score"] + b["score"]) / 2 + 0.5),
        [
            _run({"score": 3.0}, {"score": 4.7}),
            _run({"score": 4.6}, {"score": 3.2}),
            _run({"score": 3.4}, {"score": 4.5}),
        ],
        [
            _run({"score": 4.6}, {"score": 3.2}, harmless=True),
            _run({"score": 4.6}, {"score": 4.7}),
            _run({"score": 3.0}, {"score": 3.2}),
        ],
        "act(rounded mean of two scores): 4 in every run; probe (4.6, 4.8) -> 5, (3.0, 3.2) -> 3",
    )
)

# 4. a percent change, rounded
S.append(
    _sc(
        "rt11_percent_change_rounded_core",
        lambda a, b, t: round((a["now"] - b["before"]) / b["before"] * 100),
        [
            _run({"now": 104.6}, {"before": 100}),
            _run({"now": 126.5}, {"before": 120}),
            _run({"now": 84.3}, {"before": 80}),
        ],
        [
            _run({"now": 126.5}, {"before": 120}, harmless=True),
            _run({"now": 126.5}, {"before": 100}),
            _run({"now": 90}, {"before": 84}),
        ],
        "act(round(percent change)): 5 in every run; probe (126, 100) -> 26",
    )
)

# 5. a price with VAT rounded: a*(1+r)
S.append(
    _sc(
        "rt11_price_with_vat_core",
        lambda a, b, t: round(a["net"] * (1 + b["vat"])),
        [
            _run({"net": 100}, {"vat": 0.2}),
            _run({"net": 96}, {"vat": 0.25}),
            _run({"net": 110}, {"vat": 0.09}),
        ],
        [
            _run({"net": 96}, {"vat": 0.25}, harmless=True),
            _run({"net": 110}, {"vat": 0.25}),
            _run({"net": 100}, {"vat": 0.09}),
        ],
        "act(round(net*(1+vat))): 120 in every run; probe (110, 0.25) -> 138",
    )
)


# 6. three inputs: pallets = ceil(qty * volume / pallet)
def _pallets(a, b, t):
    return math.ceil(a["qty"] * a["volume"] / b["pallet"])


S.append(
    _sc(
        "rt11_three_inputs_ceil_core",
        _pallets,
        [
            _run({"qty": 10, "volume": 2.0}, {"pallet": 8}),
            _run({"qty": 12, "volume": 1.5}, {"pallet": 6}),
            _run({"qty": 8, "volume": 2.5}, {"pallet": 7}),
        ],
        [
            _run({"qty": 12, "volume": 1.5}, {"pallet": 6}, harmless=True),
            _run({"qty": 12, "volume": 2.5}, {"pallet": 6}),
            _run({"qty": 10, "volume": 2.0}, {"pallet": 6}),
        ],
        "act(ceil(qty*volume/pallet)): 3 in every run; probe (12*2.5/6) -> 5",
    )
)

# 7. three inputs: a total of three charges equal in every run
S.append(
    _sc(
        "rt11_three_inputs_sum_core",
        lambda a, b, t: a["room"] + a["meals"] + b["tax"],
        [
            _run({"room": 200, "meals": 60}, {"tax": 40}),
            _run({"room": 220, "meals": 50}, {"tax": 30}),
            _run({"room": 180, "meals": 70}, {"tax": 50}),
        ],
        [
            _run({"room": 220, "meals": 50}, {"tax": 30}, harmless=True),
            _run({"room": 220, "meals": 60}, {"tax": 40}),
            _run({"room": 200, "meals": 70}, {"tax": 30}),
        ],
        "act(room+meals+tax): 300 in every run, no pair constant; probe 320",
    )
)

# 8. a computed value of 1 (excluded from constants): floor of a ratio
S.append(
    _sc(
        "rt11_computed_one_floor_core",
        lambda a, b, t: a["stock"] // b["per_pallet"],
        [
            _run({"stock": 50}, {"per_pallet": 40}),
            _run({"stock": 70}, {"per_pallet": 40}),
            _run({"stock": 90}, {"per_pallet": 60}),
        ],
        [
            _run({"stock": 70}, {"per_pallet": 40}, harmless=True),
            _run({"stock": 90}, {"per_pallet": 40}),
        ],
        "act(stock // per_pallet): 1 in every run; probe 90//40 -> 2",
    )
)

# 9. a computed value of 1: a rounded ratio with no order kept
S.append(
    _sc(
        "rt11_computed_one_rounded_core",
        lambda a, b, t: round(a["demand"] / b["pallet"]),
        [
            _run({"demand": 6}, {"pallet": 10}),
            _run({"demand": 14}, {"pallet": 10}),
            _run({"demand": 6}, {"pallet": 5}),
        ],
        [
            _run({"demand": 14}, {"pallet": 10}, harmless=True),
            _run({"demand": 14}, {"pallet": 5}),
        ],
        "act(round(demand/pallet)): 1 in every run; probe 14/5 -> 3",
    )
)

# 10. a computed value of 0: a rounded difference
S.append(
    _sc(
        "rt11_computed_zero_core",
        lambda a, b, t: round(a["counted"] - b["booked"]),
        [
            _run({"counted": 10.2}, {"booked": 10.0}),
            _run({"counted": 12.0}, {"booked": 12.3}),
            _run({"counted": 11.1}, {"booked": 11.0}),
        ],
        [
            _run({"counted": 12.0}, {"booked": 12.3}, harmless=True),
            _run({"counted": 12.0}, {"booked": 10.0}),
        ],
        "act(round(counted - booked)): 0 in every run; probe 2",
    )
)


# 11. first of the next month after issued + terms
def _first_next(a, b, t):
    d = _d(a["issued"]) + dt.timedelta(days=b["terms"])
    return (d.replace(day=28) + dt.timedelta(days=4)).replace(day=1).isoformat()


S.append(
    _sc(
        "rt11_first_of_next_month_core",
        _first_next,
        [
            _run({"issued": "2026-03-15"}, {"terms": 5}),
            _run({"issued": "2026-03-02"}, {"terms": 20}),
            _run({"issued": "2026-03-08"}, {"terms": 10}),
        ],
        [
            _run({"issued": "2026-03-02"}, {"terms": 20}, harmless=True),
            _run({"issued": "2026-03-15"}, {"terms": 20}),
        ],
        "act(first of the month after issued+terms): 04-01 in every run; probe 04-04 -> 05-01",
    )
)


# 12. next Monday after issued + lead days
def _next_monday(a, b, t):
    d = _d(a["issued"]) + dt.timedelta(days=b["lead"])
    return (d + dt.timedelta(days=7 - d.weekday())).isoformat()


S.append(
    _sc(
        "rt11_next_monday_core",
        _next_monday,
        [
            _run({"issued": "2026-03-01"}, {"lead": 5}),
            _run({"issued": "2026-03-04"}, {"lead": 1}),
            _run({"issued": "2026-03-02"}, {"lead": 3}),
        ],
        [
            _run({"issued": "2026-03-04"}, {"lead": 1}, harmless=True),
            _run({"issued": "2026-03-04"}, {"lead": 5}),
        ],
        "act(next Monday after issued+lead): 03-09 in every run; probe 03-09 -> 03-16",
    )
)

# ---- B. places the gate does not look ---------------------------------------------------------------------------

# 13. a date computed from a timestamp (timestamps are left out)
S.append(
    _sc(
        "rt11_date_from_timestamp_core",
        lambda a, b, t: (_d(a["created_at"]) + dt.timedelta(days=30)).isoformat() if b["ok"] else None,
        [
            _run({"created_at": "2026-03-01T08:10:00Z"}, {"ok": True}),
            _run({"created_at": "2026-03-01T12:40:00Z"}, {"ok": True}),
            _run({"created_at": "2026-03-01T16:05:00Z"}, {"ok": True}),
        ],
        [
            _run({"created_at": "2026-03-01T12:40:00Z"}, {"ok": True}, harmless=True),
            _run({"created_at": "2026-03-02T09:00:00Z"}, {"ok": True}),
            _run({"created_at": "2026-04-15T09:00:00Z"}, {"ok": True}),
        ],
        "act(date of created_at + 30 days): 03-31 in every run; probe created 04-15 -> 05-15",
    )
)


# 13b. end of month of a timestamp
def _eom_ts(a, b, t):
    d = _d(a["created_at"])
    return ((d.replace(day=28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)).isoformat()


S.append(
    _sc(
        "rt11_month_end_of_timestamp_core",
        _eom_ts,
        [
            _run({"created_at": "2026-03-05T08:10:00Z"}, {"ok": True}),
            _run({"created_at": "2026-03-12T12:40:00Z"}, {"ok": True}),
            _run({"created_at": "2026-03-20T16:05:00Z"}, {"ok": True}),
        ],
        [
            _run({"created_at": "2026-03-12T12:40:00Z"}, {"ok": True}, harmless=True),
            _run({"created_at": "2026-04-02T09:00:00Z"}, {"ok": True}),
        ],
        "act(end of created_at's month): 03-31 in every run; probe created 04-02 -> 04-30",
    )
)

# 14. a deadline written as an ISO timestamp (the date regex needs a word boundary)
S.append(
    _sc(
        "rt11_deadline_as_timestamp_core",
        lambda a, b, t: (
            _eom_ts({"created_at": (_d(a["issued"]) + dt.timedelta(days=b["terms"])).isoformat()}, b, t)
            + "T17:00:00Z"
        ),
        [
            _run({"issued": "2026-03-01"}, {"terms": 10}),
            _run({"issued": "2026-03-15"}, {"terms": 5}),
            _run({"issued": "2026-03-05"}, {"terms": 20}),
        ],
        [
            _run({"issued": "2026-03-15"}, {"terms": 5}, harmless=True),
            _run({"issued": "2026-03-15"}, {"terms": 20}),
        ],
        "act(f'{end of month of issued+terms}T17:00:00Z'): 03-31T17 in every run; probe 04-30",
    )
)

# 15. a total written with a thousands separator
S.append(
    _sc(
        "rt11_thousands_separator_core",
        lambda a, b, t: f"Invoice total ${round(a['hours'] * b['rate']):,} for key",
        [
            _run({"hours": 10}, {"rate": 125.03}),
            _run({"hours": 25}, {"rate": 49.99}),
            _run({"hours": 20}, {"rate": 62.51}),
        ],
        [
            _run({"hours": 25}, {"rate": 49.99}, harmless=True),
            _run({"hours": 25}, {"rate": 62.51}),
        ],
        "act('Invoice total $1,250'): hours*rate is 1250 in every run; probe 1562.5",
    )
)

# 16. a computed count written as '3x'
S.append(
    _sc(
        "rt11_count_with_suffix_core",
        lambda a, b, t: f"ship {math.ceil(a['qty'] / b['per_box'])}x boxes",
        [
            _run({"qty": 20}, {"per_box": 6}),
            _run({"qty": 22}, {"per_box": 6}),
            _run({"qty": 19}, {"per_box": 5}),
        ],
        [
            _run({"qty": 22}, {"per_box": 6}, harmless=True),
            _run({"qty": 22}, {"per_box": 5}),
        ],
        "act('ship 4x boxes'): ceil(qty/per_box) 4 in every run; probe 22/5 -> 5x",
    )
)

# 17. the computed constant after eight fixed numbers in the same text
_FIXED = "dims 40 30 25 cm, weight class 7, dock 12, gate 9, bay 14, tier 11, lane 8; "
S.append(
    _sc(
        "rt11_many_constants_first_core",
        lambda a, b, t: _FIXED + f"boxes {math.ceil(a['qty'] / b['per_box'])}",
        [
            _run({"qty": 20}, {"per_box": 6}),
            _run({"qty": 22}, {"per_box": 6}),
            _run({"qty": 19}, {"per_box": 5}),
        ],
        [
            _run({"qty": 22}, {"per_box": 6}, harmless=True),
            _run({"qty": 22}, {"per_box": 5}),
        ],
        "act(label with 9 fixed numbers then boxes=ceil(qty/per_box)); probe 5 boxes",
    )
)


# 18. the computed value nested in a dict/list argument among fixed numbers
def _nested(a, b, t):
    return {
        "options": {"insurance": 250, "retries": 2, "timeout": 30, "signature": 2},
        "parcels": [{"weight": 2.5, "count": math.ceil(a["qty"] / b["per_box"])}],
        "labels": [7, 8, 9, 10, 11, 12, 13, 14, 15],
    }


S.append(
    _sc(
        "rt11_nested_among_fixed_core",
        _nested,
        [
            _run({"qty": 20}, {"per_box": 6}),
            _run({"qty": 22}, {"per_box": 6}),
            _run({"qty": 19}, {"per_box": 5}),
        ],
        [
            _run({"qty": 22}, {"per_box": 6}, harmless=True),
            _run({"qty": 22}, {"per_box": 5}),
        ],
        "act(nested dict: fixed numbers, parcels[0].count = ceil(qty/per_box)); probe 5",
    )
)

# 19. the computed value coincides with an unchanging read field (bound to it instead of a constant)
S.append(
    _sc(
        "rt11_coincides_with_read_field_core",
        lambda a, b, t: math.ceil(a["qty"] / b["per_box"]),
        [
            _run({"qty": 20}, {"per_box": 6, "dock": 4}),
            _run({"qty": 22}, {"per_box": 6, "dock": 4}),
            _run({"qty": 19}, {"per_box": 5, "dock": 4}),
        ],
        [
            _run({"qty": 22}, {"per_box": 6, "dock": 4}, harmless=True),
            _run({"qty": 22}, {"per_box": 5, "dock": 4}),
        ],
        "act(ceil(qty/per_box)) = 4 = dock in every run; probe 22/5 -> 5, dock still 4",
    )
)

# 20. the computed value coincides with a declared param
S.append(
    _sc(
        "rt11_coincides_with_param_core",
        lambda a, b, t: math.ceil(a["qty"] / b["per_box"]),
        [
            _run({"qty": 20}, {"per_box": 6}, extra={"priority": 4}),
            _run({"qty": 22}, {"per_box": 6}, extra={"priority": 4}),
            _run({"qty": 19}, {"per_box": 5}, extra={"priority": 4}),
        ],
        [
            _run({"qty": 22}, {"per_box": 6}, harmless=True, extra={"priority": 4}),
            _run({"qty": 22}, {"per_box": 5}, extra={"priority": 4}),
        ],
        "act(ceil(qty/per_box)) = 4 = param priority in every run; probe 5",
    )
)

# 21. a computed value from a declared number param and a read
S.append(
    _sc(
        "rt11_param_and_read_core",
        lambda a, b, t: math.ceil(int(word(t, "guests")) / a["capacity"]) if b["ok"] else None,
        [
            _run({"capacity": 4}, {"ok": True}, extra={"guests": 5}),
            _run({"capacity": 4}, {"ok": True}, extra={"guests": 7}),
            _run({"capacity": 3}, {"ok": True}, extra={"guests": 6}),
        ],
        [
            _run({"capacity": 4}, {"ok": True}, harmless=True, extra={"guests": 7}),
            _run({"capacity": 3}, {"ok": True}, extra={"guests": 7}),
        ],
        "act(rooms = ceil(guests/capacity)): 2 in every run; probe 7/3 -> 3",
    )
)


# 22. a structured pydantic-ai output with the computed value in a nested list
class Line(BaseModel):
    sku: str
    boxes: int


class Shipment(BaseModel):
    key: str
    lines: list[Line]
    note: str


def _ship_policy(text: str, ctx: str, h: list[Step]):
    k = word(text, "key")
    if not done(h, "read_a"):
        return Call("read_a", {"key": k})
    if not done(h, "read_b"):
        return Call("read_b", {"key": k})
    n = math.ceil(out(h, "read_a")["qty"] / out(h, "read_b")["per_box"])
    return Answer({"key": k, "lines": [{"sku": "std", "boxes": n}], "note": f"round up to {n} boxes"})


S.append(
    Scenario(
        "rt11_structured_nested_pydantic_ai",
        "computed",
        "pydantic_ai",
        _tools(),
        _ship_policy,
        [
            _run({"qty": 20}, {"per_box": 6}),
            _run({"qty": 22}, {"per_box": 6}),
            _run({"qty": 19}, {"per_box": 5}),
        ],
        [_run({"qty": 22}, {"per_box": 6}, harmless=True), _run({"qty": 22}, {"per_box": 5})],
        output_type=Shipment,
        doc="structured output lines[0].boxes = ceil(qty/per_box); probe 5",
    )
)

# 23. a LangChain answer with the computed number beside read numbers
S.append(
    _sc(
        "rt11_answer_beside_read_numbers_langchain",
        lambda a, b, t: None,
        [
            _run({"qty": 20}, {"per_box": 6}),
            _run({"qty": 22}, {"per_box": 6}),
            _run({"qty": 19}, {"per_box": 5}),
        ],
        [_run({"qty": 22}, {"per_box": 6}, harmless=True), _run({"qty": 22}, {"per_box": 5})],
        "answer 'qty 22 at 6 per box: 4 boxes'; probe 5 boxes",
        front="langchain",
        answer=lambda a, b, v, t: (
            f"{a['qty']} units at {b['per_box']} per box: {math.ceil(a['qty'] / b['per_box'])} boxes."
        ),
    )
)

# 24. a LangChain answer with a rounded-to-tens estimate
S.append(
    _sc(
        "rt11_answer_round_tens_langchain",
        lambda a, b, t: None,
        [
            _run({"base": 100}, {"extras": 17}),
            _run({"base": 110}, {"extras": 9}),
            _run({"base": 105}, {"extras": 16}),
        ],
        [_run({"base": 110}, {"extras": 9}, harmless=True), _run({"base": 110}, {"extras": 17})],
        "answer 'about 120 EUR'; probe 130",
        front="langchain",
        answer=lambda a, b, v, t: f"About {int(round((a['base'] + b['extras']) / 10.0) * 10)} EUR in total.",
    )
)

# ---- C. harmless coincidences the new rule may stop on ------------------------------------------------------------

# 25. a fixed fee of 5 while price/count rounds to 5 in every run
S.append(
    _sc(
        "rt11_fixed_fee_coincides_ratio_core",
        lambda a, b, t: {"fee": 5, "ref": "std"},
        [
            _run({"total": 104}, {"count": 20}),
            _run({"total": 98}, {"count": 19}),
            _run({"total": 126}, {"count": 25}),
        ],
        [
            _run({"total": 126}, {"count": 20}, harmless=True),
            _run({"total": 98}, {"count": 25}, harmless=True),
            _run({"total": 110}, {"count": 22}, harmless=True),
        ],
        "act(fee=5) always; total/count rounds to 5 in every run by chance; probes change the ratio",
        tradeoff="the runs cannot tell a constant of the agent's own from one it computed, a computation of the numbers read gave it in every run",
    )
)

# 26. a year 2026 in a text while a rounded sum is 2026 in every run
S.append(
    _sc(
        "rt11_year_in_text_coincides_core",
        lambda a, b, t: f"Budget report for year 2026: spend {a['spend']} of {b['cap']}",
        [
            _run({"spend": 1500.2}, {"cap": 525.6}),
            _run({"spend": 1600.4}, {"cap": 425.7}),
            _run({"spend": 1480.0}, {"cap": 546.3}),
        ],
        [
            _run({"spend": 1600.4}, {"cap": 546.3}, harmless=True),
            _run({"spend": 1500.2}, {"cap": 425.7}, harmless=True),
        ],
        "act(text with the fixed year 2026); spend+cap rounds to 2026 in every run by chance",
        tradeoff="the runs cannot tell a constant of the agent's own from one it computed, a computation of the numbers read gave it in every run",
    )
)

# 27. a fixed retry count 3 while a number read rounds to 3
S.append(
    _sc(
        "rt11_fixed_retries_coincides_value_core",
        lambda a, b, t: {"retries": 3, "load": a["load"]},
        [_run({"load": 2.8}, {"n": 10}), _run({"load": 3.3}, {"n": 12}), _run({"load": 3.1}, {"n": 7})],
        [
            _run({"load": 3.2}, {"n": 9}, harmless=True),
            _run({"load": 2.9}, {"n": 12}, harmless=True),
        ],
        "act(retries=3 fixed, load copied); load rounds to 3 in every run; probe 2.7",
    )
)

# 28. a fixed discount of 10% while a ratio as a percentage rounds to 10
S.append(
    _sc(
        "rt11_fixed_percent_coincides_core",
        lambda a, b, t: f"apply 10% loyalty discount to {a['amount']}",
        [
            _run({"amount": 50}, {"visits": 5}),
            _run({"amount": 81}, {"visits": 8}),
            _run({"amount": 29}, {"visits": 3}),
        ],
        [
            _run({"amount": 81}, {"visits": 5}, harmless=True),
            _run({"amount": 50}, {"visits": 8}, harmless=True),
        ],
        "act('apply 10% ...'); visits/amount as a percentage rounds to 10 in every run by chance",
        tradeoff="the runs cannot tell a constant of the agent's own from one it computed, a computation of the numbers read gave it in every run",
    )
)

# 29. a fixed date (fiscal year end) while read dates' month end is it in every run
S.append(
    _sc(
        "rt11_fixed_year_end_coincides_core",
        lambda a, b, t: f"close books by 2026-12-31 after {a['posted']}",
        [
            _run({"posted": "2026-12-02"}, {"days": 3}),
            _run({"posted": "2026-12-20"}, {"days": 9}),
            _run({"posted": "2026-12-11"}, {"days": 5}),
        ],
        [
            _run({"posted": "2026-12-20"}, {"days": 3}, harmless=True),
            _run({"posted": "2026-12-15"}, {"days": 9}, harmless=True),
        ],
        "act(fixed 2026-12-31); posted+days ends its month at 12-31 in every run; probe 12-23 -> still",
    )
)

# 30. a fixed batch size 2 while a ratio floors to 2 in every run
S.append(
    _sc(
        "rt11_fixed_batch_coincides_floor_core",
        lambda a, b, t: {"batch": 2, "items": a["items"]},
        [
            _run({"items": 9}, {"workers": 4}),
            _run({"items": 14}, {"workers": 6}),
            _run({"items": 11}, {"workers": 5}),
        ],
        [
            _run({"items": 14}, {"workers": 4}, harmless=True),
            _run({"items": 9}, {"workers": 5}, harmless=True),
        ],
        "act(batch=2 fixed); items//workers is 2 in every run by chance; probes 3 and 1",
        tradeoff="the runs cannot tell a constant of the agent's own from one it computed, a computation of the numbers read gave it in every run",
    )
)
