"""Shared by the column-rewrite tests: a durable store's tables read, rewritten by SQL and restored.

An attacker with SQL access (but not the signing key) is played by :func:`rewrite`: one column of one
table gets new values in every row, of one of four kinds (:data:`KINDS`): random values of the
column's type, the values of the other rows rotated, one other row's value copied to all, or each
row's value from an earlier copy of the store. :func:`put_back` restores the rows an earlier copy
had and the store has since removed. A snapshot restores the store between two rewrites.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import StoreSpec

KINDS = ("random", "rotated", "copied", "older")

Rows = dict[str, tuple[list[str], list[tuple[Any, ...]]]]
"""Each table's column names and rows."""


@dataclass(frozen=True)
class Column:
    """One column of one table, and the kind of value it holds (``text``, ``integer``, ``real``, ``boolean``)."""

    table: str
    name: str
    kind: str


@contextmanager
def _connect(spec: StoreSpec) -> Iterator[Any]:
    """A connection to the store's database in autocommit, closed afterwards."""
    kind, location, _ = spec
    if kind == "sqlite":
        with closing(sqlite3.connect(location, isolation_level=None)) as db:
            yield db
        return
    import psycopg

    with psycopg.connect(location, autocommit=True) as conn:
        yield conn


def _sql(spec: StoreSpec, statement: str) -> str:
    """A statement for the store's dialect: ``?`` marks, table names in the store's schema."""
    return statement if spec[0] == "sqlite" else statement.replace("?", "%s")


def _table(spec: StoreSpec, table: str) -> str:
    return table if spec[0] == "sqlite" else f'"{spec[2]}".{table}'


def columns(spec: StoreSpec) -> list[Column]:
    """Every column of every table of the store (its schema's tables, SQLite's own left out)."""
    kind, _, schema = spec
    with _connect(spec) as db:
        if kind == "sqlite":
            tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            found = [
                Column(t, r[1], _kind(r[2]))
                for t in sorted(tables)
                if not t.startswith("sqlite_")
                for r in db.execute(f"PRAGMA table_info({t})")
            ]
        else:
            rows = db.execute(
                "SELECT table_name, column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = %s ORDER BY table_name, ordinal_position",
                (schema,),
            ).fetchall()
            found = [Column(t, c, _kind(k)) for t, c, k in rows]
    return found


def _kind(declared: str) -> str:
    declared = declared.lower()
    for kind, words in (("integer", ("int",)), ("real", ("real", "double", "float")), ("boolean", ("bool",))):
        if any(w in declared for w in words):
            return kind
    return "text"


def rows(spec: StoreSpec) -> Rows:
    """Every table's rows, as they are now."""
    tables = sorted({c.table for c in columns(spec)})
    found: Rows = {}
    with _connect(spec) as db:
        for table in tables:
            cursor = db.execute(f"SELECT * FROM {_table(spec, table)}")
            names = [d[0] for d in cursor.description]
            found[table] = (names, [tuple(r) for r in cursor.fetchall()])
    return found


def _handles(spec: StoreSpec, db: Any, table: str) -> tuple[str, list[tuple[Any, ...]]]:
    """How to name each row in an update of another column, and each row's name (rowid, ctid, or the row)."""
    if spec[0] != "sqlite":
        return "ctid = ?::tid", [(str(r[0]),) for r in db.execute(f"SELECT ctid FROM {_table(spec, table)}")]
    try:
        return "rowid = ?", [tuple(r) for r in db.execute(f"SELECT rowid FROM {table}").fetchall()]
    except sqlite3.OperationalError:  # a table WITHOUT ROWID: a row is named by all its columns
        cursor = db.execute(f"SELECT * FROM {table}")
        where = " AND ".join(f"{d[0]} IS ?" for d in cursor.description)
        return where, [tuple(r) for r in cursor.fetchall()]


def rewrite(spec: StoreSpec, column: Column, kind: str, earlier: Rows, rng: random.Random) -> bool:
    """Give ``column`` new values of ``kind`` in every row; False if nothing could be written."""
    table = _table(spec, column.table)
    with _connect(spec) as db:
        where, handles = _handles(spec, db, column.table)
        values = [r[0] for r in db.execute(f"SELECT {column.name} FROM {table}").fetchall()]
        if not values:
            return False
        new = _values(column, kind, values, earlier, rng)
        if new is None or new == values:
            return False
        written = False
        for handle, value in zip(handles, new, strict=True):
            try:
                db.execute(
                    _sql(spec, f"UPDATE {table} SET {column.name} = ? WHERE {where}"), (value, *handle)
                )
                written = True
            except Exception:  # a constraint the attacker meets too (unique, not null, a type)
                pass
        return written


def _values(
    column: Column, kind: str, values: list[Any], earlier: Rows, rng: random.Random
) -> list[Any] | None:
    if kind == "random":
        return [_random(column.kind, rng) for _ in values]
    if kind == "rotated":
        return values[1:] + values[:1] if len(values) > 1 else None
    if kind == "copied":
        return [rng.choice(values)] * len(values) if len(set(map(repr, values))) > 1 else None
    names, old = earlier.get(column.table, ([], []))
    if column.name not in names or not old:
        return None
    at = names.index(column.name)
    return [old[i % len(old)][at] for i in range(len(values))]


def _random(kind: str, rng: random.Random) -> Any:
    if kind == "integer":
        return rng.choice([0, 1, -1, 2**31, 2**62, rng.randrange(-(10**6), 10**6)])
    if kind == "real":
        return rng.choice([0.0, -1.0, 4e9, 1e300, rng.uniform(0, 2e9)])
    if kind == "boolean":
        return rng.choice([True, False])
    return rng.choice(["", "x", "{}", "[]", "null", "7", "task:" + "0" * 32, f"{rng.getrandbits(128):032x}"])


def put_back(spec: StoreSpec, earlier: Rows) -> bool:
    """Insert again every row of an earlier copy that the store no longer has; False if none was missing."""
    now = rows(spec)
    written = False
    with _connect(spec) as db:
        for table, (_, old) in earlier.items():
            present = set(now.get(table, ([], []))[1])
            for row in old:
                if row in present:
                    continue
                marks = ", ".join("?" * len(row))
                try:
                    db.execute(_sql(spec, f"INSERT INTO {_table(spec, table)} VALUES ({marks})"), row)
                    written = True
                except Exception:  # a row of the same key is there: the attacker would replace it
                    pass
    return written


class Snapshot:
    """A durable store as it is now, to restore after each rewrite (a file copy, or every row)."""

    def __init__(self, spec: StoreSpec, scratch: Path) -> None:
        self.spec = spec
        self._copy = scratch / "snapshot.db"
        if spec[0] == "sqlite":
            shutil.copyfile(spec[1], self._copy)
            self._rows: Rows = {}
            self._sequences: dict[str, int] = {}
        else:
            self._rows = rows(spec)
            with _connect(spec) as db:
                self._sequences = {
                    name: db.execute(f"SELECT last_value FROM {_table(spec, name)}").fetchone()[0]
                    for (name,) in db.execute(
                        "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = %s",
                        (spec[2],),
                    ).fetchall()
                }

    def restore(self) -> None:
        """Put the store back as it was (its engines closed)."""
        kind, location, _ = self.spec
        if kind == "sqlite":
            for suffix in ("-wal", "-shm", "-marks"):
                Path(location + suffix).unlink(missing_ok=True)
            shutil.copyfile(self._copy, location)
            return
        with _connect(self.spec) as db:
            db.execute("SET session_replication_role = replica")  # no trigger counts the rows again
            db.execute("TRUNCATE " + ", ".join(_table(self.spec, t) for t in self._rows))
            for table, (names, old) in self._rows.items():
                for row in old:
                    marks = ", ".join(["%s"] * len(row))
                    db.execute(
                        f"INSERT INTO {_table(self.spec, table)} ({', '.join(names)}) OVERRIDING SYSTEM VALUE "
                        f"VALUES ({marks})",
                        row,
                    )
            for name, value in self._sequences.items():
                db.execute(f"SELECT setval('{_table(self.spec, name)}', %s)", (value,))
