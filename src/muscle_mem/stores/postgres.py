"""The shared store: one PostgreSQL schema for many agent workers on many machines.

Needs ``pip install 'muscle-mem[postgres]'`` (psycopg 3 and psycopg_pool). The tables mirror the SQLite
store's (see :mod:`muscle_mem.stores.sqlite`) inside the schema ``schema`` (default ``muscle_mem``),
created and migrated on first use under an advisory lock, so workers starting together do not race.

Writers of different tasks never wait on each other (schema version 5): revisions come from a
sequence, each task's row in ``tasks`` holds its stamp (drawn from the sequence while the row is
locked, so one task's stamps commit in order), its trajectories and tombstones carry the stamp of the
change that wrote them, and the count and byte size are 64 counter rows (one per backend, summed).
A reader passes back the stamp it read: rows stamped after it are what changed. Every add and
removal notifies the schema's channel with the task key (see :mod:`muscle_mem.stores._pglisten`):
a process listening knows which tasks changed without asking. A URL with ``listen=off`` (for a
pooler in transaction mode, where ``LISTEN`` does not work; it is also found out by itself) makes
readers poll instead. The shared recall (``recall``, ordered by its own sequence ``recalls``) is
written by the statements that add trajectories and apply hits, its rows locked in task key order.
The recall keeps the priority each task was last written with (schema version 7), taken from the
trajectory's usage row as it is inserted or updated. The eviction policy's shared tuning (``tuning``,
one row, schema version 6) is read with the recall and
moved in the same statement, committed without waiting for the disk (like use statistics), its row
locked only for that statement; the two kinds of remembered tasks (never replayed, replayed) are
counted by triggers on ``recall`` into ``recall_kinds``, 64 rows (one per backend, summed) as the
count and byte size are: each row inserted or flipped to replayed adds to two transaction-local
settings, which one statement trigger writes to the backend's row once per statement (a bulk add of
100,000 tasks updating one row 100,000 times in one transaction took quadratic time); pruning is
counted per statement.
Every removal remembers the removed id in ``removed`` (schema version 8), as SQLite does.
Hot-path statements are planned for their parameters each time
(``plan_cache_mode = force_custom_plan``): a generic plan cannot flip them.

A connection dropped by the server (restart, ``pg_terminate_backend``, network) discards the pool
(its idle connections are dead too) and the operation that met it is retried once on a new one. A
transaction the server rolled back (a deadlock, a serialization failure) is retried up to 3 times.
Every write locks the ``state`` row first, so writers never wait on each other in opposite orders.

No operation waits longer than ``timeout`` (or what is left of the engine call's budget, see
:mod:`muscle_mem.stores.budget`), retries included: connecting, waiting for a pooled connection and
each statement are bounded on the client, so a refused, hung or cut connection raises
:class:`~muscle_mem.stores.base.StoreUnavailable` in time. The URL's ``connect_timeout`` bounds each
connection attempt, its ``statement_timeout`` (milliseconds, or with a unit: ``2s``) each statement on
the server, and TCP keepalives (unless the URL sets its own) find connections a hung network left.
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from muscle_mem.model.trajectory import Trajectory, Usage
from muscle_mem.stores import _records, budget, ranking, steps
from muscle_mem.stores._pglisten import ChangeListener
from muscle_mem.stores.base import (
    Changes,
    Event,
    NoStore,
    Rank,
    StoreDamaged,
    StoredRecord,
    StoreError,
    StoreUnavailable,
    Summary,
    TaskState,
    Touch,
    TunedRecall,
    clamped_tuning,
    counted_kinds,
    finite_number,
)
from muscle_mem.stores.signing import Signer

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg_pool import ConnectionPool

log = logging.getLogger("muscle_mem.stores.postgres")

_T = TypeVar("_T")
_ROLLBACK_RETRIES = 3
"""Times a statement the server rolled back (deadlock, serialization failure) is tried again."""
_SCHEMA_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
CONNECT_TIMEOUT = 5
"""Seconds a connection may take to open, unless the URL sets ``connect_timeout`` (or ``timeout`` is less)."""
KEEPALIVES = {"keepalives": "1", "keepalives_idle": "10", "keepalives_interval": "5", "keepalives_count": "3"}
"""TCP keepalives, unless the URL sets them: an idle connection a hung network left is found dead in 25 s."""
_CONNECT_RETRY_SECONDS = 0.25
_STATEMENT_TIMEOUT = re.compile(r"[0-9]{1,9}(us|ms|s|min|h|d)?")
_LOST_STATES = ("08", "57P01", "57P02", "57P03")
"""SQLSTATEs of a connection the server ended (connection exceptions, shutdown, start-up)."""
_QUERY_CANCELED = "57014"
_LASTING = re.compile(
    r"does not exist|authentication failed|no pg_hba\.conf entry|password|permission denied|resolve host"
    r"|invalid|SSL",
    re.IGNORECASE,
)
"""Causes of a failed connection that waiting does not heal: a wrong database, role, password or host."""
_FOREIGN_SCHEMA = "42"
"""SQLSTATE class of a statement the schema does not fit (a table, column or function missing or
changed, a privilege revoked): this version's statements fit its own schema, so the schema is damaged."""
_MISSING_DATABASE = re.compile(r'database ".*" does not exist')

INCARNATIONS = 2**30
"""A new store's revisions start at a random multiple of 2**32 below ``INCARNATIONS * 2**32``: a reader
of a store that was dropped and made anew finds its stamps foreign, never equal by chance."""
COUNTER_SHARDS = 64
"""Rows the count and byte size are spread over (a writer updates the one of its backend)."""
EMPTIED_DROPPED = 100
"""Rows of emptied tasks a removal drops at most (more than a removal empties: they never pile up)."""
EVENTS_PRUNED_EVERY = 60.0
"""Seconds between two prunings of the events by one store handle, unless a tenth of the events kept
were written meanwhile (so most event writes delete nothing, and the table stays bounded)."""
CHANNEL_PREFIX = "muscle_mem:"
"""The notification channel of a schema is this prefix and its name (63 bytes at most)."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE {s}.meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        """CREATE TABLE {s}.state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            revision BIGINT NOT NULL, floor BIGINT NOT NULL, count BIGINT NOT NULL, nbytes BIGINT NOT NULL)""",
        "INSERT INTO {s}.state VALUES (1, 0, 0, 0, 0)",
        """CREATE TABLE {s}.trajectories (
            rev BIGINT PRIMARY KEY, id TEXT NOT NULL UNIQUE, task_key TEXT NOT NULL, task TEXT NOT NULL,
            tags TEXT NOT NULL, steps INTEGER NOT NULL, created_at DOUBLE PRECISION NOT NULL,
            nbytes BIGINT NOT NULL, record TEXT NOT NULL)""",
        "CREATE INDEX ON {s}.trajectories (task_key, rev)",
        "CREATE INDEX ON {s}.trajectories (created_at)",
        """CREATE TABLE {s}.usage (
            id TEXT PRIMARY KEY, rev BIGINT NOT NULL, hits BIGINT NOT NULL,
            last_used DOUBLE PRECISION NOT NULL, saved_seconds DOUBLE PRECISION NOT NULL,
            priority DOUBLE PRECISION NOT NULL, attention DOUBLE PRECISION NOT NULL)
            WITH (fillfactor = 80)""",
        "CREATE INDEX ON {s}.usage (priority, rev)",
        "CREATE TABLE {s}.tombstones (rev BIGINT NOT NULL, id TEXT NOT NULL, task_key TEXT NOT NULL)",
        "CREATE INDEX ON {s}.tombstones (task_key, rev)",
        "CREATE INDEX ON {s}.tombstones (rev)",
        "CREATE TABLE {s}.tasks (task_key TEXT PRIMARY KEY, task TEXT NOT NULL, n BIGINT NOT NULL)",
    ),
    (
        """CREATE TABLE {s}.events (
            seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at DOUBLE PRECISION NOT NULL, data TEXT NOT NULL)""",
        "CREATE INDEX ON {s}.events (at)",
    ),
    (
        "CREATE INDEX usage_last_used ON {s}.usage (last_used, rev) INCLUDE (attention)",
        "CREATE INDEX usage_attention ON {s}.usage (attention, rev) INCLUDE (last_used)",
        "CREATE INDEX tasks_emptied ON {s}.tasks (task_key) WHERE n <= 0",
    ),
    (
        """CREATE TABLE {s}.steps (
            trajectory_id TEXT NOT NULL, step_no INTEGER NOT NULL, node TEXT NOT NULL,
            signature TEXT NOT NULL, pre_key TEXT NOT NULL, post_key TEXT NOT NULL,
            PRIMARY KEY (trajectory_id, step_no))""",
        "CREATE INDEX steps_node ON {s}.steps (node, signature, pre_key) INCLUDE (post_key, step_no, trajectory_id)",
    ),
    (
        "CREATE SEQUENCE {s}.revs",
        "SELECT setval('{s}.revs', greatest(revision, 1), revision > 0) FROM {s}.state",
        """CREATE TABLE {s}.counters (
            shard INTEGER PRIMARY KEY, count BIGINT NOT NULL, nbytes BIGINT NOT NULL)""",
        f"INSERT INTO {{s}}.counters SELECT g, 0, 0 FROM generate_series(0, {COUNTER_SHARDS} - 1) AS g",
        "UPDATE {s}.counters SET count = s.count, nbytes = s.nbytes FROM {s}.state s WHERE shard = 0",
        "ALTER TABLE {s}.tasks ADD COLUMN stamp BIGINT NOT NULL DEFAULT 0",
        "UPDATE {s}.tasks SET stamp = (SELECT revision FROM {s}.state)",
        "ALTER TABLE {s}.trajectories ADD COLUMN stamp BIGINT",
        "UPDATE {s}.trajectories SET stamp = rev",
        "ALTER TABLE {s}.trajectories ALTER COLUMN stamp SET NOT NULL",
        "CREATE INDEX trajectories_task_stamp ON {s}.trajectories (task_key, stamp)",
        "ALTER TABLE {s}.state DROP COLUMN revision, DROP COLUMN count, DROP COLUMN nbytes",
        "CREATE SEQUENCE {s}.recalls",
        "CREATE TABLE {s}.recall (task_key TEXT PRIMARY KEY, replayed BOOLEAN NOT NULL, seq BIGINT NOT NULL)",
        "CREATE INDEX recall_order ON {s}.recall (seq)",
    ),
    (
        "CREATE TABLE {s}.tuning (id INTEGER PRIMARY KEY CHECK (id = 1), value DOUBLE PRECISION)",
        "CREATE TABLE {s}.recall_kinds (shard INTEGER PRIMARY KEY, never BIGINT NOT NULL, used BIGINT NOT NULL)",
        f"INSERT INTO {{s}}.recall_kinds SELECT g, 0, 0 FROM generate_series(0, {COUNTER_SHARDS} - 1) AS g",
        "UPDATE {s}.recall_kinds SET never = r.never, used = r.used FROM (SELECT count(*) FILTER (WHERE NOT "
        "replayed) AS never, count(*) FILTER (WHERE replayed) AS used FROM {s}.recall) AS r WHERE shard = 0",
        # A row's change of kind is added up in two transaction-local settings, and written to this
        # backend's row once per statement: a bulk add updates the row once, not once per task.
        """CREATE FUNCTION {s}.recall_counted() RETURNS trigger LANGUAGE plpgsql SET plan_cache_mode = auto AS $$
        DECLARE n INT := (NOT NEW.replayed)::int; u INT := NEW.replayed::int;
        BEGIN
            IF TG_OP = 'UPDATE' THEN
                n := n - (NOT OLD.replayed)::int;
                u := u - OLD.replayed::int;
            END IF;
            PERFORM set_config('muscle_mem.never',
                (coalesce(nullif(current_setting('muscle_mem.never', true), ''), '0')::bigint + n)::text, true),
                set_config('muscle_mem.used',
                (coalesce(nullif(current_setting('muscle_mem.used', true), ''), '0')::bigint + u)::text, true);
            RETURN NULL;
        END $$""",
        f"""CREATE FUNCTION {{s}}.recall_counts_kept() RETURNS trigger LANGUAGE plpgsql SET plan_cache_mode = auto AS $$
        DECLARE n BIGINT := coalesce(nullif(current_setting('muscle_mem.never', true), ''), '0')::bigint;
            u BIGINT := coalesce(nullif(current_setting('muscle_mem.used', true), ''), '0')::bigint;
        BEGIN
            IF n <> 0 OR u <> 0 THEN
                UPDATE {{s}}.recall_kinds SET never = never + n, used = used + u
                    WHERE shard = pg_backend_pid() % {COUNTER_SHARDS};
                PERFORM set_config('muscle_mem.never', '0', true), set_config('muscle_mem.used', '0', true);
            END IF;
            RETURN NULL;
        END $$""",
        f"""CREATE FUNCTION {{s}}.recall_uncounted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE {{s}}.recall_kinds AS k SET never = k.never - g.n, used = k.used - g.u
                FROM (SELECT count(*) FILTER (WHERE NOT replayed) AS n, count(*) FILTER (WHERE replayed) AS u
                    FROM gone) AS g
                WHERE k.shard = pg_backend_pid() % {COUNTER_SHARDS} AND g.n + g.u > 0;
            RETURN NULL;
        END $$""",
        "CREATE TRIGGER recall_counted AFTER INSERT ON {s}.recall FOR EACH ROW EXECUTE FUNCTION {s}.recall_counted()",
        "CREATE TRIGGER recall_recounted AFTER UPDATE ON {s}.recall FOR EACH ROW "
        "WHEN (OLD.replayed IS DISTINCT FROM NEW.replayed) EXECUTE FUNCTION {s}.recall_counted()",
        "CREATE TRIGGER recall_counts_kept AFTER INSERT OR UPDATE ON {s}.recall "
        "FOR EACH STATEMENT EXECUTE FUNCTION {s}.recall_counts_kept()",
        "CREATE TRIGGER recall_uncounted AFTER DELETE ON {s}.recall REFERENCING OLD TABLE AS gone "
        "FOR EACH STATEMENT EXECUTE FUNCTION {s}.recall_uncounted()",
    ),
    ("ALTER TABLE {s}.recall ADD COLUMN priority DOUBLE PRECISION",),
    (
        "CREATE TABLE {s}.removed (id TEXT PRIMARY KEY, created_at DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX removed_created_at ON {s}.removed (created_at)",
    ),
)
"""Forward migrations: ``MIGRATIONS[v]`` takes a schema from version ``v`` to ``v + 1``."""
SCHEMA_VERSION = len(MIGRATIONS)
STEPS_VERSION = 4
"""The schema version that added the step index (filled from the records when migrating to it)."""

_USAGE = "hits, last_used, saved_seconds, priority, attention"
_ASYNC_COMMIT = "SELECT set_config('synchronous_commit', 'off', true)"
"""Use statistics and events are committed without waiting for the disk (a server crash may lose the
last few, which costs nothing); trajectories and removals are committed as the server is configured."""
_ALL_STORES: weakref.WeakSet[PostgresStore] = weakref.WeakSet()


def _drivers() -> tuple[Any, Any, Any]:
    """psycopg, psycopg_pool and the bounded connection class, or a StoreError saying what to install."""
    try:
        import psycopg
        import psycopg_pool

        from muscle_mem.stores._pgconnection import BoundedConnection
    except ImportError as exc:
        raise StoreError(
            "PostgreSQL stores need psycopg 3.3+ and psycopg_pool: pip install 'muscle-mem[postgres]'"
        ) from exc
    return psycopg, psycopg_pool, BoundedConnection


class PostgresStore:
    """Trajectories in a PostgreSQL schema, shared by every process that connects to it.

    ``url``: a libpq URL or conninfo (``postgresql://user@host:5432/db``; a URL may add
    ``statement_timeout``); ``schema``: the schema that holds the tables (default ``muscle_mem``,
    created if missing; one schema per independent cache); ``pool_size``: the most connections this
    process opens (one per thread using the store at once); ``timeout``: the most seconds one operation
    waits for the server, retries included; ``connect``: False connects at the first operation instead
    of now (an engine starts while its server is down). Opening now waits up to the URL's
    ``connect_timeout`` (default :data:`CONNECT_TIMEOUT`) for a server that refuses (one starting up); a
    wrong URL fails with libpq's cause. Sessions are named ``muscle_mem:<schema>`` in
    ``pg_stat_activity`` unless the URL sets ``application_name``; ``create=False``: a schema that holds
    no store raises :class:`~muscle_mem.stores.base.NoStore` and is not made. A schema that cannot be
    migrated (damaged, foreign, newer) raises :class:`~muscle_mem.stores.base.StoreDamaged`. With a ``signer``, records are written signed and
    only records signed for where they are filed are loaded (see :mod:`muscle_mem.stores.signing`).
    """

    def __init__(
        self,
        url: str,
        *,
        schema: str = "muscle_mem",
        pool_size: int = 8,
        timeout: float = 30.0,
        connect: bool = True,
        create: bool = True,
        signer: Signer | None = None,
    ) -> None:
        self.signer = signer
        self.create = create
        """Whether a schema that does not exist is made (else :class:`NoStore`: reading commands)."""
        self._psycopg, self._psycopg_pool, self._connection_class = _drivers()
        if not _SCHEMA_NAME.fullmatch(schema):
            raise StoreError(f"invalid PostgreSQL schema name {schema!r} (letters, digits and _ only)")
        if not timeout > 0:
            raise StoreError(f"timeout must be a positive number of seconds, got {timeout!r}")
        self.schema = schema
        url, self.listen = _listen_option(url)
        self.url, self._statement_timeout = _statement_timeout(url)
        self.pool_size = pool_size
        self.timeout = timeout
        try:
            info = self._psycopg.conninfo.conninfo_to_dict(self.url)
        except self._psycopg.ProgrammingError as exc:
            raise StoreError(f"invalid PostgreSQL URL: {exc}") from exc
        self._address = f"{info.get('host', 'localhost')}:{info.get('port', 5432)}/{info.get('dbname', info.get('user', ''))}"
        self._where = f"postgresql://{self._address} (schema {schema})"
        defaults = {
            "application_name": f"muscle_mem:{schema}"[:63],
            "connect_timeout": math.ceil(min(CONNECT_TIMEOUT, timeout)),
            "tcp_user_timeout": math.ceil(timeout * 1000),
            **KEEPALIVES,
        }
        self._connect_kwargs: dict[str, Any] = {
            "autocommit": True,
            **{key: value for key, value in defaults.items() if key not in info},
        }
        self._connect_timeout = _connect_timeout(info.get("connect_timeout", CONNECT_TIMEOUT))
        self._closed = False
        self._migrated = False
        self._pool_lock = threading.Lock()
        self._pool: ConnectionPool[Any] | None = None
        self._sql = {name: text.format(s=f'"{schema}"', payload=_PAYLOAD) for name, text in _SQL.items()}
        self.channel = (CHANNEL_PREFIX + schema)[:63]
        """The notification channel of the schema."""
        self._listener: ChangeListener | None = None
        self._listener_lock = threading.Lock()
        self._pruned_at = -EVENTS_PRUNED_EVERY
        self._unpruned = 0
        """Events this handle wrote since it last pruned them."""
        if connect:
            with self._pool_lock:
                self._pool = self._new_pool(time.monotonic() + timeout, patient=True)
            try:
                self._run(_nothing)  # migrates
            except BaseException:
                self.close()
                raise
        _ALL_STORES.add(self)

    def __repr__(self) -> str:
        return f"PostgresStore({self._where})"

    # -- connections ----------------------------------------------------------------------------

    def _get_pool(self, deadline: float) -> ConnectionPool[Any]:
        pool = self._pool
        if pool is not None:
            return pool
        if not self._pool_lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            raise StoreUnavailable(f"{self._where} did not answer in time (another thread is connecting)")
        try:
            if self._closed:
                raise StoreError(f"{self!r} is closed")
            if self._pool is None:
                self._pool = self._new_pool(deadline, patient=False)
            return self._pool
        finally:
            self._pool_lock.release()

    def _new_pool(self, deadline: float, *, patient: bool) -> ConnectionPool[Any]:
        """A pool with one connection open, made by ``deadline``."""
        self._check_reachable(deadline, patient=patient)
        pool: ConnectionPool[Any] = self._psycopg_pool.ConnectionPool(
            self.url,
            connection_class=self._connection_class,
            min_size=1,
            max_size=self.pool_size,
            kwargs=self._connect_kwargs,
            timeout=self.timeout,
            reconnect_timeout=self.timeout,
            name=f"muscle_mem:{self.schema}",
            configure=self._configure,
            open=False,
        )
        try:
            pool.open(wait=True, timeout=max(deadline - time.monotonic(), 0.001))
        except self._psycopg_pool.PoolTimeout as exc:
            _close_later(pool)
            raise StoreUnavailable(f"cannot connect to PostgreSQL at {self._address} in time") from exc
        return pool

    def _check_reachable(self, deadline: float, *, patient: bool) -> None:
        """Open and close one connection by ``deadline``, so that a wrong URL fails at once with its cause.

        A cause that waiting does not heal (an unknown database or role, a rejected password) raises
        :class:`StoreError`; others (a refused port, a timeout, a server starting up) raise
        :class:`StoreUnavailable`, at once or (``patient``) when the connect timeout has passed.
        """
        psycopg = self._psycopg
        give_up = min(deadline, time.monotonic() + self._connect_timeout) if patient else 0.0

        def connect() -> None:
            self._connection_class.connect(self.url, **self._connect_kwargs).close()

        while True:
            error = None
            try:
                if _within(deadline - time.monotonic(), connect):
                    return
                cause = "connection timeout expired"
            except psycopg.OperationalError as exc:
                error, cause = exc, _cause(exc)
                if not self.create and _MISSING_DATABASE.search(cause):
                    raise NoStore(f"cannot connect to PostgreSQL at {self._address}: {cause}") from exc
                if _LASTING.search(cause):
                    raise StoreError(f"cannot connect to PostgreSQL at {self._address}: {cause}") from exc
            if time.monotonic() + _CONNECT_RETRY_SECONDS >= give_up:
                raise StoreUnavailable(f"cannot connect to PostgreSQL at {self._address}: {cause}") from error
            log.debug("cannot connect to %s yet (%s); trying again", self._where, cause)
            time.sleep(_CONNECT_RETRY_SECONDS)

    def _configure(self, conn: Connection[Any]) -> None:
        """Small OLTP statements only: JIT compilation would cost more than it saves (up to 0.5 s).

        Every statement is planned for its parameters (a prepared statement's generic plan can be
        100 times slower on a skewed task, and which one the server picks depends on its statistics).
        The URL's ``statement_timeout`` is set here too.
        """
        conn.deadline = time.monotonic() + self.timeout  # type: ignore[attr-defined]
        settings = (
            "set_config('jit', 'off', false), set_config('plan_cache_mode', 'force_custom_plan', false)"
        )
        if self._statement_timeout is None:
            conn.execute(f"SELECT {settings}")
        else:
            conn.execute(
                f"SELECT {settings}, set_config('statement_timeout', %s, false)", (self._statement_timeout,)
            )

    def _discard(self, pool: ConnectionPool[Any]) -> None:
        """Forget a pool whose connections the server dropped; the next operation opens a new one."""
        if self._pool is pool:
            self._pool = None
        _close_later(pool)

    def _after_fork(self) -> None:
        """In a forked child: open a pool of its own; the parent's connections are never used here (and
        psycopg does not end their sessions when they are collected in another process)."""
        self._pool = None
        self._pool_lock = threading.Lock()
        if self._listener is not None:
            _INHERITED.append(self._listener)
            self._listener.abandon()
        self._listener = None
        self._listener_lock = threading.Lock()

    # -- change feed ----------------------------------------------------------------------------

    def change_mark(self, task_key: str) -> int | None:
        """The task's mark from the change listener; None while it is not listening (readers poll)."""
        listener = self._listener
        if listener is None:
            if not self.listen or self._closed:
                return None
            listener = self._start_listener()
        return listener.mark(task_key)

    def _start_listener(self) -> ChangeListener:
        with self._listener_lock:
            if self._listener is None:
                connection_class = self._connection_class

                def connect() -> Any:
                    return connection_class.connect(self.url, **self._connect_kwargs)

                self._listener = ChangeListener(connect, self.channel, self._where)
                self._listener.start()
            return self._listener

    def _run(self, work: Callable[[Connection[Any]], _T]) -> _T:
        """Run ``work`` on a pooled connection, within ``timeout`` or what is left of the call's budget.

        On a dropped connection, discard the pool and retry once on a new one; on a transaction the
        server rolled back (a deadlock, a serialization failure), retry it.
        """
        started = time.monotonic()
        try:
            return self._attempt(work, started + budget.allowance(self.timeout))
        finally:
            budget.spend(time.monotonic() - started)

    def _attempt(self, work: Callable[[Connection[Any]], _T], deadline: float) -> _T:
        psycopg, psycopg_pool = self._psycopg, self._psycopg_pool
        reconnected = False
        rolled_back = 0
        while True:
            if time.monotonic() >= deadline:
                raise StoreUnavailable(f"{self._where} did not answer in time")
            pool = self._get_pool(deadline)
            try:
                conn = pool.getconn(timeout=max(deadline - time.monotonic(), 0.001))
            except psycopg_pool.PoolTimeout as exc:
                raise StoreUnavailable(f"no connection to {self._where} in time") from exc
            except psycopg_pool.PoolClosed as exc:  # discarded by another thread meanwhile
                if reconnected:
                    raise StoreUnavailable(f"{self!r}: {exc}") from exc
                reconnected = True
                continue
            conn.deadline = deadline
            try:
                if not self._migrated:
                    self._migrate_on(conn)
                    self._migrated = True
                result = work(conn)
            except psycopg.errors.TransactionRollback as exc:
                pool.putconn(conn)
                rolled_back += 1
                if rolled_back > _ROLLBACK_RETRIES or self._closed:
                    raise StoreError(f"{self!r}: {exc}") from exc
                log.debug("%s rolled a transaction back (%s); retrying", self._where, str(exc).strip())
                time.sleep(0.005 * rolled_back)
                continue
            except psycopg.OperationalError as exc:
                state = exc.sqlstate
                if state is not None and not state.startswith(_LOST_STATES):
                    pool.putconn(conn)
                    kind = StoreUnavailable if state == _QUERY_CANCELED else StoreError
                    raise kind(f"{self!r}: {_first_line(exc)}") from exc
                conn.close()  # its state is unknown; the pool it came from is dropped with it
                self._discard(pool)
                if reconnected or self._closed or time.monotonic() >= deadline:
                    raise StoreUnavailable(f"{self!r}: {_first_line(exc)}") from exc
                reconnected = True
                log.info("lost a connection to %s (%s); reconnecting", self._where, _first_line(exc))
                continue
            except psycopg.Error as exc:
                pool.putconn(conn)
                damaged = (exc.sqlstate or "").startswith(_FOREIGN_SCHEMA)
                raise (StoreDamaged if damaged else StoreError)(f"{self!r}: {exc}") from exc
            except BaseException:
                pool.putconn(conn)
                raise
            pool.putconn(conn)
            return result

    def _scalar(self, conn: Connection[Any], name: str, args: tuple[Any, ...] = ()) -> Any:
        return self._row(conn, name, args)[0]

    def _row(self, conn: Connection[Any], name: str, args: Any = ()) -> Any:
        row = conn.execute(self._sql[name], args).fetchone()
        if row is None:
            raise StoreError(f"{self!r}: a row of its state is missing")
        return row

    def _migrate_on(self, conn: Connection[Any]) -> None:
        """Migrate the schema; what fails but a lost connection or a rollback to retry is damage."""
        psycopg = self._psycopg
        try:
            self._migrate(conn)
        except (NoStore, StoreDamaged):
            raise
        except StoreError as exc:
            raise StoreDamaged(str(exc)) from exc
        except psycopg.errors.TransactionRollback:
            raise
        except psycopg.OperationalError as exc:
            if (
                exc.sqlstate is None
                or exc.sqlstate.startswith(_LOST_STATES)
                or exc.sqlstate == _QUERY_CANCELED
            ):
                raise
            raise StoreDamaged(f"{self!r} cannot be migrated: {_first_line(exc)}") from exc
        except psycopg.Error as exc:
            raise StoreDamaged(f"{self!r} cannot be migrated: {_first_line(exc)}") from exc

    def _migrate(self, conn: Connection[Any]) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"muscle_mem.schema:{self.schema}",))
            exists = conn.execute("SELECT to_regclass(%s)", (f'"{self.schema}".meta',)).fetchone() != (None,)
            if not exists and not self.create:
                raise NoStore(f"no cache at {self._where}")
            conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')
            version = 0
            if exists:
                row = conn.execute(self._sql["version"]).fetchone()
                text = "0" if row is None else row[0]
                try:
                    version = int(text)
                except ValueError as exc:
                    raise StoreError(f"{self!r} has an unreadable schema version {text!r}") from exc
            elif conn.execute(self._sql["tables"], (self.schema,)).fetchone():
                raise StoreError(
                    f"{self!r}: schema {self.schema!r} holds other tables, not a muscle-mem store"
                )
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self!r} was written by a newer muscle-mem (schema version {version}; this version "
                    f"reads up to {SCHEMA_VERSION}): upgrade muscle-mem to use it"
                )
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step]:
                    conn.execute(statement.format(s=f'"{self.schema}"'))
                if step + 1 == STEPS_VERSION and version > 0:
                    self._index_steps(conn)
                log.debug("migrated %s to schema version %d", self._where, step + 1)
            if version == 0:  # a new store: its revisions differ from those of any store it replaces
                conn.execute(self._sql["incarnate"])
            if version < SCHEMA_VERSION:
                conn.execute(self._sql["set_version"], (str(SCHEMA_VERSION),))

    def _index_steps(self, conn: Connection[Any]) -> None:
        """Fill the step index from the stored records (a store made before it existed)."""
        for tid, task_key, record in conn.execute(self._sql["indexed_records"]).fetchall():
            trajectory = _records.loads(record, tid, task_key, self._where, self.signer)
            if trajectory is not None:
                rows = [r.values() for r in steps.step_rows(trajectory)]
                conn.cursor().executemany(self._sql["insert_steps"], rows)

    # -- writing --------------------------------------------------------------------------------

    def add(self, trajectory: Trajectory, usage: Usage | None = None) -> None:
        """Store a trajectory; adding an id that is already stored does nothing."""
        self.add_many([(trajectory, usage)])

    def add_many(self, items: Iterable[tuple[Trajectory, Usage | None]]) -> int:
        """Store many trajectories in one statement and return how many were new.

        Ids already stored are skipped. Each gets its own revision, as if added one by one.
        """
        prepared = _records.prepare(items, self.signer)
        unique_violation = self._psycopg.errors.UniqueViolation

        def work(conn: Connection[Any]) -> int:
            pending = prepared
            while pending:
                try:
                    args = {**_columns(pending), "channel": self.channel}
                    row = conn.execute(self._sql["insert"], args).fetchone()
                    return 0 if row is None else int(row[0])
                except unique_violation:
                    pass  # another process stored one of these ids meanwhile
                ids = [p.trajectory.id for p in pending]
                stored = {r[0] for r in conn.execute(self._sql["stored_ids"], (ids,))}
                pending = [p for p in pending if p.trajectory.id not in stored]
            return 0

        return self._run(work) if prepared else 0

    def touch(
        self, trajectory_id: str, *, now: float, saved_seconds: float, priority: float, attention: float
    ) -> None:
        args = (now, saved_seconds, priority, attention, trajectory_id)
        self._run(lambda conn: conn.execute(self._sql["touch"], args))

    def touch_many(self, touches: Sequence[Touch]) -> None:
        """Apply many trajectories' hits in one statement (added to theirs; the later last use kept)."""
        ordered = sorted(touches, key=lambda t: t.id)  # rows locked in one order by every writer
        args = (
            [t.id for t in ordered],
            [int(t.hits) for t in ordered],
            [float(t.last_used) for t in ordered],
            [float(t.saved_seconds) for t in ordered],
            [float(t.priority) for t in ordered],
            [float(t.attention) for t in ordered],
        )
        if ordered:
            self._run(lambda conn: conn.execute(self._sql["touch_many"], args))

    def usage_many(self, trajectory_ids: Sequence[str]) -> dict[str, Usage]:
        """The use statistics of the stored ones among ``trajectory_ids``."""
        ids = list(dict.fromkeys(trajectory_ids))
        if not ids:
            return {}
        rows = self._run(lambda conn: conn.execute(self._sql["usage_many"], (ids,)).fetchall())
        return {row[0]: Usage(*row[1:]) for row in rows}

    def recalled(self, task_key: str) -> bool | None:
        """Whether a remembered task was replayed; None if the task is not remembered."""
        row = self._run(lambda conn: conn.execute(self._sql["recalled"], (task_key,)).fetchone())
        return None if row is None else bool(row[0])

    def recalled_tuned(self, task_key: str, own: float, change: float) -> TunedRecall:
        """The task's recall and last priority, the tuning moved by ``change``, and the two kinds of remembered tasks.

        One statement: a read when ``change`` is 0 and the store holds a tuning in [0, 1]; else a write
        of the tuning row that reads the rest too (committed without waiting for the disk).
        """
        args = {"key": task_key, "own": float(own), "change": float(change)}

        def work(conn: Connection[Any]) -> Any:
            if change == 0.0:
                row = self._row(conn, "recalled_tuning", args)
                if clamped_tuning(row[2], -1.0) == row[2]:  # a number in [0, 1]: nothing to write
                    return row
            return self._row(conn, "recalled_tuned", args)

        replayed, last, stored, never, used = self._run(work)
        return TunedRecall(
            None if replayed is None else bool(replayed),
            clamped_tuning(stored, own),
            counted_kinds(never, used),
            finite_number(last),
        )

    def forget_recalled(self, keep: int) -> int:
        """Forget all but the ``keep`` most recently remembered tasks; returns how many were forgotten."""
        return int(
            self._run(lambda conn: conn.execute(self._sql["forget_recalled"], (max(keep, 0),)).rowcount)
        )

    def remove(self, trajectory_ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(trajectory_ids))
        if not ids:
            return 0
        return len(self._run(lambda conn: self._delete(conn, "t.id = ANY(%(arg)s)", ids)))

    def expire(self, created_before: float, exclude: frozenset[str] = frozenset()) -> list[str]:
        where = "t.created_at < %(arg)s AND NOT (t.id = ANY(%(exclude)s))"

        def work(conn: Connection[Any]) -> list[str]:
            deleted = self._delete(conn, where, created_before, sorted(exclude))
            conn.execute(self._sql["prune_removed"], (_records.marks_kept(created_before),))
            return deleted

        return self._run(work)

    def _delete(
        self, conn: Connection[Any], where: str, arg: Any, exclude: list[str] | None = None
    ) -> list[str]:
        """Delete matching rows in one statement (one new revision, one tombstone each, old tombstones
        pruned); returns the deleted ids.

        A task emptied by the statement keeps its row with ``n = 0`` (hidden from :meth:`tasks`): one
        statement cannot update a row and delete it. A second statement then drops up to
        :data:`EMPTIED_DROPPED` such rows, skipping those another transaction holds; an add racing it
        either finds the row or makes it anew (``ON CONFLICT`` re-checks), and a reader without the row
        reads stamp 0, a change.
        """
        sql = self._sql["delete"].replace("{where}", where)
        params = {
            "arg": arg,
            "exclude": exclude or [],
            "keep": _records.TOMBSTONE_REVISIONS,
            "channel": self.channel,
        }
        deleted = [r[0] for r in conn.execute(sql, params)]
        if deleted:
            conn.execute(self._sql["drop_emptied"], (EMPTIED_DROPPED,))
            if self.signer is not None:
                self.signer.saw_removed(deleted)
        return deleted

    def clear(self) -> None:
        def work(conn: Connection[Any]) -> None:
            with conn.transaction():
                conn.execute(self._sql["clear_lock"])  # writers lock task rows: they wait
                removed = [r[0] for r in conn.execute(self._sql["clear_removed"])]
                if self.signer is not None:
                    self.signer.saw_removed(removed)
                for table in ("trajectories", "usage", "tombstones", "tasks", "steps", "recall", "tuning"):
                    conn.execute(f'DELETE FROM "{self.schema}".{table}')
                conn.execute(self._sql["clear_kinds"])
                conn.execute(self._sql["clear_state"])
                conn.execute(self._sql["clear_counters"])
                conn.execute(self._sql["notify_all"], (self.channel,))

        self._run(work)

    def log_events(self, events: Sequence[Event]) -> None:
        rows = [(e.at, _records.dump_event(e)) for e in events]

        def work(conn: Connection[Any]) -> None:
            with conn.transaction():
                conn.execute(_ASYNC_COMMIT)
                conn.cursor().executemany(self._sql["log_event"], rows)
                self._unpruned += len(rows)
                if (
                    time.monotonic() - self._pruned_at >= EVENTS_PRUNED_EVERY
                    or self._unpruned >= _records.EVENTS_KEPT // 10
                ):
                    self._pruned_at, self._unpruned = time.monotonic(), 0
                    conn.execute(self._sql["prune_events"], (_records.EVENTS_KEPT,))

        if rows:
            self._run(work)

    def close(self) -> None:
        with self._pool_lock:
            self._closed = True
            pool, self._pool = self._pool, None
        with self._listener_lock:
            listener, self._listener = self._listener, None
        if listener is not None:
            listener.stop()
        if pool is not None:
            pool.close()

    # -- reading --------------------------------------------------------------------------------

    def revision(self) -> int:
        return int(self._run(lambda conn: self._scalar(conn, "revision")))

    def task_state(self, task_key: str, since: int) -> TaskState:
        row = self._run(lambda conn: conn.execute(self._sql["task_state"], (task_key,)).fetchone())
        stamp, size = (0, 0) if row is None else (int(row[0]), int(row[1]))
        return TaskState(stamp, stamp != since, size)

    def heads_at(self, node: str) -> list[tuple[str, steps.Candidate]]:
        signed = "_signed" if self.signer is not None else ""
        first = self._run(lambda conn: conn.execute(self._sql["sole_head" + signed], (node,)).fetchone())
        if first is None or not first[6]:
            return [] if first is None else [(first[0], steps.Candidate(*first[1:6]))]
        rows = self._run(lambda conn: conn.execute(self._sql["heads" + signed], (node,)).fetchall())
        return [(r[0], steps.Candidate(*r[1:])) for r in rows]

    def candidates_at(self, node: str, signature: str, pre_key: str | None) -> list[steps.Candidate]:
        signed = "_signed" if self.signer is not None else ""
        if pre_key is None:
            sql, args = self._sql["candidates" + signed], [node, signature]
        else:
            sql, args = self._sql["candidates_pre" + signed], [node, signature, pre_key]
        rows = self._run(lambda conn: conn.execute(sql, args).fetchall())
        return [steps.Candidate(*r) for r in rows]

    def changes(self, task_key: str, since: int) -> Changes:
        args = {"since": since, "key": task_key}
        rows = self._run(lambda conn: conn.execute(self._sql["changes"], args).fetchall())
        revision, reset = int(rows[0][4]), bool(rows[0][5])  # the task's row always comes back
        added: list[tuple[int, Trajectory]] = []
        removed: set[str] = set()
        skipped: list[str] = []
        last_used: dict[str, float] = {}
        signer = self.signer
        if signer is not None:
            signer.saw_removed(r[1] for r in rows if r[0] == 1)
        for kind, tid, record, rev, _, _, used, gone in rows:
            if kind == 1:
                removed.add(tid)
            elif kind == 0:
                trajectory = _records.loads(record, tid, task_key, self._where, signer, gone)
                if trajectory is not None:
                    added.append((rev, trajectory))
                    if used is not None and signer is None:  # signed: ordered by the records' own times
                        last_used[tid] = used
                else:
                    skipped.append(tid)
        added.sort(key=lambda item: item[0])
        return Changes(
            revision, tuple(t for _, t in added), frozenset(removed), reset, last_used, tuple(skipped)
        )

    def get(self, trajectory_id: str) -> Trajectory | None:
        row = self._run(lambda conn: conn.execute(self._sql["get"], (trajectory_id,)).fetchone())
        return (
            None
            if row is None
            else _records.loads(row[1], trajectory_id, row[0], self._where, self.signer, row[2])
        )

    def records(self) -> Iterator[StoredRecord]:
        """Every stored record, undecoded, oldest first."""
        rows = self._run(lambda conn: conn.execute(self._sql["records"]).fetchall())
        return (StoredRecord(row[0], row[1], row[2], bool(row[3])) for row in rows)

    def replace_records(self, replacements: Sequence[tuple[StoredRecord, str]]) -> int:
        """Rewrite records with new texts; a record whose text changed meanwhile is left as it is."""
        args = {
            "ids": [old.id for old, _ in replacements],
            "old": [old.text for old, _ in replacements],
            "new": [text for _, text in replacements],
        }

        def work(conn: Connection[Any]) -> int:
            row = conn.execute(self._sql["replace"], args).fetchone()
            return int(row[0]) if row is not None else 0

        return self._run(work) if replacements else 0

    def usage(self, trajectory_id: str) -> Usage | None:
        row = self._run(lambda conn: conn.execute(self._sql["usage"], (trajectory_id,)).fetchone())
        return None if row is None else Usage(*row)

    def victims(self, count: int, rank: Rank, exclude: frozenset[str] = frozenset()) -> list[str]:
        if count <= 0:
            return []
        limit = count + len(exclude)
        if rank.kind == "priority":
            rows = self._run(lambda conn: conn.execute(self._sql["victims_priority"], (limit,)).fetchall())
            return [r[0] for r in rows if r[0] not in exclude][:count]

        def run(conn: Connection[Any]) -> list[str]:
            def fetch(sql: str) -> Callable[[float, int, int], list[ranking.Row[str]]]:
                return lambda value, rev, size: conn.execute(sql, (value, rev, size)).fetchall()

            by_recency, by_attention = (
                ranking.paged(fetch(self._sql[name]), column, max(64, 4 * limit))
                for name, column in (("by_last_used", ranking.RECENCY), ("by_attention", ranking.ATTENTION))
            )
            found = ranking.lowest(count, rank.score, exclude, by_recency, by_attention)
            if found is None:  # the two orders disagree too much: score every row in SQL
                args = (rank.alpha, rank.now, rank.beta, limit)
                found = [r[0] for r in conn.execute(self._sql["by_score"], args) if r[0] not in exclude][
                    :count
                ]
            return found

        return self._run(run)

    def tasks(self) -> dict[str, str]:
        return dict(self._run(lambda conn: conn.execute(self._sql["tasks"]).fetchall()))

    def nbytes(self) -> int:
        return int(self._run(lambda conn: self._scalar(conn, "nbytes")))

    def summaries(self) -> Iterator[Summary]:
        rows = self._run(lambda conn: conn.execute(self._sql["summaries"]).fetchall())
        return _records.summaries(rows, self._where)

    def events(self, since: float = 0.0) -> list[Event]:
        rows = self._run(lambda conn: conn.execute(self._sql["events"], (since,)).fetchall())
        return _records.load_events(rows, self._where)

    def __len__(self) -> int:
        return int(self._run(lambda conn: self._scalar(conn, "count")))


_PAYLOAD = "CASE WHEN octet_length(k.task_key) < 4000 THEN k.task_key ELSE '*' END"
"""A notification's payload: the task key (one too long for a payload marks every task)."""
_RECALL_HITS = (
    "INSERT INTO {s}.recall AS m (task_key, replayed, seq, priority) "
    "SELECT task_key, true, nextval('{s}.recalls'), priority FROM "
    "(SELECT t.task_key, max(u.priority) AS priority FROM u JOIN {s}.trajectories t USING (id) "
    "GROUP BY t.task_key) AS h ORDER BY task_key "
    "ON CONFLICT (task_key) DO UPDATE SET replayed = true, seq = excluded.seq, priority = excluded.priority"
)
"""A hit's trajectories' tasks remembered as replayed, with their new priority (the highest of a task's
in one batch; after ``u``, the usage rows a hit updated)."""
_KINDS = "(SELECT sum(never)::bigint AS never, sum(used)::bigint AS used FROM {s}.recall_kinds) AS k"
"""The two kinds of remembered tasks, summed over the shards the recall's triggers count them in."""
_RECALLED_KINDS = "k.never, k.used FROM " + _KINDS + " LEFT JOIN {s}.recall r ON r.task_key = %(key)s"
"""The end of a recording's read: the two kinds of remembered tasks, and the task's recall row (``r``)."""
_SQL = {
    "version": "SELECT value FROM {s}.meta WHERE key = 'schema_version'",
    "set_version": "INSERT INTO {s}.meta VALUES ('schema_version', %s) "
    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    "tables": "SELECT 1 FROM pg_tables WHERE schemaname = %s LIMIT 1",
    "insert": """WITH r AS (
        SELECT r.* FROM unnest(
            %(ids)b::text[], %(keys)b::text[], %(tasks)b::text[], %(tags)b::text[], %(steps)b::int[],
            %(created)b::float8[], %(sizes)b::bigint[], %(records)b::text[], %(hits)b::bigint[],
            %(last)b::float8[], %(saved)b::float8[], %(priority)b::float8[], %(attention)b::float8[]
        ) WITH ORDINALITY AS r(id, task_key, task, tags, steps, created_at, nbytes, record, hits, last_used,
            saved_seconds, priority, attention, ord)
        WHERE NOT EXISTS (SELECT FROM {s}.trajectories t WHERE t.id = r.id)),
    k AS (INSERT INTO {s}.tasks AS k (task_key, task, n, stamp)
        SELECT task_key, min(task), count(*), nextval('{s}.revs') FROM r GROUP BY task_key ORDER BY task_key
        ON CONFLICT (task_key) DO UPDATE SET n = k.n + excluded.n, stamp = nextval('{s}.revs')
        RETURNING k.task_key, k.stamp),
    m AS (INSERT INTO {s}.recall AS m (task_key, replayed, seq, priority)
        SELECT task_key, count(*) > 1, nextval('{s}.recalls'), (array_agg(priority ORDER BY ord DESC))[1]
        FROM r GROUP BY task_key ORDER BY task_key
        ON CONFLICT (task_key) DO UPDATE SET replayed = true, seq = excluded.seq, priority = excluded.priority),
    t AS (INSERT INTO {s}.trajectories (rev, id, task_key, task, tags, steps, created_at, nbytes, record, stamp)
        SELECT nextval('{s}.revs'), r.id, r.task_key, r.task, r.tags, r.steps, r.created_at, r.nbytes, r.record,
            k.stamp FROM r JOIN k USING (task_key) ORDER BY r.ord
        RETURNING rev, id),
    u AS (INSERT INTO {s}.usage
        SELECT r.id, t.rev, r.hits, r.last_used, r.saved_seconds, r.priority, r.attention FROM r JOIN t USING (id)),
    c AS (UPDATE {s}.counters SET count = count + (SELECT count(*) FROM r),
            nbytes = nbytes + (SELECT coalesce(sum(nbytes), 0) FROM r)
        WHERE shard = pg_backend_pid() %% """
    + str(COUNTER_SHARDS)
    + """ AND EXISTS (SELECT FROM r)),
    x AS (INSERT INTO {s}.steps SELECT x.* FROM unnest(
            %(step_ids)b::text[], %(step_nos)b::int[], %(nodes)b::text[], %(signatures)b::text[],
            %(pres)b::text[], %(posts)b::text[]) AS x (trajectory_id, step_no, node, signature, pre_key, post_key)
        WHERE x.trajectory_id IN (SELECT id FROM r)),
    z AS (DELETE FROM {s}.removed WHERE id IN (SELECT id FROM r))
    SELECT (SELECT count(*) FROM r), count(pg_notify(%(channel)s, """
    + "{payload}"
    + """)) FROM k""",
    "insert_steps": "INSERT INTO {s}.steps VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
    "task_state": "SELECT stamp, n FROM {s}.tasks WHERE task_key = %s",
    "sole_head": "SELECT s.signature, s.trajectory_id, s.step_no, s.pre_key, s.post_key, u.last_used, "
    "EXISTS (SELECT 1 FROM {s}.steps o WHERE o.node = s.node AND o.signature > s.signature) FROM {s}.steps s "
    "JOIN {s}.usage u ON u.id = s.trajectory_id WHERE s.node = %s AND s.signature > '' "
    "ORDER BY s.signature LIMIT 1",
    "heads": "SELECT DISTINCT ON (s.signature) s.signature, s.trajectory_id, s.step_no, s.pre_key, "
    "s.post_key, u.last_used FROM {s}.steps s JOIN {s}.usage u ON u.id = s.trajectory_id "
    "WHERE s.node = %s AND s.signature > '' ORDER BY s.signature, u.last_used DESC",
    "candidates": "SELECT s.trajectory_id, s.step_no, s.pre_key, s.post_key, u.last_used FROM {s}.steps s "
    "JOIN {s}.usage u ON u.id = s.trajectory_id WHERE s.node = %s AND s.signature = %s",
    "candidates_pre": "SELECT s.trajectory_id, s.step_no, s.pre_key, s.post_key, u.last_used FROM {s}.steps s "
    "JOIN {s}.usage u ON u.id = s.trajectory_id WHERE s.node = %s AND s.signature = %s AND s.pre_key = %s",
    "stored_ids": "SELECT id FROM {s}.trajectories JOIN unnest(%s::text[]) AS i (id) USING (id)",
    "touch": "WITH c AS (" + _ASYNC_COMMIT + "), u AS ("
    "UPDATE {s}.usage SET hits = hits + 1, last_used = %s, saved_seconds = saved_seconds + %s, "
    "priority = %s, attention = %s WHERE id = %s AND (SELECT true FROM c) RETURNING id, priority) "
    + _RECALL_HITS,
    "touch_many": "WITH c AS (" + _ASYNC_COMMIT + "), u AS ("
    "UPDATE {s}.usage u SET hits = u.hits + v.hits, last_used = GREATEST(u.last_used, v.last_used), "
    "saved_seconds = u.saved_seconds + v.saved, priority = v.priority, attention = v.attention "
    "FROM unnest(%s::text[], %s::bigint[], %s::float8[], %s::float8[], %s::float8[], %s::float8[]) "
    "AS v (id, hits, last_used, saved, priority, attention) WHERE u.id = v.id AND (SELECT true FROM c) "
    "RETURNING u.id, u.priority) " + _RECALL_HITS,
    "recalled": "SELECT replayed FROM {s}.recall WHERE task_key = %s",
    "recalled_tuning": "SELECT r.replayed, r.priority, (SELECT value FROM {s}.tuning WHERE id = 1), "
    + _RECALLED_KINDS,
    "recalled_tuned": "WITH c AS (" + _ASYNC_COMMIT + "), p AS ("
    "INSERT INTO {s}.tuning AS p (id, value) SELECT 1, least(1, greatest(0, %(own)s::float8)) FROM c "
    "ON CONFLICT (id) DO UPDATE SET value = CASE WHEN p.value > '-Infinity' AND p.value < 'Infinity' "
    "THEN least(1, greatest(0, least(1, greatest(0, p.value)) + %(change)s::float8)) ELSE excluded.value END "
    "RETURNING p.value) "
    "SELECT r.replayed, r.priority, (SELECT value FROM p), " + _RECALLED_KINDS,
    "clear_kinds": "UPDATE {s}.recall_kinds SET never = 0, used = 0",
    "forget_recalled": "DELETE FROM {s}.recall WHERE seq <= "
    "(SELECT seq FROM {s}.recall ORDER BY seq DESC LIMIT 1 OFFSET %s)",
    "usage_many": f"SELECT id, {_USAGE} FROM {{s}}.usage WHERE id = ANY(%s)",
    "delete": """WITH l AS MATERIALIZED (
        SELECT task_key FROM {s}.tasks WHERE task_key IN (SELECT t.task_key FROM {s}.trajectories t WHERE {{where}})
        ORDER BY task_key FOR UPDATE),
    d AS (DELETE FROM {s}.trajectories t
        WHERE {{where}} AND t.task_key = ANY((SELECT array_agg(task_key) FROM l)::text[])
        RETURNING t.id, t.task_key, t.nbytes, t.created_at),
    r AS (INSERT INTO {s}.removed SELECT id, created_at FROM d ON CONFLICT DO NOTHING),
    g AS (SELECT task_key, count(*) AS n FROM d GROUP BY task_key),
    k AS (UPDATE {s}.tasks SET n = tasks.n - g.n, stamp = nextval('{s}.revs') FROM g
        WHERE tasks.task_key = g.task_key RETURNING tasks.task_key, tasks.stamp),
    b AS (INSERT INTO {s}.tombstones SELECT k.stamp, d.id, d.task_key FROM d JOIN k USING (task_key)),
    o AS (DELETE FROM {s}.tombstones WHERE rev <= (SELECT max(stamp) FROM k) - %(keep)s
        AND EXISTS (SELECT FROM {s}.tombstones WHERE rev <= (SELECT max(stamp) FROM k) - 2 * %(keep)s)
        RETURNING rev),
    f AS (UPDATE {s}.state SET floor = GREATEST(floor, (SELECT max(rev) FROM o)) WHERE EXISTS (SELECT FROM o)),
    u AS (DELETE FROM {s}.usage WHERE id IN (SELECT id FROM d)),
    x AS (DELETE FROM {s}.steps WHERE trajectory_id IN (SELECT id FROM d)),
    c AS (UPDATE {s}.counters SET count = count - (SELECT count(*) FROM d),
            nbytes = nbytes - (SELECT coalesce(sum(nbytes), 0) FROM d)
        WHERE shard = pg_backend_pid() %% """
    + str(COUNTER_SHARDS)
    + """ AND EXISTS (SELECT FROM d))
    SELECT d.id, (SELECT count(pg_notify(%(channel)s, """
    + "{payload}"
    + """)) FROM k) FROM d""",
    # ORDER BY: read in the partial index's order, whatever the statistics say of how many rows match
    # (with LIMIT alone, stale statistics made it a scan of every task: 3.6 ms at 100,000).
    "drop_emptied": "DELETE FROM {s}.tasks WHERE n <= 0 AND task_key IN (SELECT task_key FROM {s}.tasks "
    "WHERE n <= 0 ORDER BY task_key LIMIT %s FOR UPDATE SKIP LOCKED)",
    "clear_lock": "LOCK TABLE {s}.tasks IN EXCLUSIVE MODE",
    "notify_all": "SELECT pg_notify(%s, '*')",
    "clear_state": "UPDATE {s}.state SET floor = nextval('{s}.revs')",
    "clear_counters": "UPDATE {s}.counters SET count = 0, nbytes = 0",
    "revision": "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM {s}.revs",
    "incarnate": f"SELECT setval('{{s}}.revs', ((random() * {INCARNATIONS - 1})::bigint + 1) << 32, false)",
    "changes": "WITH q AS MATERIALIZED (SELECT "
    "coalesce((SELECT stamp FROM {s}.tasks WHERE task_key = %(key)s), 0) AS stamp, "
    "%(since)s::bigint < (SELECT floor FROM {s}.state) OR %(since)s::bigint > top "
    "OR %(since)s::bigint >> 32 <> top >> 32 AS reset "
    "FROM (SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS top FROM {s}.revs) AS s) "
    "SELECT 0, t.id, t.record, t.rev, q.stamp, q.reset, u.last_used, "
    "EXISTS (SELECT FROM {s}.removed r WHERE r.id = t.id) FROM q, {s}.trajectories t "
    "LEFT JOIN LATERAL (SELECT last_used FROM {s}.usage u WHERE u.id = t.id) u ON true "
    "WHERE t.task_key = %(key)s AND t.stamp > %(since)s::bigint AND NOT q.reset "
    "UNION ALL SELECT 0, t.id, t.record, t.rev, q.stamp, q.reset, u.last_used, "
    "EXISTS (SELECT FROM {s}.removed r WHERE r.id = t.id) FROM q, {s}.trajectories t "
    "LEFT JOIN LATERAL (SELECT last_used FROM {s}.usage u WHERE u.id = t.id) u ON true "
    "WHERE t.task_key = %(key)s AND q.reset "
    "UNION ALL SELECT 1, b.id, NULL, b.rev, q.stamp, q.reset, NULL, NULL FROM {s}.tombstones b, q "
    "WHERE b.task_key = %(key)s AND b.rev > %(since)s::bigint AND NOT q.reset "
    "UNION ALL SELECT 2, NULL, NULL, 0, q.stamp, q.reset, NULL, NULL FROM q",
    "get": "SELECT task_key, record, EXISTS (SELECT FROM {s}.removed r WHERE r.id = t.id) "
    "FROM {s}.trajectories t WHERE id = %s",
    "records": "SELECT id, task_key, record, EXISTS (SELECT FROM {s}.removed r WHERE r.id = t.id) "
    "FROM {s}.trajectories t ORDER BY rev",
    "indexed_records": "SELECT id, task_key, record FROM {s}.trajectories",
    "clear_removed": "INSERT INTO {s}.removed SELECT id, created_at FROM {s}.trajectories "
    "ON CONFLICT DO NOTHING RETURNING id",
    "prune_removed": "DELETE FROM {s}.removed WHERE created_at < %s",
    "replace": """WITH r AS (SELECT * FROM unnest(%(ids)s::text[], %(old)s::text[], %(new)s::text[]) AS r(id, old, new)),
    t AS (UPDATE {s}.trajectories t SET record = r.new, nbytes = length(r.new) FROM r
        WHERE t.id = r.id AND t.record = r.old RETURNING length(r.new) - length(r.old) AS grown),
    s AS (UPDATE {s}.counters SET nbytes = nbytes + (SELECT coalesce(sum(grown), 0) FROM t)
        WHERE shard = pg_backend_pid() %% """
    + str(COUNTER_SHARDS)
    + """)
    SELECT count(*) FROM t""",
    "usage": f"SELECT {_USAGE} FROM {{s}}.usage WHERE id = %s",
    "victims_priority": "SELECT id FROM {s}.usage ORDER BY priority, rev LIMIT %s",
    "by_last_used": "SELECT id, last_used, attention, rev FROM {s}.usage "
    "WHERE (last_used, rev) > (%s, %s) ORDER BY last_used, rev LIMIT %s",
    "by_attention": "SELECT id, last_used, attention, rev FROM {s}.usage "
    "WHERE (attention, rev) > (%s, %s) ORDER BY attention, rev LIMIT %s",
    "by_score": "SELECT id FROM {s}.usage "
    "ORDER BY %s / (1.0 + GREATEST(%s - last_used, 0.0)) + %s * attention, last_used, rev LIMIT %s",
    "tasks": "SELECT task_key, task FROM {s}.tasks WHERE n > 0",
    "log_event": "INSERT INTO {s}.events (at, data) VALUES (%s, %s)",
    "prune_events": "DELETE FROM {s}.events WHERE seq <= (SELECT MAX(seq) FROM {s}.events) - %s",
    "events": "SELECT seq, data FROM {s}.events WHERE at >= %s ORDER BY at, seq",
    "nbytes": "SELECT coalesce(sum(nbytes), 0) FROM {s}.counters",
    "count": "SELECT coalesce(sum(count), 0) FROM {s}.counters",
    "summaries": "SELECT t.id, t.task, t.tags, t.steps, t.created_at, "
    + ", ".join(f"u.{c}" for c in _USAGE.split(", "))
    + " FROM {s}.trajectories t JOIN {s}.usage u ON u.id = t.id ORDER BY u.last_used DESC, t.rev DESC",
}


_SQL.update(
    {
        name + "_signed": steps.by_creation(_SQL[name])
        for name in ("sole_head", "heads", "candidates", "candidates_pre")
    }
)
"""The step index reads of a signed store: by each trajectory's creation, checked against its record."""


def _connect_timeout(value: object) -> float:
    """libpq's ``connect_timeout`` in seconds: 0 or less waits for ever."""
    try:
        seconds = float(str(value))
    except ValueError as exc:
        raise StoreError(f"invalid connect_timeout {value!r} in the PostgreSQL URL") from exc
    return seconds if seconds > 0 else float("inf")


def _cause(exc: Exception) -> str:
    """Why libpq could not connect, in one line: ``database "x" does not exist``, ``Connection refused``."""
    lines = [line for line in str(exc).splitlines() if " failed: " in line]
    if not lines:
        return " ".join(str(exc).split()).removeprefix("connection failed: ")
    cause = lines[-1].rpartition(" failed: ")[2].strip()
    return " ".join(cause.removeprefix("FATAL:").split())


def _listen_option(url: str) -> tuple[str, bool]:
    """The URL without its ``listen`` query parameter, and whether to listen for changes (default on).

    ``listen=off`` (behind a pooler in transaction mode): readers poll each task's stamp instead.
    """
    if not url.lower().startswith(("postgresql://", "postgres://")):
        return url, True
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    values = [v.strip().lower() for k, v in query if k == "listen"]
    if not values:
        return url, True
    if values[-1] not in ("on", "off", "true", "false", "1", "0"):
        raise StoreError(f"invalid listen={values[-1]!r} in the PostgreSQL URL (on or off)")
    rest = urlencode([(k, v) for k, v in query if k != "listen"])
    return urlunsplit(parts._replace(query=rest)), values[-1] in ("on", "true", "1")


def _statement_timeout(url: str) -> tuple[str, str | None]:
    """The URL without its ``statement_timeout`` query parameter (libpq knows none), and its value."""
    if not url.lower().startswith(("postgresql://", "postgres://")):
        return url, None
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    values = [v for k, v in query if k == "statement_timeout"]
    if not values:
        return url, None
    value = values[-1].strip()
    if not _STATEMENT_TIMEOUT.fullmatch(value):
        raise StoreError(
            f"invalid statement_timeout {value!r} in the PostgreSQL URL (milliseconds, or a number and "
            "a unit: 500ms, 2s, 1min)"
        )
    rest = urlencode([(k, v) for k, v in query if k != "statement_timeout"])
    return urlunsplit(parts._replace(query=rest)), value


def _within(seconds: float, work: Callable[[], None]) -> bool:
    """Run ``work`` in a thread of its own and wait for it ``seconds`` at most.

    True if it ended in time (its exception is raised here); False if not (it goes on alone).
    """
    raised: list[BaseException | None] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:
            raised.append(exc)
        else:
            raised.append(None)

    thread = threading.Thread(target=run, name="muscle_mem connect", daemon=True)
    thread.start()
    thread.join(max(seconds, 0.0))
    if not raised:
        return False
    if raised[0] is not None:
        raise raised[0]
    return True


def _close_later(pool: ConnectionPool[Any]) -> None:
    """Close a pool in the background: its workers may be waiting for a server that does not answer."""
    threading.Thread(target=pool.close, kwargs={"timeout": 60.0}, name="muscle_mem pool", daemon=True).start()


def _first_line(exc: Exception) -> str:
    return " ".join(str(exc).strip().splitlines()[:1]) or type(exc).__name__


def _nothing(conn: Connection[Any]) -> None:
    """An operation that only connects (and migrates)."""


def _columns(pending: list[_records.Prepared]) -> dict[str, Any]:
    """The arrays the ``insert`` statement unnests, one element per trajectory."""
    trajectories = [p.trajectory for p in pending]
    usages = [p.usage for p in pending]
    return {
        "n": len(pending),
        "size": sum(p.nbytes for p in pending),
        "ids": [t.id for t in trajectories],
        "keys": [t.task_key for t in trajectories],
        "tasks": [t.task for t in trajectories],
        "tags": [json.dumps(list(t.tags)) for t in trajectories],
        "steps": [len(t.steps) for t in trajectories],
        "created": [t.created_at for t in trajectories],
        "sizes": [p.nbytes for p in pending],
        "records": [p.text for p in pending],
        "hits": [u.hits for u in usages],
        "last": [u.last_used for u in usages],
        "saved": [u.saved_seconds for u in usages],
        "priority": [u.priority for u in usages],
        "attention": [u.attention for u in usages],
        "step_ids": [r.trajectory_id for p in pending for r in p.steps],
        "step_nos": [r.step_no for p in pending for r in p.steps],
        "nodes": [r.node for p in pending for r in p.steps],
        "signatures": [r.signature for p in pending for r in p.steps],
        "pres": [r.pre_key for p in pending for r in p.steps],
        "posts": [r.post_key for p in pending for r in p.steps],
    }


_INHERITED: list[ChangeListener] = []
"""Listeners inherited through fork: kept referenced, so their connections are never closed in the child."""


def _reset_after_fork() -> None:
    for store in list(_ALL_STORES):
        store._after_fork()


os.register_at_fork(after_in_child=_reset_after_fork)
