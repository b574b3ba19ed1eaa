"""The replays of one engine in progress: their runs, and the trajectories they follow."""

from __future__ import annotations

from muscle_mem.record._run import Run
from muscle_mem.replay._replayer import Replayer


class ActiveReplays:
    """The replays of one engine in progress: their runs, and the trajectories they follow."""

    def __init__(self) -> None:
        self._by_run: dict[int, Replayer] = {}

    def add(self, replayer: Replayer) -> None:
        self._by_run[replayer.run.id] = replayer  # one C call each, as the copies below: no lock

    def remove(self, run: Run) -> None:
        self._by_run.pop(run.id, None)

    def runs(self) -> list[Run]:
        """The runs in progress (a call from a thread without a run in its context may be theirs)."""
        return [r.run for r in tuple(self._by_run.values())]

    def protected(self) -> frozenset[str]:
        """The trajectories replays in progress follow (eviction leaves them alone)."""
        edges = [r.edge for r in tuple(self._by_run.values()) if r.edge is not None]
        return frozenset().union(*(e.trajectories for e in edges))
