"""The embedded durable store: one SQLite file in WAL mode, shared safely by threads and processes.

Layout (schema version :data:`SCHEMA_VERSION`, kept in ``meta``):

- ``trajectories``: one row per trajectory; ``rev`` (the revision that added it) is the row id, the
  record is JSON text; indexed by task key (and so by task key then revision) and creation time;
- ``usage``: the use statistics, apart so a hit is a small UPDATE, never a rewrite of the record;
  indexed by eviction priority, and by last use and by attention (schema version 3) for the
  Attention-LRU victims;
- ``tombstones``: recent removals, so :meth:`SQLiteStore.changes` reports them incrementally;
- ``tasks``: each task key with its text, how many trajectories it has, and its stamp (the revision of
  its latest add or removal, schema version 5): a reader whose stamp is the same answers from memory;
- ``state``: one row with the revision counter (bumped in the transaction of every add and removal),
  the oldest revision still answerable incrementally, the count and the byte size;
- ``events``: the engine's recent events (JSON), for reports (schema version 2);
- ``removed``: the id of every trajectory removed (schema version 8), with its creation time for
  pruning by the TTL: a signed store refuses a row put back;
- ``recall``: the tasks lately stored or replayed, by any process, with whether they were replayed
  and the order they were last remembered in (:class:`~muscle_mem.stores.base.TaskRecall`, schema
  version 5), and the priority each was last written with (schema version 7); kept by two triggers,
  on the insert of a trajectory's usage and on a hit's update of it;
- ``tuning``: one row, the eviction policy's tuning every process moves (``adaptive``'s probation,
  :class:`~muscle_mem.stores.base.SharedTuning`, schema version 6) and how many tasks the recall
  holds of each kind (never replayed, replayed; kept by three triggers on ``recall``), read with the
  recall; the tuning is written only when a recording moved it, in a transaction that reads it
  again, so no process's change is lost.

A reader learns which tasks another process changed from the counters in ``<file>-marks``, a small
file every process maps into memory (:mod:`muscle_mem.stores._shared_marks`): a hit on an unchanged
task runs no statement, however busy the other processes are. Every
:data:`SHARED_MARKS_TRUSTED` seconds, and on every call where that file cannot be had, it also
checks ``PRAGMA data_version`` (local: no table read, no lock) and, if another connection committed,
reads which tasks changed (:meth:`SQLiteStore.change_mark`). Each thread uses its own connection; writes take the database lock up front (``BEGIN IMMEDIATE``) and
wait for it up to ``timeout`` seconds, or what is left of the engine call's budget if that is less
(see :mod:`muscle_mem.stores.budget`).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from muscle_mem.model.trajectory import Trajectory, Usage
from muscle_mem.stores import _records, budget, ranking, steps
from muscle_mem.stores._shared_marks import SharedMarks
from muscle_mem.stores.base import (
    Changes,
    Event,
    NoStore,
    Rank,
    StoreDamaged,
    StoredRecord,
    StoreError,
    Summary,
    TaskState,
    Touch,
    TunedRecall,
    clamped_tuning,
    counted_kinds,
    finite_number,
)
from muscle_mem.stores.signing import Signer

log = logging.getLogger("muscle_mem.stores.sqlite")

_CHUNK = 500
BULK_ROWS = 1_000
"""Trajectories from which an ``add_many`` writes with :data:`BULK_CACHE_KIB` of page cache."""
BULK_CACHE_KIB = 262_144
"""The page cache (KiB) of a large ``add_many`` while it writes, given back after: the step index's
rows land on pages all over its two B-trees, and the default cache (2 MiB) spills them to the log and
reads them back again and again (a third of the time of adding 100,000 trajectories)."""
_T = TypeVar("_T")


def _recall_trigger(name: str, event: str, replayed: int) -> str:
    """A trigger on ``usage`` that remembers the row's task, with its priority, after ``event`` (schema 7)."""
    return f"""CREATE TRIGGER {name} AFTER {event} ON usage BEGIN
            INSERT INTO recall (task_key, replayed, seq, priority)
            SELECT task_key, {replayed}, (SELECT IFNULL(MAX(seq), 0) + 1 FROM recall), NEW.priority
            FROM trajectories WHERE id = NEW.id
            ON CONFLICT (task_key) DO UPDATE SET replayed = 1, seq = excluded.seq, priority = excluded.priority;
            END"""


MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
        """CREATE TABLE state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            revision INTEGER NOT NULL, floor INTEGER NOT NULL,
            count INTEGER NOT NULL, nbytes INTEGER NOT NULL)""",
        "INSERT INTO state VALUES (1, 0, 0, 0, 0)",
        """CREATE TABLE trajectories (
            rev INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, task_key TEXT NOT NULL,
            task TEXT NOT NULL, tags TEXT NOT NULL, steps INTEGER NOT NULL,
            created_at REAL NOT NULL, nbytes INTEGER NOT NULL, record TEXT NOT NULL)""",
        "CREATE INDEX trajectories_task_key ON trajectories (task_key)",
        "CREATE INDEX trajectories_created_at ON trajectories (created_at)",
        """CREATE TABLE usage (
            id TEXT PRIMARY KEY, rev INTEGER NOT NULL, hits INTEGER NOT NULL, last_used REAL NOT NULL,
            saved_seconds REAL NOT NULL, priority REAL NOT NULL, attention REAL NOT NULL) WITHOUT ROWID""",
        "CREATE INDEX usage_priority ON usage (priority, rev)",
        "CREATE TABLE tombstones (rev INTEGER NOT NULL, id TEXT NOT NULL, task_key TEXT NOT NULL)",
        "CREATE INDEX tombstones_task_key ON tombstones (task_key, rev)",
        "CREATE INDEX tombstones_rev ON tombstones (rev)",
        """CREATE TABLE tasks (
            task_key TEXT PRIMARY KEY, task TEXT NOT NULL, n INTEGER NOT NULL) WITHOUT ROWID""",
    ),
    (
        "CREATE TABLE events (seq INTEGER PRIMARY KEY, at REAL NOT NULL, data TEXT NOT NULL)",
        "CREATE INDEX events_at ON events (at)",
    ),
    (
        "CREATE INDEX usage_last_used ON usage (last_used, rev, attention)",
        "CREATE INDEX usage_attention ON usage (attention, rev, last_used)",
    ),
    (
        """CREATE TABLE steps (
            trajectory_id TEXT NOT NULL, step_no INTEGER NOT NULL, node TEXT NOT NULL,
            signature TEXT NOT NULL, pre_key TEXT NOT NULL, post_key TEXT NOT NULL,
            PRIMARY KEY (trajectory_id, step_no)) WITHOUT ROWID""",
        "CREATE INDEX steps_node ON steps (node, signature, pre_key, post_key)",
    ),
    (
        "ALTER TABLE tasks ADD COLUMN stamp INTEGER NOT NULL DEFAULT 0",
        "UPDATE tasks SET stamp = (SELECT revision FROM state)",
        "CREATE INDEX tasks_stamp ON tasks (stamp)",
        "CREATE TABLE recall (task_key TEXT PRIMARY KEY, replayed INTEGER NOT NULL, seq INTEGER NOT NULL)",
        "CREATE INDEX recall_seq ON recall (seq)",
        """CREATE TRIGGER recall_stored AFTER INSERT ON trajectories BEGIN
            INSERT INTO recall VALUES (NEW.task_key, 0, (SELECT IFNULL(MAX(seq), 0) + 1 FROM recall))
            ON CONFLICT (task_key) DO UPDATE SET replayed = 1, seq = excluded.seq; END""",
        """CREATE TRIGGER recall_replayed AFTER UPDATE OF hits ON usage BEGIN
            INSERT INTO recall SELECT task_key, 1, (SELECT IFNULL(MAX(seq), 0) + 1 FROM recall)
            FROM trajectories WHERE id = NEW.id
            ON CONFLICT (task_key) DO UPDATE SET replayed = 1, seq = excluded.seq; END""",
    ),
    (
        """CREATE TABLE tuning (
            id INTEGER PRIMARY KEY CHECK (id = 1), value REAL,
            never INTEGER NOT NULL DEFAULT 0, used INTEGER NOT NULL DEFAULT 0)""",
        "INSERT INTO tuning SELECT 1, NULL, IFNULL(SUM(replayed = 0), 0), IFNULL(SUM(replayed <> 0), 0) FROM recall",
        """CREATE TRIGGER recall_counted AFTER INSERT ON recall BEGIN
            UPDATE tuning SET never = never + (NEW.replayed = 0), used = used + (NEW.replayed <> 0); END""",
        """CREATE TRIGGER recall_recounted AFTER UPDATE OF replayed ON recall
            WHEN (OLD.replayed <> 0) <> (NEW.replayed <> 0) BEGIN
            UPDATE tuning SET never = never + (NEW.replayed = 0) - (OLD.replayed = 0),
                used = used + (NEW.replayed <> 0) - (OLD.replayed <> 0); END""",
        """CREATE TRIGGER recall_uncounted AFTER DELETE ON recall BEGIN
            UPDATE tuning SET never = never - (OLD.replayed = 0), used = used - (OLD.replayed <> 0); END""",
    ),
    (
        "ALTER TABLE recall ADD COLUMN priority REAL",
        "DROP TRIGGER recall_stored",
        _recall_trigger("recall_stored", "INSERT", replayed=0),
        "DROP TRIGGER recall_replayed",
        _recall_trigger("recall_replayed", "UPDATE OF hits", replayed=1),
    ),
    (
        "CREATE TABLE removed (id TEXT PRIMARY KEY, created_at REAL NOT NULL) WITHOUT ROWID",
        "CREATE INDEX removed_created_at ON removed (created_at)",
    ),
)
"""Forward migrations: ``MIGRATIONS[v]`` takes a database from schema version ``v`` to ``v + 1``."""
SCHEMA_VERSION = len(MIGRATIONS)
STEPS_VERSION = 4
"""The schema version that added the step index (filled from the records when migrating to it)."""
_INSERT_STEPS = "INSERT OR IGNORE INTO steps VALUES (?, ?, ?, ?, ?, ?)"
_HEADS = (
    "SELECT s.signature, s.trajectory_id, s.step_no, s.pre_key, s.post_key, MAX(u.last_used) FROM steps s "
    "JOIN usage u ON u.id = s.trajectory_id WHERE s.node = ? AND s.signature > '' GROUP BY s.signature"
)
"""Each call at a node with its latest used row (SQLite takes the bare columns from the MAX row);
a range of ``steps_node``, each row's usage by its primary key."""
_SOLE_HEAD = (
    "SELECT s.signature, s.trajectory_id, s.step_no, s.pre_key, s.post_key, u.last_used, "
    "EXISTS (SELECT 1 FROM steps o WHERE o.node = s.node AND o.signature > s.signature) FROM steps s "
    "JOIN usage u ON u.id = s.trajectory_id WHERE s.node = ? AND s.signature > '' ORDER BY s.signature LIMIT 1"
)
"""A node's first call and one of its rows, and whether another call follows: two seeks on ``steps_node``."""
_CANDIDATES = (
    "SELECT s.trajectory_id, s.step_no, s.pre_key, s.post_key, u.last_used FROM steps s "
    "JOIN usage u ON u.id = s.trajectory_id WHERE s.node = ? AND s.signature = ?"
)


_STEP_READS = {
    sql: (sql, steps.by_creation(sql))
    for sql in (_HEADS, _SOLE_HEAD, _CANDIDATES, _CANDIDATES + " AND s.pre_key = ?")
}
"""Each step index read: as an unsigned store runs it, and as a signed one does."""

_USAGE = "hits, last_used, saved_seconds, priority, attention"
_ORDERS = tuple(
    (
        f"SELECT id, last_used, attention, rev FROM usage WHERE ({c}, rev) > (?, ?) ORDER BY {c}, rev LIMIT ?",
        column,
    )
    for c, column in (("last_used", ranking.RECENCY), ("attention", ranking.ATTENTION))
)
"""The two orders the Attention-LRU victims are read in (covering index scans from a key on)."""
_BY_SCORE = "SELECT id FROM usage ORDER BY ? / (1.0 + MAX(? - last_used, 0.0)) + ? * attention, last_used, rev LIMIT ?"
"""Attention-LRU victims by scoring every row: the fallback of the threshold algorithm."""
_RECALLED_TUNED = (
    "SELECT r.replayed, r.priority, t.value, t.never, t.used FROM (SELECT 1) "
    "LEFT JOIN recall r ON r.task_key = ? LEFT JOIN tuning t ON t.id = 1"
)
"""A recording's read: the task's recall and last priority, the shared tuning and the two kinds of remembered tasks."""
_TUNING = "SELECT value FROM tuning WHERE id = 1"
_SET_TUNING = (
    "INSERT INTO tuning (id, value) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value"
)
_REMOVED = "INSERT OR IGNORE INTO removed SELECT id, created_at FROM trajectories WHERE id = ?"
"""A removal remembered (schema version 8): a signed store refuses the row if it comes back."""
_ALL_STORES: weakref.WeakSet[SQLiteStore] = weakref.WeakSet()
INCARNATIONS = 2**30
"""A new store's revisions start at a random multiple of 2**32: a reader of a file deleted and made
anew finds its stamps foreign, never equal by chance."""
_CHANGED_TASKS = (
    "SELECT revision, floor, NULL FROM state UNION ALL SELECT NULL, NULL, task_key FROM tasks WHERE stamp > ?1 "
    "UNION ALL SELECT NULL, NULL, task_key FROM tombstones WHERE rev > ?1"
)
"""The store's revision and floor, then each task changed after a revision (``tasks_stamp`` and
``tombstones_rev`` ranges): one statement, so one snapshot."""
_NEVER = 2**63 - 1
"""A revision no task is changed after (the first read of the marks lists no task)."""
MARKS_KEPT = 100_000
"""Task change marks a store handle remembers; past it, it forgets them and counts every task as changed."""
SHARED_MARKS_TRUSTED = 5.0
"""Seconds a reader trusts the shared marks alone; then it checks ``data_version`` too, so a change no
mark was bumped for (its writer killed between commit and bump, or unable to open the marks) is seen."""
EVENTS_PRUNED_EVERY = 60.0
"""Seconds between two prunings of the events by one store handle, unless a tenth of the events kept
were written meanwhile (so most event writes delete nothing, and the table stays bounded)."""


class _Conn:
    """One thread's connection, with its cached revision and the ``data_version`` each was read at."""

    def __init__(self, db: sqlite3.Connection, busy_ms: int) -> None:
        self.db = db
        self.data_version = -1
        """The ``data_version`` at which :attr:`revision` was read (-1: read it again)."""
        self.revision = 0
        self.marks_version = -1
        """The ``data_version`` at which the store's change marks were last brought up to date."""
        self.busy_ms = busy_ms
        """How long a write waits for the lock, in milliseconds (``PRAGMA busy_timeout``)."""
        self.grown = False
        """Whether a bulk write ran on it. SQLite's page cache keeps the hash table it grew for
        :data:`BULK_CACHE_KIB` after the cache is given back, and every later commit walks it: a miss's
        commit took three times as long at 100,000 stored, though it wrote the same pages. Bulk
        writes go on with it (a large import in chunks); any other write opens a new connection."""


class SQLiteStore:
    """Trajectories in one SQLite file, visible to every thread and process that opens it.

    With a ``signer``, records are written signed and only records signed for where they are filed
    are loaded (see :mod:`muscle_mem.stores.signing`). ``read_only=True`` opens an existing store
    of this version's schema with SQLite's read-only mode: every write fails (what
    ``Engine(mode="frozen")`` opens a URL with).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout: float = 30.0,
        signer: Signer | None = None,
        connect: bool = True,
        create: bool = True,
        read_only: bool = False,
    ) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self.read_only = read_only
        self.signer = signer
        self._closed = False
        self._local = threading.local()
        self._conns: weakref.WeakSet[_Conn] = weakref.WeakSet()
        self._conns_lock = threading.Lock()
        self._marks: dict[str, int] = {}
        """Each task seen changed: the number of the read that saw it (a mark only grows)."""
        self._marks_read = 0
        """How many times changes were read (so a mark is the number of a read)."""
        self._marks_floor = 0
        """Every task's mark is at least this (the number of the read that could not tell which changed)."""
        self._marks_seen = -1
        """The revision up to which ``_marks`` are known (-1: none yet)."""
        self._marks_lock = threading.Lock()
        self._verified_at = -SHARED_MARKS_TRUSTED
        """When the shared marks were last backed by a ``data_version`` check (``time.monotonic()``)."""
        self._pruned_at = -EVENTS_PRUNED_EVERY
        self._unpruned = 0
        """Events this handle wrote since it last pruned them."""
        if (read_only or not create) and not self.path.exists():
            raise NoStore(f"no cache at {self.path}")
        if not read_only:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise StoreError(f"cannot create the directory of {self.path}: {exc}") from exc
        self._shared: SharedMarks | None = None
        self._ready = False
        """Whether the file was migrated to this version's schema (at the first operation, or now)."""
        self._open_lock = threading.Lock()
        if connect:
            self._guard(_nothing)
        _ALL_STORES.add(self)

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r})"

    # -- connections ----------------------------------------------------------------------------

    def _conn(self) -> _Conn:
        conn: _Conn | None = getattr(self._local, "conn", None)
        if conn is None:
            if self._closed:
                raise StoreError(f"{self!r} is closed")
            if self.read_only:
                where = f"file:{urllib.parse.quote(str(self.path.resolve()))}?mode=ro"
                db = sqlite3.connect(
                    where, timeout=self.timeout, isolation_level=None, check_same_thread=False, uri=True
                )
            else:
                db = sqlite3.connect(
                    self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
                )
            db.text_factory = _text
            try:
                if not self.read_only:
                    self._enter_wal(db)
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA foreign_keys=OFF")
            except sqlite3.Error:
                db.close()
                raise
            conn = self._local.conn = _Conn(db, _tenths_ms(self.timeout))
            with self._conns_lock:
                self._conns.add(conn)
        return conn

    def _enter_wal(self, db: sqlite3.Connection) -> None:
        """Switch the file to WAL, retrying while another process holds it.

        Changing the journal mode needs the file to itself, and SQLite reports ``database is locked``
        at once, without waiting on the busy timeout, when several processes open a new file together.
        """
        deadline = time.monotonic() + self.timeout
        pause = 0.001
        while True:
            try:
                (mode,) = db.execute("PRAGMA journal_mode=WAL").fetchone()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) and "busy" not in str(exc):
                    raise
                mode = None
            if mode == "wal":
                return
            if time.monotonic() + pause > deadline:
                raise sqlite3.OperationalError(f"database is locked: cannot switch to WAL mode ({mode=})")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _reconnect(self) -> None:
        """Close this thread's connection, so that its next operation opens a new one."""
        conn: _Conn | None = getattr(self._local, "conn", None)
        if conn is None:
            return
        self._local.conn = None
        with self._conns_lock:
            self._conns.discard(conn)
        conn.db.close()

    def _after_fork(self) -> None:
        """In a forked child: never touch the parent's connections (SQLite forbids it); open new ones."""
        _INHERITED.extend(self._conns)
        self._conns = weakref.WeakSet()
        self._conns_lock = threading.Lock()
        self._marks_lock = threading.Lock()
        self._local = threading.local()
        if self._shared is not None:  # its thread lock may have been held by a thread the child lacks
            self._shared = SharedMarks.beside(self.path)

    def _guard(self, operation: Callable[[], _T]) -> _T:
        if self._closed:
            raise StoreError(f"{self!r} is closed")
        started = time.monotonic()
        try:
            if not self._ready:
                self._open()
            return operation()
        except sqlite3.Error as exc:
            raise _failure(f"{self!r}: {exc}", exc) from exc
        finally:
            budget.spend(time.monotonic() - started)

    def _open(self) -> None:
        """Migrate the file to this version's schema and map its change marks; what fails is damage.

        A file that is locked meanwhile is not damage: the next operation tries again.
        """
        with self._open_lock:
            if self._ready:
                return
            try:
                self._check_version() if self.read_only else self._migrate()
            except StoreError as exc:
                raise StoreDamaged(str(exc)) from exc
            except sqlite3.Error as exc:
                if not _damage(exc):
                    raise
                raise StoreDamaged(f"{self.path} cannot be opened: {exc}") from exc
            if not self.read_only:  # read only: no marks file made or bumped; data_version tells changes
                self._shared = SharedMarks.beside(self.path)
            self._ready = True

    def _row(self, sql: str, args: Sequence[object] = ()) -> tuple[Any, ...] | None:
        """The first row of one statement on this thread's connection, or None."""
        row: tuple[Any, ...] | None = self._guard(lambda: self._conn().db.execute(sql, args).fetchone())
        return row

    @contextmanager
    def _write(self, changed: set[str] | None = None, bulk: bool = False) -> Iterator[sqlite3.Connection]:
        """A write transaction holding the database lock from its start (waiting for it within the budget).

        The tasks the transaction put in ``changed`` have their shared marks bumped after it committed.
        After a ``bulk`` write (see :func:`_page_cache`), the next write that is not bulk opens a new
        connection first (see :attr:`_Conn.grown`).
        """
        conn = self._conn()
        if conn.grown and not bulk:
            self._reconnect()
            conn = self._conn()
        conn.grown = conn.grown or bulk
        busy_ms = _tenths_ms(budget.allowance(self.timeout))
        if busy_ms != conn.busy_ms:
            conn.db.execute(f"PRAGMA busy_timeout = {busy_ms}")
            conn.busy_ms = busy_ms
        conn.db.execute("BEGIN IMMEDIATE")
        try:
            yield conn.db
        except BaseException:
            conn.db.execute("ROLLBACK")
            raise
        conn.db.execute("COMMIT")
        conn.data_version = conn.marks_version = -1  # our own commits leave data_version alone: re-read
        if changed and self._shared is not None:
            self._shared.bump(changed)

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: every statement inside sees the same snapshot."""
        db = self._conn().db
        db.execute("BEGIN")
        try:
            yield db
        finally:
            db.execute("COMMIT")

    def _migrate(self) -> None:
        try:
            with self._write() as db:
                version = self._schema_version(db)
                if version > SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.path} was written by a newer muscle-mem (schema version {version}; this "
                        f"version reads up to {SCHEMA_VERSION}): upgrade muscle-mem to use it"
                    )
                for step in range(version, SCHEMA_VERSION):
                    for statement in MIGRATIONS[step]:
                        db.execute(statement)
                    if step + 1 == STEPS_VERSION and version > 0:
                        self._index_steps(db)
                    log.debug("migrated %s to schema version %d", self.path, step + 1)
                if version == 0:  # a new store: its revisions differ from those of any file it replaces
                    db.execute(
                        "UPDATE state SET revision = (abs(random()) % ? + 1) << 32", (INCARNATIONS - 1,)
                    )
                if version < SCHEMA_VERSION:
                    db.execute(
                        "INSERT INTO meta VALUES ('schema_version', ?) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (str(SCHEMA_VERSION),),
                    )
        except sqlite3.OperationalError:
            raise  # locked, unreadable, full disk...: reported as such by _guard
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable SQLite database: {exc}") from exc

    def _check_version(self) -> None:
        """A store opened read only must have this version's schema: it cannot be migrated."""
        with self._read() as db:
            version = self._schema_version(db)
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, this version of muscle-mem reads {SCHEMA_VERSION}: "
                "open it writable once to migrate it before opening it read only"
            )

    def _index_steps(self, db: sqlite3.Connection) -> None:
        """Fill the step index from the stored records (a store made before it existed)."""
        for tid, task_key, record in db.execute("SELECT id, task_key, record FROM trajectories").fetchall():
            trajectory = _records.loads(record, tid, task_key, str(self.path), self.signer)
            if trajectory is not None:
                db.executemany(_INSERT_STEPS, [r.values() for r in steps.step_rows(trajectory)])

    def _schema_version(self, db: sqlite3.Connection) -> int:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables:
            if tables:
                raise StoreError(f"{self.path} is a SQLite database but not a muscle-mem store")
            return 0
        row = db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        try:
            return int(row[0]) if row else 0
        except ValueError as exc:
            raise StoreError(f"{self.path} has an unreadable schema version {row[0]!r}") from exc

    # -- writing --------------------------------------------------------------------------------

    def add(self, trajectory: Trajectory, usage: Usage | None = None) -> None:
        """Store a trajectory; adding an id that is already stored does nothing."""
        self.add_many([(trajectory, usage)])

    def add_many(self, items: Iterable[tuple[Trajectory, Usage | None]]) -> int:
        """Store many trajectories in one transaction and return how many were new.

        Ids already stored are skipped. Each gets its own revision, as if added one by one.
        """
        prepared = _records.prepare(items, self.signer)

        def run() -> int:
            changed: set[str] = set()
            bulk = len(prepared) >= BULK_ROWS
            with self._write(changed, bulk) as db, _page_cache(db, bulk):
                (version,) = db.execute("PRAGMA data_version").fetchone()  # no other writer till COMMIT
                stored: set[str] = set()
                for start in range(0, len(prepared), _CHUNK):
                    chunk = [p.trajectory.id for p in prepared[start : start + _CHUNK]]
                    marks = ",".join("?" * len(chunk))
                    stored.update(
                        r[0] for r in db.execute(f"SELECT id FROM trajectories WHERE id IN ({marks})", chunk)
                    )
                new = [p for p in prepared if p.trajectory.id not in stored]
                if not new:
                    return 0
                (top,) = db.execute(
                    "UPDATE state SET revision = revision + ?, count = count + ?, nbytes = nbytes + ? "
                    "RETURNING revision",
                    (len(new), len(new), sum(p.nbytes for p in new)),
                ).fetchone()
                revs = range(top - len(new) + 1, top + 1)
                db.executemany(
                    "INSERT INTO trajectories VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [p.row(rev) for p, rev in zip(new, revs, strict=True)],
                )
                db.executemany(
                    f"INSERT INTO usage (id, rev, {_USAGE}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [p.usage_row(rev) for p, rev in zip(new, revs, strict=True)],
                )
                db.executemany(
                    "INSERT INTO tasks VALUES (?, ?, 1, ?) "
                    "ON CONFLICT (task_key) DO UPDATE SET n = n + 1, stamp = excluded.stamp",
                    [
                        (p.trajectory.task_key, p.trajectory.task, rev)
                        for p, rev in zip(new, revs, strict=True)
                    ],
                )
                db.executemany(_INSERT_STEPS, [r.values() for p in new for r in p.steps])
                db.executemany("DELETE FROM removed WHERE id = ?", [(p.trajectory.id,) for p in new])
                changed.update(p.trajectory.task_key for p in new)
            self._own_change(top - len(new), top, changed, version)
            return len(new)

        return self._guard(run) if prepared else 0

    def touch(
        self, trajectory_id: str, *, now: float, saved_seconds: float, priority: float, attention: float
    ) -> None:
        self._guard(
            lambda: self._conn().db.execute(
                "UPDATE usage SET hits = hits + 1, last_used = ?, saved_seconds = saved_seconds + ?, "
                "priority = ?, attention = ? WHERE id = ?",
                (now, saved_seconds, priority, attention, trajectory_id),
            )
        )

    def touch_many(self, touches: Sequence[Touch]) -> None:
        """Apply many trajectories' hits in one transaction (added to theirs; the later last use kept)."""
        rows = [(t.hits, t.last_used, t.saved_seconds, t.priority, t.attention, t.id) for t in touches]

        def run() -> None:
            with self._write() as db:
                db.executemany(
                    "UPDATE usage SET hits = hits + ?, last_used = MAX(last_used, ?), "
                    "saved_seconds = saved_seconds + ?, priority = ?, attention = ? WHERE id = ?",
                    rows,
                )

        if rows:
            self._guard(run)

    def usage_many(self, trajectory_ids: Sequence[str]) -> dict[str, Usage]:
        """The use statistics of the stored ones among ``trajectory_ids``."""
        ids = list(dict.fromkeys(trajectory_ids))

        def run() -> dict[str, Usage]:
            found: dict[str, Usage] = {}
            db = self._conn().db
            for start in range(0, len(ids), _CHUNK):
                chunk = ids[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                for row in db.execute(f"SELECT id, {_USAGE} FROM usage WHERE id IN ({marks})", chunk):
                    found[row[0]] = Usage(*row[1:])
            return found

        return self._guard(run) if ids else {}

    def recalled(self, task_key: str) -> bool | None:
        """Whether a remembered task was replayed; None if the task is not remembered."""
        row = self._row("SELECT replayed FROM recall WHERE task_key = ?", (task_key,))
        return None if row is None else bool(row[0])

    def recalled_tuned(self, task_key: str, own: float, change: float) -> TunedRecall:
        """The task's recall, the tuning moved by ``change``, and the two kinds of remembered tasks.

        One read when the tuning stays as stored; else a write transaction that reads it again and moves it.
        """
        row = self._row(_RECALLED_TUNED, (task_key,))
        replayed, last, stored, never, used = (None, None, None, None, None) if row is None else row
        tuned = clamped_tuning(stored, own, change)
        if tuned != stored:

            def run() -> float:
                with self._write() as db:
                    found = db.execute(_TUNING).fetchone()
                    moved = clamped_tuning(None if found is None else found[0], own, change)
                    db.execute(_SET_TUNING, (moved,))
                    return moved

            tuned = self._guard(run)
        return TunedRecall(
            None if replayed is None else bool(replayed),
            tuned,
            counted_kinds(never, used),
            finite_number(last),
        )

    def forget_recalled(self, keep: int) -> int:
        """Forget all but the ``keep`` most recently remembered tasks; returns how many were forgotten."""

        def run() -> int:
            with self._write() as db:
                return db.execute(
                    "DELETE FROM recall WHERE seq <= (SELECT seq FROM recall ORDER BY seq DESC LIMIT 1 OFFSET ?)",
                    (max(keep, 0),),
                ).rowcount

        return self._guard(run)

    def remove(self, trajectory_ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(trajectory_ids))

        def run() -> int:
            changed: set[str] = set()
            with self._write(changed) as db:
                rows: list[tuple[str, str, int]] = []
                for start in range(0, len(ids), _CHUNK):
                    chunk = ids[start : start + _CHUNK]
                    marks = ",".join("?" * len(chunk))
                    rows += db.execute(
                        f"SELECT id, task_key, nbytes FROM trajectories WHERE id IN ({marks})", chunk
                    ).fetchall()
                return self._delete(db, rows, changed)

        return self._guard(run) if ids else 0

    def expire(self, created_before: float, exclude: frozenset[str] = frozenset()) -> list[str]:
        def run() -> list[str]:
            changed: set[str] = set()
            with self._write(changed) as db:
                rows = db.execute(
                    "SELECT id, task_key, nbytes FROM trajectories WHERE created_at < ?", (created_before,)
                ).fetchall()
                rows = [r for r in rows if r[0] not in exclude]
                self._delete(db, rows, changed)
                db.execute("DELETE FROM removed WHERE created_at < ?", (_records.marks_kept(created_before),))
            return [r[0] for r in rows]

        return self._guard(run)

    def _delete(self, db: sqlite3.Connection, rows: list[tuple[str, str, int]], changed: set[str]) -> int:
        """Delete found rows inside a write transaction: one new revision, one tombstone each.

        Their tasks are added to ``changed``.
        """
        if not rows:
            return 0
        changed.update(r[1] for r in rows)
        (rev,) = db.execute(
            "UPDATE state SET revision = revision + 1, count = count - ?, nbytes = nbytes - ? RETURNING revision",
            (len(rows), sum(r[2] for r in rows)),
        ).fetchone()
        db.executemany("INSERT INTO tombstones VALUES (?, ?, ?)", [(rev, r[0], r[1]) for r in rows])
        db.executemany(_REMOVED, [(r[0],) for r in rows])
        db.executemany("DELETE FROM trajectories WHERE id = ?", [(r[0],) for r in rows])
        db.executemany("DELETE FROM usage WHERE id = ?", [(r[0],) for r in rows])
        db.executemany("DELETE FROM steps WHERE trajectory_id = ?", [(r[0],) for r in rows])
        db.executemany(
            "UPDATE tasks SET n = n - 1, stamp = ? WHERE task_key = ?", [(rev, r[1]) for r in rows]
        )
        db.executemany(
            "DELETE FROM tasks WHERE task_key = ? AND n <= 0", [(k,) for k in {r[1] for r in rows}]
        )
        cutoff = rev - _records.TOMBSTONE_REVISIONS
        (oldest,) = db.execute("SELECT MAX(rev) FROM tombstones WHERE rev <= ?", (cutoff,)).fetchone()
        if oldest is not None:
            db.execute("DELETE FROM tombstones WHERE rev <= ?", (oldest,))
            db.execute("UPDATE state SET floor = MAX(floor, ?)", (oldest,))
        if self.signer is not None:
            self.signer.saw_removed(r[0] for r in rows)
        return len(rows)

    def clear(self) -> None:
        def run() -> None:
            with self._write() as db:
                db.execute("INSERT OR IGNORE INTO removed SELECT id, created_at FROM trajectories")
                if self.signer is not None:
                    self.signer.saw_removed(r[0] for r in db.execute("SELECT id FROM trajectories"))
                for table in ("trajectories", "usage", "tombstones", "tasks", "steps", "recall"):
                    db.execute(f"DELETE FROM {table}")
                db.execute("UPDATE tuning SET value = NULL, never = 0, used = 0")
                db.execute(
                    "UPDATE state SET revision = revision + 1, floor = revision + 1, count = 0, nbytes = 0"
                )
            if self._shared is not None:
                self._shared.bump_all()

        self._guard(run)

    def log_events(self, events: Sequence[Event]) -> None:
        rows = [(e.at, _records.dump_event(e)) for e in events]

        def run() -> None:
            with self._write() as db:
                db.executemany("INSERT INTO events (at, data) VALUES (?, ?)", rows)
                self._unpruned += len(rows)
                if (
                    time.monotonic() - self._pruned_at >= EVENTS_PRUNED_EVERY
                    or self._unpruned >= _records.EVENTS_KEPT // 10
                ):
                    self._pruned_at, self._unpruned = time.monotonic(), 0
                    db.execute(
                        "DELETE FROM events WHERE seq <= (SELECT MAX(seq) FROM events) - ?",
                        (_records.EVENTS_KEPT,),
                    )

        if rows:
            self._guard(run)

    def close(self) -> None:
        self._closed = True
        shared, self._shared = self._shared, None
        if shared is not None:
            shared.close()
        with self._conns_lock:
            conns = list(self._conns)
            self._conns = weakref.WeakSet()
        for conn in conns:
            conn.db.close()
        self._local = threading.local()

    # -- reading --------------------------------------------------------------------------------

    def revision(self) -> int:
        def run() -> int:
            conn = self._conn()
            (version,) = conn.db.execute("PRAGMA data_version").fetchone()
            if version != conn.data_version:
                (conn.revision,) = conn.db.execute("SELECT revision FROM state").fetchone()
                conn.data_version = version
            return conn.revision

        return self._guard(run)

    def change_mark(self, task_key: str) -> int | None:
        """A mark that moves when another connection committed a change to the task (see the module)."""
        shared = self._shared
        slot = None if shared is None else shared.mark(task_key)
        if slot is not None and time.monotonic() - self._verified_at < SHARED_MARKS_TRUSTED:
            return max(self._marks.get(task_key, 0), self._marks_floor) << 64 | slot

        def run() -> int:
            conn = self._conn()
            (version,) = conn.db.execute("PRAGMA data_version").fetchone()
            if version != conn.marks_version:
                with self._marks_lock:
                    self._read_marks()
                conn.marks_version = version
            mark = max(self._marks.get(task_key, 0), self._marks_floor)
            if slot is None:
                return mark
            self._verified_at = time.monotonic()
            return mark << 64 | slot

        return self._guard(run)

    def _own_change(self, before: int, revision: int, task_keys: set[str], version: int) -> None:
        """Mark the tasks this connection just changed, without reading them back, if the marks were
        current before (no other connection committed since they were read; ``version``: this
        connection's ``data_version`` inside the transaction)."""
        with self._marks_lock:
            if self._marks_seen != before:
                return  # read at the next mark
            self._marks_read += 1
            for key in task_keys:
                self._marks[key] = self._marks_read
            self._marks_seen = revision
        conn = self._conn()
        conn.data_version = conn.marks_version = version
        conn.revision = revision

    def _read_marks(self) -> None:
        """Mark the tasks changed since the revision last read (every task, if that cannot be told).

        One statement, so one snapshot: the store's revision and floor, and the tasks changed after the
        revision last read.
        """
        seen = self._marks_seen
        rows = self._conn().db.execute(_CHANGED_TASKS, (seen if seen >= 0 else _NEVER,)).fetchall()
        revision, floor = next((r[0], r[1]) for r in rows if r[2] is None)
        keys = [r[2] for r in rows if r[2] is not None]
        if revision == seen:
            return
        self._marks_read += 1
        if seen < 0 or floor > seen or revision < seen or len(self._marks) + len(keys) > MARKS_KEPT:
            self._marks.clear()
            self._marks_floor = self._marks_read
        else:
            for key in keys:
                self._marks[key] = self._marks_read
        self._marks_seen = revision

    def task_state(self, task_key: str, since: int) -> TaskState:
        row = self._row("SELECT stamp, n FROM tasks WHERE task_key = ?", (task_key,))
        stamp, size = (0, 0) if row is None else row
        return TaskState(stamp, stamp != since, size)

    def heads_at(self, node: str) -> list[tuple[str, steps.Candidate]]:
        signed = self.signer is not None

        def run() -> list[tuple[str, steps.Candidate]]:
            db = self._conn().db
            first = db.execute(_STEP_READS[_SOLE_HEAD][signed], (node,)).fetchone()
            if first is None or not first[6]:
                return [] if first is None else [(first[0], steps.Candidate(*first[1:6]))]
            return [(r[0], steps.Candidate(*r[1:])) for r in db.execute(_STEP_READS[_HEADS][signed], (node,))]

        return self._guard(run)

    def candidates_at(self, node: str, signature: str, pre_key: str | None) -> list[steps.Candidate]:
        sql, args = _CANDIDATES, [node, signature]
        if pre_key is not None:
            sql, args = sql + " AND s.pre_key = ?", [node, signature, pre_key]
        sql = _STEP_READS[sql][self.signer is not None]
        return self._guard(
            lambda: [steps.Candidate(*r) for r in self._conn().db.execute(sql, args).fetchall()]
        )

    def changes(self, task_key: str, since: int) -> Changes:
        def run() -> Changes:
            with self._read() as db:
                revision, floor = db.execute("SELECT revision, floor FROM state").fetchone()
                # behind the tombstones, or a store made anew
                reset = since < floor or since > revision or since >> 32 != revision >> 32
                rows = db.execute(
                    "SELECT t.id, t.record, u.last_used, EXISTS (SELECT 1 FROM removed r WHERE r.id = t.id) "
                    "FROM trajectories t LEFT JOIN usage u ON u.id = t.id "
                    "WHERE t.task_key = ? AND t.rev > ? ORDER BY t.rev",
                    (task_key, 0 if reset else since),
                ).fetchall()
                removed = (
                    frozenset()
                    if reset
                    else frozenset(
                        r[0]
                        for r in db.execute(
                            "SELECT id FROM tombstones WHERE task_key = ? AND rev > ?", (task_key, since)
                        )
                    )
                )
            signer = self.signer
            if signer is not None:
                signer.saw_removed(removed)
            loaded = [
                (tid, _records.loads(record, tid, task_key, str(self.path), signer, gone))
                for tid, record, _, gone in rows
            ]
            # signed: ordered by the records' own times, not by an unsigned last use
            last_used = {} if signer else {tid: used for tid, _, used, _ in rows if used is not None}
            added = tuple(t for _, t in loaded if t is not None)
            skipped = tuple(tid for tid, t in loaded if t is None)
            return Changes(revision, added, removed, reset, last_used, skipped)

        return self._guard(run)

    def get(self, trajectory_id: str) -> Trajectory | None:
        row = self._row(
            "SELECT task_key, record, EXISTS (SELECT 1 FROM removed r WHERE r.id = t.id) FROM trajectories t "
            "WHERE id = ?",
            (trajectory_id,),
        )
        if row is None:
            return None
        return _records.loads(row[1], trajectory_id, row[0], str(self.path), self.signer, row[2])

    def records(self) -> Iterator[StoredRecord]:
        """Every stored record, undecoded, oldest first."""
        rows = self._guard(
            lambda: (
                self._conn()
                .db.execute(
                    "SELECT id, task_key, record, EXISTS (SELECT 1 FROM removed r WHERE r.id = t.id) "
                    "FROM trajectories t ORDER BY rev"
                )
                .fetchall()
            )
        )
        return (StoredRecord(row[0], row[1], row[2], bool(row[3])) for row in rows)

    def replace_records(self, replacements: Sequence[tuple[StoredRecord, str]]) -> int:
        """Rewrite records with new texts; a record whose text changed meanwhile is left as it is."""

        def run() -> int:
            with self._write() as db:
                grown = done = 0
                for old, text in replacements:
                    cursor = db.execute(
                        "UPDATE trajectories SET record = ?, nbytes = ? WHERE id = ? AND record = ?",
                        (text, len(text), old.id, old.text),
                    )
                    if cursor.rowcount:
                        done += 1
                        grown += len(text) - len(old.text)
                db.execute("UPDATE state SET nbytes = nbytes + ?", (grown,))
                return done

        return self._guard(run) if replacements else 0

    def usage(self, trajectory_id: str) -> Usage | None:
        row = self._row(f"SELECT {_USAGE} FROM usage WHERE id = ?", (trajectory_id,))
        return None if row is None else Usage(*row)

    def victims(self, count: int, rank: Rank, exclude: frozenset[str] = frozenset()) -> list[str]:
        if count <= 0:
            return []
        limit = count + len(exclude)
        if rank.kind == "priority":
            sql = "SELECT id FROM usage ORDER BY priority, rev LIMIT ?"
            rows = self._guard(lambda: self._conn().db.execute(sql, (limit,)).fetchall())
            return [r[0] for r in rows if r[0] not in exclude][:count]

        def run() -> list[str]:
            with self._read() as db:

                def fetch(sql: str) -> Callable[[float, int, int], list[ranking.Row[str]]]:
                    return lambda value, rev, size: db.execute(sql, (value, rev, size)).fetchall()

                by_recency, by_attention = (
                    ranking.paged(fetch(sql), column, 2 * limit) for sql, column in _ORDERS
                )
                found = ranking.lowest(count, rank.score, exclude, by_recency, by_attention)
                if found is None:  # the two orders disagree too much: score every row in SQL
                    args = (rank.alpha, rank.now, rank.beta, limit)
                    found = [r[0] for r in db.execute(_BY_SCORE, args) if r[0] not in exclude][:count]
                return found

        return self._guard(run)

    def tasks(self) -> dict[str, str]:
        return self._guard(lambda: dict(self._conn().db.execute("SELECT task_key, task FROM tasks")))

    def nbytes(self) -> int:
        return int(self._guard(lambda: self._conn().db.execute("SELECT nbytes FROM state").fetchone()[0]))

    def summaries(self) -> Iterator[Summary]:
        rows = self._guard(
            lambda: (
                self._conn()
                .db.execute(
                    "SELECT t.id, t.task, t.tags, t.steps, t.created_at, "
                    + ", ".join(f"u.{c}" for c in _USAGE.split(", "))
                    + " FROM trajectories t JOIN usage u ON u.id = t.id ORDER BY u.last_used DESC, t.rev DESC"
                )
                .fetchall()
            )
        )
        return _records.summaries(rows, str(self.path))

    def events(self, since: float = 0.0) -> list[Event]:
        rows = self._guard(
            lambda: (
                self._conn()
                .db.execute("SELECT seq, data FROM events WHERE at >= ? ORDER BY at, seq", (since,))
                .fetchall()
            )
        )
        return _records.load_events(rows, str(self.path))

    def __len__(self) -> int:
        return int(self._guard(lambda: self._conn().db.execute("SELECT count FROM state").fetchone()[0]))


@contextmanager
def _page_cache(db: sqlite3.Connection, bulk: bool) -> Iterator[None]:
    """While a bulk write runs, a page cache of :data:`BULK_CACHE_KIB` (the usual one given back after)."""
    if not bulk:
        yield
        return
    (usual,) = db.execute("PRAGMA cache_size").fetchone()
    db.execute(f"PRAGMA cache_size = -{BULK_CACHE_KIB}")
    try:
        yield
    finally:
        db.execute(f"PRAGMA cache_size = {int(usual)}")


def _nothing() -> None:
    """No operation: guarded, it opens the store."""


def _damage(exc: sqlite3.Error) -> bool:
    """Whether an error says the file or its schema cannot be used as it stands (not a lock to wait for).

    A full disk, a damaged file, a missing table or column, a failed constraint of a foreign schema.
    """
    name = getattr(exc, "sqlite_errorname", None)
    return isinstance(exc, sqlite3.DatabaseError) and name is not None and not name.startswith(_WAITING)


_WAITING = ("SQLITE_BUSY", "SQLITE_LOCKED", "SQLITE_INTERRUPT")


def _failure(text: str, exc: sqlite3.Error) -> StoreError:
    """The store error an engine sees for a SQLite error: damage is an outage (:class:`StoreDamaged`)."""
    return StoreDamaged(text) if _damage(exc) else StoreError(text)


def _tenths_ms(seconds: float) -> int:
    """Seconds as milliseconds, down to whole tenths of a second (so the busy timeout rarely changes)."""
    return max(int(seconds * 10), 0) * 100


def _text(raw: bytes) -> str:
    """A TEXT value read; one that is not valid UTF-8 is marked, so its row is skipped, not fatal."""
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return _records.Undecodable(raw.decode("utf-8", "replace"))


_INHERITED: list[_Conn] = []
"""Connections inherited through fork: kept referenced, so they are never closed (or used) in the child."""


def _reset_after_fork() -> None:
    for store in list(_ALL_STORES):
        store._after_fork()


os.register_at_fork(after_in_child=_reset_after_fork)
