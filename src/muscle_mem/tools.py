"""Tool registration: instrumenting callables so that calls made inside a run are recorded."""

from __future__ import annotations

import functools
import hashlib
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from muscle_mem.check import Check
from muscle_mem.reasons import NotStoredReason, Problem
from muscle_mem.recording import CURRENT_RUN, IN_TOOL, Run


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
    """A fingerprint of a callable's source (its bytecode when the source is unavailable).

    A ``functools.partial`` has the version of the function it wraps, and a callable object the
    version of its class, so that the version is the same in every process.
    """
    target = inspect.unwrap(fn)
    if isinstance(target, functools.partial):
        return source_version(target.func)
    if not (inspect.isroutine(target) or inspect.isclass(target)):
        target = type(target)
    try:
        text = textwrap.dedent(inspect.getsource(target)).encode()
    except (OSError, TypeError):
        code = getattr(target, "__code__", None)
        text = code.co_code + repr(code.co_consts).encode() if code else repr(target).encode()
    return hashlib.blake2b(text, digest_size=8).hexdigest()


class ToolRegistry:
    """The tools of one engine, by name."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def add(self, tool: Tool) -> None:
        """Register a tool; the same name again with the same version replaces the earlier callable
        (a wrapper made anew for each run), while a different version under that name is refused."""
        existing = self._tools.get(tool.name)
        if existing is not None and existing.fn is not tool.fn and existing.version != tool.version:
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


def instrument(tool: Tool, owner: object, stray: Callable[[Tool, Run | None], None]) -> Callable[..., Any]:
    """Wrap ``tool.fn`` so that calls inside a run of ``owner`` are recorded; elsewhere it just runs,
    and ``stray(tool, run)`` hears of a call made outside any run (``run`` None: another thread may be
    recording) or after its run of ``owner`` ended (a task the agent did not await)."""
    fn = tool.fn
    if tool.is_async:

        @functools.wraps(fn)
        async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
            run = _recording(owner, tool, stray)
            if run is None:
                return await fn(*args, **kwargs)
            return await run.record_async(tool, args, kwargs)

        return async_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        run = _recording(owner, tool, stray)
        if run is None:
            return fn(*args, **kwargs)
        return run.record(tool, args, kwargs)

    return wrapper


def _recording(owner: object, tool: Tool, stray: Callable[[Tool, Run | None], None]) -> Run | None:
    """The run that records this call, if any (not a call made inside another recorded tool)."""
    run = CURRENT_RUN.get()
    if run is None or (run.ended and run.owner is owner):
        stray(tool, run)
        return None
    if run.owner is not owner:
        _outer_misses(run, owner, tool)
        return None
    if not run.recording or IN_TOOL.get() == run.id:
        return None
    return run


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
