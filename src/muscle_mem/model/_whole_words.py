"""Where a value stands whole in a text: one copy of each matching rule.

A value is found only at word and number boundaries: never inside a longer word or number, nor
(for a number) as a component of a date or a time. Data flow (:mod:`muscle_mem.record._dataflow`), task
keys (:mod:`muscle_mem.model._task_keys`) and secret redaction (:mod:`muscle_mem.secrecy`) all match here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from muscle_mem.model._forms import Form
from muscle_mem.model.trajectory import TemplatePart

NUMBER_TEXT = re.compile(r"[-+]?\d+(?:\.\d+)?")
"""A text that is a number (``4471``, ``-2.5``)."""


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
    return NUMBER_TEXT.fullmatch(text) is not None


def word_spans(text: str, needle: str) -> Iterator[tuple[int, int]]:
    """Where ``needle`` stands as a word of its own in ``text``: not next to a letter or digit."""
    if not needle:
        return
    for found in whole_word(needle).finditer(text):
        yield found.span()


def whole_word(text: str) -> re.Pattern[str]:
    """Where ``text`` stands as a word of its own: not next to a letter or digit."""
    return re.compile(rf"(?<![^\W_]){re.escape(text)}(?![^\W_])")


def whole_number(text: str) -> re.Pattern[str]:
    """Where ``text`` stands whole: not inside a longer number, a word or a decimal."""
    return re.compile(rf"(?<!\w)(?<!\d\.){re.escape(text)}(?!\w)(?!\.\d)")


def task_number(text: str) -> re.Pattern[str]:
    """Where the number ``text`` stands whole in a task.

    It matches as :func:`whole_number`, and not as a part of a date, a time, a range or a number
    with separators (``2024-5-5``, ``10:5``, ``5,000``).
    """
    return re.compile(rf"(?<!\w)(?<!\d[-/.:,]){re.escape(text)}(?!\w)(?![-/.:,]\d)")


def split_parts(
    parts: list[TemplatePart], pattern: re.Pattern[str], replacement: TemplatePart
) -> list[TemplatePart]:
    """The text parts split where ``pattern`` matches, each match replaced by ``replacement``."""
    out: list[TemplatePart] = []
    for kind, part in parts:
        if kind != "text":
            out.append((kind, part))
            continue
        start = 0
        for found in pattern.finditer(part):
            out += [("text", part[start : found.start()]), replacement]
            start = found.end()
        out.append(("text", part[start:]))
    return [p for p in out if p != ("text", "")]
