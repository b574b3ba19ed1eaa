"""How a replay would have compared with an agent's run: the verdict of a shadow run."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Verdict(str, Enum):
    """How a replay would have compared with the agent's run."""

    AGREED = "agreed"
    """The replay would have made the agent's calls, in order, and given its answer."""
    DISAGREED = "disagreed"
    """The replay would have made another call, or ended, or answered otherwise, at some step."""
    MISSED = "missed"
    """The replay would have handed the task to the agent (nothing stored, a check failed…)."""


@dataclass(frozen=True, slots=True)
class Shadow:
    """What a replay would have done in one agent run (``Result.shadow`` in shadow and proven modes)."""

    verdict: Verdict
    step: int | None = None
    """Where the replay and the agent parted (a disagreement), or where the replay would have stopped."""
    expected: str | None = None
    """On a disagreement: the call (or answer) the replay would have made there."""
    actual: str | None = None
    """On a disagreement: what the agent did there."""
    reason: str | None = None
    """When the replay would have missed: why."""

    @property
    def agreed(self) -> bool:
        return self.verdict is Verdict.AGREED
