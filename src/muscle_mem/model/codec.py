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
* A :class:`Captured` Check snapshot (an object the codec has no form for, such as a tensor or an
  image) is ``{"$t": "captured", "v": <its stored form>}``, or, with no stored form, a reference to
  the object kept in this process (``"local"``): a store that writes records elsewhere refuses
  that (:func:`portable`).

Sets and pair-form dicts are sorted by the canonical JSON of their encoded elements, so equal
values encode identically whatever their order; :func:`dumps` writes that canonical JSON with
sorted keys under a ``{"$codec": VERSION}`` header and :func:`fingerprint` hashes the body. Changing
how a type encodes changes fingerprints and needs a new ``VERSION``.

Decoding is inert: it imports nothing, evaluates nothing and runs no code of the application's
classes (no ``__init__``, ``__post_init__``, validator, ``model_post_init``, ``__hash__`` or
``__eq__``). A class is rebuilt only if this process has encoded one of its instances or the
application allowed it (:func:`allow`, ``Engine(types=...)``), and then without running its code:
a dataclass by ``object.__new__`` and its fields, a pydantic model as ``model_construct`` would
without the post-init, an enum by looking its value up, a named tuple by ``tuple.__new__``; a field
whose value is not of its declared type, or a dict key or set item of a class that hashes with its
own code, keeps the value an :class:`Opaque`, as does any other class. A concrete path of another
system (a Windows worker's ``WindowsPath``) decodes as its pure path. The work is bounded:
:data:`MAX_DEPTH` levels, :data:`MAX_ITEMS` per container, and no more than :data:`MAX_SAME_HASH`
keys of one dict (items of one set) with the same hash. Aware datetimes come back with a
fixed-offset ``timezone`` (equal instants, not necessarily the same ``tzinfo`` object). No pickle,
no eval, ever.
"""

from __future__ import annotations

import base64
import collections
import contextlib
import contextvars
import dataclasses
import datetime as dt
import enum
import functools
import hashlib
import json
import logging
import math
import os
import pathlib
import re
import sys
import threading
import types
import typing
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from decimal import Decimal
from typing import Any, Generic, TypeVar

from muscle_mem.errors import MuscleMemError

log = logging.getLogger(__name__)

VERSION = 1
TAG = "$t"
_SAFE_INT = 2**53
MAX_DEPTH = 100
"""How deeply values may nest (containers and class instances), encoded or decoded."""
MAX_ITEMS = 1_000_000
"""The most items (or fields) one container may hold, encoded or decoded."""
MAX_SAME_HASH = 8
"""The most keys of one decoded dict (or items of one set) that may share a hash: more is hash flooding."""
_PLAIN_KEYS = frozenset({str, int, float, bool, type(None)})
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
    path = exc.path[::-1]
    where = "".join(path[:8]) + ("..." if len(path) > 8 else "")
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
    """A decoded instance of a class decoding may not rebuild (or that no longer fits its data).

    It equals only an identical Opaque and encodes back to the data it was decoded from.
    """

    kind: str
    type_name: str
    data: Any

    def __hash__(self) -> int:
        return hash(fingerprint(self))


class Captured:
    """A Check's snapshot of a kind the codec has no form for (a tensor, an image): the object itself,
    and the data stored for it (None: it has none, and is kept only in this process).

    It is not copied when recorded (the captured object is kept as it is); decoded from a store, its
    ``value`` is None and ``data`` is the stored form.
    """

    __slots__ = ("data", "token", "value")

    def __init__(self, value: Any, data: Any) -> None:
        self.value = value
        self.data = data
        self.token = uuid.uuid4().hex
        """What names the object among this process's snapshots when it has no stored form."""

    def __deepcopy__(self, memo: dict[int, Any]) -> Captured:
        return self

    def __repr__(self) -> str:
        kind = type(self.value).__name__ if self.value is not None else "stored"
        return f"Captured({kind}, stored={self.data is not None})"


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
        return {TAG: "captured", "v": _step(v.data, _deeper(depth, 1), ".data")}
    if _PORTABLE.get():
        raise _Fail(
            f"a Check snapshot of type {_type_name(type(v.value))} has no stored form, so only a memory "
            "store keeps it: give the Check encode= and decode= (or capture data, an array or an image)"
        )
    return {TAG: "captured", "local": v.token}


def _dec_captured(d: dict[str, Any], depth: int, key: bool) -> Captured:
    """A stored snapshot's data; one kept by another process only decodes to nothing to compare."""
    return Captured(None, _at(_dec, d["v"], _deeper(depth, 1), key, ".data") if "v" in d else None)


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


_canon = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False).encode
_quoted = json.encoder.encode_basestring_ascii
"""The JSON of a ``str`` as :data:`_canon` writes it (ASCII, escaped), without the encoder's overhead."""


def canonical(data: Any) -> str:
    """The canonical JSON text of encoded data (sorted keys, no spaces, ASCII): what :func:`digest` hashes."""
    return _canon(data)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _type_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


_ALLOWED: dict[str, type] = {}
"""The classes decoding rebuilds, by type name: those this process encoded, and those :func:`allow` ed."""
_NAMES: dict[type, str] = {}


def _known(cls: type) -> str:
    """The type name of a class being encoded; decoding may rebuild its instances from now on."""
    name = _NAMES.get(cls)
    if name is None:
        name = _NAMES[cls] = _type_name(cls)
        _ALLOWED[name] = cls  # the latest class of a name wins, as a module's attribute would
    return name


@functools.lru_cache(maxsize=512)
def _dataclass_layout(cls: Any) -> tuple[str, tuple[str, ...], str, tuple[tuple[str, str], ...]]:
    """Type name and field names, plus the canonical text prefix and sorted fields for fingerprints."""
    name, fields = _known(cls), tuple(f.name for f in dataclasses.fields(cls))
    prefix = f'{{"$t":"dataclass","type":{_canon(name)},"v":{{'
    return name, fields, prefix, tuple((f, _canon(f) + ":") for f in sorted(fields))


def _deeper(depth: int, size: int) -> int:
    """The depth of a container's items; refuses a container too deep or too large."""
    if depth >= MAX_DEPTH:
        raise _Fail(f"a value that contains itself or is nested more than {MAX_DEPTH} deep")
    if size > MAX_ITEMS:
        raise _Fail(f"{size:,} items in one container (at most {MAX_ITEMS:,})")
    return depth + 1


# ---------------------------------------------------------------- encoding


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
    except _Fail as exc:
        exc.path.append(where)
        raise


def _blame(exc: _Fail, parts: Iterable[tuple[str, Any]], depth: int) -> None:
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
            except _Fail:
                exc.path.append(where)
                return
    finally:
        _blaming.on = False


_blaming = threading.local()


def _enc_items(values: Sequence[Any], depth: int) -> list[Any]:
    if depth >= MAX_DEPTH or len(values) > MAX_ITEMS:
        _deeper(depth, len(values))
    depth += 1
    try:
        return [_enc(item, depth) for item in values]
    except _Fail as exc:
        _blame(exc, ((f"[{i}]", item) for i, item in enumerate(values)), depth)
        raise


def _enc_attrs(pairs: Sequence[tuple[str, Any]], depth: int) -> dict[str, Any]:
    if depth >= MAX_DEPTH or len(pairs) > MAX_ITEMS:
        _deeper(depth, len(pairs))
    depth += 1
    try:
        return {name: _enc(item, depth) for name, item in pairs}
    except _Fail as exc:
        _blame(exc, ((f".{name}", item) for name, item in pairs), depth)
        raise


def _enc_dict(v: dict[Any, Any], depth: int) -> Any:
    if depth >= MAX_DEPTH or len(v) > MAX_ITEMS:
        _deeper(depth, len(v))
    depth += 1
    try:
        if TAG not in v and all(type(k) is str for k in v):
            return {k: _enc(item, depth) for k, item in v.items()}
        pairs = [[_enc(k, depth), _enc(item, depth)] for k, item in v.items()]
    except _Fail as exc:
        _blame(
            exc, ((w, x) for k, item in v.items() for w, x in (("<dict key>", k), (f"[{k!r}]", item))), depth
        )
        raise
    pairs.sort(key=lambda p: _canon(p[0]))
    return {TAG: "dict", "v": pairs}


def _enc_set(v: set[Any] | frozenset[Any], depth: int) -> Any:
    if depth >= MAX_DEPTH or len(v) > MAX_ITEMS:
        _deeper(depth, len(v))
    depth += 1
    try:
        items = [_enc(item, depth) for item in v]
    except _Fail as exc:
        exc.path.append("<set item>")
        raise
    items.sort(key=_canon)
    return {TAG: type(v).__name__, "v": items}


def _enc_numpy(v: Any, np: Any, depth: int) -> Any:
    if v.dtype.hasobject:
        raise _Fail(f"cannot encode numpy data of dtype {v.dtype} (object dtypes are refused)")
    descr = _enc(np.lib.format.dtype_to_descr(v.dtype), depth)
    if isinstance(v, np.ndarray):
        return {TAG: "ndarray", "dtype": descr, "shape": list(v.shape), "v": _b64(v.tobytes())}
    return {TAG: "npscalar", "dtype": descr, "v": _b64(v.tobytes())}


def _enc_object(v: Any, depth: int) -> Any:
    """Encode the values not dispatched by exact type: classes, numpy, Secret, Opaque."""
    cls: type = type(v)
    if isinstance(v, Secret):
        raise _Fail("secret values are never stored")
    if hasattr(cls, "__dataclass_fields__") and cls is not Opaque:
        name, fields, _, _ = _dataclass_layout(cls)
        return {TAG: "dataclass", "type": name, "v": _enc_attrs([(f, getattr(v, f)) for f in fields], depth)}
    if isinstance(v, enum.Enum):
        return {TAG: "enum", "type": _known(cls), "v": _step(v.value, _deeper(depth, 1), ".value")}
    if isinstance(v, tuple) and hasattr(cls, "_fields"):
        return {TAG: "namedtuple", "type": _known(cls), "v": _enc_items(v, depth)}
    if isinstance(v, Opaque):
        return {TAG: v.kind, "type": v.type_name, "v": _enc(v.data, depth)}
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and isinstance(v, pydantic.BaseModel):
        attrs: list[tuple[str, Any]] = [
            (n, getattr(v, n)) for n in type(v).model_fields
        ]  # nested keep their class
        attrs += list((v.model_extra or {}).items())
        return {TAG: "pydantic", "type": _known(cls), "v": _enc_attrs(attrs, depth)}
    np = sys.modules.get("numpy")
    if np is not None and (cls is np.ndarray or isinstance(v, np.generic)):
        return _enc_numpy(v, np, depth)
    if isinstance(v, str):
        return str(v)  # another str subclass (LangChain's TextAccessor): the text it holds
    raise _Fail(f"cannot encode {cls}")


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
    **{c: lambda v, depth: {TAG: "path", "cls": type(v).__name__, "v": str(v)} for c in _PATHS.values()},
    Captured: _enc_captured,
}


def encode(value: Any) -> Any:
    """The JSON-compatible data of ``value`` (raises :class:`CodecError` if it cannot be stored)."""
    try:
        return _enc(value, 0)
    except _Fail as exc:
        raise _public(exc) from None
    except RecursionError:
        raise CodecError("cannot encode a value that contains itself or is nested too deeply") from None


# ---------------------------------------------------------------- decoding


def _dec(d: Any, depth: int, key: bool) -> Any:
    """The value of data ``d`` at ``depth``; ``key``: it is (inside) a dict key or a set item."""
    t = type(d)
    if t is str or t is int or t is float or t is bool or d is None:
        return d
    if t is list:
        return _dec_items(d, depth, key)
    if t is not dict:
        raise _Fail(f"not JSON data: {t}")
    tag = d.get(TAG)
    if tag is None:
        inner = _deeper(depth, len(d))
        return {k: _at(_dec, item, inner, key, "[{!r}]", k) for k, item in d.items()}
    f = _DECODERS.get(tag) if type(tag) is str else None
    if f is None:
        raise _Fail(f"unknown tag {tag!r}")
    try:
        return f(d, depth, key)
    except _Fail:
        raise
    except Exception as exc:  # whatever malformed data raises, it is this value that is refused
        raise _Fail(f"malformed {tag!r} data ({type(exc).__name__}: {exc})") from None


def _at(
    func: Callable[[Any, int, bool], Any], data: Any, depth: int, key: bool, where: str, name: Any = None
) -> Any:
    """``func(data, depth, key)``, adding ``where.format(name)`` to the path of a failure inside it."""
    try:
        return func(data, depth, key)
    except _Fail as exc:
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
    inner = _deeper(depth, len(items))
    return [_at(_dec, item, inner, key, "[{}]", i) for i, item in enumerate(items)]


def _shown(key: Any, index: int) -> str:
    """How a failure's path names a decoded dict key (never by running a class's ``__repr__``)."""
    return f"[{key!r}]" if type(key) in _PLAIN_KEYS else f"[<key {index}>]"


def _dec_dict(d: dict[str, Any], depth: int, key: bool) -> dict[Any, Any]:
    pairs = _list(d["v"])
    inner = _deeper(depth, len(pairs))
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
    inner = _deeper(depth, len(items))
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
            raise _Fail(f"{worst} keys share one hash (refused as hash flooding)")


def _dec_attrs(data: Any, depth: int, key: bool) -> dict[str, Any]:
    if type(data) is not dict:
        raise TypeError("fields must be a JSON object")
    inner = _deeper(depth, len(data))
    return {name: _at(_dec, item, inner, key, ".{}", name) for name, item in data.items()}


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

    dtype = np.lib.format.descr_to_dtype(_dtype_descr(_dec(d["dtype"], _deeper(depth, 1), False)))
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


_DECODED_PATHS = {name: _local_path(cls) for name, cls in _PATHS.items()}


def _timedelta(data: Any) -> dt.timedelta:
    if type(data) is not list or len(data) != 3 or any(type(n) is not int for n in data):
        raise TypeError("a timedelta is [days, seconds, microseconds]")
    return dt.timedelta(*data)


# -- classes: rebuilt only if allowed, never by running their code


def _is_model(cls: type) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and issubclass(cls, pydantic.BaseModel) and cls is not pydantic.BaseModel


_KINDS: dict[str, Callable[[type], bool]] = {
    "dataclass": dataclasses.is_dataclass,
    "pydantic": _is_model,
    "enum": lambda cls: issubclass(cls, enum.Enum),
    "namedtuple": lambda cls: issubclass(cls, tuple) and hasattr(cls, "_fields"),
}


def allow(types: Iterable[type]) -> None:
    """Let decoding rebuild instances of these classes (dataclasses, pydantic models, enums, named tuples).

    Decoding rebuilds the classes this process has encoded and those allowed here; any other class
    stays an :class:`Opaque`. Raises TypeError for anything else.
    """
    for cls in types:
        if not isinstance(cls, type) or not any(check(cls) for check in _KINDS.values()):
            raise TypeError(f"types= takes dataclasses, pydantic models, enums and named tuples, not {cls!r}")
        _known(cls)


def _hash_safe(cls: type) -> bool:
    """Whether hashing and comparing an instance runs only Python's own code (no method of the class)."""
    return all(_builtin(getattr(cls, name, None)) for name in ("__hash__", "__eq__"))


def _builtin(method: Any) -> bool:
    return method is enum.Enum.__hash__ or (method is not None and not isinstance(method, types.FunctionType))


@functools.lru_cache(maxsize=512)
def _settable(cls: type, names: tuple[str, ...]) -> bool:
    """Whether setting these fields stores them, running no descriptor of the class (a property, ...)."""
    for name in names:
        attr = next((vars(base)[name] for base in cls.__mro__ if name in vars(base)), None)
        if hasattr(type(attr), "__set__") and not isinstance(attr, types.MemberDescriptorType):
            return False
    return True


def _build_dataclass(cls: Any, data: dict[str, Any], raw: Any) -> Any:
    _, names, _, _ = _dataclass_layout(cls)
    if set(names) != data.keys():
        raise TypeError("fields differ")
    if not _settable(cls, names):
        raise TypeError("a field is a descriptor")
    for f in dataclasses.fields(cls):
        if not _fits(data[f.name], f.type):
            raise TypeError(f"field {f.name!r} is not a {f.type!r}")
    obj = object.__new__(cls)
    for name in names:
        object.__setattr__(obj, name, data[name])
    return obj


def _build_model(cls: Any, data: dict[str, Any], raw: Any) -> Any:
    if cls.__pydantic_post_init__:
        raise TypeError("its model_post_init would run (a custom one, or private attributes)")
    fields = cls.model_fields
    missing = sorted(fields.keys() - data.keys())
    if missing:
        raise TypeError(f"fields {missing} are missing")
    extra = {k: v for k, v in data.items() if k not in fields}
    allow_extra = cls.model_config.get("extra") == "allow"
    if extra and not allow_extra:
        raise TypeError(f"fields {sorted(extra)} are unknown")
    for name, info in fields.items():
        if not _fits(data[name], info.annotation):
            raise TypeError(f"field {name!r} is not a {info.annotation!r}")
    obj = object.__new__(cls)
    object.__setattr__(obj, "__dict__", {name: data[name] for name in fields})
    object.__setattr__(obj, "__pydantic_fields_set__", set(fields))
    if not cls.__pydantic_root_model__:
        object.__setattr__(obj, "__pydantic_extra__", extra if allow_extra else None)
        object.__setattr__(obj, "__pydantic_private__", None)
    return obj


@functools.lru_cache(maxsize=512)
def _members(cls: type[enum.Enum]) -> dict[str, enum.Enum]:
    """An enum's members by the canonical text of their encoded values."""
    found: dict[str, enum.Enum] = {}
    for member in cls.__members__.values():
        try:
            found.setdefault(_canon(_enc(member.value, 0)), member)
        except (_Fail, ValueError, RecursionError):
            continue
    return found


def _build_enum(cls: Any, value: Any, raw: Any) -> Any:
    member = _members(cls).get(_canon(raw))
    if member is not None:
        return member
    if issubclass(cls, enum.Flag) and type(value) is int and _stdlib_flag(cls):
        combined = cls(value)  # a combination of flags: made by the enum module alone
        if isinstance(combined, cls):
            return combined
    raise ValueError(f"{value!r} is not a value of {cls.__qualname__}")


def _stdlib_flag(cls: Any) -> bool:
    """Whether a flag enum makes combinations with the enum module's code only (no ``__new__`` of its own)."""
    own_missing = getattr(cls._missing_, "__func__", None) is not getattr(
        enum.Flag._missing_, "__func__", None
    )
    return not own_missing and getattr(cls, "__new_member__", None) is None


def _build_namedtuple(cls: Any, values: list[Any], raw: Any) -> Any:
    if len(values) != len(cls._fields):
        raise TypeError("fields differ")
    return tuple.__new__(cls, values)


_BUILDERS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "dataclass": _build_dataclass,
    "pydantic": _build_model,
    "enum": _build_enum,
    "namedtuple": _build_namedtuple,
}


def _fits(value: Any, hint: Any, depth: int = 0) -> bool:
    """Whether a decoded field value is of its declared type, as far as that is told without evaluating.

    A text annotation (not evaluated), a type variable or a form ``isinstance`` cannot check fits.
    """
    if (
        depth > 8
        or hint is Any
        or hint is object
        or isinstance(hint, (str, typing.ForwardRef, typing.TypeVar))
    ):
        return True
    if hint is None or hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Annotated:
        return _fits(value, args[0], depth + 1)
    if origin is typing.Union or origin is types.UnionType:
        return any(_fits(value, arg, depth + 1) for arg in args)
    if origin is typing.Literal:
        return any(type(value) is type(arg) and value == arg for arg in args)
    target = hint if origin is None else origin
    if target is float:
        return isinstance(value, int | float)
    if not isinstance(target, type):
        return True
    try:
        if not isinstance(value, target):
            return False
    except TypeError:  # a protocol that is not runtime-checkable, ...
        return True
    return _items_fit(value, args, depth + 1)


def _items_fit(value: Any, args: tuple[Any, ...], depth: int) -> bool:
    if not args:
        return True
    if isinstance(value, list | set | frozenset) and len(args) == 1:
        return all(_fits(item, args[0], depth) for item in value)
    if isinstance(value, dict) and len(args) == 2:
        return all(_fits(k, args[0], depth) and _fits(v, args[1], depth) for k, v in value.items())
    if type(value) is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_fits(item, args[0], depth) for item in value)
        return len(args) == len(value) and all(_fits(v, a, depth) for v, a in zip(value, args, strict=True))
    return True


def _dec_class(d: dict[str, Any], depth: int, key: bool) -> Any:
    kind, name, raw = d[TAG], _text(d["type"]), d["v"]
    if kind == "namedtuple":
        data: Any = _dec_items(raw, depth, key)
    elif kind == "enum":
        data = _at(_dec, raw, _deeper(depth, 1), key, ".value")
    else:
        data = _dec_attrs(raw, depth, key)
    cls = _ALLOWED.get(name)
    if cls is None:
        why = "its class is not one this process encoded or allows (Engine(types=...))"
    elif not _KINDS[kind](cls):
        why = f"{name} is not a {kind}"
    elif key and not _hash_safe(cls):
        why = "it is a dict key or a set item, and its class hashes or compares with its own code"
    else:
        try:
            return _BUILDERS[kind](cls, data, raw)
        except Exception as exc:
            why = f"it no longer fits its class ({type(exc).__name__}: {exc})"
    log.debug("a %s %s decodes as Opaque: %s", kind, name, why)
    return Opaque(kind, name, data)


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
    **{kind: _dec_class for kind in _KINDS},
}


def decode(data: Any) -> Any:
    """The value whose :func:`encode` is ``data`` (raises :class:`CodecError` on malformed data).

    Inert: it imports nothing, evaluates nothing and runs no method of an application's class.
    """
    try:
        return _dec(data, 0, False)
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
    """``_canon(encode(value))`` for a scalar or a small tuple, dict or dataclass of scalars, else None."""
    text = scalar_text(value)
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


_BLAKE2B_16 = hashlib.blake2b(digest_size=16)
"""Never updated: copied, it hashes a text in half the time a new hash takes to be made."""


def hash_text(text: str) -> str:
    """The 32-hex-digit BLAKE2b hash of a text's UTF-8 bytes (the hash of fingerprints and digests)."""
    fresh = _BLAKE2B_16.copy()
    fresh.update(text.encode())
    return fresh.hexdigest()


def digest(data: Any) -> str:
    """The hash :func:`fingerprint` gives, for data that is already encoded (JSON-compatible)."""
    return hash_text(_canon(data))


def fingerprint(value: Any) -> str:
    """A stable 32-hex-digit hash of the canonical encoding of ``value`` (its :func:`dumps` body).

    Equal values of the same types give equal fingerprints in any process; 1, 1.0, "1" and
    True all differ.
    """
    text = _fast_text(value)
    if text is None:
        text = _canon(encode(value))
    return hash_text(text)
