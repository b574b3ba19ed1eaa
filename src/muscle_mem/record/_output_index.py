"""Where each value of a run's outputs is: by value, by number, by text, and the secret-looking spans inside texts."""

from __future__ import annotations

import uuid
from collections.abc import Hashable, Mapping
from typing import Any, NamedTuple

from muscle_mem.model import codec
from muscle_mem.model._forms import INTEGER
from muscle_mem.model._json_texts import json_text_structure, looks_like_json
from muscle_mem.model.provenance import (
    JSON,
    SCALAR_TYPES,
    PathElement,
    children,
)
from muscle_mem.record._call_copies import MAX_INDEXED_PER_OUTPUT
from muscle_mem.secrecy import patterns as secret_patterns

MAX_DEPTH = 4
"""How deep inside an output values are indexed, and inside a constant params and outputs are looked for."""

NUMBER = (int, float)
"""A tuple, not ``int | float``: a union is built anew at each call of the line that spells it."""

TEXT = (str, uuid.UUID)

MAX_SECRET_SPANS = 40
"""The most secret-looking spans of one output text that later values may refer to (the form's bound)."""

_KEYED_KINDS = (str, bytes, int, float, uuid.UUID)


def is_number(value: Any) -> bool:
    return isinstance(value, NUMBER) and not isinstance(value, bool)


KEYED = frozenset(_KEYED_KINDS)
"""The types :func:`value_key` keys by value (subclasses other than bool are checked after)."""


def value_key(value: Any) -> Hashable | None:
    """What equal values share: the value itself, or the fingerprint of a structured value (None
    for None and booleans, which are the agent's constants: they carry no identity to follow)."""
    kind = type(value)
    if kind in KEYED:
        return (kind, value)
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, _KEYED_KINDS):
        return (kind, value)
    if not _has_identity(value, 0):
        return None
    try:
        return ("encoded", codec.fingerprint(value))
    except codec.CodecError:
        return None


def _has_identity(value: Any, depth: int) -> bool:
    """Whether a structured value holds anything but booleans and None (``{"ok": True}`` does not)."""
    if value is None or isinstance(value, bool):
        return False
    inside = list(children(value)) if depth < MAX_DEPTH else []
    if not inside:
        return not isinstance(value, Mapping | list | tuple)
    return any(_has_identity(child, depth + 1) for _, child in inside)


def number_of(value: Any) -> float | None:
    """The number a value stands for: a number, or a text of an integer (``"4471"``)."""
    if is_number(value):
        return float(value)
    if isinstance(value, str) and INTEGER.fullmatch(value):
        return float(int(value))
    return None


class Place(NamedTuple):
    """Where a value is inside the outputs: the step that returned it and the path to it."""

    step: int
    path: tuple[PathElement, ...]


_new_place: Any = tuple.__new__
"""``Place(*values)`` without the named tuple's ``__new__`` in Python."""


class Outputs:
    """The values of a run's outputs so far, by value, by number and by text."""

    def __init__(self) -> None:
        self.outputs: list[Any] = []
        self.by_value: dict[Hashable, list[Place]] = {}
        self.by_number: dict[float, list[tuple[Place, Any]]] = {}
        self.texts: dict[str, list[Place]] = {}
        self.secrets: dict[str, list[tuple[Place, int]]] = {}
        """The secret-looking spans inside output texts, each with its text's place and its number in it."""

    def add(self, step: int, output: Any) -> None:
        self.outputs.append(output)
        kind = type(output)
        if kind is int or kind is float:  # the common case, as _index files it, inline
            place = _new_place(Place, (step, ()))
            self.by_value.setdefault((kind, output), []).append(place)
            self.by_number.setdefault(float(output), []).append((place, output))
            return
        if kind in SCALAR_TYPES and not (
            kind is str and looks_like_json(output)
        ):  # one value, nothing inside
            self._index(_new_place(Place, (step, ())), output)
            return
        budget = [MAX_INDEXED_PER_OUTPUT]

        def visit(value: Any, path: tuple[PathElement, ...], depth: int) -> None:
            if budget[0] <= 0:
                return
            budget[0] -= 1
            self._index(Place(step, path), value)
            if depth >= MAX_DEPTH:
                return
            if type(value) is str:
                held = _json_held(value)
                if held is not None:  # a JSON text: each value in it may be copied out, as the agent read it
                    visit(held, (*path, JSON), depth + 1)
            elif type(value) not in SCALAR_TYPES:
                for element, child in children(value):
                    visit(child, (*path, element), depth + 1)

        visit(output, (), 0)

    def _index(self, place: Place, value: Any) -> None:
        key = value_key(value)
        if key is not None:
            self.by_value.setdefault(key, []).append(place)
        number = number_of(value)
        if number is not None:
            self.by_number.setdefault(number, []).append((place, value))
        if isinstance(value, TEXT) and str(value).strip():
            self.texts.setdefault(str(value), []).append(place)
            if type(value) is str:
                for number, found in enumerate(secret_patterns.find(value)):
                    if number >= MAX_SECRET_SPANS:
                        break
                    if found.start or found.end < len(value):  # a whole secret is found by value
                        self.secrets.setdefault(value[found.start : found.end], []).append((place, number))


def _json_held(text: str) -> dict[str, Any] | list[Any] | None:
    """The object or array a JSON text output holds (as the agent read it), or None for another text."""
    try:
        return json_text_structure(text)
    except TypeError:
        return None
