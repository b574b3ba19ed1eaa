"""How a value is written: as it is, converted to another type, or as text of a given shape.

A param ``4471`` may reach a tool as ``"4471"``, a price ``2000`` as ``"$2,000.00"``, a name
``maria`` as ``"Dear Maria,"``. A :class:`Form` names the shape, so a replay writes the new value
the same way (``"$2,500.00"``, ``"Dear Ana,"``); :func:`number_tokens` and :func:`word_spans`
find the places where a value stands whole in a text (never inside a longer word or number, nor
as a component of a date or a time).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from muscle_mem.errors import MuscleMemError

FormKind = Literal["same", "int", "float", "str", "number", "lower", "upper", "title", "list", "tuple"]


class FormError(MuscleMemError, ValueError):
    """A live value that cannot be written in the recorded form (``2.5`` as a whole number)."""


@dataclass(frozen=True, slots=True)
class Form:
    """The shape a value was written in.

    ``same``: unchanged; ``int``/``float``/``str``/``list``/``tuple``: converted to that type; ``number``: a number as
    text with ``grouped`` thousands, ``decimals`` places (None: a whole number) and zero padding to
    ``width``; ``lower``/``upper``/``title``: a text in that case.
    """

    kind: FormKind = "same"
    grouped: bool = False
    decimals: int | None = None
    width: int = 0

    def render(self, value: Any) -> Any:
        """``value`` written in this form; raises :class:`FormError` if it cannot be."""
        kind = self.kind
        if kind == "same":
            return value
        if kind in ("list", "tuple"):
            if not isinstance(value, list | tuple):
                raise FormError(f"{value!r} is not a sequence")
            return list(value) if kind == "list" else tuple(value)
        if kind in ("lower", "upper", "title"):
            if not isinstance(value, str):
                raise FormError(f"{value!r} is not a text to write in {kind} case")
            return value.lower() if kind == "lower" else value.upper() if kind == "upper" else value.title()
        number = _number(value)
        if kind == "int":
            if not number.is_integer():
                raise FormError(f"{value!r} is not a whole number")
            return int(number)
        if kind == "float":
            return float(number)
        if kind == "str":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise FormError(f"{value!r} is not a number to write as text")
            return str(value)
        if self.decimals is None and not number.is_integer():
            raise FormError(f"{value!r} is not a whole number")
        return format(number if self.decimals is not None else int(number), self.spec)

    @property
    def spec(self) -> str:
        """The format spec of a ``number`` form: ``,.2f``, ``03d``."""
        width = f"0{self.width}" if self.width else ""
        return (
            width + ("," if self.grouped else "") + ("d" if self.decimals is None else f".{self.decimals}f")
        )

    def describe(self) -> str:
        """A short name for the CLI: ``number(,.2f)``, ``int``, ``title``."""
        return f"number({self.spec})" if self.kind == "number" else self.kind


SAME = Form()


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise FormError(f"{value!r} is not a number")
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            raise FormError(f"{value!r} is not a finite number")
        return float(value)
    if isinstance(value, str) and INTEGER.fullmatch(value.strip()):
        return float(int(value.strip()))
    raise FormError(f"{value!r} is not a number")


INTEGER = re.compile(r"[-+]?\d+")

_NUMBER_TOKEN = re.compile(
    r"(?<![\w.,])(?:(?<![\d])[-+])?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\w]|[.,]\d)"
)
_DATE_JOINERS = "-/:."


@dataclass(frozen=True, slots=True)
class NumberToken:
    """A number standing whole in a text, with the form it is written in."""

    start: int
    end: int
    text: str
    value: float
    form: Form
    in_date: bool
    """Part of a date or a time (``2024-05-05``, ``10:30``): its digits are not a number of their own."""


def number_tokens(text: str) -> Iterator[NumberToken]:
    """The numbers standing whole in ``text`` (not inside a word or a longer number)."""
    for found in _NUMBER_TOKEN.finditer(text):
        raw = found.group(0)
        start, end = found.span()
        in_date = (start >= 2 and text[start - 1] in _DATE_JOINERS and text[start - 2].isdigit()) or (
            end + 1 < len(text) and text[end] in _DATE_JOINERS and text[end + 1].isdigit()
        )
        if raw[0] in "+-" and start >= 1 and text[start - 1].isdigit():
            raw, start = raw[1:], start + 1
        unsigned = raw.lstrip("+-")
        fraction = unsigned.partition(".")[2]
        padded = len(unsigned) > 1 and unsigned.startswith("0") and not unsigned.startswith("0.")
        form = Form(
            "number",
            grouped="," in raw,
            decimals=len(fraction) if fraction else None,
            width=len(raw) if padded and "," not in raw else 0,
        )
        yield NumberToken(start, end, raw, float(raw.replace(",", "")), form, in_date)


def is_plain_number_text(text: str) -> bool:
    """Whether ``text`` is how Python writes an int or a float (``4471``, ``12.5``): the ``same`` form."""
    return re.fullmatch(r"-?\d+(?:\.\d+(?:e[-+]?\d+)?)?", text) is not None


def word_spans(text: str, needle: str) -> Iterator[tuple[int, int]]:
    """Where ``needle`` stands as a word of its own in ``text``: not next to a letter or digit."""
    if not needle:
        return
    pattern = re.compile(rf"(?<![^\W_]){re.escape(needle)}(?![^\W_])")
    for found in pattern.finditer(text):
        yield found.span()


def text_forms(value: str) -> Iterator[tuple[Form, str]]:
    """The ways a text param or output may be written in another text: as it is, and in other cases."""
    yield SAME, value
    seen = {value}
    if sum(c.isalpha() for c in value) < 2:
        return
    for form in (Form("lower"), Form("upper"), Form("title")):
        written = form.render(value)
        if written not in seen:
            seen.add(written)
            yield form, written
