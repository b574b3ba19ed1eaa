"""The pre-check that compares what a model reads at each turn (instructions, tools) with the recording's."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from muscle_mem import Check
from muscle_mem.model import codec

_LETTERS = str.maketrans("0123456789abcdef", "ghijklmnopabcdef")


def mark(context: Any) -> str:
    """The fingerprint of what a model reads, in letters only (no number in it for data flow to bind)."""
    return codec.fingerprint(context).translate(_LETTERS)


def turn_checked(check: Check[Any] | None, read: Callable[[], Awaitable[str]]) -> Check[Any]:
    """``check`` with the agent's context at the call (``read``: its fingerprint) compared too.

    What the model reads at each of its turns (instructions, the tools offered) can change during a
    run; a step replays only if the model would read at its turn what the recorded step's turn read.
    A :meth:`Check.equal` stays one (only a hash is stored); any other compares the context, then as
    it does.
    """
    if check is None:

        async def context_only(*_args: Any, **_kwargs: Any) -> str:
            return await read()

        return Check.equal(context_only)
    theirs = check.plain_capture if check.by_key else check.capture

    async def both(*args: Any, **kwargs: Any) -> tuple[str, Any]:
        value = theirs(*args, **kwargs)
        return await read(), await value if inspect.isawaitable(value) else value

    if check.by_key:
        return Check.equal(both)
    user = check

    def compare(current: tuple[str, Any], candidate: tuple[str, Any]) -> bool:
        return current[0] == candidate[0] and user.passes(current[1], candidate[1])

    return Check(both, compare, renew=check.renew)
