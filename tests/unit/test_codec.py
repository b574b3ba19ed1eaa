"""Tests for the safe, versioned codec."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import hashlib
import json
import math
import pathlib
import socket
import subprocess
import sys
import textwrap
import uuid
from decimal import Decimal
from typing import Any, NamedTuple

import numpy as np
import pydantic
import pytest
from hypothesis import given
from hypothesis import strategies as st

from muscle_mem.model.codec import CodecError, Opaque, Secret, decode, dumps, encode, fingerprint, loads


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Perm(enum.Flag):
    R = 1
    W = 2


class Point(NamedTuple):
    x: int
    y: float


@dataclasses.dataclass
class Address:
    street: str
    zip: int | None = None


@dataclasses.dataclass(frozen=True)
class User:
    name: str
    address: Address
    tags: tuple[str, ...] = ()
    derived: int = dataclasses.field(init=False, default=0)


@dataclasses.dataclass
class Counter:
    start: int
    seen: list[int] = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        self.seen = []


class Outer:
    @dataclasses.dataclass
    class Inner:
        value: int


class Account(pydantic.BaseModel):
    id: int
    email: str
    created: dt.datetime
    address: Address | None = None


class Team(pydantic.BaseModel):
    name: str
    members: list[Account]


def roundtrip(value: Any) -> Any:
    """Decode(encode(value)) through real JSON text, also checking dumps/loads."""
    data = json.loads(json.dumps(encode(value), allow_nan=False))
    back = decode(data)
    assert type(back) is type(value)
    assert type(loads(dumps(value))) is type(value)
    return back


SIMPLE = [
    None,
    True,
    False,
    0,
    -7,
    2**53,
    2**53 + 1,
    -(2**200),
    10**5000,
    0.0,
    -0.0,
    1.5,
    1e300,
    math.inf,
    -math.inf,
    "",
    "héllo \u2603 \ud800 \x00",
    [1, [2, [3]]],
    (),
    (1, "a", (2.5, None)),
    {"a": 1, "b": [True]},
    {1: "int", "1": "str", 1.5: "float", (1, 2): "tuple", None: "none", frozenset({1}): "fs"},
    {"$t": "tuple", "v": [1]},
    {"$codec": 1, "v": {"$t": "x"}},
    set(),
    {1, "a", (2, 3)},
    frozenset({"x", "y"}),
    b"\x00\xffbytes",
    bytearray(b"mutable"),
    dt.datetime(2024, 5, 17, 13, 45, 30, 123456),
    dt.datetime(2024, 5, 17, 13, 45, tzinfo=dt.timezone.utc),
    dt.datetime(2024, 5, 17, 13, 45, tzinfo=dt.timezone(dt.timedelta(hours=-3, minutes=-30))),
    dt.date(1999, 12, 31),
    dt.time(23, 59, 59, 999),
    dt.time(8, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    dt.timedelta(days=-3, seconds=5, microseconds=7),
    Decimal("1.10"),
    Decimal("-1E+30"),
    uuid.UUID("12345678-1234-5678-1234-567812345678"),
    pathlib.PurePosixPath("/etc/hosts"),
    pathlib.PureWindowsPath(r"C:\Users\me"),
    pathlib.Path("relative/file.txt"),
    Color.BLUE,
    Level.HIGH,
    Perm.R | Perm.W,
    Point(1, 2.5),
    Address("Main St", 12345),
    User("ann", Address("Elm"), ("a", "b")),
    Outer.Inner(3),
    Account(
        id=1, email="a@b.c", created=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), address=Address("x")
    ),
    Team(name="t", members=[Account(id=2, email="d@e.f", created=dt.datetime(2024, 1, 2))]),
    [{"deep": ({"er": {Color.RED: [Point(0, 0.0)]}},)}],
]


@pytest.mark.parametrize("value", SIMPLE, ids=lambda v: type(v).__name__)
def test_round_trip(value: Any) -> None:
    assert roundtrip(value) == value


def test_round_trip_keeps_nested_types_and_special_floats() -> None:
    back = roundtrip([1, 1.0, True, "1", (1,), [1], -0.0])
    assert [type(x) for x in back] == [int, float, bool, str, tuple, list, float]
    assert math.copysign(1, back[-1]) == -1
    assert math.isnan(roundtrip(math.nan))


def test_dataclass_non_init_fields_are_restored() -> None:
    user = User("bob", Address("Oak", 1))
    object.__setattr__(user, "derived", 42)
    assert roundtrip(user).derived == 42
    counter = Counter(5)
    counter.seen.extend([1, 2])
    assert roundtrip(counter).seen == [1, 2]


def test_pydantic_nested_models_are_rebuilt() -> None:
    team = Team(name="t", members=[Account(id=2, email="d@e.f", created=dt.datetime(2024, 1, 2))])
    back = roundtrip(team)
    assert isinstance(back.members[0], Account)
    assert back.members[0].created == dt.datetime(2024, 1, 2)


@pytest.mark.parametrize(
    "array",
    [
        np.arange(12, dtype=np.int32).reshape(3, 4),
        np.array([[1.5, np.nan], [np.inf, -0.0]]),
        np.asfortranarray(np.arange(6, dtype=">u2").reshape(2, 3)),
        np.zeros((0, 3), dtype=np.complex128),
        np.array(["ab", "cdé"]),
        np.array([True, False]),
        np.array(["2024-01-01"], dtype="datetime64[D]"),
        np.array([(1, 2.0)], dtype=[("a", "<i4"), ("b", "<f8")]),
        np.array(7.0),
    ],
    ids=lambda a: str(a.dtype),
)
def test_numpy_arrays(array: Any) -> None:
    back = roundtrip(array)
    assert back.dtype == array.dtype and back.shape == array.shape
    assert back.tobytes() == np.ascontiguousarray(array).tobytes()
    back[...] = array  # writable, not a view of the decoded buffer


@pytest.mark.parametrize(
    "scalar", [np.float64(1.25), np.int8(-3), np.bool_(True), np.str_("x"), np.datetime64("2024-01-01")]
)
def test_numpy_scalars(scalar: Any) -> None:
    assert roundtrip(scalar) == scalar


def test_numpy_object_dtype_is_refused() -> None:
    with pytest.raises(CodecError, match="object"):
        encode({"a": np.array([object()], dtype=object)})
    data = encode(np.zeros(2))
    data["dtype"] = "|O"
    with pytest.raises(CodecError, match="object dtypes are refused"):
        decode(data)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text() | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=4) | st.sampled_from(["$t", "v", "$codec"]), inner, max_size=4)
        | st.dictionaries(st.integers() | st.text(max_size=3), inner, max_size=4)
        | st.frozensets(st.integers() | st.text(max_size=3), max_size=4)
    ),
    max_leaves=20,
)


@given(JSONISH)
def test_round_trip_property(value: Any) -> None:
    assert decode(json.loads(json.dumps(encode(value)))) == value
    assert loads(dumps(value)) == value
    assert fingerprint(loads(dumps(value))) == fingerprint(value)


def test_user_tag_key_is_escaped() -> None:
    value = {"$t": "bytes", "v": "AAAA"}
    data = encode(value)
    assert data["$t"] == "dict"
    assert decode(data) == value and type(decode(data)["v"]) is str


def test_fingerprint_is_order_independent() -> None:
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1})
    assert fingerprint({1: "a", 2: "b"}) == fingerprint({2: "b", 1: "a"})
    assert fingerprint({"x", "y", "z", 3}) == fingerprint({3, "z", "y", "x"})
    assert dumps({"b": 1, "a": {2: 0, 1: 0}}) == dumps({"a": {1: 0, 2: 0}, "b": 1})


def test_fingerprint_distinguishes_types() -> None:
    values = [1, 1.0, "1", True, (1,), [1], {1}, frozenset({1}), b"1", Decimal(1), Level.LOW, None, "null"]
    prints = [fingerprint(v) for v in values]
    assert len(set(prints)) == len(values)
    assert all(len(p) == 32 and int(p, 16) >= 0 for p in prints)


@pytest.mark.parametrize(
    "value", ['a\u2603"', 5, -(2**53), 2**60, 2.5, math.inf, True, False, None, (1, "x")]
)
def test_fingerprint_hashes_the_canonical_json(value: Any) -> None:
    text = json.dumps(encode(value), sort_keys=True, separators=(",", ":"))
    assert fingerprint(value) == hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5)


@given(
    st.lists(SCALARS, max_size=20).map(tuple)
    | st.dictionaries(st.text(max_size=3) | st.just("$t"), SCALARS, max_size=20)
    | st.builds(Address, st.text(max_size=5), st.none() | st.integers())
    | st.builds(Point, st.integers(), SCALARS)
)
def test_fingerprint_fast_paths_match_the_canonical_json(value: Any) -> None:
    text = json.dumps(encode(value), sort_keys=True, separators=(",", ":"))
    assert fingerprint(value) == hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


def test_fingerprint_is_stable_across_processes() -> None:
    code = (
        "from muscle_mem.model.codec import fingerprint;"
        "print(fingerprint([{'b', 'a', 'c'}, {'y': 1, 'x': 2.5}, {(1, 'k'): b'v'}, frozenset({'q', 'r'})]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={"PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert outputs == {
        fingerprint([{"a", "b", "c"}, {"x": 2.5, "y": 1}, {(1, "k"): b"v"}, frozenset("rq")]) + "\n"
    }


def test_encode_error_names_type_and_path() -> None:
    sock = socket.socket()
    try:
        value = [0, {"user": User("ann", Address("x"))}]
        object.__setattr__(value[1]["user"].address, "street", sock)
        with pytest.raises(CodecError) as info:
            encode(value)
        assert str(info.value) == "at [1]['user'].address.street: cannot encode <class 'socket.socket'>"
        assert isinstance(info.value, ValueError)
        with pytest.raises(CodecError, match=r"^at \[2\]: cannot encode <class 'socket.socket'>$"):
            fingerprint((1, 2, sock))
        with pytest.raises(CodecError, match="<dict key>: cannot encode"):
            dumps({sock: 1})
    finally:
        sock.close()
    with pytest.raises(CodecError, match=r"^cannot encode <class 'object'>$"):
        encode(object())
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(CodecError, match="contains itself"):
        encode(loop)


def test_str_subclasses_are_stored_as_the_text_they_hold() -> None:
    class Name(str):
        pass

    assert encode(Name("x")) == "x" and type(decode(encode({"k": Name("x")}))["k"]) is str


def test_unknown_subclasses_of_other_builtins_are_refused() -> None:
    class Count(int):
        pass

    with pytest.raises(CodecError, match="Count"):
        encode(Count(3))


def test_decode_errors_name_the_path() -> None:
    with pytest.raises(CodecError, match=r"^at \['a'\]\[1\]: unknown tag 'nope'$"):
        decode({"a": [1, {"$t": "nope"}]})
    with pytest.raises(CodecError, match=r"at \['a'\]: malformed 'bytes' data"):
        decode({"a": {"$t": "bytes", "v": "!!"}})
    with pytest.raises(CodecError, match="malformed 'tuple' data"):
        decode({"$t": "tuple", "v": "abc"})
    with pytest.raises(CodecError, match="not JSON data"):
        decode((1, 2))


def test_secret_never_appears_in_output_or_errors() -> None:
    secret = Secret("hunter2-token")
    assert secret.get() == "hunter2-token"
    assert repr(secret) == str(secret) == "Secret('********')"
    assert f"{secret}" == "Secret('********')"
    assert secret == Secret("hunter2-token") and secret != Secret("other")
    assert secret != "hunter2-token"
    assert len({secret, Secret("hunter2-token")}) == 1
    for where, value in [("", secret), ("['auth'][0]", {"auth": [secret]}), ("<dict key>", {secret: 1})]:
        for func in (encode, dumps, fingerprint):
            with pytest.raises(CodecError) as info:
                func(value)
            assert "hunter2" not in str(info.value)
            assert "secret values are never stored" in str(info.value)
            assert where in str(info.value)


def test_unresolvable_class_decodes_to_opaque() -> None:
    data = encode({"u": User("ann", Address("x"))})
    data["u"]["type"] = "not_a_loaded_module:User"
    back = decode(data)["u"]
    assert isinstance(back, Opaque)
    assert back.kind == "dataclass" and back.type_name == "not_a_loaded_module:User"
    assert back.data["name"] == "ann" and back.data["address"] == Address("x")
    assert back == decode(data)["u"] and hash(back) == hash(decode(data)["u"])
    assert back != User("ann", Address("x")) and back != back.data
    assert back != Opaque("dataclass", "other:User", back.data)
    assert encode(back) == data["u"]


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("dataclass", "os:system"),
        ("dataclass", "builtins:eval"),
        ("dataclass", "collections:OrderedDict"),
        ("enum", f"{__name__}:Address"),
        ("namedtuple", f"{__name__}:Color"),
        ("pydantic", f"{__name__}:Address"),
        ("dataclass", f"{__name__}:Outer.Inner.nope"),
        ("dataclass", f"{__name__}:test_round_trip.__globals__"),
        ("dataclass", "os:path.sep"),
    ],
)
def test_only_classes_of_the_recorded_kind_are_constructed(kind: str, name: str) -> None:
    payload: Any = [1] if kind == "namedtuple" else 1 if kind == "enum" else {"value": 1}
    back = decode({"$t": kind, "type": name, "v": payload})
    assert isinstance(back, Opaque) and back.type_name == name


def test_changed_class_decodes_to_opaque() -> None:
    data = encode(Address("x", 1))
    data["v"]["extra"] = 2
    assert isinstance(decode(data), Opaque)
    assert isinstance(decode({"$t": "enum", "type": f"{__name__}:Color", "v": "green"}), Opaque)
    bad = encode(Account(id=1, email="e", created=dt.datetime(2024, 1, 1)))
    bad["v"]["id"] = "not an int"
    assert isinstance(decode(bad), Opaque)


def test_decode_never_imports_modules(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A class is rebuilt only once this process encoded one; decoding imports nothing, loaded or not."""
    (tmp_path / "mm_codec_probe.py").write_text(
        textwrap.dedent(
            """
            import dataclasses
            IMPORTS = []
            IMPORTS.append(1)

            @dataclasses.dataclass
            class Probe:
                value: int

            def __getattr__(name):
                raise AssertionError("module __getattr__ must not be used")
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    data = [{"$t": "dataclass", "type": "mm_codec_probe:Probe", "v": {"value": 1}}]
    back = decode(data)[0]
    assert isinstance(back, Opaque) and back.data == {"value": 1}
    assert "mm_codec_probe" not in sys.modules
    import mm_codec_probe

    try:
        assert isinstance(decode(data)[0], Opaque)  # loaded, but never encoded here
        assert fingerprint(back) == fingerprint(mm_codec_probe.Probe(1))
        assert encode([mm_codec_probe.Probe(1)]) == data
        assert decode(data) == [mm_codec_probe.Probe(1)]
        data[0]["type"] = "mm_codec_probe:Missing"
        assert isinstance(decode(data)[0], Opaque)
        assert mm_codec_probe.IMPORTS == [1]
    finally:
        del sys.modules["mm_codec_probe"]


def test_dumps_is_compact_canonical_json_with_version() -> None:
    text = dumps({"b": (1,), "a": None})
    assert text == '{"$codec":1,"v":{"a":null,"b":{"$t":"tuple","v":[1]}}}'
    assert loads(text.encode()) == {"a": None, "b": (1,)}


def test_loads_refuses_newer_or_unknown_versions() -> None:
    with pytest.raises(CodecError, match=r"codec version 2 is newer .* upgrade muscle-mem"):
        loads('{"$codec":2,"v":1}')
    with pytest.raises(CodecError, match="codec version 0"):
        loads('{"$codec":0,"v":1}')
    for text in ['{"v":1}', "[1]", '{"$codec":"1","v":1}', '{"$codec":1}']:
        with pytest.raises(CodecError, match="missing the '\\$codec' version header"):
            loads(text)
    with pytest.raises(CodecError, match="invalid JSON"):
        loads("{nope")
