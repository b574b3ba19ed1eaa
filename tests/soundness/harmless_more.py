"""Harmless variation that a replay should get right: the probes here are marked harmless."""

from __future__ import annotations

from typing import Any

from .harness import Answer, Call, Run, Step, Tool
from .kit import done, out, sc, word

# one shape: read a stock record (with noise), reorder if qty < 10


def _reorder(w: dict[str, Any], sku: str) -> str:
    w["orders"].append(sku)
    return "ordered"


def _policy(read_qty):
    def policy(text: str, ctx: str, h: list[Step]):
        sku = word(text, "of")
        if not done(h, "read"):
            return Call("read", {"sku": sku})
        if read_qty(out(h, "read")) < 10:
            if not done(h, "reorder"):
                return Call("reorder", {"sku": sku})
            return Answer("Reordered.")
        return Answer("Enough stock.")

    return policy


def _tools(read):
    return [
        Tool("read", read, check=lambda w, sku: True),
        Tool("reorder", _reorder, check=lambda w, sku: True),
    ]


def _run(sku: str, noise: Any, qty: int = 4, harmless: bool = False) -> Run:
    return Run(
        f"check the stock of {sku}",
        {"noise": noise, "qty": qty, "orders": []},
        {"sku": sku},
        harmless=harmless,
    )


# 1. a trace id in every element of a nested list
def read_nested_trace(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {
        "sku": sku,
        "bins": [{"bin": "A1", "qty": w["qty"], "trace_id": f"tr-{w['noise']}-{i}"} for i in range(2)],
    }


# 2. a server latency (a float that flows nowhere)
def read_latency(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {"sku": sku, "qty": w["qty"], "latency_ms": w["noise"]}


# 3. a request id inside a status text
def read_msg(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {"sku": sku, "qty": w["qty"], "message": f"ok (request {w['noise']})"}


# 4. a timestamp written with an offset instead of Z, and with milliseconds
def read_stamp(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {"sku": sku, "qty": w["qty"], "as_of": w["noise"]}


# 5. float noise in a nested price list and key order in a nested mapping
def read_floaty(w: dict[str, Any], sku: str) -> dict[str, Any]:
    meta = {"unit": "pcs", "warehouse": "north"} if w["noise"] else {"warehouse": "north", "unit": "pcs"}
    price = 0.1 + 0.2 if w["noise"] else 0.3
    return {"sku": sku, "qty": w["qty"], "meta": meta, "prices": [price, 1.0]}


# 6. a page cursor (an opaque token) that flows nowhere
def read_cursor(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {"sku": sku, "qty": w["qty"], "next_cursor": w["noise"]}


# 7. a count of the API's remaining rate limit (an int that flows nowhere)
def read_ratelimit(w: dict[str, Any], sku: str) -> dict[str, Any]:
    return {"sku": sku, "qty": w["qty"], "rate_limit_remaining": w["noise"]}


SCENARIOS = [
    sc(
        "rt_harmless_nested_trace_core",
        "harmless",
        _tools(read_nested_trace),
        _policy(lambda o: o["bins"][0]["qty"]),
        [_run("bolt", "a1"), _run("bolt", "b2")],
        [_run("bolt", "c3", harmless=True), _run("nut", "d4", harmless=True)],
        "A trace id in every element of a nested list, distinct in every run.",
    ),
    sc(
        "rt_harmless_latency_core",
        "harmless",
        _tools(read_latency),
        _policy(lambda o: o["qty"]),
        [_run("bolt", 12.3), _run("bolt", 15.9)],
        [_run("bolt", 14.2, harmless=True), _run("bolt", 31.7, harmless=True)],
        "A latency_ms float that flows nowhere: within the range seen, then outside it.",
    ),
    sc(
        "rt_harmless_request_in_text_core",
        "harmless",
        _tools(read_msg),
        _policy(lambda o: o["qty"]),
        [_run("bolt", "7f3a9c"), _run("bolt", "19bb02")],
        [_run("bolt", "c0ffee1", harmless=True)],
        "A request id written inside a status message ('ok (request 7f3a9c)').",
    ),
    sc(
        "rt_harmless_stamp_formats_core",
        "harmless",
        _tools(read_stamp),
        _policy(lambda o: o["qty"]),
        [_run("bolt", "2024-06-01T10:00:00Z"), _run("bolt", "2024-06-02T11:30:00Z")],
        [
            _run("bolt", "2024-06-03T09:15:00.123+00:00", harmless=True),
            _run("bolt", "2024-06-03T09:15:00+02:00", harmless=True),
        ],
        "An as_of timestamp, then written with milliseconds and an offset.",
    ),
    sc(
        "rt_harmless_float_and_order_core",
        "harmless",
        _tools(read_floaty),
        _policy(lambda o: o["qty"]),
        [_run("bolt", False)],
        [_run("bolt", True, harmless=True)],
        "0.1 + 0.2 for 0.3 inside a list and nested keys in another order.",
    ),
    sc(
        "rt_harmless_cursor_core",
        "harmless",
        _tools(read_cursor),
        _policy(lambda o: o["qty"]),
        [_run("bolt", "eyJwIjoxfQ"), _run("bolt", "eyJwIjoyfQ")],
        [_run("bolt", "eyJwIjozfQ", harmless=True)],
        "An opaque next_cursor token (base64-like, letters only here and there).",
    ),
    sc(
        "rt_harmless_ratelimit_core",
        "harmless",
        _tools(read_ratelimit),
        _policy(lambda o: o["qty"]),
        [_run("bolt", 4999), _run("bolt", 4990)],
        [_run("bolt", 4995, harmless=True), _run("bolt", 4950, harmless=True)],
        "rate_limit_remaining (an int that flows nowhere): within range, then below it.",
    ),
]
