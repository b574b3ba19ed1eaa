"""Secret values: their plain values, their redaction from messages, their search in a trajectory.

A :class:`~muscle_mem.model.codec.Secret` param is stored only as a reference by name, and so is the
output of a tool registered with ``secret_outputs=True`` or returning a ``Secret``; messages that
could quote them (exceptions, reasons, task texts) are redacted, and so is any secret-looking text
(:mod:`muscle_mem.secrecy.patterns`). Before a trajectory is stored, :func:`leaks_secret` looks for the
secret values anywhere else in it, and :func:`looks_secret` for secret-looking texts: in the
trajectory's own values (arguments, templates, snapshots kept in full, the answer, the task text and
tags, dict keys too), not their JSON form, where bytes and large integers are encoded (base64, hex)
and a search would not see them.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import itertools
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from muscle_mem.model import codec
from muscle_mem.model._whole_words import NUMBER_TEXT, whole_number
from muscle_mem.model.provenance import (
    SCALAR_TYPES,
    Agree,
    Arg,
    Const,
    Guarded,
    Output,
    Param,
    Struct,
    Template,
    Text,
)
from muscle_mem.model.trajectory import Trajectory
from muscle_mem.secrecy import patterns as secret_patterns


def plain_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Param values with :class:`codec.Secret` wrappers removed."""
    if not params:
        return {}
    return {k: v.get() if isinstance(v, codec.Secret) else v for k, v in params.items()}


def secret_values(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The plain values of the params that are :class:`codec.Secret`, by name."""
    if not params:
        return {}
    return {k: v.get() for k, v in params.items() if isinstance(v, codec.Secret)}


def output_secrets(output: Any) -> list[Any]:
    """The values inside a secret tool output to keep out of the store and messages, each once.

    They are its texts and bytes of :data:`MIN_SUBSTRING` characters or more, and its numbers of
    as many digits; a shorter value (a flag, a count) would be found everywhere by chance.
    """
    found: dict[Any, None] = {}
    for leaf in _value_leaves(output, 0):
        if isinstance(leaf, bool) or not isinstance(leaf, str | bytes | int | float):
            continue
        if isinstance(leaf, str | bytes):
            if len(leaf) >= MIN_SUBSTRING:
                found[leaf] = None
        elif abs(leaf) >= 10 ** (MIN_SUBSTRING - 1):
            found[leaf] = None
    return list(found)


def redact(text: str, secrets: Mapping[str, Any]) -> str:
    """``text`` with every secret value in it (as text, its repr too) replaced by ``{name}``.

    A text of 4 characters or more is replaced anywhere; a shorter one, and a number, only where it
    stands whole, so that redacting pin 5 leaves invoice 512 alone and two different texts never
    become one. Secret-looking texts are redacted too (:func:`secret_patterns.scrub`).
    """
    if not secrets:
        return secret_patterns.scrub(text)
    forms: list[tuple[str, str]] = []
    for name, value in secrets.items():
        if isinstance(value, bool) or value is None:
            continue
        shown = value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
        forms += [(form, name) for form in {shown, repr(value)} if form]
    for form, name in sorted(forms, key=lambda f: -len(f[0])):
        if len(form) >= MIN_SUBSTRING and not NUMBER_TEXT.fullmatch(form):
            text = text.replace(form, "{" + name + "}")
        else:
            text = whole_number(form).sub("{" + name + "}", text)
    return secret_patterns.scrub(text)


MIN_SUBSTRING = 4
"""A secret text shorter than this is redacted only where it stands as a whole word."""
_MAX_DEPTH = 32


def leaks_secret(trajectory: Trajectory, secrets: Mapping[str, Any], captured: Iterable[Any] = ()) -> bool:
    """Whether a secret value appears anywhere in the trajectory's data, outside references.

    It is found inside a string (in any case) or bytes, or as an equal number. ``captured`` are the
    values of the snapshots stored as hashes only: a hash of a short secret would give it away.
    """
    if not secrets:
        return False
    match = _matcher([v for v in secrets.values() if v is not None and not isinstance(v, bool)])
    if match is None:
        return False
    leaves = itertools.chain(
        (trajectory.task,), _leaves(trajectory), *(_value_leaves(value, 0) for value in captured)
    )
    return any(match(leaf) for leaf in leaves)


def _matcher(secrets: list[Any]) -> Any:
    texts = [s.casefold() for s in secrets if isinstance(s, str) and s]
    blobs = [s for s in secrets if isinstance(s, bytes) and s]
    blobs += [t.encode() for t in texts]
    texts += [b.decode("utf-8", "ignore").casefold() for b in blobs if len(b) >= MIN_SUBSTRING]
    numbers = [s for s in secrets if isinstance(s, int | float)]
    whole = [whole_number(str(n)) for n in numbers]
    if not (texts or blobs or numbers):
        return None

    def match(leaf: Any) -> bool:
        if isinstance(leaf, str):
            folded = leaf.casefold()
            return any(t in folded for t in texts) or any(w.search(leaf) for w in whole)
        if isinstance(leaf, bytes | bytearray):
            return any(b in leaf for b in blobs)
        if isinstance(leaf, int | float) and not isinstance(leaf, bool):
            return leaf in numbers
        return False

    return match


def looks_secret(trajectory: Trajectory) -> str | None:
    """What the first secret-looking text stored in the trajectory looks like, or None.

    A dict's text item is looked at with its key (``{"api_key": "..."}`` reads ``api_key: ...``).
    """
    task = trajectory.task
    kind = _task_kind(task) if len(task) <= secret_patterns.CACHED_LENGTH else secret_patterns.kind_of(task)
    if kind is not None:
        return kind
    for leaf in _leaves(trajectory):
        if isinstance(leaf, _BYTES):
            leaf = bytes(leaf).decode("latin-1")
        if isinstance(leaf, str):
            kind = secret_patterns.kind_of(leaf)
            if kind is not None:
                return kind
    return None


_BYTES = (bytes, bytearray)
_task_kind = functools.lru_cache(maxsize=1024)(secret_patterns.kind_of)
""":func:`secret_patterns.kind_of` remembered for task texts, the same for every run of a task."""


def _leaves(trajectory: Trajectory) -> Iterator[Any]:
    """Every value stored in the trajectory but its task text."""
    yield from trajectory.tags
    for step in trajectory.steps:
        for arg in step.args:
            kind = type(arg)  # the common cases without a generator of their own
            if kind is Const and type(arg.value) in SCALAR_TYPES:  # type: ignore[union-attr]
                yield arg.value  # type: ignore[union-attr]
            elif not (kind is Output and not arg.path) and kind is not Param:  # type: ignore[union-attr]
                yield from _arg_leaves(arg)
        for name, arg in step.kwargs:
            yield name
            yield from _arg_leaves(arg)
        for snapshot in (step.pre, step.post):
            if snapshot is not None and snapshot.kept:
                yield from _value_leaves(snapshot.value, 0)
    yield from _arg_leaves(trajectory.result)


def _arg_leaves(arg: Arg) -> Iterator[Any]:
    match arg:
        case Const(value):
            if type(value) in SCALAR_TYPES:  # the common case, without a generator of its own
                yield value
            else:
                yield from _value_leaves(value, 0)
        case Template(parts):
            for part in parts:
                yield from [part.text] if isinstance(part, Text) else _arg_leaves(part)
        case Struct(_, items):
            for key, item in items:
                yield key
                yield from _arg_leaves(item)
        case Output(_, path, _, _):
            for _, key in path:
                yield key
        case Agree(options):
            for option in options:
                yield from _arg_leaves(option)
        case Guarded(value, _, _):
            yield from _arg_leaves(value)


def _value_leaves(value: Any, depth: int) -> Iterator[Any]:
    if depth > _MAX_DEPTH:
        return
    if type(value) in SCALAR_TYPES:  # the common case: a leaf, known without the checks below
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _value_leaves(key, depth + 1)
            yield from _value_leaves(item, depth + 1)
            if isinstance(key, str) and isinstance(item, str):
                yield f"{key}: {item}"
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _value_leaves(item, depth + 1)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _value_leaves(getattr(value, field.name, None), depth + 1)
    elif isinstance(getattr(type(value), "model_fields", None), dict):
        for name in type(value).model_fields:
            yield from _value_leaves(getattr(value, name, None), depth + 1)
    elif isinstance(value, enum.Enum):
        yield from _value_leaves(value.value, depth + 1)
    elif isinstance(value, codec.Opaque):
        yield from _value_leaves(value.data, depth + 1)
    else:
        yield value
