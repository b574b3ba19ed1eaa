"""Params the run copied into a call (so free) whose value also steers the agent."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, num, sc, word

# ---- 1. order {qty} chairs: more than 10 needs approval first ------------------------------------------------


def get_catalog(w: dict[str, Any], item: str) -> dict[str, Any]:
    return {"item": item, "in_stock": True}


def request_approval(w: dict[str, Any], item: str) -> str:
    w["approvals"].append(item)
    return "approval requested"


def place_order(w: dict[str, Any], item: str, qty: int) -> str:
    w["orders"].append((item, qty))
    return "ordered"


QTY_TOOLS = [
    Tool("get_catalog", get_catalog, check=lambda w, item: True),
    Tool("request_approval", request_approval, check=lambda w, item: True),
    Tool("place_order", place_order, check=lambda w, item, qty: True),
]


def qty_policy(text: str, ctx: str, h: list[Step]):
    qty = num(text, "order")
    if not done(h, "get_catalog"):
        return Call("get_catalog", {"item": "chair"})
    if qty > 10 and not done(h, "request_approval"):
        return Call("request_approval", {"item": "chair"})
    if not done(h, "place_order"):
        return Call("place_order", {"item": "chair", "qty": qty})
    return Answer("Ordered.")


def _qty(q: int) -> Run:
    return Run(f"order {q} chairs", {"approvals": [], "orders": []}, {"qty": q})


# ---- 2. send the report to {who}: 'everyone' means broadcast (an explicit param) -------------------------


def get_report(w: dict[str, Any]) -> dict[str, Any]:
    return {"title": "weekly", "pages": 3}


def send_to(w: dict[str, Any], person: str) -> str:
    w["sent"].append(person)
    return "sent"


def broadcast(w: dict[str, Any]) -> str:
    w["broadcasts"] += 1
    return "broadcast"


WHO_TOOLS = [
    Tool("get_report", get_report, check=lambda w: True),
    Tool("send_to", send_to, check=lambda w, person: True),
    Tool("broadcast", broadcast, check=lambda w: True),
]


def who_policy(text: str, ctx: str, h: list[Step]):
    who = word(text, "to")
    if not done(h, "get_report"):
        return Call("get_report", {})
    if who == "everyone":
        if not done(h, "broadcast"):
            return Call("broadcast", {})
        return Answer("Broadcast the report.")
    if not done(h, "send_to"):
        return Call("send_to", {"person": who})
    return Answer("Sent the report.")


def _who(who: str) -> Run:
    return Run(f"send the weekly report to {who}", {"sent": [], "broadcasts": 0}, {"who": who})


# ---- 3. delete the file {path}: a path under /etc is refused (an explicit param) -------------------------


def stat_file(w: dict[str, Any], path: str) -> dict[str, Any]:
    return {"path": path, "size": 120}


def delete_file(w: dict[str, Any], path: str) -> str:
    w["deleted"].append(path)
    return "deleted"


PATH_TOOLS = [
    Tool("stat_file", stat_file, check=lambda w, path: True),
    Tool("delete_file", delete_file, check=lambda w, path: True),
]


def path_policy(text: str, ctx: str, h: list[Step]):
    path = text.rsplit(" ", 1)[1]
    if path.startswith("/etc/"):
        return Answer("Refused: system files are off limits.")
    if not done(h, "stat_file"):
        return Call("stat_file", {"path": path})
    if not done(h, "delete_file"):
        return Call("delete_file", {"path": path})
    return Answer("Deleted.")


def _path(p: str) -> Run:
    return Run(f"delete the file {p}", {"deleted": []}, {"path": p})


SCENARIOS = [
    sc(
        "rt_param_qty_threshold_core",
        "params",
        QTY_TOOLS,
        qty_policy,
        [_qty(3)],
        [_qty(4), _qty(50)],
        "qty (a param copied once into place_order) over 10 needs approval; recorded 3, now 50.",
    ),
    sc(
        "rt_param_qty_threshold_family_core",
        "params",
        QTY_TOOLS,
        qty_policy,
        [_qty(3), _qty(8)],
        [_qty(5), _qty(50)],
        "The same with two recorded runs (3 and 8): 50 is outside the range they saw.",
    ),
    sc(
        "rt_param_word_steers_core",
        "params",
        WHO_TOOLS,
        who_policy,
        [_who("ada")],
        [_who("bob"), _who("everyone")],
        "A text param copied into send_to; 'everyone' means broadcast.",
    ),
    sc(
        "rt_param_path_prefix_core",
        "params",
        PATH_TOOLS,
        path_policy,
        [_path("/tmp/a.log")],
        [_path("/tmp/b.log"), _path("/etc/passwd")],
        "A path param copied into delete_file; the agent refuses paths under /etc before any call.",
    ),
]
