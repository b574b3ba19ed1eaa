"""Safe, versioned serialization of tool arguments, outputs and Check snapshots (work in progress).

JSON primitives, lists and string-keyed dicts encode as themselves; other values use tagged
objects ``{"$t": tag, "v": payload}``. Never uses pickle or eval.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

VERSION = 1
TAG = "$t"
T = TypeVar("T")


class CodecError(ValueError):
    """A value cannot be encoded or decoded."""


class Secret(Generic[T]):
    """A value that must never be stored or logged."""

    __slots__ = ("_value",)

    def __init__(self, value: T) -> None:
        self._value = value

    def get(self) -> T:
        return self._value

    def __repr__(self) -> str:
        return "Secret('********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and bool(self._value == other._value)

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass(frozen=True)
class Opaque:
    """A decoded instance of a class that could not be resolved."""

    kind: str
    type: str
    data: Any


def encode(value: Any) -> Any:
    """The JSON-compatible form of ``value``."""
    if value is None or type(value) in (str, int, float, bool):
        return value
    if type(value) is list:
        return [encode(v) for v in value]
    if type(value) is tuple:
        return {TAG: "tuple", "v": [encode(v) for v in value]}
    if type(value) is dict:
        if all(type(k) is str for k in value) and TAG not in value:
            return {k: encode(v) for k, v in value.items()}
        return {TAG: "dict", "v": [[encode(k), encode(v)] for k, v in value.items()]}
    if isinstance(value, Secret):
        raise CodecError("secret values are never stored")
    raise CodecError(f"cannot encode {type(value)}")


def decode(data: Any) -> Any:
    """The value whose encoding is ``data``."""
    if type(data) is list:
        return [decode(v) for v in data]
    if type(data) is dict:
        if TAG not in data:
            return {k: decode(v) for k, v in data.items()}
        if data[TAG] == "tuple":
            return tuple(decode(v) for v in data["v"])
        if data[TAG] == "dict":
            return {decode(k): decode(v) for k, v in data["v"]}
        raise CodecError(f"unknown tag {data[TAG]!r}")
    return data


def dumps(value: Any) -> str:
    """Compact canonical JSON of ``value`` with a codec version header."""
    return json.dumps({"$codec": VERSION, "v": encode(value)}, sort_keys=True, separators=(",", ":"))


def loads(text: str) -> Any:
    """The value serialized by :func:`dumps`."""
    doc = json.loads(text)
    if doc.get("$codec") != VERSION:
        raise CodecError(f"unsupported codec version {doc.get('$codec')!r}")
    return decode(doc["v"])


def fingerprint(value: Any) -> str:
    """A short stable hash of the canonical encoding of ``value``."""
    text = json.dumps(encode(value), sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
