"""What a run keeps of a call's values: copies made at the call, so that changing them later changes no record.

Plain data (dicts with text keys, lists, scalars) is copied in one walk; anything else once the codec
has said it can store it; an output it cannot store has its top two levels copied for data flow.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from muscle_mem.model import codec

MAX_INDEXED_PER_OUTPUT = 512
"""Items of an output copied for (and searched by) data-flow detection."""

_SCALARS = frozenset({str, int, float, bool, type(None), bytes})


def frozen(value: Any) -> Any:
    """A deep copy of a value to record, so that changing it later does not change the record.

    Raises :class:`codec.CodecError` if the value cannot be stored; that is checked first, so a live
    handle (a connection, a browser page) is never walked.
    """
    if type(value) in _SCALARS:
        return value
    copied = plain_copy(value)
    if copied is not NOT_PLAIN:
        return copied
    data = codec.encode(value)
    if type(data) is str:
        return data  # a str subclass the codec stores as text (LangChain's TextAccessor)
    try:
        return copy.deepcopy(value)
    except Exception:
        return codec.decode(data)


PLAIN_COPY_DEPTH = 16
"""How deep :func:`frozen` copies plain data itself (dicts with text keys, lists, scalars) before the codec does."""

NOT_PLAIN = object()
"""What :func:`plain_copy` returns for a value that is not plain data."""

_PLAIN_SCALARS = frozenset({str, int, float, bool, type(None)})


def plain_copy(value: Any, depth: int = PLAIN_COPY_DEPTH) -> Any:
    """A copy of plain data (dicts with text keys, lists, scalars that are exactly those types), else NOT_PLAIN.

    What tools return most often, copied in one walk: such data is always storable, so neither the
    codec's check nor a generic deep copy is needed for it.
    """
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return value
    if depth <= 0 or (kind in (dict, list) and len(value) > codec.MAX_ITEMS):
        return NOT_PLAIN  # the codec says why such a value cannot be stored, or copies it
    if kind is dict:
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                return NOT_PLAIN
            inner = item if type(item) in _PLAIN_SCALARS else plain_copy(item, depth - 1)
            if inner is NOT_PLAIN:
                return NOT_PLAIN
            copied[key] = inner
        return copied
    if kind is list:
        items = []
        for item in value:
            inner = item if type(item) in _PLAIN_SCALARS else plain_copy(item, depth - 1)
            if inner is NOT_PLAIN:
                return NOT_PLAIN
            items.append(inner)
        return items
    return NOT_PLAIN


def frozen_all(values: tuple[Any, ...]) -> tuple[Any, ...]:
    for value in values:
        if type(value) not in _SCALARS:
            return tuple(frozen(v) for v in values)
    return values


def _shallow(value: Any) -> Any:
    kind = type(value)
    return list(value) if kind is list else dict(value) if kind is dict else value


def kept(output: Any) -> Any:
    """A tool output as data-flow detection will see it.

    It is a deep copy: the agent changing a list inside it later must not move or hide a reference
    (data flow fingerprints values three levels deep). An output the codec cannot store has its
    lists, tuples and dicts copied two levels deep (the first 512 items) instead. The output
    returned to the agent is the original.
    """
    if type(output) in _SCALARS:
        return output
    try:
        return frozen(output)
    except codec.CodecError:
        pass
    kind = type(output)
    if kind is dict:
        copied = dict(output)
        for key in itertools.islice(output, MAX_INDEXED_PER_OUTPUT):
            copied[key] = _shallow(copied[key])
        return copied
    if kind is list or kind is tuple:
        head = [_shallow(v) for v in output[:MAX_INDEXED_PER_OUTPUT]]
        head += output[MAX_INDEXED_PER_OUTPUT:]
        return head if kind is list else tuple(head)
    return output
