"""A task text read as literal tokens between fixed separators, and its shape.

A task that arrives as text ("refund order 4471") is read as tokens: whole numbers, decimals,
dates, e-mail addresses, file names, ids, quoted strings and words, each with a *kind* that says
what it looks like (``int``, ``email``, ``Name``, ``id:A-9``, ...). The text's **shape** is the text
with every token replaced by its kind: two texts of one shape differ only in their tokens' values.
A template (:mod:`muscle_mem.record._task_templates`) keeps some tokens as slots and the others as fixed
text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from muscle_mem.model import codec

MAX_TOKENS = 64
"""A text with more tokens than this has no shape: it is never read as a template."""
MAX_TEXT = 2000
"""A text longer than this has no shape."""

_TOKEN = re.compile(
    r""""(?P<quoted>[^"\n]{1,80})"|(?<!\w)'(?P<single>[^'\n]{1,80})'(?!\w)"""
    r"|(?P<email>(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+(?![\w-]))"
    r"|(?P<date>(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-]))"
    r"|(?P<file>(?<![\w.-])[\w-]+\.[A-Za-z][A-Za-z0-9]{0,4}(?![\w.]))"
    r"|(?P<number>(?<![\w.,-])-?\d+(?:\.\d+)?(?![\w,]|\.\d))"
    r"|(?P<id>(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]*(?![\w-]))"
    r"|(?P<word>(?<![\w'-])[^\W\d_]+(?:['-][^\W\d_]+)*(?![\w'-]))"
)
_NUMERIC = frozenset({"int", "decimal", "negative", "negative decimal"})
_CLASSES = re.compile(r"[A-Z]+|[a-z]+|\d+|.", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Token:
    """One literal of a text: where it stands, what it looks like, and its value."""

    start: int
    end: int
    text: str
    kind: str

    @property
    def value(self) -> Any:
        """The value a slot of this token takes: an int or a float for a number, else the text."""
        if self.kind in ("int", "negative"):
            return int(self.text)
        if self.kind in ("decimal", "negative decimal"):
            return float(self.text)
        return self.text

    @property
    def numeric(self) -> bool:
        """Whether a slot of this token takes numbers (within a range), not texts."""
        return self.kind in _NUMERIC


@dataclass(frozen=True, slots=True)
class Reading:
    """A text read as tokens and the separators around them."""

    text: str
    tokens: tuple[Token, ...]
    separators: tuple[str, ...]
    """The text before each token, then after the last (one more than the tokens)."""

    @property
    def shape(self) -> str:
        """The digest of the text with every token replaced by its kind."""
        return codec.digest([list(self.separators), [t.kind for t in self.tokens]])

    def parts(self, slots: Sequence[int]) -> list[list[str]]:
        """The text with the tokens at ``slots`` as their kinds and the others as they are."""
        chosen = set(slots)
        out: list[list[str]] = []
        for i, token in enumerate(self.tokens):
            out.append(["text", self.separators[i]])
            out.append(["slot", token.kind] if i in chosen else ["text", token.text])
        out.append(["text", self.separators[-1]])
        return out

    def rendered(self, slots: Sequence[int], names: Sequence[str] | None = None) -> str:
        """The text with the tokens at ``slots`` shown as ``{1}``, ``{2}`` (or ``names``)."""
        shown = dict(zip(slots, names or [str(n) for n in range(1, len(slots) + 1)], strict=True))
        pieces: list[str] = []
        for i, token in enumerate(self.tokens):
            pieces.append(self.separators[i])
            pieces.append("{" + shown[i] + "}" if i in shown else token.text)
        pieces.append(self.separators[-1])
        return "".join(pieces)


def read(text: str) -> Reading | None:
    """``text`` as tokens and separators, or None if it is too long or has no token."""
    if len(text) > MAX_TEXT:
        return None
    tokens: list[Token] = []
    separators: list[str] = []
    at = 0
    for found in _TOKEN.finditer(text):
        kind = found.lastgroup
        assert kind is not None
        raw = found.group(kind)
        start, end = found.span(kind)
        tokens.append(Token(start, end, raw, _kind(kind, raw)))
        separators.append(text[at:start])
        at = end
        if len(tokens) > MAX_TOKENS:
            return None
    if not tokens:
        return None
    separators.append(text[at:])
    return Reading(text, tuple(tokens), tuple(separators))


def _kind(group: str, raw: str) -> str:
    """What a token looks like: its group, refined so that a slot takes only values of its look."""
    if group == "number":
        if raw.startswith("-"):
            return "negative decimal" if "." in raw else "negative"
        if "." in raw:
            return "decimal"
        return "digits" if len(raw) > 1 and raw.startswith("0") else "int"
    if group == "word":
        if raw.islower():
            return "word"
        if raw.isupper():
            return "WORD"
        return "Name" if raw[0].isupper() and raw[1:].islower() else "Mixed"
    if group == "single":
        return "quoted"
    if group in ("id", "file"):
        return f"{group}:{_classes(raw)}"
    return group


def _classes(raw: str) -> str:
    """The character classes of ``raw`` in order, each run written once: ``ORD-1234`` is ``A-9``."""
    out = []
    for run in _CLASSES.findall(raw):
        out.append("A" if run.isupper() else "a" if run.islower() else "9" if run.isdigit() else run)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Template:
    """A text read as a template: the slots (token positions), the key and the slot values."""

    reading: Reading
    slots: tuple[int, ...]
    key: str

    @property
    def text(self) -> str:
        """The template as a person reads it: ``refund order {1}``."""
        return self.reading.rendered(self.slots)

    @property
    def params(self) -> dict[str, Any]:
        """The slot values of this text, by slot name (``"1"``, ``"2"``, ...)."""
        tokens = self.reading.tokens
        return {str(n): tokens[i].value for n, i in enumerate(self.slots, 1)}
