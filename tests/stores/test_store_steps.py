"""The step index every store keeps: the calls leaving a node, each with a row to decode."""

from __future__ import annotations

from conftest import trajectory
from muscle_mem.stores import Store, steps


def test_heads_name_each_call_at_a_node_with_its_latest_used_row(store: Store) -> None:
    """Two calls at the root: each comes with the row of its most recently used trajectory."""
    older, newer, other = trajectory(n=1), trajectory(n=1), trajectory(n=2)
    for t in (older, newer, other):
        store.add(t)
    for t, now in ((newer, 4e9), (older, 3e9), (other, 2e9)):
        store.touch(t.id, now=now, saved_seconds=1.0, priority=0.0, attention=0.0)
    root = steps.root("task-a")
    heads = dict(store.heads_at(root))
    first, second = steps.step_rows(older)[0], steps.step_rows(other)[0]
    assert set(heads) == {first.signature, second.signature}
    assert (heads[first.signature].trajectory_id, heads[first.signature].last_used) == (newer.id, 4e9)
    assert heads[second.signature].trajectory_id == other.id
    assert store.heads_at(steps.root("no such task")) == []


def test_a_sole_call_comes_with_one_of_its_rows(store: Store) -> None:
    """One call at a node: one head, a row of one of its trajectories, agreeing with the index."""
    older, newer, other = trajectory(n=1), trajectory(n=1), trajectory(n=2)
    for t in (older, newer, other):
        store.add(t)
    store.remove([other.id])
    [(signature, head)] = store.heads_at(steps.root("task-a"))
    row = steps.step_rows(older)[0]
    assert signature == row.signature and head.trajectory_id in {older.id, newer.id}
    assert (head.step_no, head.pre_key, head.post_key) == (0, row.pre_key, row.post_key)
