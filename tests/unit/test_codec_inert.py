"""Decoding is inert: it runs no code of the application's classes, imports nothing, and its work is bounded."""

from __future__ import annotations

import dataclasses
import enum
import os
import pathlib
from typing import Any, NamedTuple

import numpy as np
import pydantic
import pytest

from hostile_rows import audited
from muscle_mem.model import _codec_format, _encoding, codec
from muscle_mem.model.codec import CodecError, Opaque, decode, encode

RAN: list[str] = []
"""What application code ran (it must not, while decoding)."""


@dataclasses.dataclass
class Order:
    id: int
    note: str = ""

    def __post_init__(self) -> None:
        RAN.append("Order.__post_init__")


class Ticket(pydantic.BaseModel):
    id: int
    module: pydantic.ImportString[Any] | None = None

    @pydantic.field_validator("id")
    @classmethod
    def _count(cls, value: int) -> int:
        RAN.append("Ticket validator")
        return value

    @pydantic.model_validator(mode="after")
    def _after(self) -> Ticket:
        RAN.append("Ticket model validator")
        return self


class Initialised(pydantic.BaseModel):
    id: int

    def model_post_init(self, context: Any, /) -> None:
        RAN.append("Initialised.model_post_init")


class Hashed:
    """Not a codec kind: stands for a class whose own ``__hash__`` must never see stored data."""


@dataclasses.dataclass(frozen=True)
class Key:
    name: str

    def __hash__(self) -> int:
        RAN.append("Key.__hash__")
        return hash(self.name)


class Pair(NamedTuple):
    a: int
    b: str


class Color(enum.Enum):
    RED = "red"
    BLUE = ("b", 1)


class Perm(enum.Flag):
    R = 1
    W = 2


class Never(pydantic.BaseModel):
    """Defined, never encoded, never allowed."""

    x: int


def _fresh_run() -> None:
    RAN.clear()


def test_decoding_runs_no_init_post_init_or_validator() -> None:
    """A dataclass is rebuilt without ``__init__``/``__post_init__``; a pydantic model without validators."""
    order, ticket = Order(1, "x"), Ticket(id=7)
    data = encode([order, ticket])
    _fresh_run()
    with audited() as seen:
        back = decode(data)
    assert back == [order, ticket] and RAN == [] and seen == []
    assert type(back[0]) is Order and type(back[1]) is Ticket


def test_an_import_string_field_imports_nothing() -> None:
    """A stored text in a pydantic ``ImportString`` field stays a text: no module is imported or run."""
    encode(Ticket(id=1))
    data = {"$t": "pydantic", "type": f"{__name__}:Ticket", "v": {"id": 1, "module": "antigravity"}}
    _fresh_run()
    with audited() as seen:
        back = decode(data)
    assert seen == [] and RAN == []
    assert type(back) is Ticket and back.module == "antigravity"


def test_a_model_with_its_own_post_init_stays_opaque() -> None:
    """A model whose ``model_post_init`` would run (its own, or private attributes) is not rebuilt."""
    data = encode(Initialised(id=1))
    _fresh_run()
    back = decode(data)
    assert isinstance(back, Opaque) and RAN == []


def test_only_encoded_or_allowed_classes_are_rebuilt() -> None:
    """A loaded class that this process never encoded nor allowed decodes as Opaque, until allowed."""
    data = {"$t": "pydantic", "type": f"{__name__}:Never", "v": {"x": 1}}
    assert isinstance(decode(data), Opaque)
    codec.allow([Never])
    assert decode(data) == Never(x=1)
    with pytest.raises(TypeError, match="types="):
        codec.allow([Hashed])
    with pytest.raises(TypeError, match="types="):
        codec.allow([pydantic.BaseModel])


@pytest.mark.parametrize(
    "name",
    [
        "pydantic._internal._decorators:PydanticDescriptorProxy",
        "pydantic.main:BaseModel",
        "os:_wrap_close",
        "builtins:object",
    ],
)
def test_a_loaded_class_named_by_a_row_stays_opaque(name: str) -> None:
    """Naming any class already loaded in the process (pydantic's own, the stdlib's) rebuilds nothing."""
    for kind in ("dataclass", "pydantic"):
        back = decode({"$t": kind, "type": name, "v": {"wrapped": "x", "decorator_info": 1, "shim": None}})
        assert isinstance(back, Opaque) and back.type_name == name


def test_a_field_of_another_type_keeps_the_value_opaque() -> None:
    """Without validation, a stored field not of its declared type is not passed off as the class."""
    data = encode(Ticket(id=3))
    data["v"]["id"] = "three"
    assert isinstance(decode(data), Opaque)
    data["v"]["id"] = 3
    data["v"]["extra"] = 1
    assert isinstance(decode(data), Opaque)


def test_a_set_item_of_a_class_with_its_own_hash_stays_opaque() -> None:
    """A stored set item or dict key is never hashed by the class's own ``__hash__``."""
    data = encode({Key("a"): 1, Pair(1, "x"): 2, Color.RED: 3})
    encode(frozenset({Key("b")}))
    _fresh_run()
    back = decode(data)
    assert RAN == []
    assert {type(k) for k in back} == {Opaque, Pair, Color}
    assert decode(encode(Key("a"))) == Key("a")  # a value, not a key: rebuilt


def test_enum_members_are_looked_up_and_flags_combined() -> None:
    """An enum decodes to its member by value (tuples too); a flag combination is made by the enum module."""
    assert decode(encode([Color.BLUE, Perm.R | Perm.W])) == [Color.BLUE, Perm.R | Perm.W]
    assert isinstance(decode({"$t": "enum", "type": f"{__name__}:Color", "v": "green"}), Opaque)


def test_a_windows_path_decodes_as_its_pure_path_here() -> None:
    """A Windows worker writes ``WindowsPath`` for an ordinary ``Path``: on POSIX it is a PureWindowsPath."""
    back = decode({"$t": "path", "cls": "WindowsPath", "v": "C:\\data\\in.txt"})
    posix = decode({"$t": "path", "cls": "PosixPath", "v": "/data/in.txt"})
    if os.name == "nt":
        assert type(back) is pathlib.WindowsPath and type(posix) is pathlib.PurePosixPath
    else:
        assert type(back) is pathlib.PureWindowsPath and type(posix) is pathlib.PosixPath
    assert back == pathlib.PureWindowsPath("C:/data/in.txt")


@pytest.mark.parametrize(
    "data",
    [
        {"$t": "npscalar", "dtype": "<f8", "v": ""},
        {"$t": "npscalar", "dtype": "<f8", "v": "AAAAAAAAAAAAAAAA"},
        {"$t": "ndarray", "dtype": "(1,", "shape": [1], "v": "AAAAAAAAAAA="},
        {"$t": "ndarray", "dtype": "f8, i4", "shape": [1], "v": "AAAAAAAAAAA="},
        {"$t": "ndarray", "dtype": "<f8", "shape": [2], "v": "AAAAAAAAAAA="},
        {"$t": "ndarray", "dtype": "<f8", "shape": [-1], "v": "AAAAAAAAAAA="},
        {"$t": "ndarray", "dtype": [["a", "<f8"]], "shape": [1], "v": "AAAAAAAAAAA="},
        {
            "$t": "ndarray",
            "dtype": [{"$t": "tuple", "v": [f"f{n}", "|b1"]} for n in range(1001)],
            "shape": [0],
            "v": "",
        },
        {"$t": "path", "cls": "WindowsPath", "v": 7},
        {"$t": "timedelta", "v": [1, 2]},
    ],
)
def test_malformed_numpy_and_other_values_are_refused_without_evaluating(data: Any) -> None:
    """An empty numpy scalar, a dtype text numpy would parse as code, a shape the data does not fill: refused."""
    with audited() as seen, pytest.raises(CodecError, match="malformed"):
        decode(data)
    assert seen == []


def test_structured_numpy_arrays_still_decode() -> None:
    array = np.array(
        [(1, 2.0, [[1, 2, 3], [4, 5, 6]])], dtype=[("a", "<i4"), ("b", "<f8"), ("c", "<i2", (2, 3))]
    )
    back = decode(encode(array))
    assert back.dtype == array.dtype and back.tobytes() == array.tobytes()


def test_keys_sharing_one_hash_are_refused_as_hash_flooding() -> None:
    """Many int keys with one hash (x, x + 2**61 - 1, ...) are refused, in a dict and in a set."""
    modulus = 2**61 - 1
    colliding = [1 + n * modulus for n in range(200)]
    assert len({hash(k) for k in colliding}) == 1
    for data in (
        {"$t": "dict", "v": [[encode(k), 0] for k in colliding]},
        {"$t": "set", "v": [encode(k) for k in colliding]},
    ):
        with pytest.raises(CodecError, match="hash flooding"):
            decode(data)
    assert decode(encode(set(colliding[: codec.MAX_SAME_HASH]))) == set(colliding[: codec.MAX_SAME_HASH])


def test_depth_and_size_are_bounded_alike_when_encoding_and_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value nested deeper than MAX_DEPTH, or a container larger than MAX_ITEMS, is neither stored nor read."""
    deep: Any = 0
    for _ in range(codec.MAX_DEPTH):
        deep = [deep]
    assert decode(encode(deep)) == deep
    with pytest.raises(CodecError, match="nested more than"):
        encode([deep])
    data: Any = 0
    for _ in range(codec.MAX_DEPTH + 1):
        data = [data]
    with pytest.raises(CodecError, match="nested more than"):
        decode(data)
    for module in (_codec_format, _encoding):  # the bound is read where it is checked
        monkeypatch.setattr(module, "MAX_ITEMS", 3)
    for big in ([1, 2, 3, 4], {"a": 1, "b": 2, "c": 3, "d": 4}, {1, 2, 3, 4}):
        with pytest.raises(CodecError, match="items in one container"):
            encode(big)
    with pytest.raises(CodecError, match="items in one container"):
        decode([1, 2, 3, 4])
