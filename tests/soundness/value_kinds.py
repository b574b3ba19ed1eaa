"""Category and quantity texts the leaf-kind rules read as identifiers or names (so free after two values)."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, out, sc, word

# ---- 1. a payment's status_code (a category under a key ending in _code) -------------------------------


def get_payment(w: dict[str, Any], payment: str) -> dict[str, Any]:
    return {"payment": payment, "status_code": w["code"], "currency": "EUR"}


def release_goods(w: dict[str, Any], payment: str) -> str:
    w["released"].append(payment)
    return "released"


def cancel_order(w: dict[str, Any], payment: str) -> str:
    w["cancelled"].append(payment)
    return "cancelled"


STATUS_TOOLS = [
    Tool("get_payment", get_payment, check=lambda w, payment: True),
    Tool("release_goods", release_goods, check=lambda w, payment: True),
    Tool("cancel_order", cancel_order, check=lambda w, payment: True),
]


def status_policy(text: str, ctx: str, h: list[Step]):
    p = word(text, "payment")
    if not done(h, "get_payment"):
        return Call("get_payment", {"payment": p})
    if out(h, "get_payment")["status_code"] in ("APPROVED", "SETTLED"):
        if not done(h, "release_goods"):
            return Call("release_goods", {"payment": p})
        return Answer("Goods released.")
    if not done(h, "cancel_order"):
        return Call("cancel_order", {"payment": p})
    return Answer("Payment failed: order cancelled.")


def _pay(p: str, code: str) -> Run:
    return Run(f"settle payment {p}", {"code": code, "released": [], "cancelled": []}, {"payment": p})


# ---- 2. a weight written with its unit ("12kg"): freight above 100 kg ----------------------------------


def get_parcel(w: dict[str, Any], parcel: str) -> dict[str, Any]:
    return {"parcel": parcel, "weight": w["weight"]}


def book_courier(w: dict[str, Any], parcel: str) -> str:
    w["courier"].append(parcel)
    return "courier booked"


def book_freight(w: dict[str, Any], parcel: str) -> str:
    w["freight"].append(parcel)
    return "freight booked"


UNIT_TOOLS = [
    Tool("get_parcel", get_parcel, check=lambda w, parcel: True),
    Tool("book_courier", book_courier, check=lambda w, parcel: True),
    Tool("book_freight", book_freight, check=lambda w, parcel: True),
]


def unit_policy(text: str, ctx: str, h: list[Step]):
    p = word(text, "parcel")
    if not done(h, "get_parcel"):
        return Call("get_parcel", {"parcel": p})
    kg = float(out(h, "get_parcel")["weight"].removesuffix("kg"))
    tool = "book_freight" if kg > 100 else "book_courier"
    if not done(h, tool):
        return Call(tool, {"parcel": p})
    return Answer("Booked.")


def _parcel(p: str, weight: str) -> Run:
    return Run(f"ship parcel {p}", {"weight": weight, "courier": [], "freight": []}, {"parcel": p})


SCENARIOS = [
    sc(
        "rt_status_code_category_core",
        "branches",
        STATUS_TOOLS,
        status_policy,
        [_pay("pm-1", "APPROVED"), _pay("pm-2", "SETTLED")],
        [_pay("pm-3", "APPROVED"), _pay("pm-4", "DECLINED")],
        "A payment's status_code (a category under a key ending in _code): DECLINED now.",
    ),
    sc(
        "rt_weight_with_unit_core",
        "branches",
        UNIT_TOOLS,
        unit_policy,
        [_parcel("pc-1", "12kg"), _parcel("pc-2", "20kg")],
        [_parcel("pc-3", "15kg"), _parcel("pc-4", "150kg")],
        "A weight written with its unit ('12kg' reads as an identifier): 150kg needs freight.",
    ),
]
