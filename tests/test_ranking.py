"""The threshold algorithm that chooses Attention-LRU victims: exact, and it reads little."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from muscle_mem.stores import Rank
from muscle_mem.stores._ranking import ATTENTION, RECENCY, Row, lowest, paged

values = st.sampled_from([0.0, 0.5, 1.0, 10.0, 99.0, 100.0, 150.0])
rows_strategy = st.lists(st.tuples(values, st.sampled_from([0.0, 0.1, 0.5, 1.0])), max_size=40)


def ordered(rows: list[Row], column: int) -> list[Row]:
    return sorted(rows, key=lambda r: (r[column], r[3]))


def by_full_scan(rows: list[Row], rank: Rank, count: int, exclude: frozenset[str]) -> list[str]:
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
    chosen = lowest(count, rank, exclude, ordered(rows, RECENCY), ordered(rows, ATTENTION))
    assert chosen == by_full_scan(rows, rank, count, exclude)


def test_reads_a_few_rows_of_a_large_store() -> None:
    rng = random.Random(1)
    rows = [(f"t{i}", rng.uniform(0, 86_400), rng.random(), i) for i in range(100_000)]
    read = 0

    def counting(source: list[Row]) -> Iterator[Row]:
        nonlocal read
        for row in source:
            read += 1
            yield row

    rank = Rank("recency_attention", alpha=0.4, beta=0.6, now=86_400.0)
    chosen = lowest(
        1, rank, frozenset(), counting(ordered(rows, RECENCY)), counting(ordered(rows, ATTENTION))
    )
    assert chosen == by_full_scan(rows, rank, 1, frozenset())
    assert read < 1_000  # of 200,000 rows in the two orders


def test_pages_double_and_resume_after_the_last_key() -> None:
    rows = ordered([(f"t{i}", float(i // 3), 0.0, i) for i in range(200)], RECENCY)
    asked: list[tuple[float, int, int]] = []

    def fetch(value: float, rev: int, limit: int) -> list[Row]:
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
