"""Hypothesis strategies for stored rows: values of every kind the codec knows, and hostile JSON."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import pathlib
from typing import Any, NamedTuple

import numpy as np
import pydantic
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@dataclasses.dataclass
class Item:
    name: str
    qty: int = 0


class Shape(pydantic.BaseModel):
    kind: str
    sides: int


class Tone(enum.Enum):
    LOW = "low"
    HIGH = ("high", 2)


class Spot(NamedTuple):
    x: int
    y: int


SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=8)
    | st.binary(max_size=8)
    | st.binary(max_size=4).map(bytearray)
    | st.datetimes(timezones=st.none() | st.just(dt.timezone.utc))
    | st.dates()
    | st.times()
    | st.timedeltas()
    | st.decimals(allow_nan=False, allow_infinity=True, places=None)
    | st.uuids()
    | st.sampled_from(
        [pathlib.PurePosixPath("/etc/x"), pathlib.PureWindowsPath("C:\\x"), pathlib.Path("a/b")]
    )
    | st.sampled_from(list(Tone))
    | st.integers(-100, 100).map(np.int16)
    | st.floats(width=32).map(np.float32)
    | hnp.arrays(
        st.sampled_from([np.int32, np.float64, np.bool_, np.dtype("<U3"), np.dtype("datetime64[D]")]),
        hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
    )
)
KEYS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4) | st.sampled_from(list(Tone)),
    lambda inner: (
        st.tuples(inner, inner)
        | st.frozensets(inner, max_size=2)
        | st.builds(Spot, st.integers(), st.integers())
    ),
    max_leaves=4,
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=4), inner, max_size=3)
        | st.dictionaries(KEYS, inner, max_size=3)
        | st.sets(KEYS, max_size=3)
        | st.builds(Item, st.text(max_size=4), st.integers())
        | st.builds(Shape, kind=st.text(max_size=4), sides=st.integers())
        | st.builds(Spot, st.integers(), st.integers())
    ),
    max_leaves=10,
)
"""Values of every kind the codec stores."""

TAGS = ["int", "float", "tuple", "dict", "set", "frozenset", "bytes", "bytearray", "datetime", "date"]
TAGS += ["time", "timedelta", "decimal", "uuid", "path", "ndarray", "npscalar", "dataclass", "pydantic"]
TAGS += ["enum", "namedtuple", "nope"]
TYPE_NAMES = [
    "pydantic._internal._decorators:PydanticDescriptorProxy",
    "pydantic.main:BaseModel",
    "os:system",
    "builtins:eval",
    "subprocess:Popen",
    f"{__name__}:Item",
    f"{__name__}:Shape",
    f"{__name__}:Tone",
    f"{__name__}:Spot",
    "collections:OrderedDict",
]
FIELDS = ["$t", "v", "type", "cls", "dtype", "shape", "static", "output", "path", "picks", "template"]
FIELDS += ["struct", "items", "agree", "guarded", "param", "form", "params", "outputs", "text", "key", "data"]
GARBAGE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)
TAGGED = st.fixed_dictionaries(
    {"$t": st.sampled_from(TAGS)},
    optional={
        "v": GARBAGE,
        "type": st.sampled_from(TYPE_NAMES) | st.text(max_size=12),
        "cls": st.sampled_from(["WindowsPath", "PosixPath", "PurePath", "__class__"]) | st.text(max_size=6),
        "dtype": st.sampled_from(["<f8", "(1,", "|O", "f8,i4", "<U0", "[('a','<f8')]"]) | GARBAGE,
        "shape": GARBAGE,
    },
)
HOSTILE = st.recursive(
    GARBAGE | TAGGED,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=2),
    max_leaves=6,
)
"""JSON an attacker might write in place of any part of a record."""


def mutated(record: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """``record`` with one to three parts (at random depths) replaced by hostile JSON."""
    for _ in range(data.draw(st.integers(1, 3), label="mutations")):
        node: Any = record
        while True:
            children = list(node) if isinstance(node, dict) else list(range(len(node)))
            if not children:
                break
            at = data.draw(st.sampled_from(children), label="at")
            child = node[at]
            if isinstance(child, dict | list) and child and data.draw(st.booleans(), label="deeper"):
                node = child
                continue
            node[at] = data.draw(HOSTILE, label="hostile")
            break
    return record
