"""Shared by the hostile-row tests: a store holding one good trajectory, rows rewritten by SQL, an audit hook.

An attacker who can write rows (SQL access to the SQLite file or the PostgreSQL schema) is played by
:func:`plant`: it stores a twin of the good trajectory through the store, then rewrites its record
text by SQL. The twin is newer than the good trajectory, so a replay tries it first, and its pre-check
snapshot key matches nothing, so it can never be the one that completes.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pydantic
import pytest

from conftest import StoreSpec, open_spec
from muscle_mem import Check, Engine
from muscle_mem.model._observations import Observation, Observer, kept_leaves, key_of
from muscle_mem.model.trajectory import observation_record
from muscle_mem.stores import Store

TASK = "say hello"
UNMATCHED_KEY = "0" * 32
"""A pre-check snapshot key no environment state has: a planted row is evaluated, never completed."""


class Reply(pydantic.BaseModel):
    """Any model: defining one loads pydantic's internals, as in any application that uses pydantic."""

    text: str


def build_engine(
    store: Store | str,
    state: dict[str, int],
    seen: list[Any] | None = None,
    types: tuple[type, ...] = (),
) -> Engine:
    """An engine with one tool pre-checked by equality on ``state["v"]``; its agent calls it once.

    The tool's arguments are appended to ``seen``.
    """
    engine = Engine(store, types=types)
    calls = [] if seen is None else seen

    @engine.tool(pre_check=Check.equal(lambda x: state["v"]))
    def act(x: Any) -> str:
        calls.append(x)
        return str(x).upper()

    engine.set_agent(lambda task: act("hello"))
    return engine


def record_good(store: Store) -> str:
    """Record the good trajectory of :data:`TASK` into ``store``; returns its id."""
    engine = build_engine(store, {"v": 1})
    result = engine(TASK)
    engine.journal.flush()
    assert result.stored and result.trajectory_id is not None, result.not_stored
    return result.trajectory_id


def good_record(spec: StoreSpec, trajectory_id: str) -> dict[str, Any]:
    """The stored record of a trajectory, read by SQL."""
    rows = fetch(spec, "SELECT record FROM {s}.trajectories WHERE id = %s", (trajectory_id,))
    record: dict[str, Any] = json.loads(rows[0][0])
    return record


def plant(
    spec: StoreSpec,
    good_id: str,
    make: Callable[[dict[str, Any]], str | bytes],
    *,
    matching: bool = False,
    later: float = 1.0,
) -> str:
    """Store a newer twin of the good trajectory, then rewrite its record by SQL; returns its id.

    ``make`` turns the twin's record (a new id, created ``later`` seconds after the good one, a
    pre-check key that matches no state unless ``matching``) into the text written; ``bytes`` are
    written as they are (SQLite only: a column that is not valid UTF-8).
    """
    store = open_spec(spec)
    try:
        good = store.get(good_id)
        assert good is not None
        planted = dataclasses.replace(good, id=uuid.uuid4().hex, created_at=good.created_at + later)
        store.add(planted)
    finally:
        store.close()
    text = make(twin_record(good_record(spec, good_id), planted.id, planted.created_at, matching))
    cast = "CAST(%s AS TEXT)" if isinstance(text, bytes) else "%s"
    execute(spec, f"UPDATE {{s}}.trajectories SET record = {cast} WHERE id = %s", (text, planted.id))
    return planted.id


def plant_hostile(spec: StoreSpec, kind: str) -> tuple[str, str, bool]:
    """The good trajectory recorded, then a row of ``kind`` (a key of :data:`ROWS`) planted beside it.

    Returns the good id, the planted id and whether the store refuses that row when it reads it.
    Skips the test for a row the store's server refuses to hold (text that is not valid UTF-8 in
    PostgreSQL).
    """
    make, refused = ROWS[kind]
    if kind == "invalid_utf8" and spec[0] != "sqlite":
        pytest.skip("PostgreSQL refuses text that is not valid UTF-8")
    store = open_spec(spec)
    good = record_good(store)
    store.close()
    return good, plant(spec, good, make), refused


def twin_record(record: dict[str, Any], new_id: str, created_at: float, matching: bool) -> dict[str, Any]:
    """The record of a twin: a new id and creation time, and unless ``matching`` an unmatched pre-check."""
    record = json.loads(json.dumps(record))
    record["id"], record["created_at"] = new_id, created_at
    for step in record["steps"]:
        if step.get("pre") and not matching:
            step["pre"]["key"] = UNMATCHED_KEY
    return record


def passing(record: dict[str, Any], encoded: Any, output: Any) -> None:
    """Make the record's first step pass ``encoded`` (a codec encoding), and have seen ``output`` as its tool's
    result: what a worker that recorded that call would have written."""
    record["steps"][0]["args"][0] = {"static": encoded}
    flat = Observer({}).flatten(0, output)
    seen = Observation(key_of(flat, frozenset()), frozenset(), kept_leaves(flat, frozenset()))
    record["steps"][0]["observed"] = observation_record(seen)


def execute(spec: StoreSpec, sql: str, args: tuple[Any, ...] = ()) -> None:
    """Run SQL on the store's tables directly, bypassing the store (``{s}``: the schema)."""
    fetch(spec, sql, args)


def fetch(spec: StoreSpec, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of SQL run on the store's tables directly (``{s}``: the schema)."""
    kind, location, schema = spec
    if kind == "sqlite":
        with sqlite3.connect(location) as db:
            db.text_factory = bytes
            rows = db.execute(sql.format(s="main").replace("%s", "?"), args).fetchall()
        return [tuple(v.decode("utf-8", "replace") if isinstance(v, bytes) else v for v in r) for r in rows]
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        cursor = conn.execute(sql.format(s=f'"{schema}"'), args)
        return list(cursor.fetchall()) if cursor.description else []


Make = Callable[[dict[str, Any]], str | bytes]


def _const(value: Any) -> Make:
    """A row whose first argument is the constant ``value`` (as encoded data)."""

    def make(record: dict[str, Any]) -> str:
        record["steps"][0]["args"][0] = {"static": value}
        return json.dumps(record)

    return make


def _pre_data(value: Any) -> Make:
    def make(record: dict[str, Any]) -> str:
        record["steps"][0]["pre"]["data"] = value
        return json.dumps(record)

    return make


def _format_1_template(record: dict[str, Any]) -> str:
    record["format"] = 1
    record["result"] = {"template": [["text", "a"], ["output", "[]"]]}
    return json.dumps(record)


def _invalid_utf8(record: dict[str, Any]) -> bytes:
    return json.dumps(record).encode().replace(b'"hello"', b'"hel\xff\xfelo"')


def _hash_flood(record: dict[str, Any]) -> str:
    """2,000 int keys of one dict sharing one hash (n * (2**61 - 1) + 1): quadratic to build and copy."""
    pairs = [[{"$t": "int", "v": format(1 + n * (2**61 - 1), "x")}, n] for n in range(2000)]
    return _const({"$t": "dict", "v": pairs})(record)


def _deep_nesting(record: dict[str, Any]) -> str:
    """A constant nested 5,000 lists deep."""
    record["steps"][0]["args"][0] = {"static": 0}
    return json.dumps(record).replace('{"static": 0}', '{"static": ' + "[" * 5000 + "]" * 5000 + "}")


PROXY = "pydantic._internal._decorators:PydanticDescriptorProxy"
ROWS: dict[str, tuple[Make, bool]] = {
    "windows_path": (_const({"$t": "path", "cls": "WindowsPath", "v": "C:\\data\\in.txt"}), False),
    "empty_numpy_scalar": (_pre_data({"$t": "npscalar", "dtype": "<f8", "v": ""}), True),
    "pydantic_base_model": (_const({"$t": "pydantic", "type": "pydantic.main:BaseModel", "v": {}}), False),
    "template_part": (_format_1_template, True),
    "numpy_dtype_string": (
        _const({"$t": "ndarray", "dtype": "(1,", "shape": [1], "v": "AAAAAAAAAAA="}),
        True,
    ),
    "invalid_utf8": (_invalid_utf8, True),
    "descriptor_proxy": (
        _const(
            {
                "$t": "dataclass",
                "type": PROXY,
                "v": {"wrapped": "hello", "decorator_info": {"x": [1, 2, 3]}, "shim": None},
            }
        ),
        False,
    ),
    "hash_flooding": (_hash_flood, True),
    "deep_nesting": (_deep_nesting, True),
}
"""Row kind → (how to make it from the good record, whether the row is refused when read)."""


FORBIDDEN = frozenset(
    {
        "import",
        "exec",
        "compile",
        "open",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.startfile",
        "subprocess.Popen",
        "socket.connect",
        "ctypes.dlopen",
        "pickle.find_class",
        "marshal.loads",
        "builtins.input",
        "shutil.rmtree",
        "os.remove",
    }
)
"""Audit events that must never happen while a stored row is decoded or replayed."""

_watch = threading.local()
_installed: list[Callable[[str, tuple[Any, ...]], None]] = []


def _hook(event: str, args: tuple[Any, ...]) -> None:
    seen: list[str] | None = getattr(_watch, "seen", None)
    if seen is not None and event in FORBIDDEN and event not in _watch.allow:
        seen.append(f"{event}{args!r}"[:200])


@contextmanager
def audited(allow: frozenset[str] = frozenset()) -> Iterator[list[str]]:
    """The forbidden audit events (but ``allow``) raised in this thread meanwhile.

    One audit hook is installed for the process (it cannot be removed); it records only inside this
    block, and only the events of the thread that entered it.
    """
    if not _installed:
        sys.addaudithook(_hook)  # it cannot be removed: one hook for the process, off outside this block
        _installed.append(_hook)
    seen: list[str] = []
    outer, outer_allow = getattr(_watch, "seen", None), getattr(_watch, "allow", frozenset())
    _watch.seen, _watch.allow = seen, allow
    try:
        yield seen
    finally:
        _watch.seen, _watch.allow = outer, outer_allow
        if outer is not None:
            outer.extend(seen)
