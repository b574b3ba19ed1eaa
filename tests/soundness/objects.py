"""Branches on what an object a tool returned holds: a plain object's attribute, a value nested deep."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Scenario, Step, Tool
from .kit import done, out


class Order:
    """An order as an ORM or an SDK hands it back: a plain object, no dict, no dataclass."""

    def __init__(self, order_id: int, status: str) -> None:
        self.order_id = order_id
        self._status = status

    def is_open(self) -> bool:
        return self._status == "delivered"


def get_order(w: dict[str, Any], order_id: int) -> Order:
    return Order(order_id, w["status"])


def get_order_page(w: dict[str, Any], order_id: int) -> dict[str, Any]:
    """The order deep inside an API's envelope."""
    value: Any = {"status": w["status"]}
    for name in ("order", "data", "result", "body", "payload", "response", "envelope", "page", "root"):
        value = {name: value}
    return value


def refund(w: dict[str, Any], order_id: int) -> str:
    w["refunds"].append(order_id)
    return "refunded"


def _status(page: dict[str, Any]) -> str:
    value: Any = page
    while "status" not in value:
        value = next(iter(value.values()))
    return str(value["status"])


OBJECT_TOOLS = [Tool("get_order", get_order), Tool("refund", refund, check=lambda w, order_id: True)]
PAGE_TOOLS = [Tool("get_order_page", get_order_page), Tool("refund", refund, check=lambda w, order_id: True)]


def object_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "get_order"):
        return Call("get_order", {"order_id": 7})
    if out(h, "get_order").is_open() and not done(h, "refund"):
        return Call("refund", {"order_id": 7})
    return Answer("done")


def page_policy(text: str, ctx: str, h: list[Step]) -> Call | Answer:
    if not done(h, "get_order_page"):
        return Call("get_order_page", {"order_id": 7})
    if _status(out(h, "get_order_page")) == "delivered" and not done(h, "refund"):
        return Call("refund", {"order_id": 7})
    return Answer("done")


def order_world(status: str) -> dict[str, Any]:
    return {"status": status, "refunds": []}


def _refund(world: dict[str, Any], **kw: Any) -> Run:
    return Run("refund order 7", world, **kw)


SCENARIOS = [
    Scenario(
        "status_inside_a_plain_object_core",
        "branches",
        "core",
        OBJECT_TOOLS,
        object_policy,
        [_refund(order_world("delivered"))],
        [_refund(order_world("refunded")), _refund(order_world("delivered"), harmless=True)],
        doc="The status is a private attribute of a plain object, read through a method.",
    ),
    Scenario(
        "status_nested_deep_core",
        "branches",
        "core",
        PAGE_TOOLS,
        page_policy,
        [_refund(order_world("delivered")), _refund(order_world("delivered"))],
        [_refund(order_world("refunded")), _refund(order_world("delivered"), harmless=True)],
        doc="The status nine levels down an API's envelope, deeper than an output is walked leaf by leaf.",
    ),
]
