"""LangChain tools whose calls an engine records and replays.

A ``StructuredTool`` (``@tool``) or a ``Tool`` gets a copy whose ``func`` (or ``coroutine``) goes
through the engine: the engine records the arguments the model chose (validated, as the function
gets them) and the function's raw return value, so a dict stays a dict and ids inside it flow into
later calls. Arguments the graph injects are not recorded: an ``InjectedToolCallId`` gets a fresh
``mm_`` id at replay; a tool that takes state, a store, the runtime, its config or callbacks from the
graph runs as it is and keeps the run that called it out of the store. Any other ``BaseTool`` is
wrapped in a ``StructuredTool`` that calls it.
"""

from __future__ import annotations

import functools
import inspect
import logging
import typing
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, Tool
from langgraph.types import Command

from muscle_mem import Check, Engine, source_version
from muscle_mem.integrations._common import (
    Checks,
    checks_for,
    fresh_call_id,
    refuse_run,
    schema_version,
    unknown_checks,
)

logger = logging.getLogger(__name__)

_NOT_INJECTED = frozenset({"run_manager", "callbacks"})
"""Parameters of a class tool's ``_run`` that ``BaseTool.run`` fills itself."""


@dataclass(frozen=True, slots=True)
class Replayed:
    """A tool call the engine replayed: the tool, the fresh call id it got, how its output reads."""

    tool: str
    call_id: str
    with_artifact: bool
    """The tool answers ``(content, artifact)`` (``response_format="content_and_artifact"``)."""


@dataclass(frozen=True, slots=True)
class _Wrapping:
    """What a wrapped tool's function remembers: the engine it records into and the tool it wraps."""

    engine: Engine
    original: BaseTool


_HIDDEN: ContextVar[tuple[object, Mapping[str, Any]] | None] = ContextVar(
    "muscle_mem_langchain_hidden", default=None
)
"""The injected arguments of the framework's call in progress, for the shim it is meant for."""
REPLAYED: ContextVar[list[Replayed] | None] = ContextVar("muscle_mem_langchain_replayed", default=None)
"""Where the shims note the calls the engine replays, for the front end's messages (None: nobody asks)."""
RAISED: ContextVar[list[tuple[str, dict[str, Any]]] | None] = ContextVar(
    "muscle_mem_langchain_raised", default=None
)
"""Where the copies note the calls that raised through the engine (the tool and its arguments): the engine
judges those itself."""
_MARK = "__muscle_mem_wrapping__"


def wrap_tool(
    engine: Engine,
    tool: BaseTool,
    *,
    pre_check: Check[Any] | None = None,
    post_check: Check[Any] | None = None,
    version: str | None = None,
) -> BaseTool:
    """A copy of ``tool`` whose calls ``engine`` records and replays; the tool itself is left unchanged.

    ``version`` defaults to the fingerprint of the tool's own function (or class), so a change to
    it stops old trajectories from replaying.
    """
    if not isinstance(tool, BaseTool):
        raise TypeError(f"wrap_tool needs a LangChain BaseTool, got {type(tool).__name__}")
    original = original_of(tool)
    if isinstance(original, StructuredTool | Tool) and (original.func or original.coroutine):
        return _wrap_function(engine, original, pre_check, post_check, version)
    return _wrap_class(engine, original, pre_check, post_check, version)


def wrap_tools(engine: Engine, tools: Sequence[BaseTool], *, checks: Checks | None = None) -> list[BaseTool]:
    """:func:`wrap_tool` for each tool; ``checks`` maps a tool name to a Check or a (pre, post) pair."""
    unknown_checks(checks, {t.name for t in tools})
    wrapped = []
    for tool in tools:
        pre, post = checks_for(checks, tool.name)
        wrapped.append(wrap_tool(engine, tool, pre_check=pre, post_check=post))
    return wrapped


def original_of(tool: BaseTool) -> BaseTool:
    """The user's tool behind a tool :func:`wrap_tool` made (``tool`` itself if it is not one)."""
    wrapping = wrapping_of(tool)
    return wrapping.original if wrapping is not None else tool


def wrapping_of(tool: BaseTool) -> _Wrapping | None:
    """What :func:`wrap_tool` made ``tool`` from, or None for a tool it did not make."""
    fn = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    found = getattr(fn, _MARK, None)
    return found if isinstance(found, _Wrapping) else None


def is_async_only(tool: BaseTool) -> bool:
    """Whether a tool has only an async function (a sync graph run cannot call it)."""
    return isinstance(tool, StructuredTool | Tool) and tool.func is None and tool.coroutine is not None


def seen(output: Any) -> Any:
    """What data flow and the replay see of a tool's output: a ``ToolMessage`` without the call's own id.

    The id names this call (the model's at recording, a fresh one at replay): it is no observation
    of the environment, so it is left out, and written as ``{tool_call_id}`` where the message holds it.
    """
    if not isinstance(output, ToolMessage):
        return output
    call_id = output.tool_call_id
    return {
        "content": _without(output.content, call_id),
        "artifact": _without(output.artifact, call_id),
        "status": output.status,
    }


def _without(value: Any, call_id: str) -> Any:
    if isinstance(value, str):
        return value.replace(call_id, "{tool_call_id}") if call_id else value
    if isinstance(value, dict):
        return {k: _without(v, call_id) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_without(v, call_id) for v in value)
    return value


def _wrap_function(
    engine: Engine,
    original: StructuredTool | Tool,
    pre_check: Check[Any] | None,
    post_check: Check[Any] | None,
    version: str | None,
) -> BaseTool:
    """The copy of a function tool: one shim registered with the engine, the function it calls.

    A tool with both a sync and an async function is recorded and replayed through the sync one
    (LangChain runs it in a thread under ``ainvoke``): the engine holds one function per tool name.
    """
    fn = original.func or original.coroutine
    assert fn is not None  # wrap_tool checked
    spec = _Spec(
        engine,
        original.name,
        _visible(original),
        _call_id_names(fn, original),
        original.response_format == "content_and_artifact",
    )
    version = version or source_version(fn)
    if original.func is not None:
        shim = spec.shim(original.func)
        instrumented = engine.register(
            shim,
            name=spec.name,
            version=version,
            pre_check=pre_check,
            post_check=post_check,
            output_view=seen,
        )
        facing = spec.facing(original.func, instrumented, shim)
        update: dict[str, Any] = {"func": facing, "coroutine": None}
    else:
        assert original.coroutine is not None
        ashim = spec.ashim(original.coroutine)
        instrumented = engine.register(
            ashim,
            name=spec.name,
            version=version,
            pre_check=pre_check,
            post_check=post_check,
            output_view=seen,
        )
        facing = spec.afacing(original.coroutine, instrumented, ashim)
        update = {"func": None, "coroutine": facing}
    setattr(facing, _MARK, _Wrapping(engine, original))
    return original.model_copy(update=update)


def _wrap_class(
    engine: Engine,
    original: BaseTool,
    pre_check: Check[Any] | None,
    post_check: Check[Any] | None,
    version: str | None,
) -> BaseTool:
    """A ``StructuredTool`` calling a tool that is a ``BaseTool`` subclass (its ``_run``), with its ``args_schema``."""
    visible = _visible(original)
    taken = [
        name
        for name, p in _parameters(type(original)._run).items()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        and name not in visible
        and name not in _NOT_INJECTED
        and name != "self"
    ]
    if taken:
        raise TypeError(
            f"tool {original.name!r} ({type(original).__name__}) takes {', '.join(taken)} from the graph: "
            "muscle-mem cannot replay it; write it as a @tool function, or leave it out"
        )
    runner = original.model_copy(
        update={"handle_tool_error": False, "handle_validation_error": False, "response_format": "content"}
    )

    def run_tool(**kwargs: Any) -> Any:
        return runner.run(kwargs)

    spec = _Spec(
        engine, original.name, visible, frozenset(), original.response_format == "content_and_artifact"
    )
    version = version or (
        source_version(type(original)._run)
        + "+"
        + schema_version(original.name, original.description, original.args)
    )
    shim = spec.shim(run_tool)
    instrumented = engine.register(
        shim, name=spec.name, version=version, pre_check=pre_check, post_check=post_check, output_view=seen
    )
    facing = spec.facing(run_tool, instrumented, shim)
    setattr(facing, _MARK, _Wrapping(engine, original))
    return StructuredTool(
        name=original.name,
        description=original.description,
        args_schema=original.args_schema if original.args_schema is not None else original.tool_call_schema,
        func=facing,
        return_direct=original.return_direct,
        response_format=original.response_format,
        handle_tool_error=original.handle_tool_error,
        handle_validation_error=original.handle_validation_error,
        tags=original.tags,
        metadata=original.metadata,
        extras=original.extras,
        callbacks=original.callbacks,
        verbose=original.verbose,
    )


@dataclass(frozen=True, slots=True)
class _Spec:
    """One wrapped tool: its name, the arguments the model chooses, the injected call-id arguments."""

    engine: Engine
    name: str
    visible: frozenset[str]
    """The arguments the model chooses (the tool-call schema's fields): the ones recorded."""
    call_ids: frozenset[str]
    """Arguments that receive the tool call's id (``InjectedToolCallId``): fresh at replay."""
    with_artifact: bool

    def shim(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """The function the engine records and replays: ``fn`` with the injected arguments added back."""

        def shim(*args: Any, **kwargs: Any) -> Any:
            hidden, replayed = self._hidden(shim)
            token = _HIDDEN.set(None)  # tools the tool calls in turn are not this call
            try:
                out = fn(*args, **kwargs, **hidden)
            finally:
                _HIDDEN.reset(token)
            self._note(replayed)
            return out

        return shim

    def ashim(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """:meth:`shim` for a coroutine function."""

        async def ashim(*args: Any, **kwargs: Any) -> Any:
            hidden, replayed = self._hidden(ashim)
            token = _HIDDEN.set(None)
            try:
                out = await fn(*args, **kwargs, **hidden)
            finally:
                _HIDDEN.reset(token)
            self._note(replayed)
            return out

        return ashim

    def facing(
        self, fn: Callable[..., Any], instrumented: Callable[..., Any], shim: object
    ) -> Callable[..., Any]:
        """What LangChain calls: the model's arguments go through the engine, the injected ones around it."""

        @functools.wraps(fn)
        def facing(*args: Any, **kwargs: Any) -> Any:
            shown, hidden = self._split(kwargs)
            if hidden is None:
                return fn(*args, **kwargs)
            token = _HIDDEN.set((shim, hidden))
            try:
                out = instrumented(*args, **shown)
            except BaseException:
                self._raised(shown)
                raise
            finally:
                _HIDDEN.reset(token)
            self._steers(out)
            return out

        return facing

    def afacing(
        self, fn: Callable[..., Any], instrumented: Callable[..., Any], shim: object
    ) -> Callable[..., Any]:
        """:meth:`facing` for a coroutine function."""

        @functools.wraps(fn)
        async def afacing(*args: Any, **kwargs: Any) -> Any:
            shown, hidden = self._split(kwargs)
            if hidden is None:
                return await fn(*args, **kwargs)
            token = _HIDDEN.set((shim, hidden))
            try:
                out = await instrumented(*args, **shown)
            except BaseException:
                self._raised(shown)
                raise
            finally:
                _HIDDEN.reset(token)
            self._steers(out)
            return out

        return afacing

    def _split(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The recorded arguments and the injected ones; None for these if the call cannot be cached."""
        shown = {k: v for k, v in kwargs.items() if k in self.visible}
        hidden = {k: v for k, v in kwargs.items() if k not in self.visible}
        taken = sorted(set(hidden) - self.call_ids)
        if not taken:
            return shown, hidden
        refuse_run(
            self.engine,
            f"tool {self.name!r} takes {', '.join(taken)} from the graph, which a replay cannot give it: "
            "the run that calls it is not stored",
        )
        return shown, None

    def _raised(self, shown: dict[str, Any]) -> None:
        notes = RAISED.get()
        if notes is not None:
            notes.append((self.name, shown))

    def _steers(self, out: Any) -> None:
        """A tool that answers with a ``Command`` steers the graph: its run is not stored."""
        items = out if isinstance(out, list) else [out]
        if any(isinstance(item, Command) for item in items):
            refuse_run(
                self.engine,
                f"tool {self.name!r} answered with a Command (it steers the graph, which a replay does not): "
                "the run is not stored",
            )

    def _hidden(self, shim: object) -> tuple[Mapping[str, Any], Replayed | None]:
        """The injected arguments of this call: the framework's, or fresh ones when the engine replays it."""
        held = _HIDDEN.get()
        if held is not None and held[0] is shim:
            return held[1], None
        call_id = fresh_call_id()
        return {name: call_id for name in self.call_ids}, Replayed(self.name, call_id, self.with_artifact)

    @staticmethod
    def _note(replayed: Replayed | None) -> None:
        notes = REPLAYED.get()
        if replayed is not None and notes is not None:
            notes.append(replayed)


def _visible(tool: BaseTool) -> frozenset[str]:
    """The names of the arguments the model chooses for ``tool``."""
    schema: Any = tool.tool_call_schema
    if isinstance(schema, dict):
        return frozenset(schema.get("properties") or ())
    fields = getattr(schema, "model_fields", None)  # pydantic 2 (a model with no field has an empty one)
    if fields is None:
        fields = getattr(schema, "__fields__", None) or {}  # pydantic 1
    return frozenset(fields)


def _call_id_names(fn: Callable[..., Any], tool: BaseTool) -> frozenset[str]:
    """The arguments of ``fn`` (or fields of the tool's schema) annotated ``InjectedToolCallId``."""
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:  # an annotation that does not resolve: LangChain injects nothing there either
        hints = {}
    names = {name for name, hint in hints.items() if _marks_call_id(typing.get_args(hint)[1:])}
    schema: Any = tool.args_schema
    for name, field in (getattr(schema, "model_fields", None) or {}).items():
        if _marks_call_id(getattr(field, "metadata", ())):
            names.add(name)
    return frozenset(names)


def _marks_call_id(metadata: Sequence[Any]) -> bool:
    return any(
        isinstance(m, InjectedToolCallId) or (isinstance(m, type) and issubclass(m, InjectedToolCallId))
        for m in metadata
    )


def _parameters(fn: Callable[..., Any]) -> Mapping[str, inspect.Parameter]:
    try:
        return inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
