"""Reference caches for the policy benchmark, each replaying a stream of keys and counting hits.

LRU and LFU come from ``cachetools`` (a well-kept library). ARC and S3-FIFO are written here from
their papers: Megiddo & Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache" (FAST 2003);
Yang et al., "FIFO queues are all you need for cache eviction" (SOSP 2023). libCacheSim's bindings
(the ``field`` extra, ``policies_field.py``) implement both in C and check them: its ARC finds what
this one finds, request for request, on every benchmark stream; its S3-FIFO is a 2024 revision of the
paper's, within half a point of this one (``bench_policies.py --only field``). The references stay
in Python so that the bar the policies are held to needs no C wheel. Belady's MIN (with
bypass: a miss whose next use is the farthest is not admitted) is the offline upper bound.

The Attention-LRU reference code's class is reproduced verbatim (print replaced by a counter, its
``time.time()`` by a simulated clock) to measure the semantics of its own code.
"""

from __future__ import annotations

import heapq
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import cachetools
import numpy as np
import numpy.typing as npt

from muscle_mem.eviction import Adaptive
from muscle_mem.model.trajectory import Usage
from muscle_mem.stores import TunedRecall

Vectors = npt.NDArray[np.float32]


def run_cachetools(cache: cachetools.Cache[int, bool], keys: Sequence[int]) -> int:
    hits = 0
    for key in keys:
        if key in cache:
            cache[key]  # a lookup: counts as a use for LRU and LFU
            hits += 1
        else:
            cache[key] = True
    return hits


def lru(keys: Sequence[int], capacity: int) -> int:
    return run_cachetools(cachetools.LRUCache(capacity), keys)


def lfu(keys: Sequence[int], capacity: int) -> int:
    return run_cachetools(cachetools.LFUCache(capacity), keys)


def arc(keys: Sequence[int], c: int) -> int:
    """Adaptive Replacement Cache (the paper's Fig. 4), counting hits in T1 and T2."""
    t1: OrderedDict[int, None] = OrderedDict()
    t2: OrderedDict[int, None] = OrderedDict()
    b1: OrderedDict[int, None] = OrderedDict()
    b2: OrderedDict[int, None] = OrderedDict()
    p = 0.0
    hits = 0

    def replace(key: int) -> None:
        if t1 and (len(t1) > p or (key in b2 and len(t1) == p)):
            old, _ = t1.popitem(last=False)
            b1[old] = None
        else:
            old, _ = t2.popitem(last=False)
            b2[old] = None

    for key in keys:
        if key in t1 or key in t2:
            hits += 1
            (t1 if key in t1 else t2).pop(key)
            t2[key] = None
        elif key in b1:
            p = min(float(c), p + max(len(b2) / len(b1), 1.0))
            replace(key)
            b1.pop(key)
            t2[key] = None
        elif key in b2:
            p = max(0.0, p - max(len(b1) / len(b2), 1.0))
            replace(key)
            b2.pop(key)
            t2[key] = None
        else:
            if len(t1) + len(b1) == c:
                if len(t1) < c:
                    b1.popitem(last=False)
                    replace(key)
                else:
                    t1.popitem(last=False)
            elif len(t1) + len(b1) < c and len(t1) + len(t2) + len(b1) + len(b2) >= c:
                if len(t1) + len(t2) + len(b1) + len(b2) == 2 * c:
                    b2.popitem(last=False)
                replace(key)
            t1[key] = None
    return hits


def s3fifo(keys: Sequence[int], capacity: int, small_ratio: float = 0.1) -> int:
    """S3-FIFO: a small probationary FIFO, a main FIFO with 2-bit frequencies, a ghost FIFO of keys.

    An object leaves the small queue for the main one if it was used again while there (freq >= 1).
    """
    small_cap = max(1, int(capacity * small_ratio))
    main_cap = capacity - small_cap
    small: deque[int] = deque()
    main: deque[int] = deque()
    ghost: OrderedDict[int, None] = OrderedDict()
    freq: dict[int, int] = {}
    hits = 0

    def evict_main() -> None:
        while main:
            key = main.popleft()
            if freq[key] > 0:
                freq[key] -= 1
                main.append(key)
            else:
                del freq[key]
                return

    def evict_small() -> None:
        while small:
            key = small.popleft()
            if freq[key] >= 1:
                freq[key] = 0
                main.append(key)
                if len(main) > main_cap:
                    evict_main()
            else:
                del freq[key]
                ghost[key] = None
                if len(ghost) > main_cap:
                    ghost.popitem(last=False)
                return

    for key in keys:
        if key in freq:
            hits += 1
            freq[key] = min(freq[key] + 1, 3)
            continue
        while len(small) + len(main) >= capacity:
            if len(small) >= small_cap or not main:
                evict_small()
            else:
                evict_main()
        freq[key] = 0
        if key in ghost:
            del ghost[key]
            main.append(key)
        else:
            small.append(key)
    return hits


def belady(keys: Sequence[int], capacity: int) -> int:
    """Belady's MIN with bypass: evict (or do not admit) what is used again farthest in the future."""
    n = len(keys)
    next_use = np.full(n, n, dtype=np.int64)
    last: dict[int, int] = {}
    for i in range(n - 1, -1, -1):
        next_use[i] = last.get(keys[i], n + i)  # never again: beyond every real next use, distinct
        last[keys[i]] = i
    cached: dict[int, int] = {}
    heap: list[tuple[int, int]] = []  # (-next use, key), stale entries skipped
    hits = 0
    for i, key in enumerate(keys):
        upcoming = int(next_use[i])
        if key in cached:
            hits += 1
        elif len(cached) >= capacity:
            while -heap[0][0] != cached.get(heap[0][1]):
                heapq.heappop(heap)
            if -heap[0][0] <= upcoming:
                continue  # the newcomer is needed last: bypass it
            del cached[heapq.heappop(heap)[1]]
        cached[key] = upcoming
        heapq.heappush(heap, (-upcoming, key))
    return hits


class SimulatedTime:
    """Stands in for the ``time`` module inside the reference code's class."""

    def __init__(self) -> None:
        self.now = 0.0

    def time(self) -> float:
        return self.now


time = SimulatedTime()


class ReferenceAttentionLRUCache:
    """The Attention-LRU reference code's class, verbatim but for the eviction print (counted instead)."""

    def __init__(self, capacity: int = 5, alpha: float = 0.5, beta: float = 0.5) -> None:
        self.capacity = capacity
        self.cache: OrderedDict[object, dict[str, object]] = OrderedDict()
        self.alpha = alpha  # 时间因子权重
        self.beta = beta  # 注意力权重
        self.timestamp: dict[object, float] = {}
        self.evictions = 0

    def _attention_score(self, key: object, query_vector: Vectors) -> float:
        if key not in self.cache:
            return 0
        key_vector = np.array(self.cache[key]["embedding"])
        score = np.dot(query_vector, key_vector) / (np.linalg.norm(query_vector) * np.linalg.norm(key_vector))
        return max(0, score)

    def get(self, key: object, query_vector: Vectors) -> object:
        if key not in self.cache:
            return None
        self.timestamp[key] = time.time()
        self.cache.move_to_end(key)
        att_score = self._attention_score(key, query_vector)
        self.cache[key]["attention"] = att_score
        return self.cache[key]["value"]

    def put(self, key: object, value: object, embedding: Vectors) -> None:
        now = time.time()
        if key in self.cache:
            self.cache.move_to_end(key)
        self.cache[key] = {"value": value, "embedding": embedding, "attention": 0.0}
        self.timestamp[key] = now

        if len(self.cache) > self.capacity:
            self._evict()

    def _evict(self) -> None:
        now = time.time()
        scores = {}
        for key in self.cache:
            recency = 1 / (1 + (now - self.timestamp[key]))
            attention = self.cache[key]["attention"]
            score = self.alpha * recency + self.beta * attention
            scores[key] = score

        remove_key = min(scores, key=scores.get)
        self.cache.pop(remove_key)
        self.evictions += 1


def run_attention_cache(
    make: Callable[[], Any],
    keys: Sequence[int],
    queries: Vectors,
    embeddings: Vectors,
    seconds_per_request: float,
    advance: Callable[[float], None],
) -> int:
    """Replay a stream through a reference-style cache, used as in its demo: ``get`` with the request's
    vector; on a miss ``put`` the task's memory then ``get`` it."""
    cache = make()
    hits = 0
    for i, key in enumerate(keys):
        advance(i * seconds_per_request)
        if cache.get(key, queries[i]) is not None:
            hits += 1
        else:
            cache.put(key, key, embeddings[key])
            cache.get(key, queries[i])
    return hits


class OwnLastAdaptive(Adaptive):
    """The default ``adaptive`` policy before the store's recall kept each task's last priority (a reference copy).

    The same policy, knowing only the priority this process last gave a task: one stored by
    another worker and never replayed starts halfway through probation.
    """

    def admit_shared(self, task_key: str, now: float, relevance: float, read: TunedRecall) -> Usage:
        return super().admit_shared(task_key, now, relevance, replace(read, last=None))
