"""Numbers in words: a count with its noun in the singular or the plural."""

from __future__ import annotations


def plural(n: int, noun: str) -> str:
    """``n`` and ``noun``, singular for exactly one: ``1 trajectory``, ``0 misses``, ``1,200 tool calls``."""
    return f"{n:,} {noun if n == 1 else _plural(noun)}"


def _plural(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"
