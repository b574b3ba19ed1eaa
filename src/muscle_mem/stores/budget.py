"""The time the store operations of one engine call may wait, in total.

An engine gives each call a budget (``Engine(store_timeout=...)``); the durable stores wait for their
server or their file lock at most what is left of it, and spend what they waited. Outside a call,
each operation waits at most the store's own ``timeout``.
"""

from __future__ import annotations

from contextvars import ContextVar, Token

_CURRENT: ContextVar[Budget | None] = ContextVar("muscle_mem_store_budget", default=None)


class Budget:
    """Seconds left for store operations in one scope."""

    __slots__ = ("left",)

    def __init__(self, seconds: float) -> None:
        self.left = seconds


def start(seconds: float) -> Token[Budget | None]:
    """Give the current context ``seconds`` of store waiting; pass the token to :func:`stop`."""
    return _CURRENT.set(Budget(seconds))


def stop(token: Token[Budget | None]) -> None:
    """End the budget :func:`start` gave."""
    _CURRENT.reset(token)


def allowance(default: float) -> float:
    """Seconds an operation may wait: ``default``, or what is left of the budget if that is less."""
    budget = _CURRENT.get()
    return default if budget is None else min(default, budget.left)


def spend(seconds: float) -> None:
    """Count ``seconds`` an operation waited against the current budget, if there is one."""
    budget = _CURRENT.get()
    if budget is not None:
        budget.left -= seconds
