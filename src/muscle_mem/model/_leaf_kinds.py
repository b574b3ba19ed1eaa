"""What a leaf of an observation is: its kind (a number, a date, an identifier, a name, prose...), its path, and whether it names a thing.

A leaf that is an identity (a value that names a thing: an id, a handle, a path, a name; never a
plain number, a date, a category word or prose) may be masked in an observation
(:mod:`muscle_mem.model._observations`); texts that may name a person or hold prose are kept as digests.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import re
from collections.abc import Iterable
from typing import Any

from muscle_mem.model.provenance import PathElement

MAX_WORD = 24

MEMO_LENGTH = 256
"""Texts up to this long have their kind and digest remembered (outputs repeat from one replay to the next)."""

Leaf = tuple[str, str, Any, str]
"""``(path, kind, value, label)``: where the leaf is, its kind (see :data:`KINDS`), the value kept, and
for a text or an int, where an equal value was first seen in the run ("" if nowhere)."""

KINDS = frozenset("nbdsqwiplexr#")
"""``n`` number, ``q`` number written as a text, ``b`` bool or None, ``d`` date, ``s`` timestamp (seconds for both), ``w`` category word
(as it is), ``i`` identifier-shaped text, ``p`` other text (digests for both), ``l`` list length, ``e``
empty mapping, ``x`` folded digest, ``r`` a number's order to a bound number param (``<``, ``=``, ``>``),
``#`` identity (masked; nothing kept but its label)."""

_ID_KEY = re.compile(
    r"(?:^|[_\-.])(?:id|ids|uuid|guid|key|ref|handle|slug|sku|no|num|number|email|path|file|"
    r"filename|url|uri|name|username|login|owner|author|user|account|assignee|customer|host|replica)$"
    r"|[a-z](?:Id|ID|Name|Email|Path|Url|Key)$",
    re.IGNORECASE,
)

_NAME_KEY = re.compile(
    r"(?:^|[_\-.])(?:id|ids|uuid|guid|name|username|login|email|handle|slug)$|[a-z](?:Id|ID|Name|Email)$",
    re.IGNORECASE,
)

_ID_TEXT = re.compile(r"^(?=[^\s]*\d)(?=[^\s]*[A-Za-z])[A-Za-z0-9][\w.:/@+#~\-\"'=]{0,127}$")

_ADDRESS = re.compile(r"^[^\s@]+@[^\s@]+\.[^\s@]+$|^(?:[a-z]+://|/|\./)[^\s]+$|^[\w\-]+\.[A-Za-z0-9]{1,5}$")

_WORDS = re.compile(r"[^\W\d_]{3,}")
"""The words of a free text that a later text may repeat on their own (three letters or more)."""

ID_PREFIX = re.compile(r"^[A-Za-z]{1,8}_(?=[A-Za-z]*\d)")
"""The kind an identifier's prefix names (``usr_41``, ``svc_9``, ``cus_N8x1``): part of what it is."""


def text_shape(text: str) -> str:
    """What an identity keeps of a text's shape (see :func:`_text_shape`), remembered for a short text."""
    if len(text) <= MEMO_LENGTH:
        return _text_shape_memo(text)
    return _text_shape(text)


def _text_shape(text: str) -> str:
    """What an identity keeps of a text's shape: ``^`` then a mark for each way a normal form an agent
    may write it in (stripped, one blank between words, lower or upper or title case, a sentinel read
    as none) would differ from it, "" for none of them.

    An agent may pass on its value written so (the first word of a name, an id stripped of blanks,
    an email lower-cased, a name's blanks made single, 'n/a' read as no address) where every run saw
    the written form equal to the value: a text of another shape is not covered by them. The marks:
    ``_`` blanks around it, ``w`` several words, ``s`` blanks inside that are not single spaces,
    ``u`` upper case, ``t`` title case, ``m`` mixed case, ``0`` no letter that has a case (lower case
    is unmarked; the case of a text of one word only), ``a`` shaped as an address (an email, a URL, a path: 'n/a' in its place is not).
    """
    stripped = text.strip()
    marks = "_" if len(stripped) != len(text) else ""
    words = stripped.split()
    if len(words) > 1:
        marks += "w"
    if " ".join(words) != stripped:
        marks += "s"
    if len(words) == 1:  # a token's case (an email, an id); a sentence's case says nothing of its kind
        lower, upper = stripped.lower(), stripped.upper()
        if lower == upper:
            marks += "0"
        elif stripped == upper:
            marks += "u"
        elif stripped != lower:
            marks += "t" if stripped == stripped.title() else "m"
    if _ADDRESS.match(stripped):
        marks += "a"
    return "^" + marks if marks else ""


_text_shape_memo = functools.lru_cache(maxsize=8192)(_text_shape)


_SHORT_NAME = re.compile(r"^[^\W\d_][\w'.\-]*(?: [\w'.\-]+){0,3}$")

NUMBER_TEXT = re.compile(r"^[+-]?\d+(?:\.\d+)?$")

_QUANTITY = re.compile(
    r"^[+-]?\d+(?:[.,]\d+)?\s?(?:%|°[cf]|kg|g|mg|lbs?|oz|t|km|m|cm|mm|mi|ft|in|l|ml|h|hrs?|min|mins|s|secs?|ms|"
    r"d|days?|wk|kb|mb|gb|tb|px|pt|x|kwh|kw|w|v|usd|eur|gbp)$",
    re.IGNORECASE,
)
"""A number with its unit (``12kg``, ``150 ms``, ``20%``): an amount, never an identifier."""

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?$")

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def forms_of(value: str) -> tuple[str, ...]:
    """The texts a free text makes free too: its other cases, and its words (an email's local part) in theirs."""
    forms = [value.upper(), value.lower(), value.title(), value.capitalize()]
    local, at, _ = value.partition("@")
    for word in _WORDS.findall(value) + ([local] if at and local else []):
        forms += (word, word.upper(), word.lower(), word.capitalize())
    return tuple(forms)


free_forms = functools.lru_cache(maxsize=4096)(forms_of)
""":func:`forms_of` remembered for short texts (the same ids and names are freed on every replay)."""


@functools.lru_cache(maxsize=1024)
def words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """The pattern of these free words standing as words of their own, longest first."""
    longest = sorted(words, key=len, reverse=True)
    return re.compile("(?<![^\\W_])(?:" + "|".join(re.escape(w) for w in longest) + ")(?![^\\W_])")


def digest(text: str) -> str:
    """A short digest of a text kept in place of the text."""
    return _digest_memo(text) if len(text) <= MEMO_LENGTH else _digest(text)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


_digest_memo = functools.lru_cache(maxsize=8192)(_digest)
""":func:`digest` remembered for short texts (outputs repeat from one replay to the next)."""


@functools.lru_cache(maxsize=4096)
def key_order(keys: tuple[str | int, ...]) -> tuple[int, ...]:
    """The positions of a mapping's keys in the order its leaves are flattened (by their repr), remembered."""
    return tuple(sorted(range(len(keys)), key=lambda i: repr(keys[i])))


@functools.lru_cache(maxsize=4096)
def element_text(element: PathElement) -> str:
    """One step of a path as :func:`path_text` writes it, remembered (the keys of a task's outputs repeat)."""
    kind, key = element
    if kind == "json":  # what a JSON text holds is written at the text's own path, as it is observed
        return ""
    return f".{key}" if kind == "attr" else f"[{key!r}]"


def path_text(path: Iterable[PathElement]) -> str:
    """A path as the messages and records write it: ``['items'][0].name``."""
    return "".join(element_text(element) for element in path)


def text_kind(text: str) -> str:
    """The kind of a text leaf: a date, a timestamp, a number, an identifier, a word or other text."""
    if len(text) <= MEMO_LENGTH:
        return _text_kind_memo(text)
    return _text_kind(text)


def _text_kind(text: str) -> str:
    if _STAMP.match(text):
        return "s"
    if _DATE.match(text):
        return "d"
    if NUMBER_TEXT.match(text):
        return "q"
    if _QUANTITY.match(text):
        return "p"
    if _ID_TEXT.match(text) or _ADDRESS.match(text):
        return "i"
    if text.isalpha() and len(text) <= MAX_WORD:
        return "w"
    return "p"


_text_kind_memo = functools.lru_cache(maxsize=8192)(_text_kind)
"""The kind of a short text, remembered: the texts of a task's outputs come back on every replay."""


def seconds_of(text: str) -> float | None:
    """The seconds since the epoch a date or timestamp text stands for (None if it is not one)."""
    try:
        moment = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return (moment - _EPOCH).total_seconds()


def is_identity_shape(path: str, leaf_kind: str, value: Any) -> bool:
    """Whether a leaf copied into a later call names a thing (so data flow may rebuild it)."""
    if leaf_kind == "i":
        return True
    last = _last_key(path)
    if leaf_kind == "p":  # a person's or a thing's name of a few words, under a key that says so
        return (
            last is not None
            and _ID_KEY.search(last.strip("_")) is not None
            and _SHORT_NAME.match(value or "") is not None
        )
    if leaf_kind in ("w", "q") or (leaf_kind == "n" and type(value) is int):
        if leaf_kind != "w" and (path == "" or (path.endswith("]") and last is None)):
            return True  # a number a tool returned whole, or as an item of a list: a handle
        return last is not None and _ID_KEY.search(last.strip("_")) is not None
    return False


@functools.lru_cache(maxsize=4096)
def is_name(path: str) -> bool:
    """Whether the key a leaf is under says it is the name or id of a thing (``id``, ``user_id``, ``name``, ``email``).

    Such a leaf is an identity even where it flowed nowhere: an agent treats a name as opaque, and
    what it is equal to is still compared.
    """
    last = _last_key(path)
    return last is not None and _NAME_KEY.search(last.strip("_")) is not None


@functools.lru_cache(maxsize=4096)
def names_a_thing(path: str) -> bool:
    """Whether the key a leaf is under says it names a thing (``id``, ``user_id``, ``email``, ``name``)."""
    last = _last_key(path)
    return last is not None and _ID_KEY.search(last.strip("_")) is not None


@functools.lru_cache(maxsize=4096)
def _last_key(path: str) -> str | None:
    match = re.search(r"\[['\"]([^'\"]*)['\"]\]$|\.(\w+)$", path)
    if match is None:
        return None
    return match.group(1) if match.group(1) is not None else match.group(2)


def can_name(kind: str, value: Any) -> bool:
    """Whether a value where an identity was may be masked as one: not a None, a bool, or an int below 1.

    ``owner_id`` 0 or None says no one owns it: an agent decides on that, where it passes an id on.
    """
    return kind != "b" and (kind != "n" or value > 0)


def is_identity(
    leaf: tuple[str, str, Any, str, str],
    raw: dict[str, Any],
    copied: tuple[str, ...],
    into_calls: tuple[str, ...],
) -> bool:
    """Whether a leaf of a step's output is masked as an identity, given the paths copied out of the output.

    A free value repeated is one; so is a value shaped as one that flowed into a later call or the
    answer (a number only into a call, or under a key naming a thing), and one under a key naming it.
    """
    path, kind, value, _, _ = leaf
    if kind == "#":
        return True
    if not can_name(kind, value):
        return False
    shown = raw.get(path, value)
    return (
        _under(path, copied)
        and is_identity_shape(path, kind, shown)
        and (kind not in ("n", "q") or names_a_thing(path) or _under(path, into_calls))
    ) or (is_name(path) and is_identity_shape(path, kind, shown))


def _under(path: str, copied: tuple[str, ...]) -> bool:
    """Whether the leaf at ``path``, or a value holding it, is among those ``copied``."""
    return any(path.startswith(p) for p in copied) if copied else False
