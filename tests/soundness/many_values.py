"""Relations past the engine's bound on related leaves (48 numbers, 48 texts per check)."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, out, sc, word

# ---- 1. ship only when the shipping country is the billing country; 50 other text fields first -----------


def get_order(w: dict[str, Any], order: str) -> dict[str, Any]:
    tags = {f"a{i:02d}": ["red", "green", "blue"][i % 3] for i in range(50)}
    return {"order": order, "attributes": tags, "shipping_country": w["ship"], "weight": w["weight"]}


def get_billing(w: dict[str, Any], order: str) -> dict[str, Any]:
    return {"order": order, "billing_country": w["bill"]}


def ship(w: dict[str, Any], order: str) -> str:
    w["shipped"].append(order)
    return "shipped"


def review(w: dict[str, Any], order: str) -> str:
    w["reviews"].append(order)
    return "sent to fraud review"


COUNTRY_TOOLS = [
    Tool("get_order", get_order, check=lambda w, order: True),
    Tool("get_billing", get_billing, check=lambda w, order: True),
    Tool("ship", ship, check=lambda w, order: True),
    Tool("review", review, check=lambda w, order: True),
]


def country_policy(text: str, ctx: str, h: list[Step]):
    o = word(text, "order")
    if not done(h, "get_order"):
        return Call("get_order", {"order": o})
    if not done(h, "get_billing"):
        return Call("get_billing", {"order": o})
    same = out(h, "get_order")["shipping_country"] == out(h, "get_billing")["billing_country"]
    tool = "ship" if same else "review"
    if not done(h, tool):
        return Call(tool, {"order": o})
    return Answer("Shipped." if same else "Sent to review: countries differ.")


def _o(o: str, ship_c: str, bill_c: str, weight: int) -> Run:
    return Run(
        f"fulfil order {o}",
        {"ship": ship_c, "bill": bill_c, "weight": weight, "shipped": [], "reviews": []},
        {"order": o},
    )


def get_order_small(w: dict[str, Any], order: str) -> dict[str, Any]:
    return {"order": order, "shipping_country": w["ship"], "weight": w["weight"]}


SMALL_TOOLS = [Tool("get_order", get_order_small, check=lambda w, order: True), *COUNTRY_TOOLS[1:]]


# ---- 2. a time series of 60 readings: alert when the latest is above the limit read next --------------------


def get_series(w: dict[str, Any], meter: str) -> dict[str, Any]:
    return {"meter": meter, "values": [50] * 59 + [w["last"]]}


def get_limit(w: dict[str, Any], meter: str) -> dict[str, Any]:
    return {"meter": meter, "limit": w["limit"]}


def alert(w: dict[str, Any], meter: str) -> str:
    w["alerts"].append(meter)
    return "alerted"


SERIES_TOOLS = [
    Tool("get_series", get_series, check=lambda w, meter: True),
    Tool("get_limit", get_limit, check=lambda w, meter: True),
    Tool("alert", alert, check=lambda w, meter: True),
]


def series_policy(text: str, ctx: str, h: list[Step]):
    m = word(text, "meter")
    if not done(h, "get_series"):
        return Call("get_series", {"meter": m})
    if not done(h, "get_limit"):
        return Call("get_limit", {"meter": m})
    if out(h, "get_series")["values"][-1] > out(h, "get_limit")["limit"]:
        if not done(h, "alert"):
            return Call("alert", {"meter": m})
        return Answer("Alerted.")
    return Answer("Within the limit.")


def _m(m: str, last: int, limit: int) -> Run:
    return Run(f"watch meter {m}", {"last": last, "limit": limit, "alerts": []}, {"meter": m})


SCENARIOS = [
    sc(
        "rt_text_equality_past_48_core",
        "relations",
        COUNTRY_TOOLS,
        country_policy,
        [_o("o-1", "DE", "DE", 1), _o("o-2", "FR", "FR", 3)],
        [_o("o-3", "FR", "FR", 2), _o("o-4", "DE", "FR", 2)],
        "shipping == billing country, with 50 category texts read first: DE against FR flips the equality.",
    ),
    sc(
        "rt_text_equality_small_control_core",
        "relations",
        SMALL_TOOLS,
        country_policy,
        [_o("o-1", "DE", "DE", 1), _o("o-2", "FR", "FR", 3)],
        [_o("o-3", "FR", "FR", 2), _o("o-4", "DE", "FR", 2)],
        "Control: the same without the 50 texts.",
    ),
    sc(
        "rt_series_last_vs_limit_core",
        "relations",
        SERIES_TOOLS,
        series_policy,
        [_m("m-1", 60, 80), _m("m-2", 90, 120), _m("m-3", 70, 100)],
        [_m("m-4", 80, 110), _m("m-5", 85, 84)],
        "The last of 60 readings against a limit read next: 85 > 84 flips (each within its range).",
    ),
]
