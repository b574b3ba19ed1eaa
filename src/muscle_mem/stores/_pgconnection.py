"""A psycopg connection whose every wait for the server ends by a deadline.

Imported only when psycopg is installed (the ``postgres`` extra, psycopg 3.3 or newer).
"""

from __future__ import annotations

import math
import time
from typing import Any, TypeVar

import psycopg
from psycopg.abc import PQGen

_R = TypeVar("_R")


class BoundedConnection(psycopg.Connection[Any]):
    """A connection that stops waiting for the server at ``deadline`` (a ``time.monotonic()`` value).

    A statement still unanswered then raises :class:`psycopg.OperationalError` (the connection's state
    is then unknown: close it). ``math.inf``, the default, waits as psycopg does.
    """

    deadline: float = math.inf

    def wait(self, gen: PQGen[_R], interval: float = 0.1, timeout: float | None = None) -> _R:
        if timeout is None and self.deadline < math.inf:
            timeout = max(self.deadline - time.monotonic(), 0.0)
        return super().wait(gen, interval, timeout)
