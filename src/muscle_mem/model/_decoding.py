"""Decoding the codec's data into values: inert (nothing imported, evaluated or run of a class) and bounded."""

from __future__ import annotations

import base64
import collections
import dataclasses
import datetime as dt
import math
import os
import pathlib
import re
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from muscle_mem.model._class_rebuild import KINDS, rebuilt
from muscle_mem.model._codec_format import (
    MAX_DEPTH,
    MAX_SAME_HASH,
    PATHS,
    TAG,
    Captured,
    CodecError,
    Fail,
    deeper,
    public_error,
)
from muscle_mem.model._encoding import Opaque

_PLAIN_KEYS = frozenset({str, int, float, bool, type(None)})


def holds_opaque(value: Any, depth: int = 0) -> bool:
    """Whether a decoded value is, or holds, an :class:`Opaque` (a part that is not what was stored)."""
    if isinstance(value, Opaque):
        return True
    if value is None or isinstance(value, str | bytes | int | float):
        return False
    if depth > MAX_DEPTH:
        return True  # deeper than anything decoded: not known to be whole
    if isinstance(value, dict):
        return any(holds_opaque(k, depth + 1) or holds_opaque(v, depth + 1) for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return any(holds_opaque(v, depth + 1) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(holds_opaque(getattr(value, f.name), depth + 1) for f in dataclasses.fields(value))
    model_fields = getattr(type(value), "model_fields", None)
    if isinstance(model_fields, dict):
        return any(holds_opaque(getattr(value, name, None), depth + 1) for name in model_fields)
    return False


def _dec(d: Any, depth: int, key: bool) -> Any:
    """The value of data ``d`` at ``depth``; ``key``: it is (inside) a dict key or a set item."""
    t = type(d)
    if t is str or t is int or t is float or t is bool or d is None:
        return d
    if t is list:
        return _dec_items(d, depth, key)
    if t is not dict:
        raise Fail(f"not JSON data: {t}")
    tag = d.get(TAG)
    if tag is None:
        inner = deeper(depth, len(d))
        return {k: _at(_dec, item, inner, key, "[{!r}]", k) for k, item in d.items()}
    f = _DECODERS.get(tag) if type(tag) is str else None
    if f is None:
        raise Fail(f"unknown tag {tag!r}")
    try:
        return f(d, depth, key)
    except Fail:
        raise
    except Exception as exc:  # whatever malformed data raises, it is this value that is refused
        raise Fail(f"malformed {tag!r} data ({type(exc).__name__}: {exc})") from None


def _at(
    func: Callable[[Any, int, bool], Any], data: Any, depth: int, key: bool, where: str, name: Any = None
) -> Any:
    """``func(data, depth, key)``, adding ``where.format(name)`` to the path of a failure inside it."""
    try:
        return func(data, depth, key)
    except Fail as exc:
        exc.path.append(where.format(name))
        raise


def _list(data: Any) -> list[Any]:
    if type(data) is not list:
        raise TypeError(f"expected a list, got {type(data)}")
    return data


def _text(data: Any) -> str:
    if type(data) is not str:
        raise TypeError(f"expected a string, got {type(data)}")
    return data


def _dec_items(data: Any, depth: int, key: bool) -> list[Any]:
    items = _list(data)
    inner = deeper(depth, len(items))
    return [_at(_dec, item, inner, key, "[{}]", i) for i, item in enumerate(items)]


def _shown(key: Any, index: int) -> str:
    """How a failure's path names a decoded dict key (never by running a class's ``__repr__``)."""
    return f"[{key!r}]" if type(key) in _PLAIN_KEYS else f"[<key {index}>]"


def _dec_dict(d: dict[str, Any], depth: int, key: bool) -> dict[Any, Any]:
    pairs = _list(d["v"])
    inner = deeper(depth, len(pairs))
    keys, values = [], []
    for index, pair in enumerate(pairs):
        k, item = _list(pair)
        name = _at(_dec, k, inner, True, "<dict key>")
        keys.append(name)
        values.append(_at(_dec, item, inner, key, "{}", _shown(name, index)))
    _spread(keys)
    return dict(zip(keys, values, strict=True))


def _dec_set(d: dict[str, Any], depth: int, key: bool) -> set[Any] | frozenset[Any]:
    items = _list(d["v"])
    inner = deeper(depth, len(items))
    found = [_at(_dec, item, inner, True, "<set item>") for item in items]
    _spread(found)
    return set(found) if d[TAG] == "set" else frozenset(found)


def _spread(keys: list[Any]) -> None:
    """Refuse keys of which more than :data:`MAX_SAME_HASH` share one hash: hash flooding.

    A dict or set of such keys takes time quadratic in their number to build, and again to copy.
    """
    if len(keys) > MAX_SAME_HASH:
        worst = max(collections.Counter(hash(k) for k in keys).values())
        if worst > MAX_SAME_HASH:
            raise Fail(f"{worst} keys share one hash (refused as hash flooding)")


def _dec_attrs(data: Any, depth: int, key: bool) -> dict[str, Any]:
    if type(data) is not dict:
        raise TypeError("fields must be a JSON object")
    inner = deeper(depth, len(data))
    return {name: _at(_dec, item, inner, key, ".{}", name) for name, item in data.items()}


def _dec_captured(d: dict[str, Any], depth: int, key: bool) -> Captured:
    """A stored snapshot's data; one kept by another process only decodes to nothing to compare."""
    return Captured(None, _at(_dec, d["v"], deeper(depth, 1), key, ".data") if "v" in d else None)


_DTYPE_TEXT = re.compile(r"[<>|=]?[a-zA-Z?]\d{0,9}(\[\d{0,9}[a-zA-Z]{1,3}\])?")
"""The dtype strings numpy writes (``<f8``, ``|b1``, ``<U5``, ``<M8[ns]``); numpy parses others as code."""


def _dtype_descr(descr: Any, depth: int = 0) -> Any:
    """A dtype description checked to be of the forms :func:`numpy.lib.format.dtype_to_descr` writes."""
    if type(descr) is str and _DTYPE_TEXT.fullmatch(descr):
        return descr
    if type(descr) is not list or depth >= 4 or len(descr) > 1000:
        raise ValueError(f"not a dtype description: {descr!r}"[:200])
    for field in descr:
        if type(field) is not tuple or len(field) not in (2, 3):
            raise ValueError("a structured dtype's fields are (name, dtype[, shape])")
        name = field[0]
        if not (type(name) is str or (type(name) is tuple and [type(n) for n in name] == [str, str])):
            raise ValueError(f"not a field name: {name!r}"[:200])
        _dtype_descr(field[1], depth + 1)
        if len(field) == 3:
            _shape(field[2])
    return descr


def _shape(data: Any) -> tuple[int, ...]:
    if type(data) not in (list, tuple) or len(data) > 32 or any(type(n) is not int or n < 0 for n in data):
        raise ValueError(f"not an array shape: {data!r}"[:200])
    return tuple(data)


def _dec_numpy(d: dict[str, Any], depth: int, key: bool) -> Any:
    import numpy as np  # a core dependency, imported lazily to keep `import muscle_mem` light

    dtype = np.lib.format.descr_to_dtype(_dtype_descr(_dec(d["dtype"], deeper(depth, 1), False)))
    if dtype.hasobject:
        raise ValueError("object dtypes are refused")
    raw = base64.b64decode(_text(d["v"]), validate=True)
    shape = _shape(d["shape"]) if d[TAG] == "ndarray" else ()
    count = math.prod(shape)
    if count * dtype.itemsize != len(raw):
        raise ValueError(f"{len(raw)} bytes are not {count} items of {dtype}")
    flat = np.frombuffer(raw, dtype=dtype, count=count)
    return flat.reshape(shape).copy() if d[TAG] == "ndarray" else flat[0]


def _local_path(cls: type[pathlib.PurePath]) -> type[pathlib.PurePath]:
    """The class a stored path decodes as here: a concrete path of another system is its pure path."""
    if cls is pathlib.WindowsPath and os.name != "nt":
        return pathlib.PureWindowsPath
    if cls is pathlib.PosixPath and os.name == "nt":
        return pathlib.PurePosixPath
    return cls


_DECODED_PATHS = {name: _local_path(cls) for name, cls in PATHS.items()}


def _timedelta(data: Any) -> dt.timedelta:
    if type(data) is not list or len(data) != 3 or any(type(n) is not int for n in data):
        raise TypeError("a timedelta is [days, seconds, microseconds]")
    return dt.timedelta(*data)


def _dec_class(d: dict[str, Any], depth: int, key: bool) -> Any:
    kind, name, raw = d[TAG], _text(d["type"]), d["v"]
    if kind == "namedtuple":
        data: Any = _dec_items(raw, depth, key)
    elif kind == "enum":
        data = _at(_dec, raw, deeper(depth, 1), key, ".value")
    else:
        data = _dec_attrs(raw, depth, key)
    return rebuilt(kind, name, data, raw, key)


_DECODERS: dict[str, Callable[[dict[str, Any], int, bool], Any]] = {
    "int": lambda d, depth, key: int(_text(d["v"]), 16),
    "float": lambda d, depth, key: float(_text(d["v"])),
    "tuple": lambda d, depth, key: tuple(_dec_items(d["v"], depth, key)),
    "dict": _dec_dict,
    "set": _dec_set,
    "frozenset": _dec_set,
    "bytes": lambda d, depth, key: base64.b64decode(_text(d["v"]), validate=True),
    "bytearray": lambda d, depth, key: bytearray(base64.b64decode(_text(d["v"]), validate=True)),
    "datetime": lambda d, depth, key: dt.datetime.fromisoformat(_text(d["v"])),
    "date": lambda d, depth, key: dt.date.fromisoformat(_text(d["v"])),
    "time": lambda d, depth, key: dt.time.fromisoformat(_text(d["v"])),
    "timedelta": lambda d, depth, key: _timedelta(d["v"]),
    "decimal": lambda d, depth, key: Decimal(_text(d["v"])),
    "uuid": lambda d, depth, key: uuid.UUID(_text(d["v"])),
    "path": lambda d, depth, key: _DECODED_PATHS[d["cls"]](_text(d["v"])),
    "ndarray": _dec_numpy,
    "npscalar": _dec_numpy,
    "captured": _dec_captured,
    **{kind: _dec_class for kind in KINDS},
}


def decode(data: Any) -> Any:
    """The value whose :func:`encode` is ``data`` (raises :class:`CodecError` on malformed data).

    Inert: it imports nothing, evaluates nothing and runs no method of an application's class.
    """
    try:
        return _dec(data, 0, False)
    except Fail as exc:
        raise public_error(exc) from None
    except RecursionError:
        raise CodecError("cannot decode data nested this deeply") from None
