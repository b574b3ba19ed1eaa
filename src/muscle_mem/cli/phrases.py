"""Numbers in words: a count with its noun in the singular or the plural, and a speed-up."""

from __future__ import annotations

RATIO_CAP = 1000.0
"""Speed-ups above this read ``>1000x``: on a fully cached run the exact figure is mostly timer noise."""


def plural(n: int, noun: str) -> str:
    """``n`` and ``noun``, singular for exactly one: ``1 trajectory``, ``0 misses``, ``1,200 tool calls``."""
    return f"{n:,} {noun if n == 1 else _plural(noun)}"


def _plural(noun: str) -> str:
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def speedup(slow: float, fast: float) -> str:
    """How many times faster ``fast`` seconds are than ``slow``: ``3.2x``, ``45x``, ``>1000x``.

    Empty when either time is unknown.
    """
    if fast <= 0 or slow <= 0:
        return ""
    ratio = slow / fast
    if ratio > RATIO_CAP:
        return f">{RATIO_CAP:.0f}x"
    return f"{ratio:.1f}x" if ratio < 10 else f"{ratio:.0f}x"
