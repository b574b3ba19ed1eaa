"""Tool registration: instrumenting callables so that calls made inside a run are recorded."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from muscle_mem.check import Check
from muscle_mem.fingerprint import fingerprint
from muscle_mem.reasons import NotStoredReason, Problem
from muscle_mem.recording import CURRENT_RUN, IN_TOOL, Flight, Run


@dataclass(eq=False, slots=True)
class Tool:
    """A registered tool: the original callable, its identity and its Checks."""

    name: str
    fn: Callable[..., Any]
    version: str
    is_method: bool = False
    pre_check: Check[Any] | None = None
    post_check: Check[Any] | None = None
    is_async: bool = field(init=False)
    _signature: inspect.Signature | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.is_async = inspect.iscoroutinefunction(self.fn)

    def parameter_names(self, nargs: int, kwarg_names: tuple[str, ...]) -> list[str]:
        """Names of the recorded positional arguments (``self`` excluded), then of the kwargs."""
        if self._signature is None:
            try:
                self._signature = inspect.signature(self.fn)
            except (TypeError, ValueError):
                self._signature = inspect.Signature()
        params = list(self._signature.parameters.values())
        if self.is_method:
            params = params[1:]
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        names = [positional[i] if i < len(positional) else f"args[{i}]" for i in range(nargs)]
        return names + list(kwarg_names)


def source_version(fn: Callable[..., Any]) -> str:
    """The version a tool registered without ``version=`` gets: a fingerprint of what it runs.

    The fingerprint covers the normalised code (reformatting and comments do not count), the
    signature with its defaults, the docstring, the values of closure cells and the plain
    module-level constants the function reads, and the functions it reaches that way (bounded);
    a ``functools.partial`` adds its bound arguments, a callable object its attributes. Values
    that have no stable text (an object shown by its memory address, a list or dict holding
    state) are left out, by their type only; pass ``version=`` when such a value changes what the
    tool does. :mod:`muscle_mem.fingerprint` says exactly what counts. The same tool gives the
    same version in every process.
    """
    return fingerprint(fn)


class ToolRegistry:
    """The tools of one engine, by name."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def add(self, tool: Tool) -> None:
        """Register a tool; the same name again with the same version or the same code replaces the
        earlier callable (a wrapper made anew for each run, perhaps over other settings: trajectories
        of the earlier version then miss), while other code under that name is refused."""
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


def instrument(
    tool: Tool,
    owner: object,
    stray: Callable[[str, Run], None],
    in_progress: Callable[[], list[Run]],
) -> Callable[..., Any]:
    """Wrap ``tool.fn`` so that calls inside a run of ``owner`` are recorded; elsewhere it just runs.

    A call from a thread without a run in its context (a worker of a thread pool) belongs to the
    run of ``owner`` in progress when there is one only (``in_progress()`` lists them); with two or
    more it could be any of them, so none records it and none is stored. ``stray(name, run)`` hears
    of a call made after the agent of its run returned (a task or a thread it did not wait for).
    """
    fn = tool.fn
    if tool.is_async:

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            found = _recording(owner, tool, stray, in_progress)
            if found is None:
                return await fn(*args, **kwargs)
            return await found[0].record_async(tool, found[1], args, kwargs)

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        found = _recording(owner, tool, stray, in_progress)
        if found is None:
            return fn(*args, **kwargs)
        return found[0].record(tool, found[1], args, kwargs)

    return wrapper


def _recording(
    owner: object, tool: Tool, stray: Callable[[str, Run], None], in_progress: Callable[[], list[Run]]
) -> tuple[Run, Flight] | None:
    """The run that records this call and the call's flight, if any (not a call inside a recorded tool)."""
    run = CURRENT_RUN.get()
    if run is None:
        return _adopted(tool, stray, in_progress())
    if run.owner is not owner:
        _outer_misses(run, owner, tool)
        return None
    if run.ended:
        stray(tool.name, run)
        return None
    if not run.recording or IN_TOOL.get() == run.id:
        return None
    flight = run.start(tool.name)
    if flight is None:
        stray(tool.name, run)
        return None
    return run, flight


def _adopted(tool: Tool, stray: Callable[[str, Run], None], runs: list[Run]) -> tuple[Run, Flight] | None:
    """The run a call from a thread without a run in its context belongs to: the only one in progress."""
    if len(runs) != 1:
        for run in runs:
            run.ambiguous(tool.name, len(runs))
        return None
    run = runs[0]
    flight = run.adopt(tool.name)
    if flight is None:
        if run.sealed:
            stray(tool.name, run)
        return None
    return run, flight


def _outer_misses(run: Run, owner: object, tool: Tool) -> None:
    """A tool of ``owner`` called inside another engine's run: the run of ``owner`` that handed the
    task on (if it is recording, outside a tool call) misses the call, so it is not stored."""
    outer: Run | None = run
    while outer is not None and outer.owner is not owner:
        if outer.in_parent_tool:
            return  # inside a tool call a run records: part of that step
        outer = outer.parent
    if outer is not None and outer.recording and not outer.ended and IN_TOOL.get() != outer.id:
        outer.problems.append(
            Problem(
                NotStoredReason.FOREIGN_RUN,
                f"tool {tool.name!r} was called inside another engine's run (a task handed on); this "
                "trajectory would miss it",
            )
        )
