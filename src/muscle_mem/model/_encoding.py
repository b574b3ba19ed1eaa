"""Encoding a value into the codec's JSON-compatible data, and its canonical text and hashes (fingerprints, digests)."""

from __future__ import annotations

import base64
import contextlib
import contextvars
import dataclasses
import datetime as dt
import enum
import hashlib
import json
import math
import sys
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any

from muscle_mem.model._codec_format import (
    MAX_DEPTH,
    MAX_ITEMS,
    PATHS,
    TAG,
    Captured,
    CodecError,
    Fail,
    Secret,
    canon,
    dataclass_layout,
    deeper,
    known,
    public_error,
    type_name,
)

_SAFE_INT = 2**53


@dataclasses.dataclass(frozen=True)
class Opaque:
    """A decoded instance of a class decoding may not rebuild (or that no longer fits its data).

    It equals only an identical Opaque and encodes back to the data it was decoded from.
    """

    kind: str
    type_name: str
    data: Any

    def __hash__(self) -> int:
        return hash(fingerprint(self))


_PORTABLE: contextvars.ContextVar[bool] = contextvars.ContextVar("muscle_mem_codec_portable", default=False)


@contextlib.contextmanager
def portable() -> Iterator[None]:
    """Encode for a record that leaves this process: a :class:`Captured` without a stored form is refused."""
    token = _PORTABLE.set(True)
    try:
        yield
    finally:
        _PORTABLE.reset(token)


def _enc_captured(v: Captured, depth: int) -> Any:
    if v.data is not None:
        return {TAG: "captured", "v": _step(v.data, deeper(depth, 1), ".data")}
    if _PORTABLE.get():
        raise Fail(
            f"a Check snapshot of type {type_name(type(v.value))} has no stored form, so only a memory "
            "store keeps it: give the Check encode= and decode= (or capture data, an array or an image)"
        )
    return {TAG: "captured", "local": v.token}


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _enc(v: Any, depth: int) -> Any:
    t = type(v)
    if t is str or t is bool or v is None:
        return v
    f = _ENCODERS.get(t)
    return f(v, depth) if f is not None else _enc_object(v, depth)


def _step(value: Any, depth: int, where: str) -> Any:
    """``_enc(value, depth)``, adding ``where`` to the path of a failure inside it."""
    try:
        return _enc(value, depth)
    except Fail as exc:
        exc.path.append(where)
        raise


def _blame(exc: Fail, parts: Iterable[tuple[str, Any]], depth: int) -> None:
    """Add to a failure's path which of ``parts`` (where, value) failed: the first that fails again.

    Containers encode their items without noting where each is (a hit's cost); only a failure pays,
    and the parts encoded again here do not look for blame themselves (it is already in ``exc``).
    """
    if getattr(_blaming, "on", False):
        return
    _blaming.on = True
    try:
        for where, value in parts:
            try:
                _enc(value, depth)
            except Fail:
                exc.path.append(where)
                return
    finally:
        _blaming.on = False


_blaming = threading.local()


def _enc_items(values: Sequence[Any], depth: int) -> list[Any]:
    if depth >= MAX_DEPTH or len(values) > MAX_ITEMS:
        deeper(depth, len(values))
    depth += 1
    try:
        return [_enc(item, depth) for item in values]
    except Fail as exc:
        _blame(exc, ((f"[{i}]", item) for i, item in enumerate(values)), depth)
        raise


def _enc_attrs(pairs: Sequence[tuple[str, Any]], depth: int) -> dict[str, Any]:
    if depth >= MAX_DEPTH or len(pairs) > MAX_ITEMS:
        deeper(depth, len(pairs))
    depth += 1
    try:
        return {name: _enc(item, depth) for name, item in pairs}
    except Fail as exc:
        _blame(exc, ((f".{name}", item) for name, item in pairs), depth)
        raise


def _enc_dict(v: dict[Any, Any], depth: int) -> Any:
    if depth >= MAX_DEPTH or len(v) > MAX_ITEMS:
        deeper(depth, len(v))
    depth += 1
    try:
        if TAG not in v and all(type(k) is str for k in v):
            return {k: _enc(item, depth) for k, item in v.items()}
        pairs = [[_enc(k, depth), _enc(item, depth)] for k, item in v.items()]
    except Fail as exc:
        _blame(
            exc, ((w, x) for k, item in v.items() for w, x in (("<dict key>", k), (f"[{k!r}]", item))), depth
        )
        raise
    pairs.sort(key=lambda p: canon(p[0]))
    return {TAG: "dict", "v": pairs}


def _enc_set(v: set[Any] | frozenset[Any], depth: int) -> Any:
    if depth >= MAX_DEPTH or len(v) > MAX_ITEMS:
        deeper(depth, len(v))
    depth += 1
    try:
        items = [_enc(item, depth) for item in v]
    except Fail as exc:
        exc.path.append("<set item>")
        raise
    items.sort(key=canon)
    return {TAG: type(v).__name__, "v": items}


def _enc_numpy(v: Any, np: Any, depth: int) -> Any:
    if v.dtype.hasobject:
        raise Fail(f"cannot encode numpy data of dtype {v.dtype} (object dtypes are refused)")
    descr = _enc(np.lib.format.dtype_to_descr(v.dtype), depth)
    if isinstance(v, np.ndarray):
        return {TAG: "ndarray", "dtype": descr, "shape": list(v.shape), "v": _b64(v.tobytes())}
    return {TAG: "npscalar", "dtype": descr, "v": _b64(v.tobytes())}


def _enc_object(v: Any, depth: int) -> Any:
    """Encode the values not dispatched by exact type: classes, numpy, Secret, Opaque."""
    cls: type = type(v)
    if isinstance(v, Secret):
        raise Fail("secret values are never stored")
    if hasattr(cls, "__dataclass_fields__") and cls is not Opaque:
        name, fields, _, _ = dataclass_layout(cls)
        return {TAG: "dataclass", "type": name, "v": _enc_attrs([(f, getattr(v, f)) for f in fields], depth)}
    if isinstance(v, enum.Enum):
        return {TAG: "enum", "type": known(cls), "v": _step(v.value, deeper(depth, 1), ".value")}
    if isinstance(v, tuple) and hasattr(cls, "_fields"):
        return {TAG: "namedtuple", "type": known(cls), "v": _enc_items(v, depth)}
    if isinstance(v, Opaque):
        return {TAG: v.kind, "type": v.type_name, "v": _enc(v.data, depth)}
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(v, pydantic.BaseModel):
        attrs: list[tuple[str, Any]] = [
            (n, getattr(v, n)) for n in type(v).model_fields
        ]  # nested keep their class
        attrs += list((v.model_extra or {}).items())
        return {TAG: "pydantic", "type": known(cls), "v": _enc_attrs(attrs, depth)}
    np = sys.modules.get("numpy")
    if np is not None and (cls is np.ndarray or isinstance(v, np.generic)):
        return _enc_numpy(v, np, depth)
    if isinstance(v, str):
        return str(v)  # another str subclass (LangChain's TextAccessor): the text it holds
    raise Fail(f"cannot encode {cls}")


_ENCODERS: dict[type, Callable[[Any, int], Any]] = {
    int: lambda v, depth: v if -_SAFE_INT <= v <= _SAFE_INT else {TAG: "int", "v": format(v, "x")},
    float: lambda v, depth: v if math.isfinite(v) else {TAG: "float", "v": repr(v)},
    list: _enc_items,
    tuple: lambda v, depth: {TAG: "tuple", "v": _enc_items(v, depth)},
    dict: _enc_dict,
    set: _enc_set,
    frozenset: _enc_set,
    bytes: lambda v, depth: {TAG: "bytes", "v": _b64(v)},
    bytearray: lambda v, depth: {TAG: "bytearray", "v": _b64(v)},
    dt.datetime: lambda v, depth: {TAG: "datetime", "v": v.isoformat()},
    dt.date: lambda v, depth: {TAG: "date", "v": v.isoformat()},
    dt.time: lambda v, depth: {TAG: "time", "v": v.isoformat()},
    dt.timedelta: lambda v, depth: {TAG: "timedelta", "v": [v.days, v.seconds, v.microseconds]},
    Decimal: lambda v, depth: {TAG: "decimal", "v": str(v)},
    uuid.UUID: lambda v, depth: {TAG: "uuid", "v": str(v)},
    **{c: lambda v, depth: {TAG: "path", "cls": type(v).__name__, "v": str(v)} for c in PATHS.values()},
    Captured: _enc_captured,
}


def encode(value: Any) -> Any:
    """The JSON-compatible data of ``value`` (raises :class:`CodecError` if it cannot be stored)."""
    try:
        return _enc(value, 0)
    except Fail as exc:
        raise public_error(exc) from None
    except RecursionError:
        raise CodecError("cannot encode a value that contains itself or is nested too deeply") from None


_quoted = json.encoder.encode_basestring_ascii
"""The JSON of a ``str`` as :data:`canon` writes it (ASCII, escaped), without the encoder's overhead."""


def scalar_text(x: Any) -> str | None:
    """The canonical text of a scalar that encodes as itself, else None."""
    t = type(x)
    if t is str:
        return _quoted(x)
    if x is None or t is bool:
        return "null" if x is None else "true" if x else "false"
    if (t is int and -_SAFE_INT <= x <= _SAFE_INT) or (t is float and math.isfinite(x)):
        return repr(x)
    return None


def _members_text(pairs: Iterable[tuple[str, Any]]) -> str | None:
    parts = []
    for key_text, x in pairs:
        text = scalar_text(x)
        if text is None:
            return None
        parts.append(key_text + text)
    return ",".join(parts)


def _fast_text(value: Any) -> str | None:
    """``canon(encode(value))`` for a scalar or a small tuple, dict or dataclass of scalars, else None."""
    text = scalar_text(value)
    if text is not None:
        return text
    t = type(value)
    if t is tuple and len(value) <= 16:
        body = _members_text(("", x) for x in value)
        return None if body is None else '{"$t":"tuple","v":[' + body + "]}"
    if t is dict and len(value) <= 16 and TAG not in value and all(type(k) is str for k in value):
        body = _members_text((canon(k) + ":", value[k]) for k in sorted(value))
        return None if body is None else "{" + body + "}"
    if hasattr(t, "__dataclass_fields__") and t is not Opaque:
        _, _, prefix, fields = dataclass_layout(value.__class__)
        body = _members_text((key_text, getattr(value, f)) for f, key_text in fields)
        return None if body is None else prefix + body + "}}"
    return None


_BLAKE2B_16 = hashlib.blake2b(digest_size=16)
"""Never updated: copied, it hashes a text in half the time a new hash takes to be made."""


def hash_text(text: str) -> str:
    """The 32-hex-digit BLAKE2b hash of a text's UTF-8 bytes (the hash of fingerprints and digests)."""
    fresh = _BLAKE2B_16.copy()
    fresh.update(text.encode())
    return fresh.hexdigest()


def digest(data: Any) -> str:
    """The hash :func:`fingerprint` gives, for data that is already encoded (JSON-compatible)."""
    return hash_text(canon(data))


def fingerprint(value: Any) -> str:
    """A stable 32-hex-digit hash of the canonical encoding of ``value`` (its :func:`dumps` body).

    Equal values of the same types give equal fingerprints in any process; 1, 1.0, "1" and
    True all differ.
    """
    text = _fast_text(value)
    if text is None:
        text = canon(encode(value))
    return hash_text(text)
