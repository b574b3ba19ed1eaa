"""Eviction policies: the usage they produce and the order a local_store evicts in."""

from __future__ import annotations

import math

import pytest

from muscle_mem.eviction import (
    LFU,
    LRU,
    Adaptive,
    AttentionLRU,
    Decayed,
    Policy,
    make_policy,
)
from muscle_mem.model.trajectory import Step, Trajectory, Usage
from muscle_mem.stores import Store


def trajectory(name: str, created_at: float = 0.0) -> Trajectory:
    return Trajectory(
        task_key=f"task {name}",
        task=f"task {name}",
        steps=(Step("tool", "v1"),),
        created_at=created_at,
        id=name,
    )


def replay(local_store: Store, policy: Policy, events: list[tuple[str, float, float]]) -> None:
    """Apply (id, time, relevance) events: the first event of an id stores it, later ones hit it."""
    for tid, now, relevance in events:
        usage = local_store.usage(tid)
        if usage is None:
            local_store.add(trajectory(tid, now), policy.admit(now, relevance))
            continue
        new = policy.hit(usage, now, relevance, saved_seconds=1.0)
        local_store.touch(tid, now=now, saved_seconds=1.0, priority=new.priority, attention=new.attention)


def order(local_store: Store, policy: Policy, now: float) -> list[str]:
    return local_store.victims(len(local_store), policy.rank(now))


def test_make_policy_by_name_and_object() -> None:
    assert isinstance(make_policy("lru"), LRU)
    assert isinstance(make_policy("LFU"), LFU)
    assert isinstance(make_policy("attention-lru"), AttentionLRU)
    assert isinstance(make_policy("decayed"), Decayed)
    assert isinstance(make_policy("adaptive"), Adaptive)
    custom = Decayed(half_life=60.0)
    assert make_policy(custom) is custom
    with pytest.raises(
        ValueError, match=r"unknown eviction policy 'fifo'.*adaptive, lru, lfu, attention-lru, decayed"
    ):
        make_policy("fifo")
    with pytest.raises(TypeError):
        make_policy(42)  # type: ignore[arg-type]


def test_hit_updates_the_statistics() -> None:
    for policy in (LRU(), LFU(), AttentionLRU(), Decayed(), Adaptive()):
        usage = policy.admit(10.0, 0.5)
        assert (usage.hits, usage.last_used, usage.attention) == (0, 10.0, 0.5)
        after = policy.hit(usage, 20.0, 1.5, saved_seconds=2.5)
        assert (after.hits, after.last_used, after.saved_seconds, after.attention) == (1, 20.0, 2.5, 1.0)
        assert usage.hits == 0  # the input is not mutated


def test_lru_evicts_least_recently_used(local_store: Store) -> None:
    policy = LRU()
    replay(local_store, policy, [("a", 1, 0), ("b", 2, 0), ("c", 3, 0), ("a", 4, 0), ("d", 5, 0)])
    assert order(local_store, policy, 6) == ["b", "c", "a", "d"]


def test_lfu_evicts_least_used_then_least_recent(local_store: Store) -> None:
    policy = LFU()
    events = [("a", 1, 0), ("b", 2, 0), ("c", 3, 0), ("a", 4, 0), ("a", 5, 0), ("c", 6, 0), ("d", 7, 0)]
    replay(local_store, policy, events)
    assert order(local_store, policy, 8) == ["b", "d", "c", "a"]


def test_lfu_priority_keeps_ties_by_recency_at_realistic_times() -> None:
    policy = LFU()
    now = 1.75e9
    early, late = policy.admit(now, 0), policy.admit(now + 0.01, 0)
    assert early.priority < late.priority < policy.hit(early, now + 1, 0, 0).priority


def test_attention_lru_uses_the_documents_score(local_store: Store) -> None:
    policy = AttentionLRU(alpha=0.4, beta=0.6)
    # "old" is relevant (attention 1) but unused for 99 s; "new" is recent but irrelevant.
    replay(local_store, policy, [("old", 1, 1.0), ("mid", 50, 0.5), ("new", 99, 0.0)])
    rank = policy.rank(100)
    assert (rank.kind, rank.alpha, rank.beta, rank.now) == ("recency_attention", 0.4, 0.6, 100)
    # old: .4/100 + .6 = .604; mid: .4/51 + .3 = .308; new: .4/2 = .2
    assert order(local_store, policy, 100) == ["new", "mid", "old"]
    # Much later, recency has faded for everyone: attention decides alone.
    assert order(local_store, policy, 1e6) == ["new", "mid", "old"]
    # Right after a hit on "new" with a relevant query, "new" is safest.
    replay(local_store, policy, [("new", 100, 1.0)])
    assert order(local_store, policy, 100) == ["mid", "old", "new"]


def test_decayed_priority_is_the_log_of_forward_decayed_weight() -> None:
    policy = Decayed(half_life=10.0, semantic=0.0, admit_weight=1.0)
    usage = policy.admit(0.0, 0.0)
    assert policy.utility(usage, 0.0) == pytest.approx(1.0)
    assert policy.utility(usage, 10.0) == pytest.approx(0.5)
    usage = policy.hit(usage, 10.0, 0.0, 0.0)
    assert policy.utility(usage, 10.0) == pytest.approx(1.5)
    assert policy.utility(usage, 20.0) == pytest.approx(0.75)


def test_decayed_defaults_put_never_replayed_trajectories_first(local_store: Store) -> None:
    policy = Decayed()  # half-life 1 h, a recording weighs 0.1 of a hit
    assert (policy.half_life, policy.semantic, policy.admit_weight) == (3600.0, 0.0, 0.1)
    assert policy.utility(policy.admit(0.0, 1.0), 0.0) == pytest.approx(0.1)
    # "reused" was stored 3 h ago and replayed once then; "fresh" was just stored, never replayed.
    replay(local_store, policy, [("reused", 0.0, 1.0), ("reused", 1.0, 1.0), ("fresh", 3 * 3600.0, 1.0)])
    assert order(local_store, policy, 3 * 3600.0) == ["fresh", "reused"]  # 0.1 < 1.1 / 8
    # Stored 4 h after the replay, a new recording outranks it: 0.1 * 2**4 > 1.1.
    replay(local_store, policy, [("late", 4 * 3600.0, 1.0)])
    assert order(local_store, policy, 4 * 3600.0) == ["fresh", "reused", "late"]


def test_decayed_order_does_not_change_with_time_and_favours_frequent_recent(local_store: Store) -> None:
    policy = Decayed(half_life=10.0, semantic=0.0, admit_weight=1.0)
    events = [("busy", float(t), 0.0) for t in range(0, 50, 5)]  # used 10 times, last at 45
    events += [("once-old", 1.0, 0.0), ("once-new", 48.0, 0.0), ("twice", 30.0, 0.0), ("twice", 40.0, 0.0)]
    replay(local_store, policy, sorted(events, key=lambda e: e[1]))
    # once-new at 48: 2**4.8 = 27.9; twice: 2**3 + 2**4 = 24 -> once-new outranks twice.
    expected = ["once-old", "twice", "once-new", "busy"]
    assert order(local_store, policy, 50) == expected
    assert order(local_store, policy, 5000) == expected  # no re-ranking ever needed


def test_decayed_relevance_scales_weight() -> None:
    policy = Decayed(half_life=100.0, semantic=1.0, admit_weight=1.0)
    relevant, irrelevant = policy.admit(0.0, 1.0), policy.admit(0.0, 0.2)
    assert policy.utility(relevant, 0.0) == pytest.approx(1.0)
    assert policy.utility(irrelevant, 0.0) == pytest.approx(0.2)
    zero = policy.admit(0.0, 0.0)
    assert math.isfinite(zero.priority) and policy.utility(zero, 0.0) == pytest.approx(0.0, abs=1e-8)
    assert policy.hit(zero, 1.0, 1.0, 0.0).priority == pytest.approx(policy.weight(1.0, 1.0))
    half = Decayed(half_life=100.0, semantic=0.5, admit_weight=1.0)
    assert half.utility(half.admit(0.0, 0.0), 0.0) == pytest.approx(0.5)


def test_decayed_never_overflows_at_wall_clock_times() -> None:
    # A tiny half-life: 2**(now / half_life) is far beyond the float range.
    policy = Decayed(half_life=1.0, admit_weight=1.0)
    now = 1.75e9
    usage = policy.admit(now, 1.0)
    for i in range(1, 1000):
        usage = policy.hit(usage, now + i, 1.0, 0.0)
    assert math.isfinite(usage.priority)
    assert policy.utility(usage, now + 999) == pytest.approx(2.0, rel=1e-6)  # 1 + 1/2 + 1/4 + ...
    assert usage.priority > policy.admit(now + 998, 1.0).priority


def test_decayed_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="half_life"):
        Decayed(half_life=0.0)
    with pytest.raises(ValueError, match="semantic"):
        Decayed(semantic=1.5)
    with pytest.raises(ValueError, match="admit_weight"):
        Decayed(admit_weight=0.0)


def test_usage_round_trips_through_touch(local_store: Store) -> None:
    policy = Decayed()
    local_store.add(trajectory("a", 5.0), policy.admit(5.0, 0.25))
    usage = local_store.usage("a")
    assert usage is not None
    new = policy.hit(usage, 7.0, 0.75, 3.0)
    local_store.touch("a", now=7.0, saved_seconds=3.0, priority=new.priority, attention=new.attention)
    assert local_store.usage("a") == Usage(
        hits=1, last_used=7.0, saved_seconds=3.0, priority=new.priority, attention=0.75
    )
