"""What an agent's model calls spent: tokens in and out and requests, per model, and their price."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

Prices = Mapping[str, tuple[float, float]]
"""Per model name: the price of a million input tokens and of a million output tokens."""

UsageRow = tuple[str, int, int, int]
"""One model's usage in a run: ``(model, input tokens, output tokens, requests)``; ``""`` for a model not named."""


def add_usage(
    usage: dict[str, list[int]], model: str | None, input_tokens: int, output_tokens: int, requests: int
) -> None:
    """Add one report of usage to a run's usage by model (ValueError on a count that is not a whole number ≥ 0)."""
    for name, count in (
        ("input_tokens", input_tokens),
        ("output_tokens", output_tokens),
        ("requests", requests),
    ):
        if type(count) is not int or count < 0:
            raise ValueError(f"{name} must be an int >= 0, not {count!r}")
    if model is not None and not isinstance(model, str):
        raise TypeError(f"model must be a str or None, not {type(model).__name__}")
    counts = usage.setdefault(model or "", [0, 0, 0])
    counts[0] += input_tokens
    counts[1] += output_tokens
    counts[2] += requests


def usage_rows(usage: Mapping[str, list[int]] | None) -> tuple[UsageRow, ...]:
    """A run's usage by model as rows, in the order the models were first reported."""
    if not usage:
        return ()
    return tuple((model, counts[0], counts[1], counts[2]) for model, counts in usage.items())


def check_prices(prices: Prices | None) -> dict[str, tuple[float, float]]:
    """The prices as given, checked: finite numbers ≥ 0 per million input and output tokens."""
    if prices is None:
        return {}
    if not isinstance(prices, Mapping):
        raise TypeError(f"prices must map a model name to (input, output) per million tokens, not {prices!r}")
    checked = {}
    for model, pair in prices.items():
        if not isinstance(model, str) or not isinstance(pair, tuple | list) or len(pair) != 2:
            raise ValueError(f"prices[{model!r}] must be (input, output) per million tokens, not {pair!r}")
        if not all(_price(value) for value in pair):
            raise ValueError(f"prices[{model!r}] must hold finite numbers >= 0, not {pair!r}")
        checked[model] = (float(pair[0]), float(pair[1]))
    return checked


def _price(value: object) -> bool:
    return (
        not isinstance(value, bool) and isinstance(value, int | float) and math.isfinite(value) and value >= 0
    )


def cost(rows: Iterable[UsageRow], prices: Prices) -> tuple[float, set[str]]:
    """What the usage cost at the prices, and the models used that have no price (their tokens cost nothing here)."""
    total = 0.0
    unpriced = set()
    for model, input_tokens, output_tokens, _requests in rows:
        price = prices.get(model)
        if price is None:
            if input_tokens or output_tokens:
                unpriced.add(model)
            continue
        total += (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
    return total, unpriced
