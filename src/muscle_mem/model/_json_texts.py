"""What a JSON text holds: read strictly to compare it, or as ``json.loads`` reads it to follow a value out of it."""

from __future__ import annotations

import json
import math
from typing import Any

MAX_JSON_TEXT = 65_536
"""The longest text read as JSON; a longer one is compared whole, and no value is followed out of it."""


def looks_like_json(text: str) -> bool:
    """Whether a text may be a JSON object or array (its first and last characters but white space say so)."""
    if not 2 <= len(text) <= MAX_JSON_TEXT:
        return False
    first, last = text[0], text[-1]
    if first.isspace() or last.isspace():
        text = text.strip()
        first, last = text[:1], text[-1:]
    return (first == "{" and last == "}") or (first == "[" and last == "]")


def json_structure(text: str) -> dict[str, Any] | list[Any] | None:
    """The object or array a JSON text holds, or None if it holds another thing, is not JSON, or reads ambiguously.

    A reader of the text could see what parsing would lose: a key written twice (parsing keeps the
    last), a number written another way than its value reads back (``2.10``, ``1e2``), ``NaN``. Such
    a text is compared whole. The order of an object's keys is kept (:class:`JsonObject`).
    """
    try:
        structure = json.loads(
            text, object_pairs_hook=_json_object, parse_float=_json_float, parse_constant=_no_constant
        )
    except (ValueError, RecursionError):
        return None
    return structure if type(structure) in (JsonObject, list) else None


def json_text_structure(text: str) -> dict[str, Any] | list[Any]:
    """The object or array a JSON text holds as ``json.loads`` reads it: what an agent copied a value out of.

    Raises TypeError for a text that holds no object or array (or is longer than :data:`MAX_JSON_TEXT`).
    """
    if not looks_like_json(text):
        raise TypeError("the text holds no JSON object or array")
    try:
        structure = json.loads(text)
    except (ValueError, RecursionError):
        raise TypeError("the text is not JSON") from None
    if type(structure) not in (dict, list):
        raise TypeError("the text holds no JSON object or array")
    return structure  # type: ignore[no-any-return]


class JsonObject(dict[str, Any]):
    """An object read out of a JSON text: its keys' order is observed, since the text is read in that order."""


def _json_object(pairs: list[tuple[str, Any]]) -> JsonObject:
    found = JsonObject(pairs)
    if len(found) != len(pairs):
        raise ValueError("a key written twice")
    return found


class JsonDecimal(str):
    """A JSON number written with more digits than its value reads back with (``19.90``, ``2.10``): an amount
    compared as written (kind ``q``, as a number written as a text), so ``2.10`` is not ``2.1``."""


def _json_float(written: str) -> float | JsonDecimal:
    value = float(written)
    if repr(value) != written:
        if "e" not in written and "E" not in written and math.isfinite(value):  # 19.90, not 1e2
            return JsonDecimal(written)
        raise ValueError(f"{written} reads back as {value!r}")
    return value


def _no_constant(written: str) -> None:
    raise ValueError(f"{written} is not a JSON number")
