"""The step index a store keeps beside its records: one row per step, found by the node it leaves.

A node is the point reached after some steps of a task: its id is a hash of the task key and of every
step taken to reach it (signature, pre snapshot key, and its route: the post snapshot key with what
the step's output showed), so two trajectories share a node exactly when they made the same calls in
the same observed states and saw the same outputs, up to identities. A trajectory also has an end row
(signature ``END``) at the node it ends at. The rows are a cache of the records: a reader checks the
record it decodes against them before trusting a row.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from muscle_mem.model.codec import hash_text
from muscle_mem.model.trajectory import Trajectory

END = ""
"""The signature of a trajectory's end row (no call: the trajectory completes at its node)."""
NONE = ""
"""The snapshot key stored for a step without that snapshot."""


class StepRow(NamedTuple):
    """One step of a stored trajectory as indexed: where it leaves from and what it did there.

    A named tuple: a trajectory's rows are made on every store write, and a tuple is made in one step.
    """

    trajectory_id: str
    step_no: int
    node: str
    signature: str
    pre_key: str
    post_key: str

    def values(self) -> tuple[str, int, str, str, str, str]:
        """The row's values, in the column order of the ``steps`` tables."""
        return (self.trajectory_id, self.step_no, self.node, self.signature, self.pre_key, self.post_key)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A step row found at a node, with when its trajectory was last used (stored or hit)."""

    trajectory_id: str
    step_no: int
    pre_key: str
    post_key: str
    last_used: float


@functools.lru_cache(maxsize=4096)
def root(task_key: str) -> str:
    """The id of a task's first node (remembered for the most recent task keys)."""
    return _hash("root", task_key)


def child(node: str, signature: str, pre_key: str, post_key: str) -> str:
    """The id of the node a step leads to."""
    return _hash(node, signature, pre_key, post_key)


def step_rows(trajectory: Trajectory, signatures: Sequence[str] | None = None) -> list[StepRow]:
    """The index rows of a trajectory: one per step, then its end row.

    ``signatures``: its steps' signatures when already known (from their records).
    """
    tid = trajectory.id
    node = root(trajectory.task_key)
    rows: list[StepRow] = []
    for no, step in enumerate(trajectory.steps):
        pre = step.pre.key if step.pre else NONE
        post = step.route
        signature = step.signature if signatures is None else signatures[no]
        rows.append(_row(StepRow, (tid, no, node, signature, pre, post)))
        node = child(node, signature, pre, post)
    rows.append(_row(StepRow, (tid, len(trajectory.steps), node, END, NONE, NONE)))
    return rows


_row: Any = tuple.__new__
"""``StepRow(*values)`` without the named tuple's ``__new__`` in Python, for the rows of every write."""


def _hash(*parts: str) -> str:
    return hash_text("\x00".join(parts))


def by_creation(sql: str) -> str:
    """A step index read ordered by each trajectory's creation instead of its last use (signed stores).

    The row's creation time is checked against the signed record's when the record is decoded, so no
    unsigned figure chooses which of several recorded steps a replay tries first.
    """
    join = "usage u ON u.id = s.trajectory_id"
    return sql.replace(join, "trajectories u ON u.id = s.trajectory_id").replace(
        "u.last_used", "u.created_at"
    )
