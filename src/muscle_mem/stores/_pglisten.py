"""The change feed of a PostgreSQL store: a daemon thread that ``LISTEN``s for the tasks others change.

Every add and removal notifies the schema's channel (in its own transaction, so the notification is
delivered when, and only if, it commits) with the task key as payload. The listener marks each task
notified; a reader that finds a task's mark unchanged since its last read knows that nothing was
added to or removed from it, and reads nothing. While the listener is not connected (starting, lost,
reconnecting), :meth:`ChangeListener.mark` returns None and readers read the task's stamp themselves;
when it is back, every task counts as changed once (what happened meanwhile was not heard).

A ping (a notification this listener sends itself) confirms that notifications arrive on connecting
and every :data:`HEARTBEAT` seconds: through a pooler in transaction mode (PgBouncer), ``LISTEN`` does
not work and the ping never comes back, so the listener gives up for :data:`UNHEARD_PAUSE` seconds
and readers poll; a hung connection is found the same way.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

log = logging.getLogger("muscle_mem.stores.postgres")

HEARTBEAT = 30.0
"""Seconds between two pings that check that notifications still arrive."""
PING_WAIT = 5.0
"""Seconds a ping may take to come back before the connection counts as lost."""
UNHEARD_PAUSE = 300.0
"""Seconds before trying again after a connection on which notifications never arrived."""
MARKS_KEPT = 100_000
"""Task marks kept; past it, they are forgotten and every task counts as changed once."""
_WAIT = 0.25
"""Seconds the thread waits for notifications between two looks at whether it must stop or ping."""
ALL_TASKS = "*"
"""The payload that marks every task (a key too long for a payload, a ``clear``)."""


class Unheard(Exception):
    """A ping did not come back in time: notifications do not (or no longer) arrive on the connection."""


class ChangeListener:
    """Listens on ``channel`` from a connection of its own; marks the tasks notified.

    ``connect`` opens an autocommit connection; ``where`` names the store in logs.
    """

    def __init__(self, connect: Callable[[], Any], channel: str, where: str) -> None:
        self._connect = connect
        self.channel = channel
        self._where = where
        self._marks: dict[str, int] = {}
        self._seq = 0
        self._floor = 0
        self.live = False
        """True while notifications are known to arrive (False: readers poll)."""
        self.connections = 0
        """How many times the listener connected (for tests)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._conn: Any = None

    def mark(self, task_key: str) -> int | None:
        """The task's mark (it grows with each notification for it), or None while not listening."""
        if not self.live:
            return None
        marked = self._marks.get(task_key, 0)  # read before the floor: a reset raises the floor first
        return max(marked, self._floor)

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="muscle_mem listener", daemon=True)
            self._thread.start()

    def stop(self, wait: float = 2.0) -> None:
        """Stop listening and close the connection (waits ``wait`` seconds at most for the thread)."""
        self._stop.set()
        self.live = False
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(wait)

    def abandon(self) -> None:
        """In a forked child: never use the parent's thread or connection (they are not ours)."""
        self._stop.set()
        self.live = False
        self._thread = None

    def _run(self) -> None:
        pause = _WAIT
        while not self._stop.is_set():
            try:
                self._conn = self._connect()
                self.connections += 1
                self._listen(self._conn)
                pause = _WAIT
            except Unheard as exc:
                if self.live or self.connections == 1:
                    log.info("%s: %s; readers poll instead", self._where, exc)
                pause = UNHEARD_PAUSE if not self.live else _WAIT
            except Exception as exc:
                if self.live:
                    log.info(
                        "%s: the change listener lost its connection (%s); reconnecting", self._where, exc
                    )
                else:
                    log.debug("%s: the change listener cannot connect (%s)", self._where, exc)
                pause = min(pause * 2, 5.0)
            finally:
                self.live = False
                conn, self._conn = self._conn, None
                if conn is not None:
                    _close_quietly(conn)
            self._stop.wait(pause)

    def _listen(self, conn: Any) -> None:
        conn.execute(f'LISTEN "{self.channel}"')
        self._ping_and_wait(conn)
        self._seq += 1
        self._floor = self._seq  # what was committed before LISTEN was not heard: every task changed
        self._marks.clear()
        self.live = True
        log.debug("%s: listening on %s", self._where, self.channel)
        next_ping = time.monotonic() + HEARTBEAT
        while not self._stop.is_set():
            for notify in conn.notifies(timeout=_WAIT):
                self._note(notify.payload)
            if time.monotonic() >= next_ping:
                self._ping_and_wait(conn)
                next_ping = time.monotonic() + HEARTBEAT

    def _ping_and_wait(self, conn: Any) -> None:
        """Notify ourselves and wait for it (noting what else arrives); :class:`Unheard` if it does not."""
        token = f"ping:{uuid.uuid4().hex}"
        conn.execute("SELECT pg_notify(%s, %s)", (self.channel, token))
        deadline = time.monotonic() + PING_WAIT
        while time.monotonic() < deadline and not self._stop.is_set():
            for notify in conn.notifies(timeout=min(_WAIT, max(deadline - time.monotonic(), 0.0))):
                if notify.payload == token:
                    return
                self._note(notify.payload)
        if not self._stop.is_set():
            raise Unheard("notifications do not arrive (a pooler in transaction mode?)")

    def _note(self, payload: str) -> None:
        """Mark the task a notification names (the thread is the only writer of the marks)."""
        if payload.startswith("ping:"):
            return
        self._seq += 1
        if payload == ALL_TASKS or len(self._marks) >= MARKS_KEPT:
            self._floor = self._seq  # raised before the marks are cleared: see ``mark``
            self._marks.clear()
        else:
            self._marks[payload] = self._seq


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception:
        log.debug("closing the change listener's connection failed", exc_info=True)
