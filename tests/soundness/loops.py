"""Loops over what a read returned: the replay must not repeat the recorded number of iterations."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Front, Run, Scenario, Step, Tool
from .kit import calls, count, done, out

# ---- remind each overdue invoice ------------------------------------------------------------------------


def list_overdue(w: dict[str, Any]) -> list[str]:
    return [i for i, inv in w["invoices"].items() if inv["overdue"]]


def remind(w: dict[str, Any], invoice_id: str) -> str:
    w["reminded"].append(invoice_id)
    return f"reminded {invoice_id}"


OVERDUE_TOOLS = [
    Tool("list_overdue", list_overdue, check=lambda w: True),
    Tool("remind", remind, check=lambda w, invoice_id: invoice_id in w["invoices"]),
]


def overdue_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "list_overdue"):
        return Call("list_overdue")
    sent = {a["invoice_id"] for a in calls(h, "remind")}
    for invoice in out(h, "list_overdue"):
        if invoice not in sent:
            return Call("remind", {"invoice_id": invoice})
    return Answer(f"Reminded {len(sent)} overdue invoices.")


def invoices(*overdue: str, also: tuple[str, ...] = ()) -> dict[str, Any]:
    table = {i: {"overdue": True} for i in overdue} | {i: {"overdue": False} for i in also}
    return {"invoices": table, "reminded": []}


# ---- read a count, then ship_next() that many times -------------------------------------------------------


def pending_count(w: dict[str, Any]) -> int:
    return len(w["queue"])


def ship_next(w: dict[str, Any]) -> str:
    parcel = w["queue"].pop(0) if w["queue"] else "nothing"
    w["shipped"].append(parcel)
    return f"shipped {parcel}"


SHIP_TOOLS = [
    Tool("pending_count", pending_count, check=lambda w: True),
    Tool("ship_next", ship_next, check=lambda w: w["carrier_up"]),
]


def ship_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "pending_count"):
        return Call("pending_count")
    todo = out(h, "pending_count")
    if count(h, "ship_next") < todo:
        return Call("ship_next")
    return Answer(f"Shipped {todo} parcels.")


def queue(*parcels: str) -> dict[str, Any]:
    return {"queue": list(parcels), "shipped": [], "carrier_up": True}


# ---- discount every item over 100: another item now qualifies ----------------------------------------------


def list_items(w: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"sku": sku, "price": price} for sku, price in w["items"].items()]


def discount(w: dict[str, Any], sku: str) -> str:
    w["discounted"].append(sku)
    return f"discounted {sku}"


FILTER_TOOLS = [
    Tool("list_items", list_items, check=lambda w: True),
    Tool("discount", discount, check=lambda w, sku: sku in w["items"]),
]


def filter_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "list_items"):
        return Call("list_items")
    done_skus = {a["sku"] for a in calls(h, "discount")}
    for item in out(h, "list_items"):
        if item["price"] > 100 and item["sku"] not in done_skus:
            return Call("discount", {"sku": item["sku"]})
    return Answer(f"Discounted {len(done_skus)} items.")


def items(**prices: int) -> dict[str, Any]:
    return {"items": dict(prices), "discounted": []}


def _s(
    name: str,
    front: Front,
    tools: list[Tool],
    policy: Any,
    text: str,
    records: list[Any],
    probes: list[Any],
    doc: str,
) -> Scenario:
    return Scenario(
        name,
        "loops",
        front,
        tools,
        policy,
        [Run(text, w) for w in records],
        [Run(text, w) for w in probes],
        doc=doc,
    )


REMIND = "remind every overdue invoice"
SHIP = "ship the pending parcels"
DISCOUNT = "discount every item over 100"

SCENARIOS = [
    _s(
        "overdue_list_grew_core",
        "core",
        OVERDUE_TOOLS,
        overdue_policy,
        REMIND,
        [invoices("inv1", "inv2")],
        [invoices("inv1", "inv2", "inv3")],
        "Recorded over 2 overdue invoices; now 3 are overdue: the third must be reminded too.",
    ),
    _s(
        "overdue_list_shrank_pydantic_ai",
        "pydantic_ai",
        OVERDUE_TOOLS,
        overdue_policy,
        REMIND,
        [invoices("inv1", "inv2", "inv3")],
        [invoices("inv1", also=("inv2", "inv3"))],
        "Recorded over 3 overdue invoices; now only one is: no reminder for the paid ones.",
    ),
    _s(
        "overdue_other_ids_langchain",
        "langchain",
        OVERDUE_TOOLS,
        overdue_policy,
        REMIND,
        [invoices("inv1", "inv2")],
        [invoices("inv7", "inv8", "inv9")],
        "Other invoices, one more of them: every one listed now must be reminded.",
    ),
    _s(
        "count_then_ship_core",
        "core",
        SHIP_TOOLS,
        ship_policy,
        SHIP,
        [queue("p1", "p2")],
        [queue("p1", "p2", "p3"), queue("p1")],
        "A count read, then ship_next() that many times: 3 pending now (then 1).",
    ),
    _s(
        "count_then_ship_langchain",
        "langchain",
        SHIP_TOOLS,
        ship_policy,
        SHIP,
        [queue("p1", "p2")],
        [queue("p1", "p2", "p3")],
        "The count loop through a LangChain agent.",
    ),
    _s(
        "filter_new_item_qualifies_langchain",
        "langchain",
        FILTER_TOOLS,
        filter_policy,
        DISCOUNT,
        [items(a=150, b=80, c=120)],
        [items(a=150, b=180, c=120)],
        "A filter over a list: item b now costs 180 and qualifies too.",
    ),
    _s(
        "filter_new_item_qualifies_pydantic_ai",
        "pydantic_ai",
        FILTER_TOOLS,
        filter_policy,
        DISCOUNT,
        [items(a=150, b=80)],
        [items(a=150, b=80, c=300)],
        "A filter over a list that gained an item that qualifies.",
    ),
    _s(
        "filter_item_no_longer_qualifies_core",
        "core",
        FILTER_TOOLS,
        filter_policy,
        DISCOUNT,
        [items(a=150, b=120)],
        [items(a=150, b=90)],
        "A filter where an item recorded as qualifying no longer does.",
    ),
]
