"""The lowest Attention-LRU scores without scoring every item: Fagin's threshold algorithm.

The score ``alpha / (1 + now - last_used) + beta * attention`` reorders items as time passes, so no
index can hold it. But it grows with ``last_used`` and with ``attention`` (both weights are
non-negative), and each store keeps both columns in order. Reading the two orders side by side, any
item not read yet scores at least the *threshold*: the score of the last ``last_used`` read in the
first order with the last ``attention`` read in the second. Once the ``count`` lowest scores read
are below it, they are the answer; usually after a few rows, not the whole store.

Stores supply the two ascending orders as iterators of rows: from an index (:func:`paged`) or from
a :class:`LazyHeap` kept beside their items. When the orders disagree badly (old items with high
attention, new ones with none), the search gives up after :data:`BUDGET` rows and the store scores
every item instead, so the worst case stays that of a full scan.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Generator, Hashable, Iterable, Iterator, Sequence
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
Row = tuple[K, float, float, int]
"""(key, last_used, attention, rev) of one item; rev is unique per item and breaks ties, oldest first."""
RECENCY, ATTENTION = 1, 2
"""Positions in a row of the two columns read in order."""
_START = (float("-inf"), -1)


BUDGET = 4096
"""Rows read from each order before :func:`lowest` gives up (the orders then disagree so much, old
items with high attention, that a full scan is cheaper)."""


def lowest(
    count: int,
    score: Callable[[float, float], float],
    exclude: frozenset[K] | set[K],
    by_recency: Iterable[Row[K]],
    by_attention: Iterable[Row[K]],
    budget: int | None = None,
) -> list[K] | None:
    """The keys of the ``count`` lowest-scored rows, or None past the budget.

    Ties go to the least recently used, then the lowest rev; ``exclude`` is skipped. None when that
    takes more than ``budget`` (default :data:`BUDGET`) rows of each order.
    ``score(last_used, attention)`` must grow with both arguments; ``by_recency`` and
    ``by_attention`` hold the same rows, ascending by ``(last_used, rev)`` and by ``(attention, rev)``.
    """
    worst: list[tuple[float, float, int, K]] = []
    """Max-heap (keys negated) of the best ``count`` rows read so far."""
    seen: set[K] = set()
    recency, attention = iter(by_recency), iter(by_attention)
    for _ in range((BUDGET if budget is None else budget) + len(exclude) + count):
        row_r, row_a = next(recency, None), next(attention, None)
        if row_r is None or row_a is None:
            break  # one order is read to its end: every row has been seen
        for key, last_used, attn, rev in (row_r, row_a):
            if key in seen or key in exclude:
                continue
            seen.add(key)
            entry = (-score(last_used, attn), -last_used, -rev, key)
            if len(worst) < count:
                heapq.heappush(worst, entry)
            elif entry[:3] > worst[0][:3]:
                heapq.heapreplace(worst, entry)
        if len(worst) == count:
            floor = (score(row_r[1], row_a[2]), row_r[1], row_r[3])
            if (-worst[0][0], -worst[0][1], -worst[0][2]) < floor:
                break  # nothing unread can rank lower than the rows kept
    else:
        return None
    return [entry[3] for entry in sorted(worst, key=lambda e: e[:3], reverse=True)]


def paged(
    fetch: Callable[[float, int, int], Sequence[Row[K]]], column: int, first_page: int
) -> Iterator[Row[K]]:
    """The rows of a store's index in order, fetched in pages that double in size.

    Pages start at ``first_page`` rows: small where a query is cheap, larger where each is a round
    trip to a server.
    ``fetch(value, rev, limit)`` returns up to ``limit`` rows after ``(value, rev)`` in the order of
    ``column`` (:data:`RECENCY` or :data:`ATTENTION`), then rev.
    """
    after, size = _START, max(first_page, 1)
    while True:
        rows = fetch(*after, size)
        yield from rows
        if len(rows) < size:
            return
        last = rows[-1]
        after, size = (last[1] if column == RECENCY else last[2], last[3]), size * 2


class LazyHeap(Generic[K]):
    """Keys in ascending ``(value, rev)`` order, where a key's value changes over time.

    A change pushes a new item; the old one goes stale and is skipped (checked against ``current``,
    which returns a key's live ``(value, rev)`` or None once it is gone). The heap is rebuilt from
    the live keys when stale items outnumber them, so each change costs O(log n), amortised.
    """

    def __init__(self, current: Callable[[K], tuple[float, int] | None]) -> None:
        self._current = current
        self._items: list[tuple[float, int, K]] = []

    def __len__(self) -> int:
        return len(self._items)

    def push(self, key: K, value: float, rev: int) -> None:
        heapq.heappush(self._items, (value, rev, key))

    def clear(self) -> None:
        self._items.clear()

    def prune(self, live: int, keys: Iterable[K]) -> None:
        """Rebuild from ``keys`` (the ``live`` keys) if stale items outnumber them."""
        if len(self._items) > 2 * live + 64:
            items = []
            for key in keys:
                found = self._current(key)
                if found is not None:
                    items.append((found[0], found[1], key))
            heapq.heapify(items)
            self._items = items

    def ascending(self) -> Generator[tuple[float, int, K], None, None]:
        """The live items, lowest first; read ones are pushed back when the generator is closed."""
        popped: list[tuple[float, int, K]] = []
        seen: set[K] = set()
        try:
            while self._items:
                item = heapq.heappop(self._items)
                if item[2] in seen or self._current(item[2]) != item[:2]:
                    continue  # stale (or a duplicate of a live item): dropped for good
                seen.add(item[2])
                popped.append(item)
                yield item
        finally:
            for item in popped:
                heapq.heappush(self._items, item)
