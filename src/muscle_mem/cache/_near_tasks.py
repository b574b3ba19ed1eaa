"""Stored tasks a missed one differs from only in a number or a quoted value: a forgotten ``params=``.

``engine("refund order 1002")`` after ``engine("refund order 1001")`` is a miss, since without
``params={"order_id": ...}`` the two are different tasks. The miss's reason then names the value that
differs, so the fix is one read away. The tasks stored by this engine are remembered by their shape
(the text with each number and quoted value taken out), at most :data:`REMEMBERED` of them; only a
miss with no trajectory looks one up, and a hit never does.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

REMEMBERED = 1024
"""How many task shapes an engine remembers, the most recently stored kept."""

_VARIABLE = re.compile(r"""'[^'\n]*'|"[^"\n]*"|(?<![\w.])-?\d+(?:\.\d+)?(?![\w.]*\w)""")
"""A quoted value (single or double quotes) or a number standing as a word of its own."""

_Shape = tuple[tuple[str, ...], str]
"""A task's tags and its text with each variable part replaced by a marker."""


def _split(text: str, tags: Sequence[str]) -> tuple[_Shape, tuple[str, ...]]:
    """A task's shape and its variable parts, in order (quotes stripped)."""
    if len(text) <= MEMO_LENGTH:
        return _split_memo(text, tuple(tags))
    return _split_text(text, tags)


def _split_text(text: str, tags: Sequence[str]) -> tuple[_Shape, tuple[str, ...]]:
    values = tuple(
        m.group().strip("'\"") if m.group()[0] in "'\"" else m.group() for m in _VARIABLE.finditer(text)
    )
    return (tuple(sorted(set(tags))), _VARIABLE.sub("\0", text)), values


MEMO_LENGTH = 1024
"""Tasks up to this long have their shapes remembered (the same tasks are stored and missed again)."""
_split_memo = functools.lru_cache(maxsize=1024)(_split_text)
""":func:`_split_text` remembered for the most recent tasks (texts and tags are immutable)."""


class NearTasks:
    """The variable parts of recently stored tasks, by shape; says how a missed task differs from one."""

    __slots__ = ("_lock", "_shapes")

    def __init__(self) -> None:
        self._shapes: OrderedDict[_Shape, tuple[str, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def remember(self, text: str, tags: Sequence[str]) -> None:
        """Note a task that was just stored (one with no number or quoted value is not noted)."""
        shape, values = _split(text, tags)
        if not values:
            return
        with self._lock:
            self._shapes[shape] = values
            self._shapes.move_to_end(shape)
            if len(self._shapes) > REMEMBERED:
                self._shapes.popitem(last=False)

    def differences(self, text: str, tags: Sequence[str]) -> str | None:
        """How a stored task differs from ``text``, when it does only in numbers or quoted values; else None.

        For example ``a stored task differs only in '1001' (here '1002')``.
        """
        shape, values = _split(text, tags)
        if not values:
            return None
        with self._lock:
            stored = self._shapes.get(shape)
        if stored is None:
            return None
        differ = [(old, new) for old, new in zip(stored, values, strict=True) if old != new]
        if not differ:
            return None
        was = " and ".join(repr(old) for old, _ in differ)
        now = " and ".join(repr(new) for _, new in differ)
        return f"a stored task differs only in {was} (here {now})"
