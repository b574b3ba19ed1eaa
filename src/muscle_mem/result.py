"""``Result``: what one engine call did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Result:
    """The outcome of ``engine(...)``: truthy exactly on a full cache hit.

    ``output`` is the agent's return value on a miss, and the recorded answer (with its param and
    data-flow references resolved) on a hit. ``reason`` says why the cache was not, or not fully, used.
    """

    hit: bool
    output: Any = None
    steps_replayed: int = 0
    fallback: bool = False
    """The agent was invoked."""
    reason: str | None = None
    trajectory_id: str | None = None
    """The trajectory replayed (on a hit) or stored (on a miss); None if nothing was stored."""
    elapsed: float = 0.0
    stored: bool = False
    """A new trajectory was stored by this call."""

    def __bool__(self) -> bool:
        return self.hit
