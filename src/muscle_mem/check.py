"""``Check``: decides whether a recorded step is still safe to replay in the live environment."""

from __future__ import annotations

import numbers
import operator
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from muscle_mem.errors import MuscleMemError

T = TypeVar("T")


class MissingThreshold(MuscleMemError, ValueError):
    """A compare returned a score, but its Check has no threshold to judge it by."""


class Check(Generic[T]):
    """A ``capture`` callback that reads features of the environment, and a ``compare`` callback.

    ``capture`` receives the tool's arguments (for a method tool, ``self`` too) and returns a
    snapshot. ``compare(current, candidate)`` returns a bool, or a float score that passes when it
    is ``>= threshold``. A Check made with :meth:`equal` compares by equality of a hashable snapshot,
    so stored snapshots are found by hash instead of being compared one by one, and only that hash
    is stored: what the capture read is never written to the store.
    """

    __slots__ = ("by_key", "capture", "compare", "threshold")

    def __init__(
        self,
        capture: Callable[..., T],
        compare: Callable[[T, T], bool | float],
        *,
        threshold: float | None = None,
    ) -> None:
        if not callable(capture) or not callable(compare):
            raise TypeError("Check(capture, compare) needs two callables")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)):
            raise TypeError(f"threshold must be a number or None, not {threshold!r}")
        self.capture = capture
        self.compare = compare
        self.threshold = threshold
        self.by_key = False

    @classmethod
    def equal(cls, capture: Callable[..., T]) -> Check[T]:
        """A Check that passes when the current snapshot equals the recorded one in type and value.

        Equality is of the canonical encoding: ``1``, ``1.0`` and ``True`` are three snapshots. The
        store keeps the hash of the snapshot, not its value.
        """
        check: Check[T] = cls(capture, operator.eq)
        check.by_key = True
        return check

    def passes(self, current: T, candidate: T) -> bool:
        """Whether ``current`` matches ``candidate``; raises ValueError on a score without threshold."""
        verdict = self.compare(current, candidate)
        if isinstance(verdict, bool):
            return verdict
        kind = getattr(getattr(verdict, "dtype", None), "kind", None)
        if kind == "b":  # numpy.bool_
            return bool(verdict)
        if isinstance(verdict, numbers.Real):
            if self.threshold is None:
                raise MissingThreshold(
                    f"Check compare {_name(self.compare)} returned the score {float(verdict)!r}, "
                    "but the Check has no threshold: pass Check(capture, compare, threshold=...)"
                )
            return float(verdict) >= self.threshold
        raise TypeError(f"Check compare {_name(self.compare)} must return a bool or a float, got {verdict!r}")

    def __repr__(self) -> str:
        kind = "equal" if self.by_key else f"compare={_name(self.compare)}"
        return f"Check(capture={_name(self.capture)}, {kind}, threshold={self.threshold!r})"


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
