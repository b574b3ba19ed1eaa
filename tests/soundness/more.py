"""More of the same classes, as an independent suite would try: pages, empty results, errors, nesting."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import calls, done, num, out, word

# ---- loops: a paged listing that now has a second page ------------------------------------------------------


def list_page(w: dict[str, Any], cursor: int) -> dict[str, Any]:
    pages = w["pages"]
    return {"items": pages[cursor], "next": cursor + 1 if cursor + 1 < len(pages) else None}


def archive(w: dict[str, Any], item: str) -> str:
    w["archived"].append(item)
    return "archived"


PAGE_TOOLS = [
    Tool("list_page", list_page, check=lambda w, cursor: True),
    Tool("archive", archive, check=lambda w, item: w["store_up"]),
]


def page_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "list_page"):
        return Call("list_page", {"cursor": 0})
    seen = [i for name, _a, o in h if name == "list_page" for i in o["items"]]
    archived = {a["item"] for a in calls(h, "archive")}
    for item in seen:
        if item not in archived:
            return Call("archive", {"item": item})
    nxt = out(h, "list_page")["next"]
    if nxt is not None:
        return Call("list_page", {"cursor": nxt})
    return Answer(f"Archived {len(archived)} items.")


def pages(*page: list[str]) -> dict[str, Any]:
    return {"pages": [list(p) for p in page], "archived": [], "store_up": True}


# ---- branches: an empty search, an error text, a nested element, a None ------------------------------------


def search(w: dict[str, Any], query: str) -> list[dict[str, Any]]:
    return [dict(r) for r in w["results"]]


def create_contact(w: dict[str, Any], name: str) -> dict[str, Any]:
    w["contacts"].append(name)
    return {"id": f"c{len(w['contacts'])}"}


def update_contact(w: dict[str, Any], contact_id: str, note: str) -> str:
    w["updated"].append((contact_id, note))
    return "updated"


CONTACT_TOOLS = [
    Tool("search", search, check=lambda w, query: True),
    Tool("create_contact", create_contact, check=lambda w, name: w["crm_up"]),
    Tool("update_contact", update_contact, check=lambda w, contact_id, note: w["crm_up"]),
]


def upsert_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    name = word(text, "contact")
    if not done(h, "search"):
        return Call("search", {"query": name})
    found = out(h, "search")
    if not found:
        if not done(h, "create_contact"):
            return Call("create_contact", {"name": name})
        return Answer(f"Created {out(h, 'create_contact')['id']}.")
    if not done(h, "update_contact"):
        return Call("update_contact", {"contact_id": found[0]["id"], "note": "met at the fair"})
    return Answer(f"Updated {found[0]['id']}.")


def crm(*results: dict[str, Any]) -> dict[str, Any]:
    return {"results": list(results), "contacts": [], "updated": [], "crm_up": True}


def send_sms(w: dict[str, Any], number: str, text: str) -> str:
    if w["throttled"]:
        return "error: rate limited, retry later"
    w["sent"].append((number, text))
    return "queued"


def schedule_retry(w: dict[str, Any], number: str) -> str:
    w["retries"].append(number)
    return "retry scheduled"


SMS_TOOLS = [
    Tool("send_sms", send_sms, check=lambda w, number, text: True),
    Tool("schedule_retry", schedule_retry, check=lambda w, number: True),
]


def sms_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    number = word(text, "to")
    if not done(h, "send_sms"):
        return Call("send_sms", {"number": number, "text": "your parcel is on its way"})
    if out(h, "send_sms").startswith("error"):
        if not done(h, "schedule_retry"):
            return Call("schedule_retry", {"number": number})
        return Answer("The SMS will be retried.")
    return Answer("The SMS is queued.")


def sms(throttled: bool) -> dict[str, Any]:
    return {"throttled": throttled, "sent": [], "retries": []}


def get_order_lines(w: dict[str, Any], order_id: int) -> dict[str, Any]:
    return {"order_id": order_id, "lines": [dict(line) for line in w["lines"]], "coupon": w["coupon"]}


def ship_line(w: dict[str, Any], sku: str) -> str:
    w["shipped"].append(sku)
    return "shipped"


def apply_coupon(w: dict[str, Any], order_id: int, code: str) -> str:
    w["coupons"].append(code)
    return "applied"


LINE_TOOLS = [
    Tool("get_order_lines", get_order_lines, check=lambda w, order_id: True),
    Tool("ship_line", ship_line, check=lambda w, sku: w["dock_open"]),
    Tool("apply_coupon", apply_coupon, check=lambda w, order_id, code: True),
]


def line_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    oid = num(text, "order")
    if not done(h, "get_order_lines"):
        return Call("get_order_lines", {"order_id": oid})
    order = out(h, "get_order_lines")
    shipped = {a["sku"] for a in calls(h, "ship_line")}
    for line in order["lines"]:
        if line["status"] == "ready" and line["sku"] not in shipped:
            return Call("ship_line", {"sku": line["sku"]})
    if order["coupon"] is not None and not done(h, "apply_coupon"):
        return Call("apply_coupon", {"order_id": oid, "code": order["coupon"]})
    return Answer(f"Shipped {len(shipped)} lines of order {oid}.")


def lines(*status: tuple[str, str], coupon: str | None = None) -> dict[str, Any]:
    rows = [{"sku": sku, "status": st} for sku, st in status]
    return {"lines": rows, "coupon": coupon, "shipped": [], "coupons": [], "dock_open": True}


# ---- relations: a price against a budget the task states ---------------------------------------------------


def get_price(w: dict[str, Any], item: str) -> dict[str, Any]:
    return {"item": item, "price": w["price"]}


def buy(w: dict[str, Any], item: str) -> str:
    w["bought"].append(item)
    return "bought"


BUDGET_TOOLS = [
    Tool("get_price", get_price, check=lambda w, item: True),
    Tool("buy", buy, check=lambda w, item: w["card_ok"]),
]


def budget_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    item, budget = word(text, "the"), num(text, "under")
    if not done(h, "get_price"):
        return Call("get_price", {"item": item})
    if out(h, "get_price")["price"] > budget:
        return Answer(f"The {item} costs more than {budget}.")
    if not done(h, "buy"):
        return Call("buy", {"item": item})
    return Answer(f"Bought the {item}.")


def _budget(budget: int, price: int) -> Run:
    world = {"price": price, "bought": [], "card_ok": True}
    return Run(f"buy the lamp if it costs under {budget}", world, {"budget": budget})


SCENARIOS = [
    Scenario(
        "second_page_appeared_core",
        "loops",
        "core",
        PAGE_TOOLS,
        page_policy,
        [Run("archive every listed item", pages(["a", "b"]))],
        [Run("archive every listed item", pages(["a", "b"], ["c"]))],
        doc="A paged listing: the first page now says there is a next one.",
    ),
    Scenario(
        "second_page_appeared_pydantic_ai",
        "loops",
        "pydantic_ai",
        PAGE_TOOLS,
        page_policy,
        [Run("archive every listed item", pages(["a"], ["b"]))],
        [Run("archive every listed item", pages(["a"]))],
        doc="Recorded over two pages; now there is one.",
    ),
    Scenario(
        "empty_search_creates_core",
        "branches",
        "core",
        CONTACT_TOOLS,
        upsert_policy,
        [Run("upsert contact ada", crm({"id": "c9", "name": "ada"}), {"name": "ada"})],
        [Run("upsert contact bob", crm(), {"name": "bob"})],
        doc="Update the contact found; the search is now empty: create instead.",
    ),
    Scenario(
        "empty_search_creates_langchain",
        "branches",
        "langchain",
        CONTACT_TOOLS,
        upsert_policy,
        [Run("upsert contact ada", crm(), {"name": "ada"})],
        [Run("upsert contact bob", crm({"id": "c4", "name": "bob"}), {"name": "bob"})],
        doc="Recorded a creation (nothing found); now a contact is found: update it.",
    ),
    Scenario(
        "error_text_retry_core",
        "branches",
        "core",
        SMS_TOOLS,
        sms_policy,
        [Run("send the parcel notice to 555-0101", sms(False), {"number": "555-0101"})],
        [Run("send the parcel notice to 555-0102", sms(True), {"number": "555-0102"})],
        doc="A write's own output says it failed: the agent schedules a retry instead of saying it is queued.",
    ),
    Scenario(
        "nested_line_status_core",
        "branches",
        "core",
        LINE_TOOLS,
        line_policy,
        [Run("ship order 88", lines(("s1", "ready"), ("s2", "backorder")), {"order": 88})],
        [Run("ship order 89", lines(("s1", "ready"), ("s2", "ready")), {"order": 89})],
        doc="A status inside a list element changed: the second line is ready too.",
    ),
    Scenario(
        "none_field_now_set_pydantic_ai",
        "branches",
        "pydantic_ai",
        LINE_TOOLS,
        line_policy,
        [Run("ship order 88", lines(("s1", "ready")), {"order": 88})],
        [Run("ship order 89", lines(("s1", "ready"), coupon="WINTER"), {"order": 89})],
        doc="A field None when recorded now holds a coupon the agent applies.",
    ),
    Scenario(
        "price_within_budget_param_core",
        "relations",
        "core",
        BUDGET_TOOLS,
        budget_policy,
        [_budget(100, 80)],
        [_budget(50, 80), _budget(120, 110)],
        doc="price <= the budget the task states (a param only compared): the budget is now below the price.",
    ),
    Scenario(
        "price_within_budget_param_langchain",
        "relations",
        "langchain",
        BUDGET_TOOLS,
        budget_policy,
        [_budget(100, 80)],
        [_budget(100, 130)],
        doc="The same relation through LangChain, the price now above the budget.",
    ),
]
