"""The decoded trajectories a stored step index trusts: a bounded LRU, each record checked against its step rows.

With a signed store, a row's time must be its signed record's, and a record older than the TTL (by
its own time) is never used; a record that cannot be read, or disagrees with its rows, is left out
and never read again.
"""

from __future__ import annotations

import heapq
import logging
import math
import threading
from collections import OrderedDict

from muscle_mem.model.trajectory import Step, Trajectory
from muscle_mem.replay._step_index import Skipped
from muscle_mem.stores.base import CoreStore, Signable
from muscle_mem.stores.steps import Candidate, StepRow, step_rows

logger = logging.getLogger(__name__)

DECODED_SIZE = 1_000
"""Default bound on the decoded trajectories kept per engine."""

BAD_KEPT = 4_096
"""Records a process remembers to have left out (it would read and name them again once forgotten)."""


class Ages:
    """When each trajectory a process decoded was created (by its record), to expire it by that time."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []
        self._noted: set[str] = set()
        self._lock = threading.Lock()

    def note(self, trajectory: Trajectory) -> None:
        """Remember a trajectory's creation time (once)."""
        with self._lock:
            if trajectory.id not in self._noted:
                self._noted.add(trajectory.id)
                heapq.heappush(self._heap, (trajectory.created_at, trajectory.id))

    def before(self, oldest: float, keep: frozenset[str] = frozenset()) -> list[str]:
        """The ids of the trajectories created before ``oldest``, forgotten here (but those in ``keep``)."""
        found: list[tuple[float, str]] = []
        kept: list[tuple[float, str]] = []
        with self._lock:
            heap = self._heap
            while heap and heap[0][0] < oldest:
                entry = heapq.heappop(heap)
                (kept if entry[1] in keep else found).append(entry)
            for entry in kept:  # asked again at the next expiry
                heapq.heappush(heap, entry)
            self._noted.difference_update(tid for _, tid in found)
        return [tid for _, tid in found]


class Decoded:
    """A bounded LRU of decoded trajectories with their step rows.

    With a signed store, a row's time (its trajectory's creation, which orders the rows) must be the
    signed record's, and a record older than :attr:`oldest` (the TTL, by the record's own time) is
    never used.
    """

    def __init__(self, store: CoreStore, size: int, skipped: Skipped = lambda ids, why: None) -> None:
        self.store = store
        self.size = size
        self.count = 0
        """How many records were decoded (for tests and benchmarks)."""
        self._signer = store.signer if isinstance(store, Signable) else None
        self.signed = self._signer is not None
        """Whether rows carry their trajectory's creation time (checked) instead of its last use."""
        self.oldest = -math.inf
        """Records created before this time (by their own signed time) are past the TTL: never used."""
        self.ages = Ages()
        """The creation time of every trajectory decoded while a TTL applies, oldest first."""
        self._items: OrderedDict[str, tuple[Trajectory, list[StepRow]]] = OrderedDict()
        self._bad: OrderedDict[str, None] = OrderedDict()
        """Records left out (unreadable, or disagreeing with their rows): never read again (bounded)."""
        self._skipped = skipped
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, trajectory_id: str) -> tuple[Trajectory, list[StepRow]] | None:
        """The trajectory and its rows, decoded from the store if not cached (None if gone or unreadable)."""
        with self._lock:
            found = self._items.get(trajectory_id)
            if found is not None:
                if self._signer is None or not self._signer.was_removed(trajectory_id):
                    self._items.move_to_end(trajectory_id)
                    return found
                del self._items[trajectory_id]  # removed since: read again (refused if put back)
            if trajectory_id in self._bad:
                return None
        trajectory = self.store.get(trajectory_id)
        if trajectory is not None and trajectory.created_at < self.oldest:
            self.ages.note(trajectory)  # removed by the next expiry
            return None
        if trajectory is None:
            if (
                self.store.usage(trajectory_id) is not None
            ):  # its row is there: unreadable (the store named it)
                self.leave_out(trajectory_id, None)
            return None
        found = (trajectory, step_rows(trajectory))
        with self._lock:
            self.count += 1
            self._keep(trajectory_id, found)
        if self.oldest > -math.inf:
            self.ages.note(trajectory)
        return found

    def put(self, trajectory: Trajectory, rows: list[StepRow]) -> None:
        """Keep a trajectory read from the store with the rows made from its record."""
        with self._lock:
            self._keep(trajectory.id, (trajectory, rows))
        if self.oldest > -math.inf:
            self.ages.note(trajectory)

    def expire(self, oldest: float, keep: frozenset[str] = frozenset()) -> list[str]:
        """Forget the trajectories created before ``oldest`` (by their records), but ``keep``; their ids.

        From now on a record created before ``oldest`` is never decoded.
        """
        self.oldest = oldest
        expired = self.ages.before(oldest, keep)
        with self._lock:
            for tid in expired:
                self._items.pop(tid, None)
        return expired

    def timed(self, candidate: Candidate, trajectory: Trajectory) -> bool:
        """Whether a row's time agrees with its record's (always, unless rows carry creation times)."""
        return not self.signed or candidate.last_used == trajectory.created_at

    def _keep(self, trajectory_id: str, found: tuple[Trajectory, list[StepRow]]) -> None:
        """Keep a decoded trajectory as the most recently used, dropping the least past the bound (lock held)."""
        self._items[trajectory_id] = found
        self._items.move_to_end(trajectory_id)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def leave_out(self, trajectory_id: str, why: str | None) -> None:
        """Never use this record again in this process; count it (``store_errors``) and name it once."""
        with self._lock:
            if trajectory_id in self._bad:
                return
            self._bad[trajectory_id] = None
            while len(self._bad) > BAD_KEPT:
                self._bad.popitem(last=False)
        self._skipped([trajectory_id], why)

    def peek(self, trajectory_id: str) -> tuple[Trajectory, list[StepRow]] | None:
        """The trajectory and its rows if they are cached (the store is not read)."""
        with self._lock:
            return self._items.get(trajectory_id)

    def first_step(
        self, candidates: list[Candidate], node: str, signature: str
    ) -> tuple[Step, Candidate] | None:
        """The step of the most recently used row whose record agrees with it, and that row."""
        for candidate in sorted(candidates, key=lambda c: c.last_used, reverse=True):
            step = self.step(candidate, node, signature)
            if step is not None:
                return step, candidate
        return None

    def step(self, candidate: Candidate, node: str, signature: str) -> Step | None:
        """The step a row names, if its decoded record agrees with the row (else None, logged)."""
        found = self.get(candidate.trajectory_id)
        if found is not None:
            trajectory, rows = found
            no = candidate.step_no
            if (
                no < len(trajectory.steps)
                and rows[no]
                == StepRow(
                    candidate.trajectory_id, no, node, signature, candidate.pre_key, candidate.post_key
                )
                and self.timed(candidate, trajectory)
            ):
                return trajectory.steps[no]
            self.leave_out(candidate.trajectory_id, "its step index row disagrees with its record")
        return None
