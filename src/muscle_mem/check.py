"""``Check``: decides whether a recorded step is still safe to replay in the live environment."""

from __future__ import annotations

import datetime as dt
import functools
import inspect
import numbers
import operator
from collections.abc import Callable
from decimal import Decimal
from typing import Any, Generic, TypeVar
from uuid import UUID

from muscle_mem.errors import MuscleMemError
from muscle_mem.model import codec
from muscle_mem.model.codec import Captured

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

    A snapshot the codec has no form for (a tensor, an image, any object) is kept as the object
    itself, and ``compare`` gets the objects as captured, as long as the store is in this process
    (a memory store). A store that writes records elsewhere keeps it by its stored form:
    ``encode(snapshot)`` (data the codec stores) when given, else the array of an object with the
    array protocol (``__array__``, ``__array_interface__``: tensors, images); a candidate read back
    from such a store is ``decode(data)`` when given, else that array (and the current snapshot is
    made an array too, so that ``compare`` gets the same kinds). An object with neither is refused
    by such a store, which says so (``NotStoredReason.UNSTORABLE_VALUE``).

    ``renew`` (default True): a full hit renews what the step is judged against, as a hit of 0.1.0
    did by storing its run anew. Each replayed step's snapshot is kept, in this process, next to the
    one the agent's run recorded, and a later run passes if it passes against either: a window
    like "within one second" counts from the latest full hit through the step, not from the
    recording. Only a hit whose every output matched what the agent's runs saw renews
    (``Engine(observations="compared")``, the default), and a restart forgets the renewals.
    ``renew=False`` judges only against the agent's runs. A :meth:`equal` Check is unaffected.
    """

    __slots__ = ("by_key", "capture", "compare", "decode", "encode", "plain_capture", "renew", "threshold")

    def __init__(
        self,
        capture: Callable[..., T],
        compare: Callable[[T, T], bool | float],
        *,
        threshold: float | None = None,
        encode: Callable[[T], Any] | None = None,
        decode: Callable[[Any], T] | None = None,
        renew: bool = True,
    ) -> None:
        if not callable(capture) or not callable(compare):
            raise TypeError("Check(capture, compare) needs two callables")
        if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, int | float)):
            raise TypeError(f"threshold must be a number or None, not {threshold!r}")
        if any(f is not None and not callable(f) for f in (encode, decode)):
            raise TypeError("encode= and decode= must be callables or None")
        if not isinstance(renew, bool):
            raise TypeError(f"renew must be True or False, not {renew!r}")
        self.renew = renew
        self.encode = encode
        self.decode = decode
        self.capture: Callable[..., Any] = _capturing(capture, self)
        self.plain_capture: Callable[..., Any] = capture
        """The capture as given: what it returns is not yet a snapshot (:meth:`snapshot` makes it one)."""
        self.compare = compare
        self.threshold = threshold
        self.by_key = False

    @classmethod
    def equal(cls, capture: Callable[..., T]) -> Check[T]:
        """A Check that passes when the current snapshot equals the recorded one in type and value.

        Equality is of the canonical encoding: ``1``, ``1.0`` and ``True`` are three snapshots. The
        store keeps the hash of the snapshot, not its value.
        """
        check: Check[T] = cls(capture, operator.eq, renew=False)
        check.by_key = True
        return check

    def passes(self, current: T, candidate: T) -> bool:
        """Whether ``current`` matches ``candidate``; raises ValueError on a score without threshold."""
        if type(current) is Captured or type(candidate) is Captured:
            compared = self._comparable(current, candidate)
            if compared is None:
                return False  # kept by another process only: nothing here to compare with
            current, candidate = compared
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

    def snapshot(self, value: Any) -> Any:
        """What a capture's ``value`` is recorded as: itself, or a :class:`~muscle_mem.model.codec.Captured`."""
        if type(value) in SNAPSHOT_DATA or (self.encode is None and _storable(value)):
            return value
        if self.encode is not None:
            return Captured(value, self.encode(value))
        array = _array(value)
        if array is None and self.by_key:
            return value  # compared by the hash of its encoding, which it has none of
        return Captured(value, array)

    def _comparable(self, current: Any, candidate: Any) -> tuple[Any, Any] | None:
        """The two snapshots as ``compare`` takes them (None: the candidate is not in this process)."""
        live = current.value if type(current) is Captured else current
        if type(candidate) is not Captured:
            return live, candidate
        if candidate.value is not None:
            return live, candidate.value
        if candidate.data is None:
            return None
        if self.decode is not None:
            return live, self.decode(candidate.data)
        array = _array(live)
        return (array if array is not None else live), candidate.data

    def __repr__(self) -> str:
        kind = "equal" if self.by_key else f"compare={_name(self.compare)}"
        return f"Check(capture={_name(self.capture)}, {kind}, threshold={self.threshold!r})"


SNAPSHOT_DATA = frozenset({str, int, float, bool, type(None), bytes, list, tuple, dict, set, frozenset})
"""Snapshot types kept as they are without a look (the codec stores them, or says why not)."""
_KNOWN = (dt.date, dt.time, dt.timedelta, Decimal, UUID)


def _capturing(capture: Callable[..., Any], check: Check[Any]) -> Callable[..., Any]:
    """``capture`` with each snapshot made what it is recorded as (:meth:`Check.snapshot`)."""
    if inspect.iscoroutinefunction(capture):

        @functools.wraps(capture)
        async def acaptured(*args: Any, **kwargs: Any) -> Any:
            return check.snapshot(await capture(*args, **kwargs))

        return acaptured

    @functools.wraps(capture)
    def captured(*args: Any, **kwargs: Any) -> Any:
        value = capture(*args, **kwargs)
        if type(value) in SNAPSHOT_DATA:  # the common case, without the calls below: a hit's cost
            return value
        return value if inspect.isawaitable(value) else check.snapshot(value)

    return captured


def _storable(value: Any) -> bool:
    """Whether the codec stores ``value`` as data (a class it rebuilds, numpy data, a known scalar)."""
    if isinstance(value, _KNOWN) or type(value).__module__ == "numpy":
        return True
    try:
        codec.encode(value)
    except codec.CodecError:
        return False
    return True


def _array(value: Any) -> Any:
    """The numpy array of an object with the array protocol (a tensor, an image), else None."""
    if not (hasattr(value, "__array__") or hasattr(value, "__array_interface__")):
        return None
    import numpy as np  # a core dependency, imported only for such snapshots

    try:
        array = np.array(value)
    except Exception:  # a device tensor, an image that cannot be read
        return None
    return array if array.dtype.kind != "O" else None


def _name(fn: Any) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)
