"""The codec's ground: its version, tag and bounds, its errors, the values it wraps, the canonical text, and the classes decoding may rebuild.

:mod:`muscle_mem.model.codec` describes the format; encoding, decoding and the rebuilding of classes
build on this module.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import pathlib
import uuid
from typing import Any, Generic, TypeVar

from muscle_mem.errors import MuscleMemError

VERSION = 1

TAG = "$t"

MAX_DEPTH = 100
"""How deeply values may nest (containers and class instances), encoded or decoded."""

MAX_ITEMS = 1_000_000
"""The most items (or fields) one container may hold, encoded or decoded."""

MAX_SAME_HASH = 8
"""The most keys of one decoded dict (or items of one set) that may share a hash: more is hash flooding."""

PATHS: dict[str, type[pathlib.PurePath]] = {
    c.__name__: c
    for c in (pathlib.PurePosixPath, pathlib.PureWindowsPath, pathlib.PosixPath, pathlib.WindowsPath)
}

T = TypeVar("T")


class CodecError(MuscleMemError, ValueError):
    """A value cannot be encoded, or data cannot be decoded; the message says where."""


class Fail(Exception):
    """Internal error collecting the path to the offending part, innermost segment first."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


def public_error(exc: Fail) -> CodecError:
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


canon = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False).encode


def canonical(data: Any) -> str:
    """The canonical JSON text of encoded data (sorted keys, no spaces, ASCII): what :func:`digest` hashes."""
    return canon(data)


def type_name(cls: type) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


ALLOWED: dict[str, type] = {}
"""The classes decoding rebuilds, by type name: those this process encoded, and those :func:`allow` ed."""

_NAMES: dict[type, str] = {}


def known(cls: type) -> str:
    """The type name of a class being encoded; decoding may rebuild its instances from now on."""
    name = _NAMES.get(cls)
    if name is None:
        name = _NAMES[cls] = type_name(cls)
        ALLOWED[name] = cls  # the latest class of a name wins, as a module's attribute would
    return name


@functools.lru_cache(maxsize=512)
def dataclass_layout(cls: Any) -> tuple[str, tuple[str, ...], str, tuple[tuple[str, str], ...]]:
    """Type name and field names, plus the canonical text prefix and sorted fields for fingerprints."""
    name, fields = known(cls), tuple(f.name for f in dataclasses.fields(cls))
    prefix = f'{{"$t":"dataclass","type":{canon(name)},"v":{{'
    return name, fields, prefix, tuple((f, canon(f) + ":") for f in sorted(fields))


def deeper(depth: int, size: int) -> int:
    """The depth of a container's items; refuses a container too deep or too large."""
    if depth >= MAX_DEPTH:
        raise Fail(f"a value that contains itself or is nested more than {MAX_DEPTH} deep")
    if size > MAX_ITEMS:
        raise Fail(f"{size:,} items in one container (at most {MAX_ITEMS:,})")
    return depth + 1
