"""The Attention-LRU reference code's cache, faithful to its API and score, vectorised.

``score = alpha * recency + beta * attention`` with ``recency = 1 / (1 + seconds since last access)``
and ``attention`` the cosine (clipped at 0) of an item's embedding with the query of its last ``get``
(0 until its first ``get``). When the cache is over capacity the lowest score is evicted, ties going
to the least recently used, and never the key being inserted (the reference code's own code evicts it,
since its attention is still 0: see docs/policies.md).
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

log = logging.getLogger(__name__)

Entry = dict[str, Any]
"""One cached item, as in the reference code: ``{"value": ..., "embedding": ..., "attention": float}``."""


def cosine(a: npt.ArrayLike, b: npt.ArrayLike) -> float:
    """The cosine of two vectors clipped at 0 (0 when either is the zero vector)."""
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    norm = float(np.linalg.norm(x) * np.linalg.norm(y))
    return max(0.0, float(x @ y) / norm) if norm > 0.0 else 0.0


class AttentionLRUCache:
    """A bounded mapping that evicts the item with the lowest recency-plus-attention score.

    ``put(key, value, embedding)`` stores an item (attention 0, as in the reference code); ``get(key,
    query_vector)`` returns its value or None and sets its attention from the query. Scores of all
    items are computed with numpy over arrays kept beside ``cache``; ``clock`` is injectable for
    tests; every eviction is logged on the ``muscle_mem.eviction`` logger and passed to
    ``on_evict(key, value)``. Not thread-safe (like the reference code's class).
    """

    def __init__(
        self,
        capacity: int = 5,
        alpha: float = 0.5,
        beta: float = 0.5,
        *,
        clock: Callable[[], float] = time.time,
        on_evict: Callable[[Hashable, Any], None] | None = None,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"capacity must be at least 1, not {capacity!r}")
        if not (alpha >= 0 and beta >= 0):
            raise ValueError(f"alpha and beta must not be negative: alpha={alpha!r}, beta={beta!r}")
        self.capacity = capacity
        self.alpha = alpha
        self.beta = beta
        self.clock = clock
        self.on_evict = on_evict
        self._entries: OrderedDict[Hashable, Entry] = OrderedDict()
        self._slot: dict[Hashable, int] = {}
        self._free = list(range(capacity, -1, -1))
        self._keys: list[Hashable] = [None] * (capacity + 1)
        self._last = np.zeros(capacity + 1)
        """Time of each slot's last access (``put`` or ``get``)."""
        self._attention = np.zeros(capacity + 1)
        self._order = np.zeros(capacity + 1, dtype=np.int64)
        """When each slot last moved to the end of ``cache``: breaks score ties least recent first."""
        self._live = np.zeros(capacity + 1, dtype=bool)
        self._tick = 0

    @property
    def cache(self) -> Mapping[Hashable, Entry]:
        """The items, least recently used first (a read-only view)."""
        return MappingProxyType(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def get(self, key: Hashable, query_vector: npt.ArrayLike) -> Any:
        """The value of ``key`` (None if absent); marks it used and sets its attention from the query."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        slot = self._slot[key]
        attention = cosine(query_vector, entry["embedding"])
        entry["attention"] = attention
        self._attention[slot] = attention
        self._use(key, slot, self.clock())
        return entry["value"]

    def put(self, key: Hashable, value: Any, embedding: npt.ArrayLike) -> None:
        """Store ``value`` under ``key`` (attention 0), then evict one other item if over capacity."""
        now = self.clock()
        self._entries[key] = {"value": value, "embedding": embedding, "attention": 0.0}
        slot = self._slot.get(key)
        if slot is None:
            slot = self._slot[key] = self._free.pop()
            self._keys[slot] = key
            self._live[slot] = True
        self._attention[slot] = 0.0
        self._use(key, slot, now)
        if len(self._entries) > self.capacity:
            self._evict(now, keep=slot)

    def scores(self, now: float | None = None) -> dict[Hashable, float]:
        """Every item's score at ``now`` (default: the clock), for inspection; eviction builds no dict."""
        score = self._score(self.clock() if now is None else now)
        return {k: float(score[s]) for k, s in self._slot.items()}

    def _use(self, key: Hashable, slot: int, now: float) -> None:
        self._entries.move_to_end(key)
        self._last[slot] = now
        self._tick += 1
        self._order[slot] = self._tick

    def _score(self, now: float) -> npt.NDArray[np.float64]:
        recency = 1.0 / (1.0 + np.maximum(now - self._last, 0.0))
        return self.alpha * recency + self.beta * self._attention

    def _evict(self, now: float, keep: int) -> None:
        candidates = self._live.copy()
        candidates[keep] = False
        score = np.where(candidates, self._score(now), np.inf)
        lowest = np.flatnonzero(score == score.min())
        slot = int(lowest[np.argmin(self._order[lowest])])
        key = self._keys[slot]
        entry = self._entries.pop(key)
        del self._slot[key]
        self._keys[slot] = None
        self._live[slot] = False
        self._free.append(slot)
        log.debug("evicted %r from an Attention-LRU cache (score %.4f)", key, score[slot])
        if self.on_evict is not None:
            self.on_evict(key, entry["value"])
