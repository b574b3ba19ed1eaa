"""The default policy, ``adaptive``: a clock driven by evictions, probation, capped lives and recall."""

from __future__ import annotations

import math

import pytest

from muscle_mem.eviction import (
    Adaptive,
    Bounds,
    Decayed,
    FrontierAware,
    RecallAware,
    SharesTuning,
    TaskAwarePolicy,
    make_policy,
)
from muscle_mem.eviction.policies import store_admit
from muscle_mem.model.trajectory import Step, Trajectory, Usage
from muscle_mem.stores import MemoryStore, Store, TunedRecall


def trajectory(name: str, created_at: float = 0.0) -> Trajectory:
    return Trajectory(task_key=name, task=name, steps=(Step("tool", "v1"),), created_at=created_at, id=name)


class Worker:
    """One engine's share of the path: its own policy and bounds, a local_store it may share with others."""

    def __init__(self, local_store: Store, capacity: int) -> None:
        self.local_store = local_store
        self.policy = Adaptive(history=5 * capacity, kept=capacity)
        self.bounds = Bounds(capacity=capacity, max_bytes=None, ttl=None, policy=self.policy)
        self.stored = 0
        self.admit = store_admit(self.policy, local_store)

    def request(self, task: str, now: float) -> bool:
        """Serve one request of ``task`` (its trajectories are ``task#n``); whether it was a hit."""
        found = [s.id for s in self.local_store.summaries() if s.task == task]
        if found:
            usage = self.local_store.usage(found[0])
            assert usage is not None
            new = self.policy.hit_task(task, usage, now, 1.0, 1.0)
            self.local_store.touch(found[0], now=now, saved_seconds=1.0, priority=new.priority, attention=0.0)
            return True
        self.stored += 1
        made = Trajectory(
            task_key=task, task=task, steps=(Step("tool", "v1"),), id=f"{task}#{id(self)}-{self.stored}"
        )
        self.local_store.add(made, self.admit(task, now, 1.0))
        self.bounds.enforce(self.local_store, now, frozenset((made.id,)))
        return False


def order(local_store: Store) -> list[str]:
    """The tasks stored, first to be evicted first."""
    return [s.task for s in sorted(local_store.summaries(), key=lambda s: s.usage.priority)]


def test_adaptive_is_the_task_aware_frontier_aware_default_sized_by_the_capacity() -> None:
    from muscle_mem.engine import DEFAULT_POLICY

    assert DEFAULT_POLICY == "adaptive"
    assert isinstance(Adaptive(), TaskAwarePolicy) and isinstance(Adaptive(), FrontierAware)
    assert not isinstance(Decayed(), FrontierAware)
    sized = make_policy("adaptive", capacity=500)
    assert isinstance(sized, Adaptive) and (sized.history, sized.kept) == (2_500, 500)
    assert make_policy("adaptive").history == Adaptive().history  # type: ignore[attr-defined]
    assert make_policy("adaptive") is not make_policy("adaptive")  # its state is per engine


def test_a_new_recording_starts_on_probation_and_a_replay_adds_a_capped_life() -> None:
    policy = Adaptive(kept=100, probation=0.5)
    policy.evicted(1_000.0, 100)
    assert policy.clock == 1_100.0  # the frontier plus the number of trajectories kept
    assert policy.admit(5.0, 1.0).priority == 1_050.0  # half the local_store's span in the past
    assert policy.life == 1.0  # at the neutral probation, a replay is worth one turn of the store
    once = policy.hit(Usage(priority=1_050.0), 6.0, 1.0, 0.0)
    assert once.priority == 1_150.0  # +100 slots
    twice = policy.hit(once, 7.0, 1.0, 0.0)
    assert twice.priority == 1_200.0  # capped: one life past the clock
    stale = policy.hit(Usage(priority=900.0), 8.0, 1.0, 0.0)
    assert stale.priority == 1_100.0  # a replay is never older than the clock


def test_a_replay_life_moves_with_the_probation() -> None:
    """The feedback that lengthens the probation lengthens what a replay earns, as ARC sizes both lists."""
    assert [Adaptive(probation=p).life for p in (0.0, 0.5, 1.0)] == [0.5, 1.0, 1.5]
    policy = Adaptive(kept=10, probation=0.5)
    policy.hit_task("old", Usage(), 0.0, 1.0, 0.0)
    policy.admit_task("old", 1.0, 1.0)  # a replayed task came back: probation (and life) were too short
    assert policy.life > 1.0
    assert policy.hit(Usage(priority=policy.clock), 2.0, 1.0, 0.0).priority > policy.clock + policy.kept


def test_at_full_probation_a_new_recording_starts_at_the_frontier() -> None:
    policy = Adaptive(kept=10, probation=1.0)
    policy.evicted(50.0, 10)
    assert policy.admit(0.0, 1.0).priority == 50.0  # the next eviction takes it unless it is replayed first


def test_the_clock_moves_with_evictions_only_and_never_back() -> None:
    policy = Adaptive(kept=10)
    before = [policy.admit(now, 1.0).priority for now in (0.0, 1e9)]
    assert before[0] == before[1]  # the wall clock plays no part
    policy.evicted(50.0, 10)
    policy.evicted(20.0, 10)  # another worker's older victim: the clock stays
    assert policy.clock == 60.0
    policy.evicted(math.nan, 10)
    assert policy.clock == 60.0


def test_adaptive_evicts_the_same_whatever_the_pace() -> None:
    """The same requests one second or ten minutes apart, or at a changing pace, leave the same local_store."""
    pattern = ["w", "w", "a", "b", "a", "c", "b", "d", "a", "e", "c", "f", "a", "g", "w", "h", "a", "i"]
    kept = []
    for gaps in ([1.0] * len(pattern), [600.0] * len(pattern), [1.0, 600.0] * (len(pattern) // 2)):
        shared = MemoryStore()
        worker, now = Worker(shared, capacity=4), 1.75e9
        for task, gap in zip(pattern, gaps, strict=True):
            now += gap
            worker.request(task, now)
        kept.append(order(shared))
    assert kept[0] == kept[1] == kept[2]


def test_bounds_tell_the_policy_the_frontier(local_store: Store) -> None:
    policy = Adaptive(kept=2, probation=0.0)
    bounds = Bounds(capacity=2, max_bytes=None, ttl=None, policy=policy)
    for i, name in enumerate(("a", "b", "c")):
        local_store.add(trajectory(name), Usage(priority=10.0 * (i + 1)))
    assert bounds.enforce(local_store, 0.0, frozenset(("c",))) == ["a"]
    assert (policy.clock, policy.kept) == (12.0, 2)  # a's priority plus the two kept


def test_never_replayed_recordings_go_first_and_a_recalled_task_starts_ahead_of_them(
    local_store: Store,
) -> None:
    worker = Worker(local_store, capacity=3)
    for now, task in enumerate(["a", "a", "b", "c", "d"]):  # "a" replayed once; b, c, d new
        worker.request(task, float(now))
    assert order(local_store)[-1] == "a"  # b went first; c and d are on probation below "a"
    assert "b" not in order(local_store)
    worker.request("b", 5.0)  # b is back soon: it resumes from its last priority plus a life
    assert order(local_store)[1:] == ["b", "a"]  # above the recording on probation, below the replayed one
    assert worker.policy.probation < Adaptive().probation  # b was evicted unreplayed: probation shortened


def test_probation_is_tuned_by_which_kind_of_remembered_task_comes_back() -> None:
    """Recorded again after being evicted unreplayed: probation was too long; after replays: too short."""
    policy = Adaptive(kept=10, probation=0.5)
    policy.admit_task("new", 0.0, 1.0)
    policy.admit_task("new", 1.0, 1.0)
    assert policy.probation == pytest.approx(0.4)  # one slot of ten
    policy.hit_task("old", Usage(), 2.0, 1.0, 0.0)
    policy.admit_task("old", 3.0, 1.0)
    assert policy.probation > 0.4


def test_a_shared_recall_decides_admission_over_the_process_own() -> None:
    """``admit_recalled`` admits by the store's answer: replayed at the clock, stored halfway, else on probation.

    ("Stored halfway" holds for a task this process never gave a priority, e.g. another worker's.)
    """
    policy = Adaptive(kept=10, probation=0.5)
    assert isinstance(policy, RecallAware)
    policy.evicted(100.0, 10)
    assert policy.admit_recalled("fresh", 0.0, 1.0, None).priority == pytest.approx(105.0)
    assert policy.admit_recalled("replayed", 0.0, 1.0, True).priority == 110.0
    assert policy.probation > 0.5  # a replayed task came back: probation was too short
    tuned = policy.probation
    halfway = policy.admit_recalled("unreplayed", 0.0, 1.0, False).priority
    assert policy.probation < tuned  # one evicted unreplayed came back: probation was too long
    assert halfway == pytest.approx(110.0 - policy.probation * 10 / 2)  # evidence, not yet proof
    policy.admit_task("local", 0.0, 1.0)
    on_probation = policy.clock - policy.probation * policy.kept
    assert policy.admit_recalled("local", 0.0, 1.0, None).priority == pytest.approx(on_probation)


def test_a_task_evicted_unreplayed_resumes_from_its_last_priority_plus_a_life() -> None:
    """Back soon: where a replay would have put it (capped at the clock); back late: a new recording."""
    policy = Adaptive(kept=10, probation=0.5)
    policy.evicted(100.0, 10)
    assert policy.admit_task("soon", 0.0, 1.0).priority == pytest.approx(105.0)
    policy.evicted(106.0, 10)  # the clock is at 116
    resumed = policy.admit_task("soon", 1.0, 1.0).priority
    assert policy.probation == pytest.approx(0.4)  # evicted unreplayed and back: probation was too long
    assert resumed == pytest.approx(105.0 + policy.life * 10)  # 114: above a new one's 112, below 116
    assert policy.admit_task("late", 2.0, 1.0).priority == pytest.approx(112.0)
    policy.evicted(300.0, 10)
    restarted = policy.admit_task("late", 3.0, 1.0).priority
    assert restarted == pytest.approx(policy.clock - policy.probation * policy.kept)  # as a new one
    policy.evicted(400.0, 10)
    policy.hit_task("hit", Usage(priority=405.0), 4.0, 1.0, 0.0)
    assert policy.admit_task("hit", 5.0, 1.0).priority == policy.clock  # replayed: at the clock


def test_adaptive_without_history_remembers_nothing() -> None:
    policy = Adaptive(history=0)
    first = policy.admit_task("a", 0.0, 1.0)
    assert policy.admit_task("a", 0.0, 1.0) == first
    assert policy.probation == Adaptive().probation


def test_workers_sharing_a_store_keep_clocks_that_agree() -> None:
    """Each worker's clock follows the shared frontier, so priorities compare whoever wrote them."""
    shared = MemoryStore()
    workers = [Worker(shared, capacity=20) for _ in range(4)]
    for i in range(2_000):
        workers[(i * 7) % 4].request(f"task {(i * 37) % 97}", float(i))
    clocks = [w.policy.clock for w in workers]
    assert max(clocks) - min(clocks) <= 2 * 20  # within a local_store's span of each other
    assert min(clocks) > 1_000  # each moved with the frontier, not with its own quarter of requests


def test_a_restarted_worker_catches_up_with_the_clock_from_what_it_reads() -> None:
    shared = MemoryStore()
    old = Worker(shared, capacity=10)
    for i in range(300):
        old.request(f"task {i % 30}", float(i))
    fresh = Worker(shared, capacity=10)
    stored = next(iter(shared.summaries()))
    fresh.request(stored.task, 301.0)  # a hit: the priority read dates the clock
    assert fresh.policy.clock >= old.policy.clock - 2 * 10


def test_adaptive_priorities_stay_finite_after_many_replays() -> None:
    policy = Adaptive(kept=1)
    usage = policy.admit(0.0, 1.0)
    for step in range(10_000):
        usage = policy.hit(usage, float(step), 1.0, 0.0)
        policy.evicted(usage.priority - 1.0, 1)
    assert math.isfinite(usage.priority) and usage.priority <= policy.clock + policy.life


def test_adaptive_rejects_bad_parameters() -> None:
    for bad in ({"history": -1}, {"history": 1.5}, {"kept": 0}, {"probation": -0.1}, {"probation": 1.01}):
        with pytest.raises(ValueError):
            Adaptive(**bad)  # type: ignore[arg-type]


def test_a_shared_tuning_replaces_the_probation_and_the_change_is_handed_back_once() -> None:
    """``admit_shared`` tunes from the store's probation; ``unshared`` hands over the change it made, once."""
    policy = Adaptive(kept=10, probation=0.5)
    assert isinstance(policy, SharesTuning)
    assert policy.unshared() == (0.5, 0.0)
    policy.evicted(100.0, 10)
    assert policy.admit_shared("replayed", 0.0, 1.0, TunedRecall(True, 0.3, (0, 0))).priority == 110.0
    tuned = policy.probation
    assert tuned > 0.3  # the store's probation, raised as admit_recalled raises its own
    assert policy.unshared() == (tuned, pytest.approx(tuned - 0.3))
    assert policy.unshared() == (tuned, 0.0)
    fresh = policy.admit_shared("fresh", 0.0, 1.0, TunedRecall(None, 0.6, (0, 0)))
    assert fresh.priority == pytest.approx(110.0 - 0.6 * 10)
    assert policy.unshared() == (0.6, 0.0)  # not remembered: nothing tuned


def test_a_shared_recall_resumes_a_task_this_process_stored_and_starts_another_halfway() -> None:
    """Remembered by the store as only stored: from the priority this process gave it, else halfway."""
    policy = Adaptive(kept=10, probation=0.5)
    policy.evicted(100.0, 10)
    assert policy.admit_shared("mine", 0.0, 1.0, TunedRecall(None, 0.5, (0, 0))).priority == 105.0
    policy.evicted(106.0, 10)  # the clock is at 116
    mine = policy.admit_shared("mine", 1.0, 1.0, TunedRecall(False, 0.5, (1, 0))).priority
    assert mine == pytest.approx(105.0 + policy.life * 10)
    theirs = policy.admit_shared("theirs", 2.0, 1.0, TunedRecall(False, 0.5, (1, 0))).priority
    assert theirs == pytest.approx(116.0 - policy.probation * 10 / 2)


@pytest.mark.parametrize(("shared", "expected"), [(math.nan, 0.5), (math.inf, 0.5), (5.0, 1.0), (-1.0, 0.0)])
def test_a_hostile_shared_tuning_never_leaves_the_probation_outside_its_range(
    shared: float, expected: float
) -> None:
    policy = Adaptive(kept=10, probation=0.5)
    policy.admit_shared("fresh", 0.0, 1.0, TunedRecall(None, shared, None))
    assert policy.probation == expected


def test_every_change_a_worker_tunes_lands_in_the_store_once() -> None:
    """Two workers tuning through one store: its probation moves by each one's every step, none lost."""
    shared = MemoryStore()
    for key in "pqrs":
        shared.add(trajectory(key))  # each remembered as stored, never replayed
    workers = [Adaptive(kept=10, probation=0.5) for _ in range(2)]
    for i, key in enumerate("pqrs"):
        store_admit(workers[i % 2], shared)(key, 0.0, 1.0)  # each worker: two steps of 0.1 down
    for worker in workers:
        tuning = shared.recalled_tuned("any", *worker.unshared()).tuning
    assert tuning == pytest.approx(0.1)
    assert workers[1].probation == pytest.approx(0.2)  # it read the store before the other's last step


@pytest.mark.parametrize(("kinds", "step"), [((1, 4), 0.4), ((4, 1), 0.1), (None, 0.1), ((math.nan, 4), 0.1)])
def test_the_store_counted_kinds_weigh_the_tuning_step(kinds: tuple[int, int] | None, step: float) -> None:
    """A task back never replayed shortens the probation by a step scaled as the store counts the two kinds
    (the process's own count when the store cannot tell, or tells what no count is)."""
    policy = Adaptive(kept=10, probation=0.5)
    policy.admit_shared("back", 0.0, 1.0, TunedRecall(False, 0.5, kinds))
    assert policy.probation == pytest.approx(0.5 - step)


def test_a_worker_resumes_a_task_from_the_priority_another_worker_last_gave_it() -> None:
    """The store's recall keeps each task's last priority: a worker that never saw the task reads it."""
    shared = MemoryStore()
    first, second = Adaptive(kept=100, probation=0.5), Adaptive(kept=100, probation=0.5)
    first.evicted(1_000.0, 100)
    shared.add(trajectory("t"), store_admit(first, shared)("t", 0.0, 1.0))
    assert shared.recalled_tuned("t", 0.5, 0.0).last == 1_050.0
    shared.remove(["t"])  # evicted, never replayed
    second.evicted(1_070.0, 100)  # its clock is at 1,170
    resumed = store_admit(second, shared)("t", 1.0, 1.0).priority
    assert resumed == pytest.approx(1_050.0 + second.life * 100)  # as if replayed now
    assert resumed != pytest.approx(second.clock - second.probation * 100 / 2)  # not halfway, as if unknown
