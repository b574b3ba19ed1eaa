"""What a replay generator and its driver exchange, and the sync and async drivers.

The replay yields the calls it needs made (captures and tool bodies) and receives their outcomes,
so one piece of logic serves both the sync and the async engine.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Generator
from dataclasses import dataclass
from types import CoroutineType
from typing import Any

from muscle_mem.model.trajectory import Trajectory
from muscle_mem.reasons import MissReason
from muscle_mem.record._run import Run

Invoke = tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]
"""A call the driver must make: ``fn(*args, **kwargs)``, awaiting the result if it is awaitable."""


class Raised:
    """What the driver sends back when the call raised (otherwise it sends the value returned)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException) -> None:
        self.error = error


@dataclass(frozen=True)
class Ending:
    """How a replay ended: a full hit (the ``trajectory`` completed, its ``answer``), or why it stopped."""

    trajectory: Trajectory | None = None
    answer: Any = None
    reason: str | None = None
    tool: str | None = None
    """On a miss, the tool to blame: the first whose step was not safe, failed its post-check or raised."""
    kind: MissReason | None = None
    """On a miss, the kind of its (first) cause."""

    def redacted(self, run: Run) -> Ending:
        """This ending with any secret value in its reason replaced by its name, and secret-looking texts redacted.

        An exception's text may quote the secret argument it was given, or a key a tool returned.
        """
        if self.reason is None:
            return self
        return dataclasses.replace(self, reason=run.redact(self.reason))


Replay = Generator[Invoke, Any, Ending]


def drive(replay: Replay, on_async: Callable[[str], BaseException]) -> Ending:
    """Run a replay synchronously; an awaitable result raises ``on_async(name)``."""
    send = replay.send
    try:
        fn, args, kwargs = next(replay)
        while True:
            try:
                value = fn(*args, **kwargs)
            except Exception as exc:
                fn, args, kwargs = send(Raised(exc))
                continue
            if type(value) is CoroutineType:  # what inspect.iscoroutine tells, without its call
                value.close()
                raise on_async(getattr(fn, "__qualname__", repr(fn)))
            fn, args, kwargs = send(value)
    except StopIteration as stop:
        ending: Ending = stop.value
        return ending


async def drive_async(replay: Replay) -> Ending:
    """Run a replay, awaiting async tools and captures."""
    send = replay.send
    try:
        fn, args, kwargs = next(replay)
        while True:
            try:
                value = fn(*args, **kwargs)
                if inspect.isawaitable(value):
                    value = await value
            except Exception as exc:
                fn, args, kwargs = send(Raised(exc))
                continue
            fn, args, kwargs = send(value)
    except StopIteration as stop:
        ending: Ending = stop.value
        return ending
