"""The creation times of decoded trajectories, by which a process expires them whatever their rows say."""

from __future__ import annotations

from muscle_mem.model.trajectory import Trajectory
from muscle_mem.replay._decoded_trajectories import Ages


def test_the_oldest_expire_first_and_those_kept_wait_for_the_next_expiry() -> None:
    """``before`` hands out each trajectory created before a time once, oldest first, keeping ``keep``."""
    ages = Ages()
    for tid, created in (("a", 1.0), ("b", 5.0), ("c", 2.0), ("a", 1.0)):
        ages.note(Trajectory(task_key="k", steps=(), created_at=created, id=tid))
    assert ages.before(3.0, keep=frozenset({"c"})) == ["a"]
    assert ages.before(3.0) == ["c"]
    assert ages.before(3.0) == []
    assert ages.before(10.0) == ["b"]
