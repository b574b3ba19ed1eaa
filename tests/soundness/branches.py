"""Branches on a value a read returned: the replay must not follow the recorded branch blindly."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Front, Run, Scenario, Step, Tool
from .kit import done, num, out, word

# ---- refund if the customer is gold, else deny ----------------------------------------------------------


def lookup_customer(w: dict[str, Any], order_id: int) -> dict[str, Any]:
    o = w["orders"][order_id]
    return {
        "order_id": order_id,
        "customer": o["customer"],
        "tier": w["tiers"][o["customer"]],
        "paid": o["paid"],
    }


def refund(w: dict[str, Any], order_id: int, amount: int) -> str:
    w["refunds"].append((order_id, amount))
    return f"refunded {amount}"


def deny(w: dict[str, Any], order_id: int) -> str:
    w["denied"].append(order_id)
    return "denied"


GOLD_TOOLS = [
    Tool("lookup_customer", lookup_customer, check=lambda w, order_id: order_id in w["orders"]),
    Tool("refund", refund, check=lambda w, order_id, amount: w["orders"][order_id]["method"]),
    Tool("deny", deny, check=lambda w, order_id: order_id in w["orders"]),
]


def gold_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    order = num(text, "order")
    if not done(h, "lookup_customer"):
        return Call("lookup_customer", {"order_id": order})
    c = out(h, "lookup_customer")
    if c["tier"] == "gold":
        if not done(h, "refund"):
            return Call("refund", {"order_id": order, "amount": c["paid"]})
        return Answer(f"Refunded order {order}.")
    if not done(h, "deny"):
        return Call("deny", {"order_id": order})
    return Answer(f"Denied the refund of order {order}: the customer is not gold.")


def gold_world(tier_ada: str = "gold", tier_bob: str = "silver") -> dict[str, Any]:
    return {
        "orders": {
            1001: {"customer": "ada", "paid": 40, "method": "card"},
            1002: {"customer": "bob", "paid": 40, "method": "card"},
            1003: {"customer": "ada", "paid": 55, "method": "card"},
        },
        "tiers": {"ada": tier_ada, "bob": tier_bob},
        "refunds": [],
        "denied": [],
    }


def _gold(name: str, front: Front, records: list[Run], probes: list[Run], doc: str) -> Scenario:
    return Scenario(name, "branches", front, GOLD_TOOLS, gold_policy, records, probes, doc=doc)


def _refund_task(order: int, world: dict[str, Any], **kw: Any) -> Run:
    return Run(f"refund order {order}", world, {"order_id": order}, **kw)


# ---- reorder when stock is under 10 -----------------------------------------------------------------------


def get_stock(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {"sku": sku, "qty": w["stock"][sku]}


def reorder(w: dict[str, Any], sku: str, qty: int) -> str:
    w["orders"].append((sku, qty))
    return "ordered"


STOCK_TOOLS = [
    Tool("get_stock", get_stock, check=lambda w, sku: sku in w["stock"]),
    Tool("reorder", reorder, check=lambda w, sku, qty: w["supplier_open"]),
]


def stock_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    sku = word(text, "of")
    if not done(h, "get_stock"):
        return Call("get_stock", {"sku": sku})
    qty = out(h, "get_stock")["qty"]
    if qty < 10:
        if not done(h, "reorder"):
            return Call("reorder", {"sku": sku, "qty": 50})
        return Answer(f"Reordered 50 of {sku}.")
    return Answer(f"{sku} is well stocked.")


def stock_world(**stock: int) -> dict[str, Any]:
    return {"stock": {"bolt": 4, "nut": 4, **stock}, "orders": [], "supplier_open": True}


def _stock_task(sku: str, world: dict[str, Any], **kw: Any) -> Run:
    return Run(f"check the stock of {sku}", world, {"sku": sku}, **kw)


# ---- transfer if the balance covers it --------------------------------------------------------------------


def get_balance(w: dict[str, Any], account: str) -> dict[str, Any]:
    return {"account": account, "balance": w["balances"][account]}


def transfer(w: dict[str, Any], account: str, to: str, amount: int) -> str:
    w["balances"][account] -= amount
    w["transfers"].append((account, to, amount))
    return "sent"


TRANSFER_TOOLS = [
    Tool("get_balance", get_balance, check=lambda w, account: account in w["balances"]),
    Tool(
        "transfer",
        transfer,
        check=lambda w, account, to, amount: (to in w["payees"], w["balances"][account] >= amount),
    ),
]


def transfer_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    amount, to = num(text, "send"), word(text, "to")
    if not done(h, "get_balance"):
        return Call("get_balance", {"account": "main"})
    if out(h, "get_balance")["balance"] >= amount:
        if not done(h, "transfer"):
            return Call("transfer", {"account": "main", "to": to, "amount": amount})
        return Answer(f"Sent {amount} to {to}.")
    return Answer(f"The balance does not cover {amount}.")


def transfer_world(balance: int) -> dict[str, Any]:
    return {"balances": {"main": balance}, "payees": ["bob", "cy"], "transfers": []}


def _send(amount: int, to: str, balance: int, **kw: Any) -> Run:
    return Run(f"send {amount} to {to}", transfer_world(balance), {"amount": amount, "to": to}, **kw)


# ---- close the ticket if the reply says "Resolved" ---------------------------------------------------------


def get_reply(w: dict[str, Any], ticket_id: int) -> dict[str, Any]:
    return {"ticket_id": ticket_id, "body": w["replies"][ticket_id]}


def close_ticket(w: dict[str, Any], ticket_id: int) -> str:
    w["closed"].append(ticket_id)
    return "closed"


def add_note(w: dict[str, Any], ticket_id: int, note: str) -> str:
    w["notes"].append((ticket_id, note))
    return "noted"


REPLY_TOOLS = [
    Tool("get_reply", get_reply, check=lambda w, ticket_id: ticket_id in w["replies"]),
    Tool("close_ticket", close_ticket, check=lambda w, ticket_id: ticket_id not in w["closed"]),
    Tool("add_note", add_note, check=lambda w, ticket_id, note: ticket_id in w["replies"]),
]


def reply_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    ticket = num(text, "ticket")
    if not done(h, "get_reply"):
        return Call("get_reply", {"ticket_id": ticket})
    if "Resolved" in out(h, "get_reply")["body"]:
        if not done(h, "close_ticket"):
            return Call("close_ticket", {"ticket_id": ticket})
        return Answer(f"Closed ticket {ticket}.")
    if not done(h, "add_note"):
        return Call("add_note", {"ticket_id": ticket, "note": "customer still waiting"})
    return Answer(f"Ticket {ticket} stays open.")


def reply_world(body: str) -> dict[str, Any]:
    return {"replies": {7: body, 8: body}, "closed": [], "notes": []}


def _ticket(ticket: int, body: str, **kw: Any) -> Run:
    return Run(f"follow up on ticket {ticket}", reply_world(body), {"ticket": ticket}, **kw)


# ---- deploy only an approved request (a boolean flag) -----------------------------------------------------


def get_request(w: dict[str, Any], request_id: int) -> dict[str, Any]:
    return {"id": request_id, "approved": w["approved"], "service": "web"}


def deploy(w: dict[str, Any], service: str) -> str:
    w["deployed"].append(service)
    return "deployed"


APPROVAL_TOOLS = [
    Tool("get_request", get_request, check=lambda w, request_id: True),
    Tool("deploy", deploy, check=lambda w, service: w["window_open"]),
]


def approval_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    rid = num(text, "request")
    if not done(h, "get_request"):
        return Call("get_request", {"request_id": rid})
    req = out(h, "get_request")
    if not req["approved"]:
        return Answer(f"Request {rid} is not approved.")
    if not done(h, "deploy"):
        return Call("deploy", {"service": req["service"]})
    return Answer(f"Deployed {req['service']}.")


def _approval(rid: int, approved: bool) -> Run:
    return Run(
        f"ship request {rid}",
        {"approved": approved, "deployed": [], "window_open": True},
        {"rid": rid},
    )


# ---- a field added to a read that does matter: the replay must not treat added keys as free ----------------


def get_shipment(w: dict[str, Any], order_id: int) -> dict[str, Any]:
    return {"order_id": order_id, "status": "paid", **w["extra"]}


def dispatch(w: dict[str, Any], order_id: int) -> str:
    w["dispatched"].append(order_id)
    return "dispatched"


HOLD_TOOLS = [
    Tool("get_shipment", get_shipment, check=lambda w, order_id: True),
    Tool("dispatch", dispatch, check=lambda w, order_id: w["dock_open"]),
]


def hold_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    oid = num(text, "order")
    if not done(h, "get_shipment"):
        return Call("get_shipment", {"order_id": oid})
    shipment = out(h, "get_shipment")
    if shipment.get("hold"):
        return Answer(f"Order {oid} is on hold: {shipment['hold']}.")
    if not done(h, "dispatch"):
        return Call("dispatch", {"order_id": oid})
    return Answer(f"Dispatched order {oid}.")


def _dispatch(oid: int, **extra: Any) -> Run:
    return Run(
        f"dispatch order {oid}", {"extra": extra, "dispatched": [], "dock_open": True}, {"order_id": oid}
    )


# ---- a rate just over a threshold: a tolerance for float noise must stay tiny --------------------------------


def get_rate(w: dict[str, Any], plan: str) -> dict[str, Any]:
    return {"plan": plan, "rate": w["rate"]}


def raise_rate(w: dict[str, Any], plan: str) -> str:
    w["raised"].append(plan)
    return "raised"


RATE_TOOLS = [
    Tool("get_rate", get_rate, check=lambda w, plan: True),
    Tool("raise_rate", raise_rate, check=lambda w, plan: plan in w["plans"]),
]


def rate_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    plan = word(text, "plan")
    if not done(h, "get_rate"):
        return Call("get_rate", {"plan": plan})
    if out(h, "get_rate")["rate"] > 0.5:
        return Answer(f"The {plan} rate is above 0.5 already.")
    if not done(h, "raise_rate"):
        return Call("raise_rate", {"plan": plan})
    return Answer(f"Raised the {plan} rate.")


def _rate(rate: float) -> Run:
    return Run(
        "review the rate of plan basic", {"rate": rate, "raised": [], "plans": ["basic"]}, {"plan": "basic"}
    )


def tier_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    order = num(text, "order")
    if not done(h, "lookup_customer"):
        return Call("lookup_customer", {"order_id": order})
    c = out(h, "lookup_customer")
    if c["tier"] in ("gold", "platinum"):
        if not done(h, "refund"):
            return Call("refund", {"order_id": order, "amount": c["paid"]})
        return Answer(f"Refunded order {order}.")
    if not done(h, "deny"):
        return Call("deny", {"order_id": order})
    return Answer(f"Denied the refund of order {order}.")


def _stock_run(sku: str, qty: int, harmless: bool = False) -> Run:
    return _stock_task(sku, stock_world(**{sku: qty}), harmless=harmless)


SCENARIOS = [
    _gold(
        "gold_refund_core",
        "core",
        [_refund_task(1001, gold_world())],
        [_refund_task(1002, gold_world()), _refund_task(1003, gold_world(tier_ada="silver"))],
        "Recorded for a gold customer; the next order's customer is silver: deny, not refund.",
    ),
    _gold(
        "gold_refund_langchain",
        "langchain",
        [_refund_task(1001, gold_world())],
        [_refund_task(1002, gold_world())],
        "The gold/deny branch through a LangChain agent.",
    ),
    _gold(
        "gold_deny_pydantic_ai",
        "pydantic_ai",
        [_refund_task(1002, gold_world())],
        [_refund_task(1001, gold_world())],
        "Recorded a denial for a silver customer; the next customer is gold: refund, not deny.",
    ),
    _gold(
        "gold_both_branches_stored",
        "core",
        [_refund_task(1001, gold_world()), _refund_task(1002, gold_world())],
        [_refund_task(1003, gold_world()), _refund_task(1002, gold_world(tier_bob="gold"))],
        "Both branches stored (gold, then silver): the value read must select the branch, not recency.",
    ),
    Scenario(
        "stock_under_10_core",
        "branches",
        "core",
        STOCK_TOOLS,
        stock_policy,
        [_stock_task("bolt", stock_world())],
        [_stock_task("nut", stock_world(nut=30)), _stock_task("bolt", stock_world(bolt=12))],
        doc="Recorded a reorder at 4 in stock; now 30 (and 12) are in stock: no reorder.",
    ),
    Scenario(
        "stock_both_branches_langchain",
        "branches",
        "langchain",
        STOCK_TOOLS,
        stock_policy,
        [_stock_task("bolt", stock_world()), _stock_task("nut", stock_world(nut=40))],
        [_stock_task("bolt", stock_world(bolt=3)), _stock_task("nut", stock_world(nut=50, bolt=50))],
        doc="Both branches stored; the stock read now must pick the branch.",
    ),
    Scenario(
        "stock_under_10_pydantic_ai",
        "branches",
        "pydantic_ai",
        STOCK_TOOLS,
        stock_policy,
        [_stock_task("bolt", stock_world())],
        [_stock_task("bolt", stock_world(bolt=25))],
        doc="The stock branch through a pydantic-ai agent.",
    ),
    Scenario(
        "balance_covers_langchain",
        "branches",
        "langchain",
        TRANSFER_TOOLS,
        transfer_policy,
        [_send(200, "bob", 500)],
        [_send(200, "cy", 100), _send(300, "bob", 250)],
        doc="Transfer only if the balance covers it; the balance is now short.",
    ),
    Scenario(
        "balance_covers_core",
        "branches",
        "core",
        TRANSFER_TOOLS,
        transfer_policy,
        [_send(200, "bob", 100)],
        [_send(200, "bob", 900)],
        doc="Recorded a refusal (balance short); the balance now covers the transfer.",
    ),
    Scenario(
        "reply_resolved_pydantic_ai",
        "branches",
        "pydantic_ai",
        REPLY_TOOLS,
        reply_policy,
        [_ticket(7, "Thanks, Resolved on my side.")],
        [_ticket(8, "Still broken after the update.")],
        doc="Close the ticket if the reply says Resolved; the reply now says it is still broken.",
    ),
    Scenario(
        "reply_resolved_core",
        "branches",
        "core",
        REPLY_TOOLS,
        reply_policy,
        [_ticket(7, "Still waiting for a fix.")],
        [_ticket(8, "Resolved, thank you!")],
        doc="Recorded a note (not resolved); the reply now says Resolved: close it.",
    ),
    Scenario(
        "approved_flag_core",
        "branches",
        "core",
        APPROVAL_TOOLS,
        approval_policy,
        [_approval(11, approved=True)],
        [_approval(12, approved=False)],
        doc="Deploy only an approved request; the flag read is now False.",
    ),
    Scenario(
        "hold_field_added_core",
        "branches",
        "core",
        HOLD_TOOLS,
        hold_policy,
        [_dispatch(61), _dispatch(62)],
        [_dispatch(63, hold="fraud review")],
        doc="A key the recorded reads never had now says the order is on hold: added keys are observations.",
    ),
    Scenario(
        "rate_just_over_threshold_core",
        "branches",
        "core",
        RATE_TOOLS,
        rate_policy,
        [_rate(0.5)],
        [_rate(0.500001)],
        doc="0.5 recorded, 0.500001 now, across the agent's threshold: float tolerance must stay tiny.",
    ),
    Scenario(
        "stock_under_10_proxy",
        "branches",
        "mcp_proxy",
        STOCK_TOOLS,
        stock_policy,
        [_stock_task("bolt", stock_world())],
        [_stock_task("nut", stock_world(nut=30))],
        doc="The stock branch through the MCP caching proxy (a remote agent, no engine in its process).",
    ),
    Scenario(
        "tier_seen_with_no_branch_core",
        "branches",
        "core",
        GOLD_TOOLS,
        tier_policy,
        [_refund_task(1001, gold_world()), _refund_task(1002, gold_world())],
        [_refund_task(1003, gold_world(tier_ada="platinum"))],
        doc="Branches stored for gold (refund) and silver (deny); platinum was seen with neither: stop.",
    ),
    Scenario(
        "stock_family_within_range_core",
        "branches",
        "core",
        STOCK_TOOLS,
        stock_policy,
        [_stock_run("bolt", 4), _stock_run("bolt", 6), _stock_run("nut", 2)],
        [_stock_run("nut", 5, harmless=True), _stock_run("bolt", 12)],
        doc="Three runs reordered at 2-6 in stock: 5 replays; 12 was never seen (and the agent would not reorder).",
    ),
    Scenario(
        "stock_family_within_range_langchain",
        "branches",
        "langchain",
        STOCK_TOOLS,
        stock_policy,
        [_stock_run("bolt", 4), _stock_run("bolt", 8), _stock_run("nut", 1)],
        [_stock_run("nut", 3, harmless=True), _stock_run("bolt", 10)],
        doc="The same family through LangChain; 10 is just past the agent's threshold.",
    ),
]
