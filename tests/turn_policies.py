"""A policy that makes two calls at once in each model turn, shared by the fronts' tests of calls of one turn."""

from __future__ import annotations

from typing import Any


def parallel_policy(done: list[Any]) -> Any:
    """Turn 1: two stock look-ups at once; turn 2: order each sku out of stock, at once; then answer."""
    seen = {a["sku"] for n, a, _ in done if n == "stock"}
    if seen != {"a", "b"}:
        return [("stock", {"sku": s}) for s in ("a", "b") if s not in seen]
    looked = [(a["sku"], o["qty"]) for n, a, o in done if n == "stock"]
    ordered = [a["sku"] for n, a, _ in done if n == "order"]
    need = [s for s, q in looked if q == 0 and s not in ordered]
    if need:
        return [("order", {"sku": s}) for s in need]
    return f"ordered {ordered}"
