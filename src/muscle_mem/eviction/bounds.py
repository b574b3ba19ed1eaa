"""Keeping a store within its bounds: a time to live, a number of trajectories and a number of bytes."""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass, field

from muscle_mem.eviction.policies import FrontierAware, Policy
from muscle_mem.stores.base import CoreStore

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Bounds:
    """The limits of a store and the policy that chooses what to forget to stay within them.

    ``capacity``: most trajectories kept; ``max_bytes``: most bytes of stored records; ``ttl``: seconds
    after its creation that a trajectory expires, whatever the policy. None means no such limit.
    """

    capacity: int | None
    max_bytes: int | None
    ttl: float | None
    policy: Policy
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """Serialises :meth:`enforce` in this process, so concurrent writers do not evict twice over."""

    def __post_init__(self) -> None:
        for name, value, kinds in (
            ("capacity", self.capacity, (int,)),
            ("max_bytes", self.max_bytes, (int,)),
            ("ttl", self.ttl, (int, float)),
        ):
            if value is not None and (isinstance(value, bool) or not isinstance(value, kinds)):
                kind = "a whole number" if kinds == (int,) else "a number of seconds"
                raise TypeError(f"{name} must be {kind} or None, not {value!r}")
        if self.capacity is not None and self.capacity < 1:
            raise ValueError(f"capacity must be at least 1 trajectory, not {self.capacity!r}")
        if self.max_bytes is not None and self.max_bytes < 0:
            raise ValueError(f"max_bytes must not be negative, not {self.max_bytes!r}")
        if self.ttl is not None and not self.ttl > 0:
            raise ValueError(f"ttl must be a positive number of seconds, not {self.ttl!r}")

    @property
    def evicts(self) -> bool:
        """Whether a count or byte limit is set, so an add may evict by the policy."""
        return self.capacity is not None or self.max_bytes is not None

    @property
    def limits(self) -> bool:
        """Whether any limit is set, so :meth:`enforce` may remove something."""
        return self.evicts or self.ttl is not None

    def enforce(self, store: CoreStore, now: float, protected: frozenset[str] = frozenset()) -> list[str]:
        """Expire by TTL, then evict the policy's victims until within capacity and bytes.

        A :class:`~muscle_mem.eviction.policies.FrontierAware` policy is told the priority of each
        round's last victim (read before its removal) and the number of trajectories kept.

        Neither eviction nor expiry removes an id in ``protected`` (the engine protects trajectories
        being replayed), so a store may stay above its bounds while they are in use. The TTL removes
        expired trajectories regardless of policy. Returns the ids removed.
        """
        with self._lock:
            return self._enforce(store, now, protected)

    def expire(self, store: CoreStore, now: float, protected: frozenset[str]) -> list[str]:
        """Remove the trajectories older than the TTL (none without a TTL); returns their ids."""
        if self.ttl is None:
            return []
        expired = store.expire(now - self.ttl, protected)
        if expired:
            log.debug("expired %d trajectories older than %gs", len(expired), self.ttl)
        return expired

    def _enforce(self, store: CoreStore, now: float, protected: frozenset[str]) -> list[str]:
        removed = self.expire(store, now, protected)
        if self.capacity is not None:
            excess = len(store) - self.capacity
            if excess > 0:
                removed += self._evict(store, excess, now, protected, self.capacity)
        if self.max_bytes is not None:
            removed += self._evict_bytes(store, self.max_bytes, now, protected)
        return removed

    def _evict_bytes(
        self, store: CoreStore, max_bytes: int, now: float, protected: frozenset[str]
    ) -> list[str]:
        removed: list[str] = []
        while (total := store.nbytes()) > max_bytes and (count := len(store)) > 0:
            # As many victims as the excess takes at the mean record size; re-measured each round.
            batch = max(1, math.ceil((total - max_bytes) * count / total))
            evicted = self._evict(store, batch, now, protected, max(count - batch, 1))
            if not evicted:
                break
            removed += evicted
        return removed

    def _evict(
        self, store: CoreStore, count: int, now: float, protected: frozenset[str], kept: int
    ) -> list[str]:
        victims = store.victims(count, self.policy.rank(now), exclude=protected)
        if len(victims) < count:
            log.warning(
                "the store stays above its bounds: %d trajectories in use cannot be evicted", len(protected)
            )
        if victims and isinstance(self.policy, FrontierAware):
            last = store.usage(victims[-1])  # the frontier: the highest priority evicted
            if last is not None:
                self.policy.evicted(last.priority, kept)
        if victims:
            store.remove(victims)
            log.debug("evicted %d trajectories (policy %s): %s", len(victims), self.policy.name, victims)
        return victims
