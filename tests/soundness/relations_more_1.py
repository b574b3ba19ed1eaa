"""Red-team scenarios (core front) for muscle-mem: relations and computed values the rules claim to cover."""

from __future__ import annotations

import copy
import datetime
import json

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, out, sc, word

T = lambda *a, **k: True  # noqa: E731

# ---------------------------------------------------------------------------------------------------------
# Generic: read an order's data, then ship or hold by ok(output, text).


def _read(w, order: str):
    return copy.deepcopy(w["v"])


def _ship(w, order: str) -> str:
    w["shipped"].append(order)
    return "shipped"


def _hold(w, order: str) -> str:
    w["held"].append(order)
    return "held"


GEN_TOOLS = [
    Tool("read_order", _read, check=lambda w, order: True),
    Tool("ship", _ship, check=lambda w, order: True),
    Tool("hold", _hold, check=lambda w, order: True),
]


def gen_policy(ok, verb="ship"):
    def policy(text: str, ctx: str, h: list[Step]):
        o = word(text, "order")
        if not done(h, "read_order"):
            return Call("read_order", {"order": o})
        if ok(out(h, "read_order"), text):
            if not done(h, "ship"):
                return Call("ship", {"order": o})
            return Answer("Shipped.")
        if not done(h, "hold"):
            return Call("hold", {"order": o})
        return Answer("Held.")

    return policy


_N = [0]


def grun(v, text="ship order {oid}", harmless=False, **params):
    _N[0] += 1
    oid = f"ord-{_N[0]}x"
    return Run(
        text.format(oid=oid), {"v": v, "shipped": [], "held": []}, {"order": oid, **params}, harmless=harmless
    )


def gsc(name, ok, recs, probes, doc, cls="relations"):
    return sc(name, cls, GEN_TOOLS, gen_policy(ok), recs, probes, doc)


S = []

# 1. a + b <= c, each pair's order unchanged, no sum/diff constant ----------------------------------------
S.append(
    gsc(
        "rt2_sum_two_vs_third_core",
        lambda o, t: o["base"] + o["fee"] <= o["limit"],
        [grun({"base": 10, "fee": 20, "limit": 31}), grun({"base": 15, "fee": 18, "limit": 40})],
        [
            grun({"base": 12, "fee": 19, "limit": 36}, harmless=True),
            grun({"base": 15, "fee": 20, "limit": 31}),
        ],
        "ship when base + fee <= limit; probe 15+20=35 > 31, each value in range, pair orders as recorded",
    )
)

# 2. ordered == shipped + returned (three-value equality) ----------------------------------------------------
S.append(
    gsc(
        "rt2_three_way_equality_core",
        lambda o, t: o["ordered"] == o["shipped_qty"] + o["returned"],
        [
            grun({"ordered": 10, "shipped_qty": 6, "returned": 4}),
            grun({"ordered": 20, "shipped_qty": 15, "returned": 5}),
        ],
        [
            grun({"ordered": 15, "shipped_qty": 10, "returned": 5}, harmless=True),
            grun({"ordered": 15, "shipped_qty": 8, "returned": 4}),
        ],
        "ship when ordered == shipped + returned; probe 15 vs 8+4",
    )
)

# 3. price * qty == total (product across three values) --------------------------------------------------------
S.append(
    gsc(
        "rt2_product_consistency_core",
        lambda o, t: o["unit_price"] * o["qty"] == o["total"],
        [grun({"unit_price": 10, "qty": 2, "total": 20}), grun({"unit_price": 15, "qty": 3, "total": 45})],
        [
            grun({"unit_price": 12, "qty": 3, "total": 36}, harmless=True),
            grun({"unit_price": 10, "qty": 3, "total": 40}),
        ],
        "ship when unit_price * qty == total; probe 10*3 != 40",
    )
)

# 4. price / qty <= cap (ratio across three) -------------------------------------------------------------------
S.append(
    gsc(
        "rt2_ratio_vs_cap_core",
        lambda o, t: o["price"] / o["qty"] <= o["unit_cap"],
        [grun({"price": 100, "qty": 10, "unit_cap": 12}), grun({"price": 90, "qty": 5, "unit_cap": 20})],
        [
            grun({"price": 95, "qty": 8, "unit_cap": 15}, harmless=True),
            grun({"price": 100, "qty": 5, "unit_cap": 12}),
        ],
        "ship when price/qty <= unit_cap; probe 100/5 = 20 > 12",
    )
)

# 5. count of items over 25 (threshold in the task text) -------------------------------------------------------
S.append(
    gsc(
        "rt2_count_over_threshold_core",
        lambda o, t: sum(1 for x in o["weights"] if x > 25) >= 2,
        [
            grun({"weights": [10, 40, 30]}, "ship order {oid} if at least two parcels weigh over 25"),
            grun({"weights": [30, 25, 35]}, "ship order {oid} if at least two parcels weigh over 25"),
        ],
        [
            grun(
                {"weights": [12, 38, 33]},
                "ship order {oid} if at least two parcels weigh over 25",
                harmless=True,
            ),
            grun({"weights": [24, 25, 31]}, "ship order {oid} if at least two parcels weigh over 25"),
        ],
        "count of items over 25; probe items each in range, total 80 in [80,90], count 1",
        cls="computed",
    )
)

# 6. average of a list whose length varies ---------------------------------------------------------------------
S.append(
    gsc(
        "rt2_average_varying_length_core",
        lambda o, t: sum(o["scores"]) / len(o["scores"]) >= 65,
        [grun({"scores": [60, 80]}), grun({"scores": [70, 70, 64]})],
        [grun({"scores": [62, 78]}, harmless=True), grun({"scores": [60, 70, 64]})],
        "ship when average >= 65; probe [60,70,64] avg 64.7, each item in range, total in range",
        cls="computed",
    )
)


# 7. filtered subset sum vs budget ----------------------------------------------------------------------------
def _food_ok(o, t):
    return sum(i["amount"] for i in o["lines"] if i["category"] == "food") <= o["food_budget"]


def _lines(a, b, c, budget):
    return {
        "lines": [
            {"category": "food", "amount": a},
            {"category": "tech", "amount": b},
            {"category": "food", "amount": c},
        ],
        "food_budget": budget,
    }


S.append(
    gsc(
        "rt2_filtered_sum_vs_budget_core",
        _food_ok,
        [grun(_lines(10, 50, 30, 45)), grun(_lines(12, 40, 35, 52))],
        [grun(_lines(11, 45, 32, 48), harmless=True), grun(_lines(12, 40, 35, 45))],
        "ship when food lines sum <= food_budget; probe 12+35=47 > 45",
        cls="computed",
    )
)

# 8. two texts, a prefix relation (same continent) ---------------------------------------------------------------
S.append(
    gsc(
        "rt2_region_prefix_core",
        lambda o, t: o["region"].split("-")[0] == o["home_region"].split("-")[0],
        [
            grun({"region": "eu-west", "home_region": "eu-central"}),
            grun({"region": "us-east", "home_region": "us-west"}),
        ],
        [
            grun({"region": "us-east", "home_region": "us-west"}, harmless=True),
            grun({"region": "eu-west", "home_region": "us-west"}),
        ],
        "ship when both regions share a prefix; probe eu-west vs us-west, each among values seen, unequal as recorded",
        cls="branches",
    )
)

# 9. string numbers compared ---------------------------------------------------------------------------------------
S.append(
    gsc(
        "rt2_string_numbers_order_core",
        lambda o, t: int(o["available"]) >= int(o["needed"]),
        [grun({"available": "15", "needed": "10"}), grun({"available": "30", "needed": "20"})],
        [grun({"available": "30", "needed": "10"}, harmless=True), grun({"available": "15", "needed": "20"})],
        "ship when int(available) >= int(needed); the numbers are texts; probe '15' < '20'",
        cls="relations",
    )
)

# 10. int vs string number type ------------------------------------------------------------------------------------
S.append(
    gsc(
        "rt2_string_vs_int_core",
        lambda o, t: isinstance(o["qty"], int),
        [grun({"qty": 4}), grun({"qty": 7})],
        [grun({"qty": 5}, harmless=True), grun({"qty": "5"})],
        "ship when qty is a number (a text says a manual entry); probe '5'",
        cls="branches",
    )
)

# 11. JSON text, three values -----------------------------------------------------------------------------------
S.append(
    gsc(
        "rt2_json_text_sum_core",
        lambda o, t: (lambda d: d["base"] + d["fee"] <= d["limit"])(json.loads(o)),
        [
            grun(json.dumps({"base": 10, "fee": 20, "limit": 31})),
            grun(json.dumps({"base": 15, "fee": 18, "limit": 40})),
        ],
        [
            grun(json.dumps({"base": 12, "fee": 19, "limit": 36}), harmless=True),
            grun(json.dumps({"base": 15, "fee": 20, "limit": 31})),
        ],
        "a JSON text: ship when base + fee <= limit",
        cls="computed",
    )
)


# 12. US-format dates vs ISO param ---------------------------------------------------------------------------------
def _us_ok(o, t):
    dl = datetime.date.fromisoformat(word(t, "by"))
    due = datetime.datetime.strptime(o["ready_on"], "%m/%d/%Y").date()
    return due <= dl


S.append(
    gsc(
        "rt2_us_date_vs_param_core",
        _us_ok,
        [
            grun({"ready_on": "06/05/2024"}, "ship order {oid} if ready by 2024-06-10", by="2024-06-10"),
            grun({"ready_on": "06/15/2024"}, "ship order {oid} if ready by 2024-06-20", by="2024-06-20"),
        ],
        [
            grun(
                {"ready_on": "06/15/2024"},
                "ship order {oid} if ready by 2024-06-18",
                by="2024-06-18",
                harmless=True,
            ),
            grun({"ready_on": "06/05/2024"}, "ship order {oid} if ready by 2024-06-01", by="2024-06-01"),
        ],
        "ship when ready_on (MM/DD/YYYY) <= param date; probe ready 06/05 > 06/01",
        cls="relations",
    )
)


# 13. ISO date output vs ISO param date ------------------------------------------------------------------------------
def _iso_ok(o, t):
    return datetime.date.fromisoformat(o["ready_on"]) <= datetime.date.fromisoformat(word(t, "by"))


S.append(
    gsc(
        "rt2_iso_date_vs_param_core",
        _iso_ok,
        [
            grun({"ready_on": "2024-06-05"}, "ship order {oid} if ready by 2024-06-10", by="2024-06-10"),
            grun({"ready_on": "2024-06-15"}, "ship order {oid} if ready by 2024-06-20", by="2024-06-20"),
        ],
        [
            grun(
                {"ready_on": "2024-06-12"},
                "ship order {oid} if ready by 2024-06-18",
                by="2024-06-18",
                harmless=True,
            ),
            grun({"ready_on": "2024-06-14"}, "ship order {oid} if ready by 2024-06-12", by="2024-06-12"),
        ],
        "ship when ready_on <= param date; probe 06-14 > 06-12",
        cls="relations",
    )
)


# 14. date + days vs another date (three values) -----------------------------------------------------------------------
def _due_ok(o, t):
    due = datetime.date.fromisoformat(o["issued"]) + datetime.timedelta(days=o["terms_days"])
    return due >= datetime.date.fromisoformat(o["today"])


S.append(
    gsc(
        "rt2_date_plus_days_vs_today_core",
        _due_ok,
        [
            grun({"issued": "2024-06-01", "terms_days": 30, "today": "2024-06-20"}),
            grun({"issued": "2024-06-10", "terms_days": 10, "today": "2024-06-15"}),
        ],
        [
            grun({"issued": "2024-06-05", "terms_days": 20, "today": "2024-06-18"}, harmless=True),
            grun({"issued": "2024-06-01", "terms_days": 10, "today": "2024-06-15"}),
        ],
        "ship (not overdue) when issued + terms >= today; probe 06-01 + 10 < 06-15",
        cls="computed",
    )
)

# 15. keyword param contained in a body --------------------------------------------------------------------------------
S.append(
    gsc(
        "rt2_keyword_in_body_core",
        lambda o, t: word(t, "mentioning") in o["note"],
        [
            grun(
                {"note": "outage in eu"}, "ship order {oid} if its note mentioning outage", keyword="outage"
            ),
            grun(
                {"note": "refund requested"},
                "ship order {oid} if its note mentioning refund",
                keyword="refund",
            ),
        ],
        [
            grun(
                {"note": "outage in eu"},
                "ship order {oid} if its note mentioning outage",
                keyword="outage",
                harmless=True,
            ),
            grun(
                {"note": "outage in eu"}, "ship order {oid} if its note mentioning refund", keyword="refund"
            ),
        ],
        "ship when the keyword param is in the note; probe keyword refund, note 'outage in eu'",
        cls="branches",
    )
)


# 16. two-word phrase param contained in a body --------------------------------------------------------------------------
def _phrase_ok(o, t):
    phrase = t.split("mentioning ", 1)[1]
    return phrase in o["note"]


S.append(
    gsc(
        "rt2_phrase_in_body_core",
        _phrase_ok,
        [
            grun(
                {"note": "server outage in eu"},
                "ship order {oid} if its note mentioning server outage",
                phrase="server outage",
            ),
            grun(
                {"note": "refund requested today"},
                "ship order {oid} if its note mentioning refund requested",
                phrase="refund requested",
            ),
        ],
        [
            grun(
                {"note": "server outage in eu"},
                "ship order {oid} if its note mentioning server outage",
                phrase="server outage",
                harmless=True,
            ),
            grun(
                {"note": "server outage in eu"},
                "ship order {oid} if its note mentioning refund requested",
                phrase="refund requested",
            ),
        ],
        "ship when the phrase param is in the note; probe phrase 'refund requested', note 'server outage in eu'",
        cls="branches",
    )
)

# 17. list None vs [] ---------------------------------------------------------------------------------------------------
S.append(
    gsc(
        "rt2_none_vs_empty_core",
        lambda o, t: o["holds"] is None,
        [grun({"holds": None}), grun({"holds": None})],
        [grun({"holds": None}, harmless=True), grun({"holds": []})],
        "ship when holds is None (never checked -> fine), hold when [] (checked, pending); probe []",
        cls="branches",
    )
)

# 18. empty vs non-empty (list of ids) ------------------------------------------------------------------------------------
S.append(
    gsc(
        "rt2_empty_vs_nonempty_core",
        lambda o, t: not o["blocks"],
        [grun({"blocks": []}), grun({"blocks": []})],
        [grun({"blocks": []}, harmless=True), grun({"blocks": ["blk-9"]})],
        "ship when no blocks; probe one block",
        cls="branches",
    )
)


# 19. tie with overlapping ranges (strict order) ------------------------------------------------------------------------
def _tie_ok(o, t):
    a, _b = o["offers"]
    best = min(o["offers"], key=lambda x: (x["price"], -x["rating"]))
    return best is a


S.append(
    gsc(
        "rt2_tie_strict_order_core",
        _tie_ok,
        [
            grun({"offers": [{"price": 10, "rating": 4}, {"price": 20, "rating": 3}]}),
            grun({"offers": [{"price": 20, "rating": 3}, {"price": 30, "rating": 5}]}),
        ],
        [
            grun({"offers": [{"price": 15, "rating": 4}, {"price": 25, "rating": 4}]}, harmless=True),
            grun({"offers": [{"price": 20, "rating": 3}, {"price": 20, "rating": 5}]}),
        ],
        "ship if the first offer is the cheapest (ties by rating); probe a tie at 20 (ranges overlap)",
        cls="choices",
    )
)

# 20. keys change (dict keyed by ids) -----------------------------------------------------------------------------------
S.append(
    gsc(
        "rt2_dict_keyed_by_ids_core",
        lambda o, t: all(v == "paid" for v in o["by_invoice"].values()),
        [
            grun({"by_invoice": {"inv-1": "paid", "inv-2": "paid"}}),
            grun({"by_invoice": {"inv-3": "paid", "inv-4": "paid"}}),
        ],
        [
            grun({"by_invoice": {"inv-5": "paid", "inv-6": "paid"}}, harmless=True),
            grun({"by_invoice": {"inv-7": "paid", "inv-8": "unpaid"}}),
        ],
        "ship when every invoice (keys are ids) is paid; probe one unpaid",
        cls="output_shapes",
    )
)

S.append(
    gsc(
        "rt2_dict_keyed_by_ids_grows_core",
        lambda o, t: len(o["by_invoice"]) <= 2,
        [
            grun({"by_invoice": {"inv-1": "paid", "inv-2": "paid"}}),
            grun({"by_invoice": {"inv-3": "paid", "inv-4": "paid"}}),
        ],
        [grun({"by_invoice": {"inv-5": "paid", "inv-6": "paid", "inv-7": "paid"}})],
        "ship when at most two invoices (keys are ids); probe three",
        cls="output_shapes",
    )
)

# 21. key order (first listed) -------------------------------------------------------------------------------------------
S.append(
    gsc(
        "rt2_nested_value_moves_core",
        lambda o, t: o["parcels"][0]["items"][0]["hazmat"] is False and len(o["parcels"][0]["items"]) == 1,
        [
            grun(
                {
                    "parcels": [
                        {"items": [{"sku": "sku-1", "hazmat": False}]},
                        {"items": [{"sku": "sku-2", "hazmat": True}]},
                    ]
                }
            ),
            grun(
                {
                    "parcels": [
                        {"items": [{"sku": "sku-3", "hazmat": False}]},
                        {"items": [{"sku": "sku-4", "hazmat": True}]},
                    ]
                }
            ),
        ],
        [
            grun(
                {
                    "parcels": [
                        {"items": [{"sku": "sku-5", "hazmat": False}, {"sku": "sku-6", "hazmat": True}]},
                        {"items": []},
                    ]
                }
            )
        ],
        "a hazmat item moves from parcel 2 into parcel 1",
        cls="output_shapes",
    )
)

# 22. average with duplicate-free equal count but different membership -------------------------------------------------
S.append(
    gsc(
        "rt2_distinct_count_core",
        lambda o, t: len(set(o["warehouses"])) == 1,
        [grun({"warehouses": ["wh-east", "wh-east"]}), grun({"warehouses": ["wh-west", "wh-west"]})],
        [
            grun({"warehouses": ["wh-north", "wh-north"]}, harmless=True),
            grun({"warehouses": ["wh-east", "wh-west"]}),
        ],
        "ship in one parcel when all items come from one warehouse; probe two warehouses",
        cls="identities",
    )
)
