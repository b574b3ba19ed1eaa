"""Harmless variation: a replay would be right, so a miss here is a needless miss.

A timestamp, a request id or an etag in a read's output (distinct in every recorded run and flowing
nowhere: each family is recorded twice so that the runs show it), key order, an unrelated field added,
float noise (0.1 + 0.2 against 0.3).
"""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Front, Run, Scenario, Step, Tool
from .kit import done, num, out, word

# ---- ship a paid order; the read carries a noise field -----------------------------------------------------


def get_order(w: dict[str, Any], order_id: int) -> dict[str, Any]:
    o = w["orders"][order_id]
    fields = {"order_id": order_id, "status": o["status"], "carrier": "ups"}
    fields |= w.get("noise", {})
    fields |= w.get("extra", {})
    if w.get("reversed"):
        fields = dict(reversed(list(fields.items())))
    return fields


def ship(w: dict[str, Any], order_id: int, carrier: str) -> str:
    w["shipped"].append((order_id, carrier))
    return "shipped"


SHIP_TOOLS = [
    Tool("get_order", get_order, check=lambda w, order_id: order_id in w["orders"]),
    Tool("ship", ship, check=lambda w, order_id, carrier: w["warehouse_open"]),
]


def ship_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    oid = num(text, "order")
    if not done(h, "get_order"):
        return Call("get_order", {"order_id": oid})
    order = out(h, "get_order")
    if order["status"] != "paid":
        return Answer(f"Order {oid} is not paid.")
    if not done(h, "ship"):
        return Call("ship", {"order_id": oid, "carrier": order["carrier"]})
    return Answer(f"Shipped order {oid}.")


def orders(**world: Any) -> dict[str, Any]:
    table = {oid: {"status": "paid"} for oid in (501, 502, 503, 504)}
    return {"orders": table, "shipped": [], "warehouse_open": True, **world}


def _ship(oid: int, **world: Any) -> Run:
    return Run(f"ship order {oid}", orders(**world), {"order_id": oid}, harmless=True)


# ---- apply a discount while the rate is low; the rate is float noise --------------------------------------


def get_rate(w: dict[str, Any], plan: str) -> dict[str, Any]:
    return {"plan": plan, "rate": w["base"] + w["extra_rate"]}


def set_rate(w: dict[str, Any], plan: str, rate: float) -> str:
    w["rates"][plan] = rate
    return "set"


RATE_TOOLS = [
    Tool("get_rate", get_rate, check=lambda w, plan: True),
    Tool("set_rate", set_rate, check=lambda w, plan, rate: plan in w["plans"]),
]


def rate_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    plan = word(text, "plan")
    if not done(h, "get_rate"):
        return Call("get_rate", {"plan": plan})
    rate = out(h, "get_rate")["rate"]
    if rate > 0.5:
        return Answer(f"The {plan} rate is already high.")
    if not done(h, "set_rate"):
        return Call("set_rate", {"plan": plan, "rate": rate})
    return Answer(f"Copied the {plan} rate.")


def rates(base: float, extra: float) -> dict[str, Any]:
    return {"base": base, "extra_rate": extra, "rates": {}, "plans": ["basic", "pro"]}


def _rate(base: float, extra: float) -> Run:
    return Run("sync the rate of plan basic", rates(base, extra), {"plan": "basic"}, harmless=True)


def _h(
    name: str,
    front: Front,
    tools: list[Tool],
    policy: Any,
    records: list[Run],
    probes: list[Run],
    doc: str,
    **kw: Any,
) -> Scenario:
    return Scenario(name, "harmless", front, tools, policy, records, probes, doc=doc, **kw)


def _ts(n: int) -> dict[str, Any]:
    return {"noise": {"fetched_at": f"2026-12-04T10:0{n}:1{n}Z"}}


def _req(n: int) -> dict[str, Any]:
    return {"noise": {"request_id": f"req-{n}f3a9c{n}e"}}


def _etag(n: int) -> dict[str, Any]:
    return {"noise": {"etag": f'W/"{n}b7e{n}a01"'}}


SCENARIOS = [
    _h(
        "timestamp_core",
        "core",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501, **_ts(1)), _ship(502, **_ts(2))],
        [_ship(503, **_ts(3)), _ship(501, **_ts(4))],
        "A fetched_at timestamp in the read, distinct in every run, flowing nowhere.",
    ),
    _h(
        "timestamp_langchain",
        "langchain",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501, **_ts(1)), _ship(502, **_ts(2))],
        [_ship(503, **_ts(3))],
        "The timestamp through LangChain.",
    ),
    _h(
        "timestamp_sqlite_core",
        "core",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501, **_ts(1)), _ship(502, **_ts(2))],
        [_ship(504, **_ts(5))],
        "The timestamp on a SQLite store, probed by another worker: the evidence lives in the store.",
        store="sqlite",
        restart=True,
    ),
    _h(
        "request_id_core",
        "core",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501, **_req(1)), _ship(502, **_req(2))],
        [_ship(503, **_req(3))],
        "A request id in the read.",
    ),
    _h(
        "request_id_pydantic_ai",
        "pydantic_ai",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501, **_req(1)), _ship(502, **_req(2))],
        [_ship(503, **_req(3))],
        "A request id through pydantic-ai.",
    ),
    _h(
        "etag_langchain",
        "langchain",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501, **_etag(1)), _ship(502, **_etag(2))],
        [_ship(503, **_etag(3))],
        "An etag in the read, through LangChain.",
    ),
    _h(
        "etag_core",
        "core",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501, **_etag(1)), _ship(502, **_etag(2))],
        [_ship(504, **_etag(4))],
        "An etag in the read.",
    ),
    _h(
        "key_order_core",
        "core",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501)],
        [_ship(501, reversed=True), _ship(502, reversed=True)],
        "The read's keys come in another order: key order is not an observation.",
    ),
    _h(
        "key_order_langchain",
        "langchain",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501)],
        [_ship(502, reversed=True)],
        "Key order through LangChain (the tool message's JSON text changes).",
    ),
    _h(
        "unrelated_field_core",
        "core",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501), _ship(502)],
        [_ship(503, extra={"loyalty_points": 120})],
        "An unrelated field added to the read's output.",
        tradeoff=(
            "a key no recorded run had: an engine cannot tell it from hold_field_added_core's 'hold',"
            " which stops the agent, so a sound engine stops here too"
        ),
    ),
    _h(
        "unrelated_field_pydantic_ai",
        "pydantic_ai",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501), _ship(502)],
        [_ship(503, extra={"warehouse_note": "rear door"})],
        "An unrelated field added, through pydantic-ai.",
        tradeoff=(
            "a key no recorded run had: an engine cannot tell it from hold_field_added_core's 'hold',"
            " which stops the agent, so a sound engine stops here too"
        ),
    ),
    _h(
        "unrelated_field_seen_core",
        "core",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501), _ship(502, extra={"loyalty_points": 50}), _ship(503, extra={"loyalty_points": 200})],
        [_ship(504, extra={"loyalty_points": 120})],
        "A field the runs showed absent and present (50, 200) with the same calls; 120 now.",
    ),
    _h(
        "float_noise_core",
        "core",
        RATE_TOOLS,
        rate_policy,
        [_rate(0.3, 0.0)],
        [_rate(0.1, 0.2)],
        "The rate read 0.3 when recorded, 0.1 + 0.2 now: float noise.",
    ),
    _h(
        "float_noise_pydantic_ai",
        "pydantic_ai",
        RATE_TOOLS,
        rate_policy,
        [_rate(0.1, 0.2)],
        [_rate(0.3, 0.0)],
        "Float noise the other way, through pydantic-ai.",
    ),
    _h(
        "reuse_same_world_langchain",
        "langchain",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501)],
        [_ship(501), _ship(502)],
        "The same task on the same world again (and the next order): replays in full.",
    ),
    _h(
        "reuse_same_world_pydantic_ai",
        "pydantic_ai",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501)],
        [_ship(501), _ship(503)],
        "The same task again, through pydantic-ai.",
    ),
    _h(
        "reuse_same_world_proxy",
        "mcp_proxy",
        SHIP_TOOLS,
        ship_policy,
        [_ship(501, **_ts(1)), _ship(502, **_ts(2))],
        [_ship(502, **_ts(2)), _ship(503, **_ts(3))],
        "The same task again through the MCP proxy, then a new timestamp.",
    ),
]
