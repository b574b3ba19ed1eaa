"""The Attention-LRU reference code's cache: its demo, its score, and never evicting the new key."""

from __future__ import annotations

import logging
import runpy
from pathlib import Path

import numpy as np
import pytest

from muscle_mem.eviction import AttentionLRUCache

# The reference code's demo (its ``__main__`` block), with the import in place of the class definition.
DEMO = """\
import time
import numpy as np
from collections import OrderedDict

from muscle_mem.eviction import AttentionLRUCache

# ===== 实战演示 =====
if __name__ == "__main__":
    np.random.seed(42)
    cache = AttentionLRUCache(capacity=3, alpha=0.4, beta=0.6)
    query = np.random.rand(4)  # 当前语义向量

    # 模拟存入多个记忆节点
    for i in range(5):
        emb = np.random.rand(4)
        cache.put(f"mem{i}", f"value{i}", emb)
        cache.get(f"mem{i}", query)
        time.sleep(0.5)

    print("最终缓存内容：", list(cache.cache.keys()))
"""


class FakeClock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def test_reference_demo_runs_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "demo.py"
    script.write_text(DEMO, encoding="utf-8")
    with caplog.at_level(logging.DEBUG, logger="muscle_mem"):
        runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    # Scores at the 4th put: mem0 .529, mem1 .679, mem2 .630; at the 5th: mem1 .639, mem2 .564,
    # mem3 .861 (margins far above sleep jitter). The reference code's code would evict mem3 and mem4
    # themselves; its printed sample (mem2, mem3, mem4) matches neither.
    assert out == "最终缓存内容： ['mem1', 'mem3', 'mem4']\n"
    assert "Evict" not in out
    evicted = [r.getMessage() for r in caplog.records if r.name.startswith("muscle_mem.eviction")]
    assert len(evicted) == 2
    assert "'mem0'" in evicted[0] and "'mem2'" in evicted[1]


def test_demo_scenario_with_fake_clock_and_callback() -> None:
    rng = np.random.RandomState(42)
    clock = FakeClock()
    evicted: list[tuple[object, object]] = []
    cache = AttentionLRUCache(3, 0.4, 0.6, clock=clock, on_evict=lambda k, v: evicted.append((k, v)))
    query = rng.rand(4)
    for i in range(5):
        cache.put(f"mem{i}", f"value{i}", rng.rand(4))
        assert cache.get(f"mem{i}", query) == f"value{i}"
        clock.advance(0.5)
    assert evicted == [("mem0", "value0"), ("mem2", "value2")]
    assert list(cache.cache) == ["mem1", "mem3", "mem4"]


def test_entries_look_like_the_reference_codes() -> None:
    cache = AttentionLRUCache(clock=FakeClock())
    cache.put("a", 1, [1.0, 0.0])
    assert cache.cache["a"] == {"value": 1, "embedding": [1.0, 0.0], "attention": 0.0}
    assert cache.get("a", [1.0, 1.0]) == 1
    assert cache.cache["a"]["attention"] == pytest.approx(2**-0.5)
    assert cache.get("a", [-1.0, 0.0]) == 1
    assert cache.cache["a"]["attention"] == 0.0  # clipped at 0
    assert cache.get("missing", [1.0, 0.0]) is None
    assert len(cache) == 1 and "a" in cache and "b" not in cache
    with pytest.raises(TypeError):
        cache.cache["b"] = {}  # type: ignore[index]


def test_score_is_alpha_recency_plus_beta_attention() -> None:
    clock = FakeClock(0.0)
    cache = AttentionLRUCache(capacity=4, alpha=0.3, beta=0.7, clock=clock)
    cache.put("x", "X", [1.0, 0.0])
    cache.get("x", [1.0, 0.0])
    clock.advance(3.0)
    cache.put("y", "Y", [0.0, 1.0])
    scores = cache.scores()
    assert scores["x"] == pytest.approx(0.3 / (1 + 3.0) + 0.7 * 1.0)
    assert scores["y"] == pytest.approx(0.3 / (1 + 0.0) + 0.0)


def test_never_evicts_the_key_being_inserted() -> None:
    clock = FakeClock()
    cache = AttentionLRUCache(capacity=2, alpha=0.5, beta=0.5, clock=clock)
    for key in ("a", "b"):
        cache.put(key, key, [1.0, 0.0])
        cache.get(key, [1.0, 0.0])  # attention 1: far above a new item's 0
    cache.put("c", "c", [0.0, 1.0])
    assert "c" in cache
    assert list(cache.cache) == ["b", "c"]  # equal scores: the least recently used goes


def test_lowest_score_goes_not_the_oldest() -> None:
    clock = FakeClock()
    cache = AttentionLRUCache(capacity=2, alpha=0.2, beta=0.8, clock=clock)
    cache.put("old-relevant", 1, [1.0, 0.0])
    cache.get("old-relevant", [1.0, 0.0])
    clock.advance(10.0)
    cache.put("recent-irrelevant", 2, [0.0, 1.0])
    cache.get("recent-irrelevant", [1.0, 0.0])
    clock.advance(1.0)
    cache.put("new", 3, [1.0, 1.0])
    assert list(cache.cache) == ["old-relevant", "new"]


def test_put_existing_key_resets_attention_and_keeps_size() -> None:
    evicted: list[object] = []
    cache = AttentionLRUCache(capacity=2, clock=FakeClock(), on_evict=lambda k, v: evicted.append(k))
    cache.put("a", 1, [1.0])
    cache.get("a", [1.0])
    cache.put("b", 2, [1.0])
    cache.put("a", 10, [1.0])
    assert evicted == []
    assert list(cache.cache) == ["b", "a"]
    assert cache.cache["a"] == {"value": 10, "embedding": [1.0], "attention": 0.0}


def test_slots_are_reused_over_many_evictions() -> None:
    clock = FakeClock()
    evicted: list[object] = []
    cache = AttentionLRUCache(
        capacity=50, alpha=1.0, beta=0.0, clock=clock, on_evict=lambda k, v: evicted.append(k)
    )
    for i in range(1000):
        cache.put(i, i, [1.0])
        clock.advance(1.0)
    # With beta 0 the score is pure recency: exactly LRU.
    assert list(cache.cache) == list(range(950, 1000))
    assert evicted == list(range(950))


def test_each_eviction_is_the_lowest_score_of_all_items() -> None:
    """With reads changing attentions and a clock with ties, each eviction is the lowest score."""
    rng = np.random.default_rng(3)
    clock = FakeClock()
    evicted: list[object] = []
    cache = AttentionLRUCache(40, 0.4, 0.6, clock=clock, on_evict=lambda k, v: evicted.append(k))
    vectors = rng.random((300, 8))
    for i in range(300):
        clock.advance(float(rng.choice([0.0, 0.2, 3.0])))
        if len(cache) == 40:
            scores = cache.scores()
            ticks = {k: n for n, k in enumerate(cache.cache)}  # least recently used first
            expected = min(scores, key=lambda k: (scores[k], ticks[k]))
        cache.put(i, i, vectors[i])
        if i >= 40:
            assert evicted[-1] == expected
        for key in rng.choice(list(cache.cache), size=3):
            cache.get(key, vectors[rng.integers(300)])


def test_zero_vectors_and_backwards_clock_are_safe() -> None:
    clock = FakeClock(100.0)
    cache = AttentionLRUCache(capacity=1, clock=clock)
    cache.put("a", 1, [0.0, 0.0])
    assert cache.get("a", [0.0, 0.0]) == 1
    assert cache.cache["a"]["attention"] == 0.0
    clock.advance(-50.0)
    cache.put("b", 2, [1.0, 0.0])
    assert list(cache.cache) == ["b"]
    assert all(np.isfinite(list(cache.scores().values())))


def test_capacity_must_be_positive_and_weights_not_negative() -> None:
    with pytest.raises(ValueError, match="capacity"):
        AttentionLRUCache(capacity=0)
    with pytest.raises(ValueError, match="must not be negative"):
        AttentionLRUCache(capacity=3, alpha=-0.5)
