"""A replay compares everything a tool's output holds, however it holds it; what it cannot read stops it.

Plain objects (their ``__dict__`` and ``__slots__``, private attributes included), the private fields
of a dataclass, mapping keys no path can name (enums, tuples), values nested deeper than the walk,
subclasses of ``str`` and ``int``, exceptions returned as values: each is compared by a digest of what
it holds. An object whose state cannot be read at all (a handle
of a C library) is equal to nothing, so the replay hands over after the step that returned it.
"""

from __future__ import annotations

import dataclasses
import enum
import threading
from collections.abc import Callable
from typing import Any

import pytest

from muscle_mem import Engine, MissReason


class Order:
    def __init__(self, status: str) -> None:
        self.status = status


class SlottedOrder:
    __slots__ = ("status",)

    def __init__(self, status: str) -> None:
        self.status = status


class SealedOrder:
    """Its status only through a method, kept in a private attribute."""

    def __init__(self, status: str) -> None:
        self._status = status

    def status_now(self) -> str:
        return self._status


@dataclasses.dataclass
class PrivateOrder:
    order_id: int
    _status: str

    @property
    def status(self) -> str:
        return self._status


class Label(str):
    __slots__ = ()


class Code(int):
    pass


class Shipment:
    def __init__(self, orders: list[Order]) -> None:
        self.orders = orders


class Status(enum.Enum):
    DELIVERED = "delivered"
    REFUNDED = "refunded"


def nested(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = {"inner": value}
    return value


def innermost(value: Any) -> Any:
    while isinstance(value, dict) and "inner" in value:
        value = value["inner"]
    return value


SHAPES: dict[str, tuple[Callable[[str], Any], Callable[[Any], str]]] = {
    "plain object": (Order, lambda o: o.status),
    "slotted object": (SlottedOrder, lambda o: o.status),
    "private attribute behind a method": (SealedOrder, lambda o: o.status_now()),
    "private dataclass field": (lambda s: PrivateOrder(1, s), lambda o: o.status),
    "enum keys": (lambda s: {Status(s): 1}, lambda o: next(iter(o)).value),
    "nested past the walk": (lambda s: nested(s, 12), innermost),
    "subclass of str": (Label, str),
    "subclass of int": (
        lambda s: Code(200 if s == "delivered" else 410),
        lambda o: "delivered" if o == 200 else "gone",
    ),
    "exception returned": (LookupError, lambda o: o.args[0]),
    "plain objects in an object's list": (lambda s: Shipment([Order(s)]), lambda o: o.orders[0].status),
}


def refund_desk(make: Callable[[str], Any], read: Callable[[Any], str]) -> tuple[Engine, dict[str, Any]]:
    """An agent that refunds an order only while its status is "delivered" (no checks)."""
    desk: dict[str, Any] = {"status": "delivered", "refunds": 0}
    engine = Engine()

    @engine.tool()
    def lookup(order_id: int) -> Any:
        return make(desk["status"])

    @engine.tool()
    def refund(order_id: int) -> str:
        desk["refunds"] += 1
        return "refunded"

    def agent(task: str) -> str:
        if read(lookup(1)) == "delivered":
            refund(1)
            return "refunded"
        return "nothing to refund"

    engine.set_agent(agent)
    return engine, desk


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_changed_value_inside_an_output_stops_the_replay(shape: str) -> None:
    engine, desk = refund_desk(*SHAPES[shape])
    assert engine("refund order 1").stored
    assert engine("refund order 1").hit and desk["refunds"] == 2, "the same state: a full hit"
    desk["status"] = "refunded"
    after = engine("refund order 1")
    assert not after.hit and after.output == "nothing to refund"
    assert after.miss_reason is MissReason.OBSERVATION_CHANGED and after.miss_tool == "lookup"
    assert desk["refunds"] == 2, "refunded twice"


def test_an_object_whose_state_cannot_be_read_hands_over_after_its_step() -> None:
    """A lock has neither ``__dict__`` nor ``__slots__``: two of them cannot be told apart."""
    engine = Engine()
    done: list[str] = []

    @engine.tool()
    def open_session() -> Any:
        return threading.Lock()

    @engine.tool()
    def send(text: str) -> str:
        done.append(text)
        return "sent"

    def agent(task: str) -> str:
        open_session()
        send("hello")
        return "sent"

    engine.set_agent(agent)
    assert engine("greet").stored
    again = engine("greet")
    assert not again.hit and again.steps_replayed == 1
    assert again.miss_reason is MissReason.OBSERVATION_CHANGED and again.reason is not None
    assert "an object whose state cannot be read" in again.reason
    assert done == ["hello", "hello"], "the agent made the call after the handover, once"
