"""A steering value hidden in differently shaped outputs: tuple, set, bytes, JSON text, generator,
numpy numbers, dataclass/pydantic with properties, a lazy object, float vs int, None vs missing."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pydantic

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, out, sc, word

# A shared shape: read(order) then ship(order) or hold(order), by a predicate on the read's output.


def _ship(w: dict[str, Any], order: str) -> str:
    w["shipped"].append(order)
    return "shipped"


def _hold(w: dict[str, Any], order: str) -> str:
    w["held"].append(order)
    return "held"


def _tools(read):
    return [
        Tool("read_order", read, check=lambda w, order: True),
        Tool("ship", _ship, check=lambda w, order: True),
        Tool("hold", _hold, check=lambda w, order: True),
    ]


def _policy(ok):
    def policy(text: str, ctx: str, h: list[Step]):
        o = word(text, "order")
        if not done(h, "read_order"):
            return Call("read_order", {"order": o})
        if ok(out(h, "read_order")):
            if not done(h, "ship"):
                return Call("ship", {"order": o})
            return Answer("Shipped.")
        if not done(h, "hold"):
            return Call("hold", {"order": o})
        return Answer("Held.")

    return policy


def _run(o: Any, v: Any, **kw: Any) -> Run:
    oid = f"ord-{o}a"
    return Run(f"ship order {oid}", {"v": v, "shipped": [], "held": []}, {"order": oid}, **kw)


# 1. a tuple (status, qty)
def read_tuple(w: dict[str, Any], order: str) -> tuple:
    return tuple(w["v"])


# 2. a set of flags
def read_set(w: dict[str, Any], order: str) -> set:
    return set(w["v"])


# 3. bytes
def read_bytes(w: dict[str, Any], order: str) -> bytes:
    return bytes(w["v"], "ascii")


# 4. a JSON text
def read_json(w: dict[str, Any], order: str) -> str:
    return json.dumps(w["v"])


# 5. a generator of line statuses
def read_gen(w: dict[str, Any], order: str):
    return (s for s in w["v"])


# 6. a numpy number
def read_np(w: dict[str, Any], order: str) -> Any:
    return {"order": order, "weight": np.float64(w["v"])}


# 7. a dataclass with a property computed from a private field
@dataclasses.dataclass
class Parcel:
    order: str
    _flags: int = 0

    @property
    def fragile(self) -> bool:
        return bool(self._flags & 1)


def read_dc(w: dict[str, Any], order: str) -> Parcel:
    return Parcel(order, w["v"])


# 8. a pydantic model with a computed property over a private attr
class Shipment(pydantic.BaseModel):
    order: str
    _blocked: bool = pydantic.PrivateAttr(default=False)

    @property
    def blocked(self) -> bool:
        return self._blocked


def read_pd(w: dict[str, Any], order: str) -> Shipment:
    s = Shipment(order=order)
    s._blocked = w["v"]
    return s


# 9. a lazy object: its status is fetched when the agent asks (a closure over the store)
class LazyOrder:
    def __init__(self, order: str, fetch) -> None:
        self.order = order
        self._fetch = fetch

    def status(self) -> str:
        return self._fetch()


def read_lazy(w: dict[str, Any], order: str) -> LazyOrder:
    return LazyOrder(order, lambda: w["v"])


# 10. an int vs a float count (3 vs 3.5 units: the agent ships only whole units)
def read_qty(w: dict[str, Any], order: str) -> dict[str, Any]:
    return {"order": order, "qty": w["v"]}


# 11. None vs missing key
def read_opt(w: dict[str, Any], order: str) -> dict[str, Any]:
    d = {"order": order, "carrier": "ups"}
    if w["v"] != "missing":
        d["hold_reason"] = w["v"]
    return d


SCENARIOS = [
    sc(
        "rt_tuple_output_core",
        "branches",
        _tools(read_tuple),
        _policy(lambda t: t[0] == "ready"),
        [_run(1, ("ready", 3)), _run(2, ("ready", 5))],
        [_run(3, ("ready", 4), harmless=True), _run(4, ("blocked", 4))],
        "Ship when the tuple's first field is ready; blocked now.",
    ),
    sc(
        "rt_set_output_core",
        "branches",
        _tools(read_set),
        _policy(lambda s: "hazmat" not in s),
        [_run(1, ["priority", "gift"]), _run(2, ["gift"])],
        [_run(3, ["gift"], harmless=True), _run(4, ["gift", "hazmat"])],
        "Ship unless a returned set of flags holds hazmat.",
    ),
    sc(
        "rt_bytes_output_core",
        "branches",
        _tools(read_bytes),
        _policy(lambda b: b.startswith(b"OK")),
        [_run(1, "OK 1"), _run(2, "OK 2")],
        [_run(3, "OK 1", harmless=True), _run(4, "NO 1")],
        "Ship when the bytes returned start with OK.",
    ),
    sc(
        "rt_json_text_core",
        "branches",
        _tools(read_json),
        _policy(lambda t: json.loads(t)["qty"] <= 5),
        [_run(1, {"qty": 2, "id": "a1"}), _run(2, {"qty": 4, "id": "a2"})],
        [
            _run(3, {"qty": 2, "id": "a1"}, harmless=True),
            _run(5, {"qty": 3, "id": "a3"}, harmless=True),
            _run(4, {"qty": 9, "id": "a4"}),
        ],
        "A JSON text whose qty steers (ship at most 5 units).",
    ),
    sc(
        "rt_generator_output_core",
        "branches",
        _tools(read_gen),
        _policy(lambda g: all(s == "packed" for s in (list(g) if not isinstance(g, list) else g))),
        [_run(1, ["packed", "packed"])],
        [_run(1, ["packed", "packed"], harmless=True), _run(2, ["packed", "missing"])],
        "A generator of line statuses: ship when every line is packed.",
    ),
    sc(
        "rt_numpy_float_core",
        "branches",
        _tools(read_np),
        _policy(lambda d: float(d["weight"]) < 30),
        [_run(1, 12.5), _run(2, 20.0)],
        [_run(1, 12.5, harmless=True), _run(3, 15.0, harmless=True), _run(4, 45.0)],
        "A numpy float64 weight: ship under 30 kg.",
    ),
    sc(
        "rt_dataclass_property_core",
        "branches",
        _tools(read_dc),
        _policy(lambda p: not p.fragile),
        [_run(1, 0)],
        [_run(2, 0), _run(3, 1)],
        "A dataclass whose property reads a private field: fragile now.",
    ),
    sc(
        "rt_pydantic_private_core",
        "branches",
        _tools(read_pd),
        _policy(lambda s: not s.blocked),
        [_run(1, False)],
        [_run(2, False), _run(3, True)],
        "A pydantic model whose property reads a PrivateAttr: blocked now.",
    ),
    sc(
        "rt_lazy_closure_core",
        "branches",
        _tools(read_lazy),
        _policy(lambda o: o.status() == "paid"),
        [_run(1, "paid")],
        [_run(2, "paid", harmless=True), _run(3, "unpaid")],
        "A lazy object whose status() reads the store through a closure: unpaid now.",
    ),
    sc(
        "rt_int_vs_float_core",
        "branches",
        _tools(read_qty),
        _policy(lambda d: isinstance(d["qty"], int) or float(d["qty"]).is_integer()),
        [_run(1, 2), _run(2, 6)],
        [_run(3, 4), _run(4, 3.5)],
        "Ship whole quantities only; 2 and 6 recorded, 3.5 lies between.",
    ),
    sc(
        "rt_none_vs_missing_core",
        "branches",
        _tools(read_opt),
        _policy(lambda d: d.get("hold_reason", "none") is None or "hold_reason" not in d),
        [_run(1, "missing"), _run(2, None)],
        [_run(3, None), _run(4, "fraud")],
        "hold_reason absent or None: ship; a reason now.",
    ),
]
