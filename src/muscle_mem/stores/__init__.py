"""Where trajectories are kept: in memory, in a SQLite file, or in a PostgreSQL database.

``open_store`` turns a URL into a store:

- ``memory://``: this process only (the default);
- ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db`` (three slashes then the path, as in
  SQLAlchemy; ``~`` is expanded; missing parent directories are created);
- ``postgresql://user@host:port/db`` or ``postgres://...`` (needs ``pip install 'muscle-mem[postgres]'``);
  a ``schema`` query parameter picks the PostgreSQL schema (default ``muscle_mem``), for example
  ``postgresql://app@db:5432/agents?schema=team_a``.

A PostgreSQL URL may also set ``connect_timeout`` (seconds, per connection attempt) and
``statement_timeout`` (milliseconds, or with a unit: ``2s``). Without a URL, the environment variable
``MUSCLE_MEM_STORE`` is used, else memory. With a :class:`~muscle_mem.stores.signing.Signer`, a
durable store signs its records and loads only those signed for where they are filed; a memory store
keeps its trajectories as objects, never reads them back from text, and has nothing to sign.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import overload
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from muscle_mem.stores.base import (
    Browsable,
    ChangeFeed,
    Changes,
    CoreStore,
    Event,
    EventLog,
    NoStore,
    Rank,
    SharedTuning,
    Signable,
    StepIndexed,
    Store,
    StoreDamaged,
    StoredRecord,
    StoreError,
    StoreUnavailable,
    Summary,
    TaskRecall,
    TaskState,
    Touch,
    TunedRecall,
    UsageBatched,
)
from muscle_mem.stores.memory import MemoryStore
from muscle_mem.stores.postgres import PostgresStore
from muscle_mem.stores.signing import Signer
from muscle_mem.stores.sqlite import SQLiteStore

ENV = "MUSCLE_MEM_STORE"

__all__ = [
    "ENV",
    "Browsable",
    "ChangeFeed",
    "Changes",
    "CoreStore",
    "Event",
    "EventLog",
    "MemoryStore",
    "NoStore",
    "PostgresStore",
    "Rank",
    "SQLiteStore",
    "SharedTuning",
    "Signable",
    "Signer",
    "StepIndexed",
    "Store",
    "StoreDamaged",
    "StoreError",
    "StoreUnavailable",
    "StoredRecord",
    "Summary",
    "TaskRecall",
    "TaskState",
    "Touch",
    "TunedRecall",
    "UsageBatched",
    "open_store",
]


@overload
def open_store(
    spec: str | None = None,
    *,
    signer: Signer | None = None,
    timeout: float | None = None,
    connect: bool = True,
    create: bool = True,
    read_only: bool = False,
) -> Store: ...


@overload
def open_store(
    spec: CoreStore,
    *,
    signer: Signer | None = None,
    timeout: float | None = None,
    connect: bool = True,
    create: bool = True,
    read_only: bool = False,
) -> CoreStore: ...


def open_store(
    spec: CoreStore | str | None = None,
    *,
    signer: Signer | None = None,
    timeout: float | None = None,
    connect: bool = True,
    create: bool = True,
    read_only: bool = False,
) -> CoreStore:
    """A store from a store object (returned as is), a URL, or ``None``.

    ``None`` opens ``$MUSCLE_MEM_STORE``, else a memory store. A ``signer`` is given to the store (a
    store object that cannot sign is refused with :class:`StoreError`). ``timeout``: the most seconds
    one operation of a durable store waits (its default otherwise); ``connect=False``: a durable
    store connects (and migrates its schema) at its first operation instead of now, so that a store
    that cannot be used is an outage of that operation; ``create=False``: a store that does not exist
    yet raises :class:`NoStore` instead of being made (reading commands); ``read_only=True``: a
    SQLite store is opened with SQLite's read-only mode (it must exist; other stores are opened as
    usual, and writing nothing is up to their user).
    """
    if spec is None:
        spec = os.environ.get(ENV) or "memory://"
    if not isinstance(spec, str):
        if not isinstance(spec, CoreStore):
            raise StoreError(f"expected a Store or a store URL, got {type(spec).__name__}")
        if signer is not None and not isinstance(spec, MemoryStore):
            if not isinstance(spec, Signable):
                raise StoreError(
                    f"{type(spec).__name__} cannot sign its records: use a muscle-mem store "
                    "(sqlite:// or postgresql://), or no signing key"
                )
            spec.signer = signer
        return spec
    scheme, sep, rest = spec.partition("://")
    scheme = scheme.lower()
    if not sep:
        raise StoreError(
            f"not a store URL: {spec!r} (expected memory://, sqlite:///path or postgresql://...)"
        )
    if scheme == "memory":
        if rest:
            raise StoreError(f"memory:// takes nothing after the scheme, got {spec!r}")
        return MemoryStore()
    if scheme == "sqlite":
        path = _sqlite_path(spec, rest)
        return SQLiteStore(
            path,
            timeout=30.0 if timeout is None else timeout,
            signer=signer,
            connect=connect,
            create=create,
            read_only=read_only,
        )
    if scheme in ("postgresql", "postgres"):
        url, schema = _postgres_url(spec)
        return PostgresStore(
            url,
            schema=schema or "muscle_mem",
            timeout=30.0 if timeout is None else timeout,
            connect=connect,
            create=create,
            signer=signer,
        )
    raise StoreError(
        f"unknown store scheme {scheme!r} in {spec!r}: use memory://, sqlite:///path/to/cache.db "
        "or postgresql://user@host:port/db"
    )


def _sqlite_path(spec: str, rest: str) -> Path:
    if not rest.startswith("/") or rest == "/":
        raise StoreError(
            f"a SQLite URL needs a path: sqlite:///relative.db or sqlite:////abs.db, got {spec!r}"
        )
    return Path(rest[1:]).expanduser()


def _postgres_url(spec: str) -> tuple[str, str | None]:
    parts = urlsplit(spec)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schemas = [v for k, v in query if k == "schema"]
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    return urlunsplit(parts._replace(query=rest)), (schemas[-1] if schemas else None)
