"""How a value is written: as it is, converted to another type, or as text of a given shape.

A param ``4471`` may reach a tool as ``"4471"``, a price ``2000`` as ``"$2,000.00"``, a name
``maria`` as ``"Dear Maria,"``. A :class:`Form` names the shape, so a replay writes the new value
the same way (``"$2,500.00"``, ``"Dear Ana,"``). A secret-looking value an agent read out of a longer
text (the token of a password-reset link in an e-mail) is the ``secret`` form of that text: its
secret-looking span number ``width``, so the value is kept as a reference, never in clear.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from muscle_mem.errors import MuscleMemError
from muscle_mem.secrecy import patterns as secret_patterns

FormKind = Literal[
    "same", "int", "float", "str", "number", "lower", "upper", "title", "list", "tuple", "secret"
]


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
        if kind == "secret":
            return secret_span(value, self.width)
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
        if self.kind == "secret":
            return f"secret-looking value {self.width} of"
        return f"number({self.spec})" if self.kind == "number" else self.kind


SAME = Form()


def secret_span(text: Any, number: int) -> str:
    """The secret-looking span number ``number`` of a text (:func:`secret_patterns.find`)."""
    if not isinstance(text, str):
        raise FormError(f"{type(text).__name__} is not a text to read a secret-looking value out of")
    for at, found in enumerate(secret_patterns.find(text)):
        if at == number:
            return text[found.start : found.end]
    raise FormError(f"the text holds no secret-looking value number {number}")


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
