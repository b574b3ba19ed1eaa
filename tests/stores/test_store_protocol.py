"""The Store protocol, identically on the memory, SQLite and PostgreSQL stores."""

from __future__ import annotations

import random
import threading

import pytest

from conftest import trajectory
from muscle_mem.model.trajectory import Usage
from muscle_mem.stores import (
    Event,
    MemoryStore,
    PostgresStore,
    Rank,
    SQLiteStore,
    Store,
    StoreError,
    _records,
    ranking,
)


def test_is_a_store_and_starts_empty(store: Store) -> None:
    assert isinstance(store, Store)
    assert len(store) == 0
    assert store.nbytes() == 0
    assert store.tasks() == {}
    assert store.get("nope") is None
    assert store.usage("nope") is None
    assert store.victims(3, Rank()) == []
    assert list(store.summaries()) == []
    changes = store.changes("task-a", 0)
    assert changes.added == () and changes.removed == frozenset()
    assert changes.revision == store.revision()


def test_add_then_get_round_trips(store: Store) -> None:
    t = trajectory(n=7)
    store.add(t)
    assert store.get(t.id) == t
    assert len(store) == 1
    assert store.nbytes() == len(_records.dumps(t).encode())
    assert store.tasks() == {"task-a": "do task-a"}


def test_adding_a_stored_id_again_changes_nothing(store: Store) -> None:
    t = trajectory()
    store.add(t)
    revision, size = store.revision(), store.nbytes()
    store.add(t)
    assert (store.revision(), len(store), store.nbytes()) == (revision, 1, size)


def test_initial_usage_is_stored_or_defaults_to_creation_time(store: Store) -> None:
    given, default = trajectory(n=1), trajectory(n=2)
    store.add(given, Usage(hits=3, last_used=10.0, saved_seconds=2.0, priority=4.5, attention=0.25))
    store.add(default)
    assert store.usage(given.id) == Usage(3, 10.0, 2.0, 4.5, 0.25)
    assert store.usage(default.id) == Usage(0, default.created_at, 0.0, 0.0, 0.0)


def test_changes_are_incremental_per_task(store: Store) -> None:
    first = [trajectory("task-a", n=i) for i in range(3)]
    for t in first:
        store.add(t)
    store.add(trajectory("task-b"))
    since = store.revision()
    all_a = store.changes("task-a", 0)
    assert [t.id for t in all_a.added] == [t.id for t in first]
    assert all_a.revision <= since  # the task's stamp: revision() moves with every task
    assert store.changes("task-a", all_a.revision).added == ()

    later = trajectory("task-a", n=9)
    store.add(later)
    assert store.revision() > since
    news = store.changes("task-a", since)
    assert [t.id for t in news.added] == [later.id]
    assert news.removed == frozenset() and not news.reset
    assert store.changes("task-b", since).added == ()
    assert store.changes("task-a", news.revision).added == ()


def test_removals_are_reported_to_their_task_only(store: Store) -> None:
    a, b, other = trajectory("task-a", n=1), trajectory("task-a", n=2), trajectory("task-b")
    for t in (a, b, other):
        store.add(t)
    since = store.revision()
    assert store.remove([a.id, other.id, "unknown", a.id]) == 2
    assert store.revision() > since
    changes = store.changes("task-a", since)
    assert changes.removed == {a.id} and changes.added == () and not changes.reset
    assert store.changes("task-b", since).removed == {other.id}
    assert store.get(a.id) is None and store.usage(a.id) is None
    assert store.tasks() == {"task-a": "do task-a"}
    assert store.remove(["unknown"]) == 0
    assert store.remove([]) == 0


def test_a_trajectory_added_and_removed_since_is_not_added(store: Store) -> None:
    since = store.revision()
    t = trajectory()
    store.add(t)
    store.remove([t.id])
    changes = store.changes("task-a", since)
    assert changes.added == ()
    assert changes.removed <= {t.id}


def test_readers_too_far_behind_get_a_reset(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_records, "TOMBSTONE_REVISIONS", 3)
    keep = trajectory(n=0)
    store.add(keep)
    since = store.revision()
    for i in range(1, 6):
        t = trajectory(n=i)
        store.add(t)
        store.remove([t.id])
    stale = store.changes("task-a", since)
    assert stale.reset
    assert [t.id for t in stale.added] == [keep.id]
    recent = store.changes("task-a", store.revision() - 2)
    assert not recent.reset


def test_clear_empties_and_resets_readers(store: Store) -> None:
    for i in range(3):
        store.add(trajectory(n=i))
    since = store.revision()
    store.clear()
    assert len(store) == 0 and store.nbytes() == 0 and store.tasks() == {}
    assert store.revision() > since
    changes = store.changes("task-a", since)
    assert changes.reset and changes.added == ()
    fresh = trajectory(n=5)
    store.add(fresh)
    assert [t.id for t in store.changes("task-a", since).added] == [fresh.id]


def test_touch_updates_use_statistics_only(store: Store) -> None:
    t = trajectory()
    store.add(t, Usage(last_used=1.0))
    revision = store.revision()
    store.touch(t.id, now=50.0, saved_seconds=1.25, priority=2.0, attention=0.5)
    store.touch(t.id, now=60.0, saved_seconds=0.75, priority=3.0, attention=0.125)
    assert store.usage(t.id) == Usage(
        hits=2, last_used=60.0, saved_seconds=2.0, priority=3.0, attention=0.125
    )
    assert store.revision() == revision
    store.touch("absent", now=1.0, saved_seconds=1.0, priority=1.0, attention=1.0)
    assert store.usage("absent") is None


def test_victims_by_priority_lowest_first_with_ties_oldest_first(store: Store) -> None:
    ts = [trajectory(n=i) for i in range(6)]
    priorities = [5.0, 1.0, 3.0, 1.0, 0.5, 9.0]
    for t, p in zip(ts, priorities, strict=True):
        store.add(t, Usage(priority=p))
    assert store.victims(3, Rank()) == [ts[4].id, ts[1].id, ts[3].id]
    assert store.victims(2, Rank(), exclude=frozenset({ts[4].id, ts[3].id})) == [ts[1].id, ts[2].id]
    assert len(store.victims(10, Rank())) == 6
    assert store.victims(0, Rank()) == []
    store.touch(ts[4].id, now=1.0, saved_seconds=0.0, priority=7.0, attention=0.0)
    store.touch(ts[5].id, now=1.0, saved_seconds=0.0, priority=0.1, attention=0.0)
    assert store.victims(2, Rank()) == [ts[5].id, ts[1].id]
    assert len(store) == 6  # asking for victims removes nothing


def test_victims_by_priority_match_a_full_sort(store: Store) -> None:
    rng = random.Random(7)
    ts = [trajectory(n=i) for i in range(60)]
    for t in ts:
        store.add(t, Usage(priority=rng.choice([0.0, 1.0, 2.0])))
    current = {t.id: u.priority for t in ts if (u := store.usage(t.id)) is not None}
    for _ in range(150):
        t = rng.choice(ts)
        current[t.id] = rng.choice([0.0, 1.0, 2.0, rng.random()])
        store.touch(t.id, now=1.0, saved_seconds=0.0, priority=current[t.id], attention=0.0)
    gone = {t.id for t in rng.sample(ts, 10)}
    store.remove(gone)
    exclude = frozenset(t.id for t in rng.sample(ts, 5))
    order = {t.id: i for i, t in enumerate(ts)}
    expected = sorted((tid for tid in current if tid not in gone), key=lambda tid: (current[tid], order[tid]))
    assert store.victims(12, Rank(), exclude) == [tid for tid in expected if tid not in exclude][:12]


def test_victims_by_recency_and_attention(store: Store) -> None:
    now = 1000.0
    ts = [trajectory(n=i) for i in range(5)]
    stats = [(999.0, 0.9), (900.0, 0.1), (990.0, 0.0), (0.0, 0.5), (1010.0, 0.05)]
    for t, (last, attention) in zip(ts, stats, strict=True):
        store.add(t, Usage(last_used=last, attention=attention))
    rank = Rank("recency_attention", alpha=0.5, beta=0.5, now=now)

    def score(last: float, attention: float) -> float:
        return 0.5 / (1 + max(now - last, 0.0)) + 0.5 * attention

    expected = [t.id for t, _ in sorted(zip(ts, stats, strict=True), key=lambda p: score(*p[1]))]
    assert store.victims(5, rank) == expected
    assert store.victims(2, rank, exclude=frozenset({expected[0]})) == expected[1:3]
    store.touch(expected[0], now=now, saved_seconds=0.0, priority=0.0, attention=1.0)
    assert expected[0] not in store.victims(3, rank)


def test_attention_lru_victims_match_scoring_every_trajectory(store: Store) -> None:
    """The threshold algorithm reads a few rows of each order, yet chooses exactly what a full scan
    would, with ties (equal scores, equal last uses) broken by last use then age, after touches."""
    rng = random.Random(7)
    ts = [trajectory(n=i) for i in range(300)]
    usage = {
        t.id: (float(rng.choice([0, 500, 900, 990, 1000])), rng.choice([0.0, 0.25, 0.5, 1.0])) for t in ts
    }
    store.add_many([(t, Usage(last_used=usage[t.id][0], attention=usage[t.id][1])) for t in ts])
    revs = {t.id: i for i, t in enumerate(ts)}
    for t in rng.sample(ts, 60):
        usage[t.id] = (1000.0 + rng.random(), rng.random())
        store.touch(t.id, now=usage[t.id][0], saved_seconds=0.0, priority=0.0, attention=usage[t.id][1])
    for alpha, beta in ((0.5, 0.5), (1.0, 0.0), (0.0, 1.0), (0.4, 0.6)):
        rank = Rank("recency_attention", alpha=alpha, beta=beta, now=1000.5)
        full = sorted(usage, key=lambda tid: (rank.score(*usage[tid]), usage[tid][0], revs[tid]))
        assert store.victims(1, rank) == full[:1]
        assert store.victims(25, rank) == full[:25]
        spared = frozenset(full[:10:2])
        assert store.victims(10, rank, spared) == [tid for tid in full if tid not in spared][:10]
        assert store.victims(1000, rank) == full


def test_attention_lru_victims_when_old_trajectories_have_high_attention(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worst case of the threshold algorithm (last use and attention in opposite orders): it gives
    up after its budget of rows and the store scores every trajectory, with the same answer."""
    monkeypatch.setattr(ranking, "BUDGET", 8)
    ts = [trajectory(n=i) for i in range(60)]
    usage = {t.id: (float(i), 0.9 if i < 30 else 0.0) for i, t in enumerate(ts)}
    store.add_many([(t, Usage(last_used=usage[t.id][0], attention=usage[t.id][1])) for t in ts])
    rank = Rank("recency_attention", alpha=0.4, beta=0.6, now=100.0)
    full = sorted(usage, key=lambda tid: (rank.score(*usage[tid]), usage[tid][0]))
    assert full[0] == ts[30].id  # the oldest with no attention, far down the last-use order
    assert store.victims(3, rank) == full[:3]
    assert store.victims(3, rank, frozenset(full[:2])) == full[2:5]


def test_expire_deletes_trajectories_created_before(store: Store) -> None:
    old = [trajectory(n=i, created_at=100.0 + i) for i in range(3)]
    new = trajectory(n=9, created_at=200.0)
    for t in [*old, new]:
        store.add(t)
    since = store.revision()
    assert sorted(store.expire(102.0)) == sorted(t.id for t in old[:2])
    assert len(store) == 2
    assert store.changes("task-a", since).removed == {old[0].id, old[1].id}
    assert store.expire(50.0) == []
    assert store.nbytes() == sum(len(_records.dumps(t).encode()) for t in (old[2], new))


def test_summaries_most_recently_used_first(store: Store) -> None:
    a, b, c = trajectory("x", n=1, tags=("p", "q")), trajectory("y", n=2), trajectory("z", n=3, steps=1)
    store.add(a, Usage(last_used=10.0))
    store.add(b, Usage(last_used=30.0))
    store.add(c, Usage(last_used=20.0))
    rows = list(store.summaries())
    assert [s.id for s in rows] == [b.id, c.id, a.id]
    first = rows[2]
    assert (first.task, first.tags, first.steps, first.created_at) == ("do x", ("p", "q"), 3, a.created_at)
    assert rows[1].steps == 1 and rows[0].usage.last_used == 30.0


def test_tasks_lists_each_task_once(store: Store) -> None:
    for key in ("a", "b", "a", "c"):
        store.add(trajectory(key))
    assert store.tasks() == {"a": "do a", "b": "do b", "c": "do c"}


def test_threads_adding_at_once_lose_nothing(store: Store) -> None:
    made = [[trajectory(f"task-{w}", n=i) for i in range(25)] for w in range(4)]

    def write(items: list) -> None:  # type: ignore[type-arg]
        for t in items:
            store.add(t)
            store.revision()
            store.changes(t.task_key, 0)

    threads = [threading.Thread(target=write, args=(items,)) for items in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store) == 100
    for w in range(4):
        assert {t.id for t in store.changes(f"task-{w}", 0).added} == {t.id for t in made[w]}


def test_closed_store_refuses_work(store: Store) -> None:
    store.add(trajectory())
    store.close()
    with pytest.raises(StoreError):
        store.add(trajectory(n=1))
    with pytest.raises(StoreError):
        store.changes("task-a", 0)


def event(at: float, hit: bool = True, **more: object) -> Event:
    return Event(at=at, task="do task-a", task_key="task-a", hit=hit, **more)  # type: ignore[arg-type]


def test_events_are_kept_oldest_first(store: Store) -> None:
    store.log_events([event(3.0), event(1.0, hit=False, reason="no trajectory", tool="click")])
    store.log_events([])
    store.log_events([event(2.0, steps_replayed=5, saved_seconds=1.5, tokens_saved=120)])
    assert [e.at for e in store.events()] == [1.0, 2.0, 3.0]
    assert store.events()[0] == event(1.0, hit=False, reason="no trajectory", tool="click")
    assert store.events(since=2.0) == [
        event(2.0, steps_replayed=5, saved_seconds=1.5, tokens_saved=120),
        event(3.0),
    ]
    store.clear()
    assert len(store.events()) == 3  # clear() deletes trajectories, not the report history


def test_only_the_newest_events_are_kept(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_records, "EVENTS_KEPT", 3)
    for at in range(6):
        store.log_events([event(float(at))])
    assert [e.at for e in store.events()] == [3.0, 4.0, 5.0]


def test_add_many_adds_new_ids_once_in_order(store: Store) -> None:
    assert isinstance(store, MemoryStore | SQLiteStore | PostgresStore)  # add_many is not in the protocol
    bulk = store.add_many
    old = trajectory(n=0)
    store.add(old)
    since = store.revision()
    batch = [trajectory(n=i) for i in range(1, 5)]
    assert (
        bulk([(old, None), *[(t, Usage(priority=float(i))) for i, t in enumerate(batch)], (batch[0], None)])
        == 4
    )
    assert store.revision() >= since + 4
    assert [t.id for t in store.changes("task-a", since).added] == [t.id for t in batch]
    assert len(store) == 5 and store.victims(1, Rank()) == [old.id]
    assert store.nbytes() == sum(len(_records.dumps(t).encode()) for t in [old, *batch])
    assert bulk([]) == 0 and bulk([(old, None)]) == 0
