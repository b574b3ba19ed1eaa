"""Safe, versioned serialization of tool arguments, outputs, results and Check snapshots.

Format (codec version 1). :func:`encode` turns a value into JSON-compatible data:

* ``None``, ``bool``, ``str``, finite ``float``, ``int`` within ±2**53 and lists encode as
  themselves; a dict whose keys are all ``str`` (and none is the tag key ``"$t"``) encodes as a
  JSON object of encoded values.
* Everything else is a tagged object ``{"$t": tag, "v": payload, ...}``: ``int`` (hex),
  ``float`` (``nan``/``inf``/``-inf``), ``tuple``, ``dict`` (a list of ``[key, value]`` pairs;
  used for non-str keys and to escape a user key ``"$t"``), ``set``, ``frozenset``, ``bytes``,
  ``bytearray`` (base64), ``datetime``, ``date``, ``time`` (ISO 8601), ``timedelta``,
  ``decimal``, ``uuid``, ``path``, ``ndarray`` and ``npscalar`` (numpy dtype descr, shape,
  base64 data), and the classes ``dataclass``, ``pydantic``, ``enum`` and ``namedtuple``,
  which also carry ``"type": "module:qualname"``.

Sets and pair-form dicts are sorted by the canonical JSON of their encoded elements, so equal
values encode identically whatever their order; :func:`dumps` writes that canonical JSON with
sorted keys under a ``{"$codec": VERSION}`` header and :func:`fingerprint` hashes the body. Changing
how a type encodes changes fingerprints and needs a new ``VERSION``.

Decoding never imports a module and never evaluates anything: classes are looked up by name
in modules already in ``sys.modules`` and must be of the recorded kind; otherwise the value
decodes to an :class:`Opaque`. Aware datetimes come back with a fixed-offset ``timezone``
(equal instants, not necessarily the same ``tzinfo`` object). No pickle, no eval, ever.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import enum
import functools
import hashlib
import json
import logging
import math
import pathlib
import sys
import uuid
from collections.abc import Callable, Iterable
from decimal import Decimal
from types import ModuleType
from typing import Any, Generic, TypeVar

from muscle_mem.errors import MuscleMemError

log = logging.getLogger(__name__)

VERSION = 1
TAG = "$t"
_SAFE_INT = 2**53
_PATHS: dict[str, type[pathlib.PurePath]] = {
    c.__name__: c
    for c in (pathlib.PurePosixPath, pathlib.PureWindowsPath, pathlib.PosixPath, pathlib.WindowsPath)
}
T = TypeVar("T")


class CodecError(MuscleMemError, ValueError):
    """A value cannot be encoded, or data cannot be decoded; the message says where."""


class _Fail(Exception):
    """Internal error collecting the path to the offending part, innermost segment first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


def _public(exc: _Fail) -> CodecError:
    where = "".join(reversed(exc.path))
    return CodecError(f"at {where}: {exc.message}" if where else exc.message)


class Secret(Generic[T]):
    """A value that must never be stored or logged: :func:`encode` refuses it."""

    __slots__ = ("_value",)

    def __init__(self, value: T) -> None:
        self._value = value

    def get(self) -> T:
        """The wrapped value."""
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and bool(self._value == other._value)

    def __hash__(self) -> int:
        return hash(self._value)


@dataclasses.dataclass(frozen=True)
class Opaque:
    """A decoded instance of a class that is not loaded (or no longer fits its data).

    It equals only an identical Opaque and encodes back to the data it was decoded from.
    """

    kind: str
    type_name: str
    data: Any

    def __hash__(self) -> int:
        return hash(fingerprint(self))


def holds_opaque(value: Any, depth: int = 0) -> bool:
    """Whether a decoded value is, or holds, an :class:`Opaque` (a part that is not what was stored)."""
    if isinstance(value, Opaque):
        return True
    if depth > 32 or value is None or isinstance(value, str | bytes | int | float):
        return False
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


_canon = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False).encode


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _type_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


@functools.lru_cache(maxsize=512)
def _dataclass_layout(cls: Any) -> tuple[str, tuple[str, ...], str, tuple[tuple[str, str], ...]]:
    """Type name and field names, plus the canonical text prefix and sorted fields for fingerprints."""
    name, fields = _type_name(cls), tuple(f.name for f in dataclasses.fields(cls))
    prefix = f'{{"$t":"dataclass","type":{_canon(name)},"v":{{'
    return name, fields, prefix, tuple((f, _canon(f) + ":") for f in sorted(fields))


# ---------------------------------------------------------------- encoding


def _enc(v: Any) -> Any:
    t = type(v)
    if t is str or t is bool or v is None:
        return v
    f = _ENCODERS.get(t)
    return f(v) if f is not None else _enc_object(v)


def _step(func: Callable[[Any], Any], value: Any, where: str, key: Any = None) -> Any:
    """``func(value)``, adding ``where.format(key)`` to the path of a failure inside it."""
    try:
        return func(value)
    except _Fail as exc:
        exc.path.append(where.format(key))
        raise


def _enc_items(values: Iterable[Any]) -> list[Any]:
    return [_step(_enc, item, "[{}]", i) for i, item in enumerate(values)]


def _enc_attrs(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    return {name: _step(_enc, item, ".{}", name) for name, item in pairs}


def _enc_dict(v: dict[Any, Any]) -> Any:
    if TAG not in v and all(type(k) is str for k in v):
        return {k: _step(_enc, item, "[{!r}]", k) for k, item in v.items()}
    pairs = [[_step(_enc, k, "<dict key>"), _step(_enc, item, "[{!r}]", k)] for k, item in v.items()]
    pairs.sort(key=lambda p: _canon(p[0]))
    return {TAG: "dict", "v": pairs}


def _enc_set(v: set[Any] | frozenset[Any]) -> Any:
    items = sorted((_step(_enc, item, "<set item>") for item in v), key=_canon)
    return {TAG: type(v).__name__, "v": items}


def _enc_numpy(v: Any, np: Any) -> Any:
    if v.dtype.hasobject:
        raise _Fail(f"cannot encode numpy data of dtype {v.dtype} (object dtypes are refused)")
    descr = _enc(np.lib.format.dtype_to_descr(v.dtype))
    if isinstance(v, np.ndarray):
        return {TAG: "ndarray", "dtype": descr, "shape": list(v.shape), "v": _b64(v.tobytes())}
    return {TAG: "npscalar", "dtype": descr, "v": _b64(v.tobytes())}


def _enc_object(v: Any) -> Any:
    """Encode the values not dispatched by exact type: classes, numpy, Secret, Opaque."""
    cls: type = type(v)
    if isinstance(v, Secret):
        raise _Fail("secret values are never stored")
    if hasattr(cls, "__dataclass_fields__") and cls is not Opaque:
        name, fields, _, _ = _dataclass_layout(cls)
        return {TAG: "dataclass", "type": name, "v": _enc_attrs((f, getattr(v, f)) for f in fields)}
    if isinstance(v, enum.Enum):
        return {TAG: "enum", "type": _type_name(cls), "v": _step(_enc, v.value, ".value")}
    if isinstance(v, tuple) and hasattr(cls, "_fields"):
        return {TAG: "namedtuple", "type": _type_name(cls), "v": _enc_items(v)}
    if isinstance(v, Opaque):
        return {TAG: v.kind, "type": v.type_name, "v": _enc(v.data)}
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(v, pydantic.BaseModel):
        attrs: list[tuple[str, Any]] = [
            (n, getattr(v, n)) for n in type(v).model_fields
        ]  # nested keep their class
        attrs += list((v.model_extra or {}).items())
        return {TAG: "pydantic", "type": _type_name(cls), "v": _enc_attrs(attrs)}
    np = sys.modules.get("numpy")
    if np is not None and (cls is np.ndarray or isinstance(v, np.generic)):
        return _enc_numpy(v, np)
    if isinstance(v, str):
        return str(v)  # another str subclass (LangChain's TextAccessor): the text it holds
    raise _Fail(f"cannot encode {cls}")


_ENCODERS: dict[type, Callable[[Any], Any]] = {
    int: lambda v: v if -_SAFE_INT <= v <= _SAFE_INT else {TAG: "int", "v": format(v, "x")},
    float: lambda v: v if math.isfinite(v) else {TAG: "float", "v": repr(v)},
    list: _enc_items,
    tuple: lambda v: {TAG: "tuple", "v": _enc_items(v)},
    dict: _enc_dict,
    set: _enc_set,
    frozenset: _enc_set,
    bytes: lambda v: {TAG: "bytes", "v": _b64(v)},
    bytearray: lambda v: {TAG: "bytearray", "v": _b64(v)},
    dt.datetime: lambda v: {TAG: "datetime", "v": v.isoformat()},
    dt.date: lambda v: {TAG: "date", "v": v.isoformat()},
    dt.time: lambda v: {TAG: "time", "v": v.isoformat()},
    dt.timedelta: lambda v: {TAG: "timedelta", "v": [v.days, v.seconds, v.microseconds]},
    Decimal: lambda v: {TAG: "decimal", "v": str(v)},
    uuid.UUID: lambda v: {TAG: "uuid", "v": str(v)},
    **{c: lambda v: {TAG: "path", "cls": type(v).__name__, "v": str(v)} for c in _PATHS.values()},
}


def encode(value: Any) -> Any:
    """The JSON-compatible data of ``value`` (raises :class:`CodecError` if it cannot be stored)."""
    try:
        return _enc(value)
    except _Fail as exc:
        raise _public(exc) from None
    except RecursionError:
        raise CodecError("cannot encode a value that contains itself or is nested too deeply") from None


# ---------------------------------------------------------------- decoding


def _dec(d: Any) -> Any:
    t = type(d)
    if t is str or t is int or t is float or t is bool or d is None:
        return d
    if t is list:
        return _dec_items(d)
    if t is not dict:
        raise _Fail(f"not JSON data: {t}")
    tag = d.get(TAG)
    if tag is None:
        return {k: _step(_dec, item, "[{!r}]", k) for k, item in d.items()}
    f = _DECODERS.get(tag) if type(tag) is str else None
    if f is None:
        raise _Fail(f"unknown tag {tag!r}")
    try:
        return f(d)
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError) as exc:
        raise _Fail(f"malformed {tag!r} data ({type(exc).__name__}: {exc})") from None


def _list(data: Any) -> list[Any]:
    if type(data) is not list:
        raise TypeError(f"expected a list, got {type(data)}")
    return data


def _dec_items(data: Any) -> list[Any]:
    return [_step(_dec, item, "[{}]", i) for i, item in enumerate(_list(data))]


def _dec_dict(d: dict[str, Any]) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for pair in _list(d["v"]):
        k, item = _list(pair)
        key = _step(_dec, k, "<dict key>")
        out[key] = _step(_dec, item, "[{!r}]", key)
    return out


def _dec_attrs(data: Any) -> dict[str, Any]:
    if type(data) is not dict:
        raise TypeError("fields must be a JSON object")
    return {name: _step(_dec, item, ".{}", name) for name, item in data.items()}


def _dec_numpy(d: dict[str, Any]) -> Any:
    import numpy as np  # a core dependency, imported lazily to keep `import muscle_mem` light

    dtype = np.lib.format.descr_to_dtype(_dec(d["dtype"]))
    if dtype.hasobject:
        raise ValueError("object dtypes are refused")
    flat = np.frombuffer(base64.b64decode(d["v"], validate=True), dtype=dtype)
    return flat.reshape(d["shape"]).copy() if d[TAG] == "ndarray" else flat[0]


def _resolve(name: str, check: Callable[[type], bool]) -> Any:
    """The loaded class called ``name`` if it passes ``check`` (no import, no attribute hooks)."""
    module, _, qualname = name.partition(":")
    obj: Any = sys.modules.get(module)
    for part in qualname.split("."):
        if not isinstance(obj, (ModuleType, type)):
            return None
        obj = vars(obj).get(part)
    return obj if isinstance(obj, type) and check(obj) else None


def _build_dataclass(cls: Any, data: dict[str, Any]) -> Any:
    fields = dataclasses.fields(cls)
    if {f.name for f in fields} != data.keys():
        raise TypeError("fields differ")
    obj = cls(**{f.name: data[f.name] for f in fields if f.init})
    for f in fields:
        if not f.init:
            object.__setattr__(obj, f.name, data[f.name])
    return obj


_CLASSES: dict[str, tuple[Callable[[type], bool], Callable[[Any, Any], Any]]] = {
    "dataclass": (dataclasses.is_dataclass, _build_dataclass),
    "pydantic": (
        lambda cls: "pydantic" in sys.modules and issubclass(cls, sys.modules["pydantic"].BaseModel),
        lambda cls, data: cls.model_validate(data),
    ),
    "enum": (lambda cls: issubclass(cls, enum.Enum), lambda cls, value: cls(value)),
    "namedtuple": (lambda cls: issubclass(cls, tuple) and hasattr(cls, "_fields"), lambda cls, v: cls(*v)),
}


def _dec_class(d: dict[str, Any]) -> Any:
    kind, name = d[TAG], d["type"]
    if type(name) is not str:
        raise TypeError("type must be a string")
    if kind == "namedtuple":
        data: Any = _dec_items(d["v"])
    elif kind == "enum":
        data = _step(_dec, d["v"], ".value")
    else:
        data = _dec_attrs(d["v"])
    check, build = _CLASSES[kind]
    cls = _resolve(name, check)
    if cls is not None:
        try:
            return build(cls, data)
        except (TypeError, ValueError, ArithmeticError) as exc:
            log.debug("%s %s no longer fits its data (%s); decoding as Opaque", kind, name, exc)
    else:
        log.debug("%s %s is not loaded; decoding as Opaque", kind, name)
    return Opaque(kind, name, data)


_DECODERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "int": lambda d: int(d["v"], 16),
    "float": lambda d: float(d["v"]),
    "tuple": lambda d: tuple(_dec_items(d["v"])),
    "dict": _dec_dict,
    "set": lambda d: set(_dec_items(d["v"])),
    "frozenset": lambda d: frozenset(_dec_items(d["v"])),
    "bytes": lambda d: base64.b64decode(d["v"], validate=True),
    "bytearray": lambda d: bytearray(base64.b64decode(d["v"], validate=True)),
    "datetime": lambda d: dt.datetime.fromisoformat(d["v"]),
    "date": lambda d: dt.date.fromisoformat(d["v"]),
    "time": lambda d: dt.time.fromisoformat(d["v"]),
    "timedelta": lambda d: dt.timedelta(*d["v"]),
    "decimal": lambda d: Decimal(d["v"]),
    "uuid": lambda d: uuid.UUID(d["v"]),
    "path": lambda d: _PATHS[d["cls"]](d["v"]),
    "ndarray": _dec_numpy,
    "npscalar": _dec_numpy,
    **{kind: _dec_class for kind in _CLASSES},
}


def decode(data: Any) -> Any:
    """The value whose :func:`encode` is ``data`` (raises :class:`CodecError` on malformed data)."""
    try:
        return _dec(data)
    except _Fail as exc:
        raise _public(exc) from None
    except RecursionError:
        raise CodecError("cannot decode data nested this deeply") from None


# ---------------------------------------------------------------- text and hashing


def dumps(value: Any) -> str:
    """Compact canonical JSON of ``value`` under a codec version header."""
    return _canon({"$codec": VERSION, "v": encode(value)})


def loads(text: str | bytes) -> Any:
    """The value written by :func:`dumps`; refuses documents from a newer or unknown codec."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise CodecError(f"not a codec document: invalid JSON ({exc})") from None
    version = doc.get("$codec") if type(doc) is dict else None
    if type(version) is not int or "v" not in doc:
        raise CodecError("not a codec document: missing the '$codec' version header")
    if version != VERSION:
        newer = " is newer than this muscle-mem supports; upgrade muscle-mem" if version > VERSION else ""
        raise CodecError(f"codec version {version}{newer} (supported: {VERSION})")
    return decode(doc["v"])


def _scalar_text(x: Any) -> str | None:
    """The canonical text of a scalar that encodes as itself, else None."""
    t = type(x)
    if t is str:
        return _canon(x)
    if x is None or t is bool:
        return "null" if x is None else "true" if x else "false"
    if (t is int and -_SAFE_INT <= x <= _SAFE_INT) or (t is float and math.isfinite(x)):
        return repr(x)
    return None


def _members_text(pairs: Iterable[tuple[str, Any]]) -> str | None:
    parts = []
    for key_text, x in pairs:
        text = _scalar_text(x)
        if text is None:
            return None
        parts.append(key_text + text)
    return ",".join(parts)


def _fast_text(value: Any) -> str | None:
    """``_canon(encode(value))`` for a scalar or a small tuple, dict or dataclass of scalars, else None."""
    text = _scalar_text(value)
    if text is not None:
        return text
    t = type(value)
    if t is tuple and len(value) <= 16:
        body = _members_text(("", x) for x in value)
        return None if body is None else '{"$t":"tuple","v":[' + body + "]}"
    if t is dict and len(value) <= 16 and TAG not in value and all(type(k) is str for k in value):
        body = _members_text((_canon(k) + ":", value[k]) for k in sorted(value))
        return None if body is None else "{" + body + "}"
    if hasattr(t, "__dataclass_fields__") and t is not Opaque:
        _, _, prefix, fields = _dataclass_layout(value.__class__)
        body = _members_text((key_text, getattr(value, f)) for f, key_text in fields)
        return None if body is None else prefix + body + "}}"
    return None


def digest(data: Any) -> str:
    """The hash :func:`fingerprint` gives, for data that is already encoded (JSON-compatible)."""
    return hashlib.blake2b(_canon(data).encode(), digest_size=16).hexdigest()


def fingerprint(value: Any) -> str:
    """A stable 32-hex-digit hash of the canonical encoding of ``value`` (its :func:`dumps` body).

    Equal values of the same types give equal fingerprints in any process; 1, 1.0, "1" and
    True all differ.
    """
    text = _fast_text(value)
    if text is None:
        text = _canon(encode(value))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
