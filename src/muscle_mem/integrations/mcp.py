"""MCP: ``CachedSession``, a client session whose tool calls muscle-mem records and replays.

>>> async with mcp.Client(server) as client:           # or a ClientSession, mcp 1.x or 2.x
...     session = CachedSession(engine, client)
...     await session.refresh_tools()                  # one engine tool per MCP tool
...     engine.set_agent(my_agent)                     # my_agent calls session.call_tool(...)
...     result = await engine.arun(f"onboard {name}", params={"name": name})

``CachedSession`` stands in for the agent's ``ClientSession``: ``list_tools`` and ``call_tool``
work as before and return the server's own ``ListToolsResult`` and ``CallToolResult``; every call
made inside an engine run is recorded, and a replay calls the server again with the arguments
rebuilt for the new params. On a hit, ``Result.calls`` holds the replayed calls' ``CallToolResult``
objects.

- Data flow and the replay see a result through :func:`result_view`: everything a model may read
  of it (its text, parsed as JSON where it parses, so that an id the server returns inside JSON
  text flows into later calls; its structured content; a digest of image, audio and resource data).
- A result with ``is_error`` is raised inside the recorded tool, so it is never stored as a
  successful step (a replay that meets one hands over to the agent); the caller still gets the
  error result.
- A tool's version hashes its name, description and input schema (:func:`schema_version`):
  when the server changes a tool, the trajectories that call it miss.
- ``call_tool``'s call options (``read_timeout_seconds``, ``progress_callback``, ``meta``…) go to
  the server with the call and are never recorded.

What the other integrations have that does not apply here: an MCP session is a tool layer, not an
agent, so there is no model to skip, no conversation to bypass, no tool-call ids (JSON-RPC ids are
the session's own) and no engine call of its own (hence no ``last_result``: the agent's engine call
returns the ``Result``). A failed check hands over to the agent the engine was given, which reads
the replayed steps with ``current_run()``. Works with mcp 1.x (camelCase result fields) and 2.x.
"""

from __future__ import annotations

import contextvars
import hashlib
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from muscle_mem.integrations._common import Checks, checks_for, missing_extra, schema_version, unknown_checks

try:
    import mcp.types as mcp_types
    from mcp.types import CallToolResult, ListToolsResult, Tool
except ImportError as exc:  # pragma: no cover - the extra is installed where the tests run
    raise missing_extra("mcp", "mcp") from exc

if TYPE_CHECKING:
    from muscle_mem import Engine, Session

__all__ = ["CachedSession", "ToolSession", "result_view"]

logger = logging.getLogger(__name__)

MAX_PAGES = 1000
"""The most pages of a tool listing read by :meth:`CachedSession.refresh_tools`."""
_CALL_OPTIONS: contextvars.ContextVar[Mapping[str, Any] | None] = contextvars.ContextVar(
    "muscle_mem_mcp_call_options", default=None
)
"""The call options of the ``call_tool`` in progress (none at replay)."""


class ToolSession(Protocol):
    """What ``CachedSession`` needs of an MCP session: ``mcp.Client`` or ``ClientSession``."""

    async def list_tools(self, *args: Any, **kwargs: Any) -> Any: ...

    async def call_tool(self, *args: Any, **kwargs: Any) -> Any: ...


class _ToolFailed(Exception):
    """A tool answered with ``is_error``: raised inside the recorded tool so that nothing records it."""

    def __init__(self, name: str, result: Any) -> None:
        super().__init__(f"MCP tool {name!r} returned an error: {_error_text(result)}")
        self.result = result


class CachedSession:
    """An MCP session (``mcp.Client`` or ``ClientSession``) whose tool calls an engine records and replays.

    ``prefix`` goes before each tool's name in the engine (for several servers on one engine);
    ``checks`` maps a tool's name on the server to a ``Check`` or a ``(pre_check, post_check)`` pair.
    """

    def __init__(
        self, engine: Engine, session: ToolSession, *, prefix: str = "", checks: Checks | None = None
    ) -> None:
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a string, got {type(prefix).__name__}")
        self._engine = engine
        self._session = session
        self._prefix = prefix
        self._checks = checks
        self._shims: dict[str, Callable[..., Awaitable[Any]]] = {}
        self._listed: dict[str, Tool] = {}

    @property
    def session(self) -> ToolSession:
        """The wrapped MCP session."""
        return self._session

    @property
    def tools(self) -> list[Tool]:
        """The server's tools as last listed, in order."""
        return list(self._listed.values())

    async def refresh_tools(self) -> None:
        """List every tool of the server (all pages) and register each with the engine."""
        tools: list[Tool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            page = await self._list_page(cursor)
            tools.extend(page.tools)
            cursor = field_of(page, "next_cursor", "nextCursor")
            if not cursor:
                break
        else:
            raise RuntimeError(f"the server's tool listing has more than {MAX_PAGES} pages")
        unknown_checks(self._checks, {t.name for t in tools})
        self._listed = {}
        self._register(tools)

    async def list_tools(self, *args: Any, **kwargs: Any) -> ListToolsResult:
        """The session's ``list_tools``; the tools listed are registered with the engine."""
        result: ListToolsResult = await self._session.list_tools(*args, **kwargs)
        self._register(result.tools)
        return result

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, **kw: Any
    ) -> CallToolResult:
        """The session's ``call_tool``, recorded inside an engine run; returns the ``CallToolResult``.

        ``kw`` (``read_timeout_seconds``, ``progress_callback``, ``meta``…) goes to the session
        with this call and is not recorded.
        """
        shim = await self._shim(name)
        token = _CALL_OPTIONS.set(kw)
        try:
            result: CallToolResult = await shim(**_arguments(arguments))
        except _ToolFailed as failed:
            result = failed.result
        finally:
            _CALL_OPTIONS.reset(token)
        return result

    async def call_tool_in(
        self, session: Session, name: str, arguments: Mapping[str, Any] | None, **kw: Any
    ) -> CallToolResult:
        """``call_tool`` inside ``session``'s run, from whichever asyncio task (the MCP proxy's way)."""
        shim = await self._shim(name)

        async def with_options(**recorded: Any) -> Any:
            token = _CALL_OPTIONS.set(kw)  # set inside the run's context, where the shim runs
            try:
                return await shim(**recorded)
            finally:
                _CALL_OPTIONS.reset(token)

        try:
            result: CallToolResult = await session.call(with_options, **_arguments(arguments))
        except _ToolFailed as failed:
            result = failed.result
        return result

    async def _list_page(self, cursor: str | None) -> ListToolsResult:
        list_tools = self._session.list_tools
        if cursor is None:
            page: ListToolsResult = await list_tools()
        elif "cursor" in inspect.signature(list_tools).parameters:  # mcp.Client; ClientSession in 1.x
            page = await list_tools(cursor=cursor)
        else:  # ClientSession in 2.x
            page = await list_tools(params=mcp_types.PaginatedRequestParams(cursor=cursor))
        return page

    async def _shim(self, name: str) -> Callable[..., Awaitable[Any]]:
        """The recorded tool for ``name``, listing the tools again if the server has a new one."""
        if not isinstance(name, str):
            raise TypeError(f"a tool name must be a string, got {type(name).__name__}")
        if name not in self._shims:
            await self.refresh_tools()
        if name not in self._shims:  # not listed: still recorded, so a replay repeats the call
            logger.warning(
                "MCP tool %r is not in the server's listing; it is recorded as an unknown tool", name
            )
            self._shims[name] = self._engine.register(
                self._make_shim(name),
                name=self._prefix + name,
                version=schema_version(name, None, None),
                output_view=result_view,
            )
        return self._shims[name]

    def _register(self, tools: list[Tool]) -> None:
        for tool in tools:
            self._listed[tool.name] = tool
            pre, post = checks_for(self._checks, tool.name)
            self._shims[tool.name] = self._engine.register(
                self._make_shim(tool.name),
                name=self._prefix + tool.name,
                version=schema_version(
                    tool.name, tool.description, field_of(tool, "input_schema", "inputSchema")
                ),
                pre_check=pre,
                post_check=post,
                output_view=result_view,
            )

    def _make_shim(self, name: str) -> Callable[..., Awaitable[Any]]:
        session = self._session

        async def call_mcp_tool(**arguments: Any) -> Any:
            result = await session.call_tool(name, arguments, **(_CALL_OPTIONS.get() or {}))
            if field_of(result, "is_error", "isError"):
                raise _ToolFailed(name, result)
            return result

        return call_mcp_tool

    def __repr__(self) -> str:
        return f"CachedSession({type(self._session).__name__}, tools={len(self._listed)}, prefix={self._prefix!r})"


def result_view(result: CallToolResult) -> Any:
    """What data flow and the replay compare of a ``CallToolResult``: everything a model may read of it.

    A text block is its text parsed as JSON when it parses, else the text; a single block stands
    alone, several make a list. Image, audio and resource blocks keep their type, names and a
    digest of their data (never the bytes). Structured content stands alone when the text blocks
    only repeat it as JSON (the usual rendering); else the view holds both. ``is_error`` needs no
    place: such a result is raised, never recorded.
    """
    blocks = [_block_view(block) for block in result.content]
    structured = field_of(result, "structured_content", "structuredContent")
    if structured is None:
        return blocks[0] if len(blocks) == 1 else blocks
    if all(_repeats(block, structured) for block in result.content):
        return structured
    return {"structured_content": structured, "content": blocks}


def _repeats(block: Any, structured: Any) -> bool:
    """Whether a block is text that is the structured content as JSON (bare, or as the SDK's ``result``)."""
    if getattr(block, "type", None) != "text":
        return False
    parsed = _parsed(block.text)
    wrapped = isinstance(structured, dict) and structured.keys() == {"result"}
    return bool(parsed == structured or (wrapped and parsed == structured["result"]))


def _block_view(block: Any) -> Any:
    if getattr(block, "type", None) == "text":
        return _parsed(block.text)
    view: dict[str, Any] = {"type": getattr(block, "type", type(block).__name__)}
    resource = getattr(block, "resource", None)
    for part in (block, resource):
        for name, legacy in _SHOWN_FIELDS:
            value = field_of(part, name, legacy) if part is not None else None
            if value is not None:
                view.setdefault(name, str(value))
    text = getattr(resource, "text", None)
    if isinstance(text, str):
        view["text"] = _parsed(text)
    for part, name in ((block, "data"), (resource, "blob")):
        data = getattr(part, name, None)
        if isinstance(data, str | bytes):
            view[name + "_sha256"] = hashlib.sha256(
                data if isinstance(data, bytes) else data.encode()
            ).hexdigest()
    return view


_SHOWN_FIELDS = (
    ("uri", "uri"),
    ("mime_type", "mimeType"),
    ("name", "name"),
    ("title", "title"),
    ("description", "description"),
)
"""The fields of a non-text block (or its resource) a model may be shown, by their 2.x and 1.x names."""


def _parsed(text: str) -> Any:
    """JSON text as its value (not NaN or Infinity), any other text as itself."""
    try:
        return json.loads(text, parse_constant=_refuse)
    except ValueError:
        return text


def _refuse(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON data")


def _arguments(arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    if arguments is None:
        return {}
    if not isinstance(arguments, Mapping) or not all(isinstance(k, str) for k in arguments):
        raise TypeError(f"arguments must map names to values, got {arguments!r}")
    return dict(arguments)


def field_of(obj: Any, name: str, legacy: str) -> Any:
    """A field of an MCP model by its 2.x name, else its 1.x (camelCase) name."""
    return getattr(obj, name) if hasattr(obj, name) else getattr(obj, legacy, None)


def _error_text(result: Any) -> str:
    texts = [getattr(block, "text", "") for block in getattr(result, "content", ())]
    return " ".join(t for t in texts if t)[:200] or "(no text)"
