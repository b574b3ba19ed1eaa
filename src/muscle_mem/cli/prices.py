"""``--price MODEL=IN,OUT``: what a million input and output tokens of a model cost, for ``stats`` and ``report``."""

from __future__ import annotations

import argparse

from muscle_mem.model._spend import check_prices


def add_price_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--price",
        type=price_arg,
        action="append",
        default=[],
        metavar="MODEL=IN,OUT",
        help="price a model's tokens: IN and OUT per million input and output tokens (repeat per model)",
    )


def price_arg(text: str) -> tuple[str, tuple[float, float]]:
    """``gpt-4.1=2,8`` as ``("gpt-4.1", (2.0, 8.0))``."""
    model, _, pair = text.rpartition("=")
    parts = pair.split(",")
    try:
        if not model or len(parts) != 2:
            raise ValueError(text)
        prices = check_prices({model: (float(parts[0]), float(parts[1]))})
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not MODEL=IN,OUT (prices per million input and output tokens, as gpt-4.1=2,8)"
        ) from None
    return model, prices[model]
