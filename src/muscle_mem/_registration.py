"""The tools an engine records: ``@engine.tool``, ``@engine.method`` and ``engine.register``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from muscle_mem.check import Check
from muscle_mem.record._instrument import instrument
from muscle_mem.record.tools import ToolRegistry, checks_given, make_tool

if TYPE_CHECKING:
    from muscle_mem._outcome import Outcomes
    from muscle_mem.replay._active_replays import ActiveReplays

F = TypeVar("F", bound=Callable[..., Any])


def _decorator(is_method: bool, doc: str) -> Callable[..., Callable[[F], F]]:
    """``Engine.tool`` or ``Engine.method``: one path, ``is_method`` apart."""

    def decorator(
        self: Registration,
        pre_check: Check[Any] | None = None,
        post_check: Check[Any] | None = None,
        *,
        name: str | None = None,
        version: str | None = None,
        secret_outputs: bool = False,
    ) -> Callable[[F], F]:
        checks_given(pre_check, post_check)  # now: ``@engine.tool`` without parentheses is an error
        return lambda fn: self._register(  # type: ignore[return-value]
            fn, name, version, pre_check, post_check, secret_outputs, is_method=is_method
        )

    decorator.__doc__ = doc
    return decorator


class Registration:
    """Registers an engine's tools, each instrumented so that a run records its calls."""

    _registry: ToolRegistry
    _outcomes: Outcomes
    _active: ActiveReplays
    _finalized: bool

    tool = function = _decorator(
        False,
        """Decorator instrumenting a function tool.

        ``secret_outputs=True`` marks what it returns as secret (so does returning a :class:`Secret`):
        a later step or the answer may use it by reference, and a trajectory holding it anywhere
        else is not stored.
        """,
    )
    method = _decorator(
        True,
        """Decorator instrumenting a method tool: ``self`` is not recorded and comes from ``set_context``.""",
    )

    def register(
        self,
        fn: F,
        *,
        name: str | None = None,
        version: str | None = None,
        pre_check: Check[Any] | None = None,
        post_check: Check[Any] | None = None,
        output_view: Callable[[Any], Any] | None = None,
        secret_outputs: bool = False,
    ) -> F:
        """Instrument a callable made at run time (for example another framework's tool).

        ``output_view(output)`` is what data flow sees of the tool's output, where the caller gets
        the output itself: JSON held as text parsed into the values that later steps reuse, say.
        ``secret_outputs`` is as for :meth:`tool`.
        """
        return self._register(  # type: ignore[return-value]
            fn, name, version, pre_check, post_check, secret_outputs, is_method=False, output_view=output_view
        )

    def _register(
        self,
        fn: Callable[..., Any],
        name: str | None,
        version: str | None,
        pre_check: Check[Any] | None,
        post_check: Check[Any] | None,
        secret_outputs: bool,
        *,
        is_method: bool,
        output_view: Callable[[Any], Any] | None = None,
    ) -> Callable[..., Any]:
        tool = make_tool(
            fn, name, version, pre_check, post_check,
            is_method=is_method, output_view=output_view, secret_outputs=secret_outputs,
        )  # fmt: skip
        self._registry.add(tool)
        self._finalized = False
        return instrument(tool, self, self._outcomes.stray_call, self._active.runs)
