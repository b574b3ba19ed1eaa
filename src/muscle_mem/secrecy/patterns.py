"""Secret-looking texts: found by their shape, and redacted from messages.

The shapes are the API keys of common providers (OpenAI, Anthropic, AWS, GitHub, Slack, Google,
Stripe), bearer tokens, JSON web tokens, PEM private keys, and a high-entropy value written after
a name holding ``key``, ``token``, ``secret`` or ``password`` (``api_key=...``, ``"token": "..."``).
A declared :class:`~muscle_mem.model.codec.Secret` is redacted by its value (:mod:`muscle_mem.secrecy`);
these shapes catch the secrets nobody declared, such as a key a tool returned.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

_SHAPES: tuple[tuple[str, str, tuple[str, ...], bool], ...] = (
    # what it is, its pattern, the texts one of which it holds (case as written, or lower case for
    # a pattern that ignores case), and whether it must mix letters and digits to count
    ("an Anthropic API key", r"sk-ant-[A-Za-z0-9_-]{20,}", ("sk-ant-",), True),
    ("an OpenAI API key", r"sk-(?!ant-)[A-Za-z0-9_-]{20,}", ("sk-",), True),
    ("a Stripe secret key", r"[rs]k_live_[A-Za-z0-9]{16,}", ("k_live_",), False),
    ("an AWS access key id", r"(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])", ("AKIA", "ASIA"), False),
    ("a GitHub token", r"gh[opsur]_[A-Za-z0-9]{30,}", ("gho_", "ghp_", "ghs_", "ghu_", "ghr_"), False),
    ("a GitHub token", r"github_pat_[A-Za-z0-9_]{30,}", ("github_pat_",), False),
    ("a Slack token", r"xox[abeoprs]-[A-Za-z0-9-]{10,}", ("xox",), True),
    ("a Google API key", r"AIza[A-Za-z0-9_-]{35}", ("AIza",), False),
    ("a JSON web token", r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*", ("eyJ",), False),
    (
        "a private key",
        r"-----BEGIN[A-Z ]{0,40}PRIVATE KEY-----(?:[\s\S]*?-----END[A-Z ]{0,40}PRIVATE KEY-----|[\s\S]*)",
        ("PRIVATE KEY",),
        False,
    ),
    ("a bearer token", r"(?i:bearer)\s+[A-Za-z0-9._~+/-]{12,}=*", ("bearer",), True),
)
_COMPILED = tuple((kind, re.compile(pattern), marks, mixed) for kind, pattern, marks, mixed in _SHAPES)
_ASSIGNED = re.compile(
    r"(?i)(?:key|token|secret|passw(?:or)?d|pwd|credentials?)[\"']?\s*(?::|=>?)\s*[\"']?"
    r"(?P<value>[^\s\"',;(){}\[\]<>]{12,})"
)
"""A value written after a name that says it is secret: judged by :func:`_random_looking`."""
_ASSIGNED_MARKS = ("key", "token", "secret", "passw", "pwd", "credential")
_MARKS = tuple(dict.fromkeys(m.lower() for _, _, marks, _ in _SHAPES for m in (*marks, *_ASSIGNED_MARKS)))
"""Every text some secret-looking span holds, in lower case: a text holding none is looked at no further."""
_MIN_ENTROPY = 3.0
"""Bits per character a value after ``key=`` needs to count as a secret (an English word has less)."""
CACHED_LENGTH = 2048
"""Texts up to this long are redacted once and remembered (task texts come back on every call)."""


@dataclass(frozen=True, slots=True)
class Found:
    """A secret-looking span of a text, and what it looks like."""

    kind: str
    start: int
    end: int


def find(text: str) -> Iterator[Found]:
    """The secret-looking spans of ``text``, in order, none overlapping."""
    lower = text.lower()
    for mark in _MARKS:
        if mark in lower:
            break
    else:
        return
    spans: list[Found] = []
    for kind, pattern, marks, mixed in _COMPILED:
        if not any(mark in text or mark in lower for mark in marks):
            continue
        for match in pattern.finditer(text):
            start = match.start()
            word_start = start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")
            if word_start and (not mixed or _mixes(match.group(0))):
                spans.append(Found(kind, start, match.end()))
    if any(mark in lower for mark in _ASSIGNED_MARKS):
        for match in _ASSIGNED.finditer(text):
            if _random_looking(match.group("value")):
                spans.append(Found("a secret value", match.start("value"), match.end("value")))
    taken = -1
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if span.start >= taken:
            taken = span.end
            yield span


def kind_of(text: str) -> str | None:
    """What the first secret-looking span of ``text`` looks like, or None if it has none."""
    return next((found.kind for found in find(text)), None)


def scrub(text: str) -> str:
    """``text`` with each secret-looking span replaced by ``[redacted: <what it looks like>]``."""
    if len(text) <= CACHED_LENGTH:
        return _scrub_cached(text)
    return _scrub(text)


@functools.lru_cache(maxsize=1024)
def _scrub_cached(text: str) -> str:
    return _scrub(text)


def _scrub(text: str) -> str:
    parts: list[str] = []
    position = 0
    for found in find(text):
        parts += [text[position : found.start], f"[redacted: {found.kind}]"]
        position = found.end
    if not parts:
        return text
    return "".join(parts) + text[position:]


def _mixes(text: str) -> bool:
    """Whether a text holds both letters and digits (a random key does; a phrase with dashes does not)."""
    return any(c.isdigit() for c in text) and any(c.isalpha() for c in text)


def _random_looking(value: str) -> bool:
    """Whether a value looks generated: letters and digits mixed, and many different characters."""
    if not _mixes(value):
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= _MIN_ENTROPY
