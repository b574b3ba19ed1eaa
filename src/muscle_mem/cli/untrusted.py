"""Stored data on its way to a terminal, a page or a file: texts made printable and redacted, figures checked.

Anyone who can write to the store chooses these texts and figures (a SQLite column holds any type),
so the commands never print one as it is.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Iterable
from dataclasses import fields

from muscle_mem.model.provenance import readable
from muscle_mem.model.trajectory import Usage
from muscle_mem.secrecy.patterns import scrub
from muscle_mem.stores.base import Event, Summary

logger = logging.getLogger(__name__)

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]")
"""Control characters (terminal escapes, line breaks), bidirectional overrides and invisible marks."""
_CONTROL_BUT_LINES = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]"
)


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` with each control or invisible character written as an escape (``\\x1b``, ``\\u202e``).

    With ``lines``, line feeds are kept: the text is the CLI's own, made of several lines.
    """
    pattern = _CONTROL_BUT_LINES if lines else _CONTROL
    return pattern.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def shown(value: object) -> str:
    """A stored text (or, for another type, its ``repr`` if it has one) as one printable line, secrets redacted."""
    text = value if isinstance(value, str) else readable(value)
    return printable(scrub(text))


def figures_of(usage: Usage | None) -> Usage | None:
    """The use statistics if every figure is a finite number (an integer for ``hits``), else None."""
    if usage is None:
        return None
    for field in fields(Usage):
        value = getattr(usage, field.name)
        if not finite(value) or (field.name == "hits" and not isinstance(value, int)):
            return None
    return usage


def summaries(found: Iterable[Summary]) -> list[Summary]:
    """The summaries whose fields have their types (a text id and task, numbers), others skipped with a warning."""
    kept = []
    for summary in found:
        if (
            isinstance(summary.id, str)
            and isinstance(summary.task, str)
            and isinstance(summary.steps, int)
            and finite(summary.steps)
            and finite(summary.created_at)
            and figures_of(summary.usage) is not None
        ):
            kept.append(summary)
        else:
            logger.warning(
                "skipping trajectory %s: its listing holds a value of the wrong type (steps %s, created %s, %s)",
                shown(summary.id),
                shown(summary.steps),
                shown(summary.created_at),
                shown(summary.usage),
            )
    return kept


def events(found: Iterable[Event]) -> list[Event]:
    """The events whose figures are finite numbers, others skipped with a warning (they would break a chart)."""
    kept = []
    for event in found:
        figures = (
            event.at,
            event.elapsed,
            event.agent_seconds,
            event.saved_seconds,
            event.steps_replayed,
            event.tokens_spent,
            event.tokens_saved,
            event.shadow_saved_seconds,
        )
        if all(finite(v) for v in figures):
            kept.append(event)
        else:
            logger.warning(
                "skipping an event of task %s: one of its figures is not a finite number", shown(event.task)
            )
    return kept


def finite(value: object) -> bool:
    """Whether a figure read from a store is a finite number (a SQLite column may hold a text)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False
