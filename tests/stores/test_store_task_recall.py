"""The recall a store shares with every process: tasks lately stored or replayed, and which were replayed."""

from __future__ import annotations

from collections.abc import Callable

from conftest import trajectory
from muscle_mem.stores import Store, TaskRecall, Touch


def _hit(store: Store, trajectory_id: str) -> None:
    store.touch(trajectory_id, now=1.0, saved_seconds=1.0, priority=1.0, attention=0.5)


def test_a_stored_task_is_remembered_as_not_replayed(store: Store) -> None:
    """Storing a task's first trajectory remembers the task as not replayed; others are not remembered."""
    assert isinstance(store, TaskRecall)
    store.add(trajectory("alpha"))
    assert store.recalled("alpha") is False
    assert store.recalled("bravo") is None


def test_a_hit_remembers_its_task_as_replayed(store: Store) -> None:
    """A hit, one by one or in a batch, remembers the trajectory's task as replayed."""
    assert isinstance(store, TaskRecall)
    one, two = trajectory("alpha"), trajectory("bravo")
    store.add_many([(one, None), (two, None)])
    _hit(store, one.id)
    store.touch_many([Touch(two.id, 2, 1.0, 2.0, 1.0, 0.5), Touch("absent", 1, 1.0, 1.0, 1.0, 0.5)])
    assert store.recalled("alpha") is True
    assert store.recalled("bravo") is True


def test_a_task_stored_again_while_remembered_counts_as_replayed(store: Store) -> None:
    """A task stored again after its trajectory was removed is remembered, and as replayed."""
    assert isinstance(store, TaskRecall)
    first = trajectory("alpha")
    store.add(first)
    store.remove([first.id])
    assert store.recalled("alpha") is False  # the recall outlives the trajectory
    store.add(trajectory("alpha", n=1))
    assert store.recalled("alpha") is True


def test_forgetting_keeps_the_most_recently_remembered(store: Store) -> None:
    """``forget_recalled(keep)`` forgets all but the ``keep`` tasks stored or replayed last."""
    assert isinstance(store, TaskRecall)
    kept = [trajectory(f"task-{i}") for i in range(5)]
    for t in kept:
        store.add(t)
    _hit(store, kept[0].id)  # task-0 is now the latest remembered
    assert store.forget_recalled(3) == 2
    assert [store.recalled(f"task-{i}") for i in range(5)] == [True, None, None, False, False]
    assert store.forget_recalled(3) == 0
    assert store.forget_recalled(0) == 3
    assert store.recalled("task-0") is None


def test_clear_forgets_every_task(store: Store) -> None:
    """Clearing a store clears its recall too."""
    assert isinstance(store, TaskRecall)
    store.add(trajectory("alpha"))
    store.clear()
    assert store.recalled("alpha") is None


def test_every_handle_on_a_durable_store_shares_the_recall(opener: Callable[[], Store]) -> None:
    """What one process stores or replays, another recalls."""
    first, second = opener(), opener()
    assert isinstance(second, TaskRecall)
    stored = trajectory("alpha")
    first.add(stored)
    assert second.recalled("alpha") is False
    _hit(first, stored.id)
    assert second.recalled("alpha") is True
