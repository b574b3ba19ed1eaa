"""Tools: a registered callable with its name, version and checks; the registry of an engine."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from muscle_mem.check import Check
from muscle_mem.record._fingerprint import fingerprint


@dataclass(eq=False, slots=True)
class Tool:
    """A registered tool: the original callable, its identity and its Checks."""

    name: str
    fn: Callable[..., Any]
    version: str
    is_method: bool = False
    pre_check: Check[Any] | None = None
    post_check: Check[Any] | None = None
    output_view: Callable[[Any], Any] | None = None
    """What data flow sees of an output (the caller gets the output itself); None: the output."""
    secret_outputs: bool = False
    """Whether its outputs are secrets: stored only as references, never in clear."""
    is_async: bool = field(init=False)
    plain: bool = field(init=False)
    """Whether a replay may keep an output as the call returned it (a function, no view, no secrets)."""
    _positional: tuple[str, ...] | None = field(default=None, init=False, repr=False)
    """The names of the positional parameters (``self`` excluded), read once."""
    foreign_call_noted: bool = field(default=False, init=False, repr=False)
    """Whether the log already said this tool was called inside another engine's run."""

    def __post_init__(self) -> None:
        self.is_async = inspect.iscoroutinefunction(self.fn)
        self.plain = not self.is_method and self.output_view is None and not self.secret_outputs

    def parameter_names(self, nargs: int, kwarg_names: tuple[str, ...]) -> list[str]:
        """Names of the recorded positional arguments (``self`` excluded), then of the kwargs."""
        positional = self._positional
        if positional is None:
            try:
                signature = inspect.signature(self.fn)
            except (TypeError, ValueError):
                signature = inspect.Signature()
            params = list(signature.parameters.values())
            if self.is_method:
                params = params[1:]
            kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
            positional = self._positional = tuple(p.name for p in params if p.kind in kinds)
        names = [*positional[:nargs], *(f"args[{i}]" for i in range(len(positional), nargs))]
        return names + list(kwarg_names)


def source_version(fn: Callable[..., Any]) -> str:
    """The version a tool registered without ``version=`` gets: a fingerprint of what it runs.

    Public: a wrapper shared by many tools (a framework integration's shim) passes
    ``version=source_version(the_wrapped_callable)`` so each tool keeps the version of its own code.

    The fingerprint covers the normalised code (reformatting and comments do not count), the
    signature with its defaults, the docstring, the values of closure cells and the plain
    module-level constants the function reads, and the functions it reaches that way (bounded);
    a ``functools.partial`` adds its bound arguments, a callable object its attributes. Values
    that have no stable text (an object shown by its memory address, a list or dict holding
    state) are left out, by their type only; pass ``version=`` when such a value changes what the
    tool does. :mod:`muscle_mem.record._fingerprint` says exactly what counts. The same tool gives the
    same version in every process.
    """
    return fingerprint(fn)


class ToolRegistry:
    """The tools of one engine, by name."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self.by_name: Mapping[str, Tool] = self._tools
        """The tools by name, read-only (a replay reads it without a method call per step)."""

    def add(self, tool: Tool) -> None:
        """Register a tool; other code under a name already taken is refused.

        The same name again with the same version or the same code replaces the earlier callable (a
        wrapper made anew for each run, perhaps over other settings: trajectories of the earlier
        version then miss).
        """
        existing = self._tools.get(tool.name)
        if (
            existing is not None
            and existing.fn is not tool.fn
            and existing.version != tool.version
            and _code_of(existing.fn) is not _code_of(tool.fn)
        ):
            raise ValueError(
                f"another tool named {tool.name!r} (version {existing.version}) is already registered; "
                "pass name=... to tell them apart"
            )
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def has_methods(self) -> bool:
        return any(t.is_method for t in self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)


def _code_of(fn: Callable[..., Any]) -> object:
    """What a callable runs: a function's code object (a partial's or method's function's), else its class."""
    target = fn.func if isinstance(fn, functools.partial) else getattr(fn, "__func__", fn)
    return getattr(target, "__code__", None) or type(target)


def make_tool(
    fn: Callable[..., Any],
    name: str | None,
    version: str | None,
    pre_check: Check[Any] | None,
    post_check: Check[Any] | None,
    *,
    is_method: bool,
    output_view: Callable[[Any], Any] | None = None,
    secret_outputs: bool = False,
) -> Tool:
    """A tool for ``fn``; raises TypeError for what could never be recorded or replayed."""
    if not callable(fn):
        raise TypeError(f"a tool must be callable, got {type(fn).__name__}")
    if output_view is not None and not callable(output_view):
        raise TypeError(f"output_view must be callable, got {type(output_view).__name__}")
    checks_given(pre_check, post_check)
    if inspect.isgeneratorfunction(fn) or inspect.isasyncgenfunction(fn):
        raise TypeError(
            f"{stable_name(fn)} is a generator function: a replay could not run its body; make the tool "
            "return its values (a list) instead"
        )
    tool_name = name or stable_name(fn)
    if not isinstance(secret_outputs, bool):
        raise TypeError(f"secret_outputs must be True or False, not {secret_outputs!r}")
    tool = Tool(
        tool_name,
        fn,
        version or source_version(fn),
        is_method,
        pre_check,
        post_check,
        output_view=output_view,
        secret_outputs=secret_outputs,
    )
    if not tool.is_async and any(
        c is not None and inspect.iscoroutinefunction(c.capture) for c in (pre_check, post_check)
    ):
        raise TypeError(
            f"tool {tool_name!r} is sync but its check captures with a coroutine function: make the tool "
            "async, or the capture sync"
        )
    return tool


def stable_name(fn: Callable[..., Any]) -> str:
    """A tool's default name: its qualified name from the last ``<locals>.`` on.

    That is ``reserve``, not ``_checkout.<locals>.reserve``; for a partial, its function's name; for
    a callable object, its class's.
    """
    target = getattr(fn, "func", fn) if not hasattr(fn, "__qualname__") else fn
    name = getattr(target, "__qualname__", None) or type(target).__qualname__
    return str(name).rsplit("<locals>.", 1)[-1]


def checks_given(*checks: object) -> None:
    """Checks must be Check objects or None.

    A function in their place is most likely a decorator used without parentheses
    (``@engine.tool``), and the error says so.
    """
    for check in checks:
        if check is not None and not isinstance(check, Check):
            if callable(check):
                raise TypeError(
                    "pre_check and post_check must be Check objects, got a function: decorate with "
                    "@engine.tool() or @engine.method() (with parentheses), or wrap it in Check(...)"
                )
            raise TypeError(f"pre_check and post_check must be Check objects, got {type(check).__name__}")
