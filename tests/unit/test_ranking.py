"""The threshold algorithm that chooses Attention-LRU victims: exact, and it reads little."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import closing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from muscle_mem.stores import Rank
from muscle_mem.stores.ranking import ATTENTION, RECENCY, LazyHeap, Row, lowest, paged

values = st.sampled_from([0.0, 0.5, 1.0, 10.0, 99.0, 100.0, 150.0])
rows_strategy = st.lists(st.tuples(values, st.sampled_from([0.0, 0.1, 0.5, 1.0])), max_size=40)


def ordered(rows: list[Row[str]], column: int) -> list[Row[str]]:
    return sorted(rows, key=lambda r: (r[column], r[3]))


def by_full_scan(rows: list[Row[str]], rank: Rank, count: int, exclude: frozenset[str]) -> list[str]:
    kept = [r for r in rows if r[0] not in exclude]
    return [r[0] for r in sorted(kept, key=lambda r: (rank.score(r[1], r[2]), r[1], r[3]))][:count]


@given(
    rows_strategy,
    st.integers(1, 45),
    st.floats(0, 2),
    st.floats(0, 2),
    st.sets(st.integers(0, 39), max_size=5),
)
def test_chooses_exactly_what_a_full_scan_chooses(
    pairs: list[tuple[float, float]], count: int, alpha: float, beta: float, excluded: set[int]
) -> None:
    rows = [(f"t{i}", last, attention, i) for i, (last, attention) in enumerate(pairs)]
    rank = Rank("recency_attention", alpha=alpha, beta=beta, now=100.0)
    exclude = frozenset(f"t{i}" for i in excluded)
    chosen = lowest(count, rank.score, exclude, ordered(rows, RECENCY), ordered(rows, ATTENTION))
    assert chosen == by_full_scan(rows, rank, count, exclude)


def test_reads_a_few_rows_of_a_large_store() -> None:
    rng = random.Random(1)
    rows = [(f"t{i}", rng.uniform(0, 86_400), rng.random(), i) for i in range(100_000)]
    read = 0

    def counting(source: list[Row[str]]) -> Iterator[Row[str]]:
        nonlocal read
        for row in source:
            read += 1
            yield row

    rank = Rank("recency_attention", alpha=0.4, beta=0.6, now=86_400.0)
    chosen = lowest(
        1, rank.score, frozenset(), counting(ordered(rows, RECENCY)), counting(ordered(rows, ATTENTION))
    )
    assert chosen == by_full_scan(rows, rank, 1, frozenset())
    assert read < 1_000  # of 200,000 rows in the two orders


def test_pages_double_and_resume_after_the_last_key() -> None:
    rows = ordered([(f"t{i}", float(i // 3), 0.0, i) for i in range(200)], RECENCY)
    asked: list[tuple[float, int, int]] = []

    def fetch(value: float, rev: int, limit: int) -> list[Row[str]]:
        asked.append((value, rev, limit))
        return [r for r in rows if (r[1], r[3]) > (value, rev)][:limit]

    assert list(paged(fetch, RECENCY, 64)) == rows
    assert asked == [(float("-inf"), -1, 64), (21.0, 63, 128), (63.0, 191, 256)]
    asked.clear()
    assert list(paged(fetch, RECENCY, 100)) == rows
    assert asked == [(float("-inf"), -1, 100), (33.0, 99, 200)]


def test_negative_weights_are_refused() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        Rank("recency_attention", alpha=-1.0)


def test_lazy_heap_skips_stale_items_and_keeps_what_it_read() -> None:
    values = {"a": (3.0, 1), "b": (1.0, 2), "c": (2.0, 3)}
    heap: LazyHeap[str] = LazyHeap(values.get)
    for key, (value, rev) in values.items():
        heap.push(key, value, rev)
    values["b"] = (5.0, 2)  # b's value changed: its old item is stale
    heap.push("b", 5.0, 2)
    del values["c"]  # c is gone
    with closing(heap.ascending()) as items:
        assert next(items) == (3.0, 1, "a")  # b's stale 1.0 and the removed c were skipped
    assert list(heap.ascending()) == [(3.0, 1, "a"), (5.0, 2, "b")]  # what was read went back
    heap.push("a", 3.0, 1)  # a duplicate of a live item is read once
    assert [key for _, _, key in heap.ascending()] == ["a", "b"]
    for _ in range(200):
        heap.push("a", 3.0, 1)
    heap.prune(len(values), values)
    assert len(heap) == 2


def test_gives_up_after_its_budget_when_the_orders_disagree() -> None:
    rows = [(f"t{i}", float(i), 0.9 if i < 500 else 0.0, i) for i in range(1000)]  # old items read often
    rank = Rank("recency_attention", alpha=0.4, beta=0.6, now=1000.0)
    by_recency, by_attention = ordered(rows, RECENCY), ordered(rows, ATTENTION)
    assert lowest(1, rank.score, frozenset(), by_recency, by_attention, budget=100) is None
    assert lowest(1, rank.score, frozenset(), by_recency, by_attention) == by_full_scan(
        rows, rank, 1, frozenset()
    )
