"""Attention-LRU victims without scoring every trajectory: Fagin's threshold algorithm.

The score ``alpha / (1 + now - last_used) + beta * attention`` reorders trajectories as time passes,
so no index can hold it. But it grows with ``last_used`` and with ``attention`` (both weights are
non-negative), and each store keeps both columns in order. Reading the two orders side by side, any
trajectory not read yet scores at least the *threshold*: the score of the last ``last_used`` read in
the first order with the last ``attention`` read in the second. Once the ``count`` lowest scores
read are below it, they are the answer; usually after a few rows, not the whole store.

Each store supplies the two ascending orders as iterators of :data:`Row`.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence

from muscle_mem.stores.base import Rank

Row = tuple[str, float, float, int]
"""(id, last_used, attention, rev) of one trajectory."""
RECENCY, ATTENTION = 1, 2
"""Positions in a :data:`Row` of the two columns read in order."""
_START = (float("-inf"), -1)


def lowest(
    count: int, rank: Rank, exclude: frozenset[str], by_recency: Iterable[Row], by_attention: Iterable[Row]
) -> list[str]:
    """The ids of the ``count`` lowest-scored rows (ties: least recently used, then oldest), skipping
    ``exclude``. ``by_recency`` and ``by_attention`` hold the same rows, ascending by ``(last_used,
    rev)`` and by ``(attention, rev)``."""
    score = rank.score
    worst: list[tuple[float, float, int, str]] = []
    """Max-heap (keys negated) of the best ``count`` rows read so far."""
    seen: set[str] = set()
    recency, attention = iter(by_recency), iter(by_attention)
    while True:
        row_r, row_a = next(recency, None), next(attention, None)
        if row_r is None or row_a is None:
            break  # one order is read to its end: every row has been seen
        for tid, last_used, attn, rev in (row_r, row_a):
            if tid in seen or tid in exclude:
                continue
            seen.add(tid)
            key = (-score(last_used, attn), -last_used, -rev, tid)
            if len(worst) < count:
                heapq.heappush(worst, key)
            elif key > worst[0]:
                heapq.heapreplace(worst, key)
        if len(worst) == count:
            floor = (score(row_r[1], row_a[2]), row_r[1], row_r[3])
            if (-worst[0][0], -worst[0][1], -worst[0][2]) < floor:
                break  # nothing unread can rank lower than the rows kept
    return [key[3] for key in sorted(worst, reverse=True)]


def paged(fetch: Callable[[float, int, int], Sequence[Row]], column: int, first_page: int) -> Iterator[Row]:
    """The rows of a store's index in order, fetched in pages that double in size from ``first_page``
    (small where a query is cheap, larger where each is a round trip to a server).

    ``fetch(value, rev, limit)`` returns up to ``limit`` rows after ``(value, rev)`` in the order of
    ``column`` (:data:`RECENCY` or :data:`ATTENTION`), then rev.
    """
    after, size = _START, max(first_page, 1)
    while True:
        rows = fetch(*after, size)
        yield from rows
        if len(rows) < size:
            return
        after, size = (float(rows[-1][column]), rows[-1][3]), size * 2
