"""What ``Engine(mode="proven")`` replays on the red-team suite, read from each scenario's events.

A family (a task key) replays in proven mode only once ``proof`` shadow runs agreed with what a
replay would have done, with no disagreement since. From the events in order, per family: the shadow
verdicts, the replays (a hit, or steps replayed), the replays made before ``proof`` agreements
since the family's last disagreement (the mode forbids them: always 0), and the replays of families
that had disagreed in shadow before (allowed once ``proof`` later runs agreed).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from muscle_mem.cache.ledger import family_of
from muscle_mem.stores.base import Event


@dataclass
class Proven:
    """The tally of proven-mode runs over scenarios."""

    scenarios: int = 0
    shadow_runs: int = 0
    agreed: int = 0
    disagreed: int = 0
    missed: int = 0
    replays: int = 0
    unproven_replays: int = 0
    """Replays of a family with fewer than ``proof`` agreements since its last disagreement (must be 0)."""
    replays_after_disagreement: int = 0
    """Replays of a family that had disagreed in shadow earlier (each after ``proof`` agreements since)."""
    unsafe_runs: int = 0
    disagreed_in: list[str] = field(default_factory=list)
    """The scenarios where a shadow run disagreed."""

    def add(self, scenario: str, events: Iterable[Event], proof: int, unsafe_runs: int) -> None:
        """Fold one scenario's events (in order) and its unsafe-run count in."""
        self.scenarios += 1
        self.unsafe_runs += unsafe_runs
        streak: dict[str, int] = {}
        parted: set[str] = set()
        disagreed_here = False
        for event in sorted(events, key=lambda e: e.at):
            family = family_of(event.task_key)
            if event.shadow is not None:
                self.shadow_runs += 1
                if event.shadow == "agreed":
                    self.agreed += 1
                    streak[family] = streak.get(family, 0) + 1
                elif event.shadow == "disagreed":
                    self.disagreed += 1
                    streak[family] = 0
                    parted.add(family)
                    disagreed_here = True
                else:
                    self.missed += 1
            elif event.hit or event.steps_replayed:
                self.replays += 1
                self.unproven_replays += streak.get(family, 0) < proof
                self.replays_after_disagreement += family in parted
        if disagreed_here:
            self.disagreed_in.append(scenario)

    def row(self, label: str) -> str:
        return (
            f"| {label} | {self.scenarios} | {self.shadow_runs} | {self.agreed} | {self.disagreed} | {self.missed} "
            f"| {self.replays} | **{self.unproven_replays}** | {self.replays_after_disagreement} | **{self.unsafe_runs}** |"
        )


HEADER = (
    "| proven mode | scenarios | shadow runs | agreed | disagreed | missed | replays "
    "| replays before the proof | replays after a disagreement | unsafe runs |"
)
