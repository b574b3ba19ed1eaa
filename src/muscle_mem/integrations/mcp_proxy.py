"""The MCP caching proxy: an upstream server as it is, plus tasks recorded whole and replayed in one call.

Any MCP client (Claude Desktop, Cursor, an agent) talks to the proxy as to the upstream server: its
name, version and instructions (the proxy adds one paragraph of its own), its tools forwarded
unchanged, and everything else it serves passed through (:mod:`~muscle_mem.integrations.mcp_passthrough`:
resources, prompts, completions, progress, log messages, cancellation, list changes). Two tools
more frame a task:

- ``muscle_mem_begin(task, params, tags)``: the task in words, the values that vary between such
  tasks, and optional tags (a task replays only for the same tags). A task seen before is replayed
  at once against the upstream (the answer comes back as ``done by replay: …``); a task partly
  replayed lists the steps done; else the client works.
- ``muscle_mem_end(answer)``: the client's final answer; its calls since begin are stored as the
  task's trajectory.

Only ``tools/call`` inside a task is recorded and replayed. Built on :meth:`Engine.session`: the
calls forwarded between begin and end arrive in request tasks of their own and are recorded into
the task's run through :meth:`Session.call`. One task is open at a time per client connection; a
call outside a task is forwarded unrecorded. The proxy sees no conversation, so it cannot tell a
follow-up from a new task: the model frames each task itself. It cannot skip the model either (it
never sees it): a hit saves the task's tool-call turns.

What keeps a replay safe: ``checks`` (a tool name to a ``Check`` or a ``(pre, post)`` pair; the
command takes them as ``--checks module:attr``), and, with no checks at all, the engine itself,
which compares each replayed call's fresh result with what the recorded runs saw and hands the
task back to the model (the steps done listed) when it changed. The server runs on mcp 2.x
(``mcp.server.lowlevel.Server``) and talks to the upstream with the initialize handshake;
``muscle-mem mcp-proxy -- <upstream command…>`` serves it over stdio (:func:`serve_stdio`).
"""

from __future__ import annotations

import json
import logging
import os
import shlex
import warnings
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Any

import anyio

from muscle_mem import MuscleMemError
from muscle_mem.integrations._common import Checks, missing_extra, tools_offered, with_context
from muscle_mem.integrations.mcp import CachedSession, ToolSession, field_of, result_view


def _import_error() -> ImportError:
    """What to install: mcp itself, or mcp 2 where mcp 1 is installed (its server API differs)."""
    try:
        major = metadata.version("mcp").split(".")[0]
    except metadata.PackageNotFoundError:
        return missing_extra("mcp", "mcp")
    return ImportError(f"the MCP proxy needs mcp>=2, found mcp {major}.x: pip install -U 'mcp>=2'")


try:
    from mcp import Client, StdioServerParameters
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import NotificationOptions, Server
    from mcp.server.models import InitializationOptions
    from mcp.server.stdio import stdio_server
    from mcp.shared.exceptions import MCPDeprecationWarning
    from mcp.types import (
        CallToolRequestParams,
        CallToolResult,
        ListToolsResult,
        PaginatedRequestParams,
        TextContent,
        Tool,
    )

    from muscle_mem.integrations.mcp_passthrough import Passthrough, forwarded_meta, unstamped
except ImportError as exc:  # pragma: no cover - mcp 2.x is installed where the tests run
    raise _import_error() from exc

if TYPE_CHECKING:
    from muscle_mem import Engine, Result, Session

__all__ = ["BEGIN", "END", "INSTRUCTIONS", "CachingProxy", "UpstreamError", "proxy_for", "serve_stdio"]

logger = logging.getLogger(__name__)

BEGIN = "muscle_mem_begin"
END = "muscle_mem_end"
INSTRUCTIONS = (
    f"This server also remembers tasks. Before you start a task, call {BEGIN}(task, params): the task in "
    "words, and as params the values that change from one such task to the next (each written in the "
    f"task exactly as in params). If it answers 'done by replay', the task is done: give that answer and "
    f"call no other tool for it. Otherwise do the task with the other tools (skipping the steps it says "
    f"were done), then call {END}(answer) with your final answer, always, as your last call."
)


@dataclass(eq=False)
class _Connection:
    """One client connection's state: the task open on it, if any."""

    task: _OpenTask | None = None


@dataclass(eq=False)
class _OpenTask:
    session: Session
    begun: anyio.Event = field(default_factory=anyio.Event)
    """Set once ``begin`` returned: calls forwarded before wait for it."""


class CachingProxy:
    """An MCP server in front of ``upstream`` that records tasks framed by begin/end and replays them.

    ``server`` is the ``mcp.server.lowlevel.Server`` to run (each connection has its own open
    task), named and described as the upstream; ``checks`` maps an upstream tool's name to a
    ``Check`` or a ``(pre, post)`` pair; ``passthrough`` relays the upstream's notifications (give
    its ``on_message`` to the upstream client as ``message_handler``, as :func:`proxy_for` does);
    ``last_result`` is the engine's ``Result`` of the last task that ended.
    """

    def __init__(self, engine: Engine, upstream: ToolSession, *, checks: Checks | None = None) -> None:
        self._engine = engine
        self.upstream = CachedSession(engine, upstream, checks=checks)
        """The upstream session, its calls recorded inside a task."""
        self.passthrough = Passthrough(upstream)
        self.last_result: Result | None = None
        with warnings.catch_warnings():  # the upstream's logging capability is deprecated in new protocols
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            self.server: Server[_Connection] = _ProxyServer(
                self.passthrough,
                **self.passthrough.identity(),
                instructions=self.passthrough.instructions(INSTRUCTIONS),
                lifespan=self._connection,
                on_list_tools=self._list_tools,
                on_call_tool=self._call_tool,
                **self.passthrough.handlers(),
            )

    async def refresh_tools(self) -> None:
        """List the upstream's tools again (the proxy lists them at every ``tools/list``)."""
        await self.upstream.refresh_tools()
        taken = {BEGIN, END} & {t.name for t in self.upstream.tools}
        if taken:
            raise ValueError(
                f"the upstream server has a tool named {sorted(taken)[0]!r}, which the proxy uses"
            )

    @asynccontextmanager
    async def _connection(self, _server: Server[_Connection]) -> AsyncIterator[_Connection]:
        state = _Connection()
        try:
            yield state
        finally:
            if state.task is not None:
                open_task, state.task = state.task, None
                logger.warning("the client left with a task open: nothing is stored for it")
                await _abandoned(open_task.session, "the client connection closed")

    async def _list_tools(
        self, ctx: ServerRequestContext[_Connection], _params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        self.passthrough.seen(ctx)
        await self.refresh_tools()
        return ListToolsResult(tools=[_begin_tool(), _end_tool(), *self.upstream.tools])

    async def _call_tool(
        self, ctx: ServerRequestContext[_Connection], params: CallToolRequestParams
    ) -> CallToolResult:
        state = ctx.lifespan_context
        arguments = params.arguments or {}
        if params.name == BEGIN:
            return await self._begin(state, arguments)
        if params.name == END:
            return await self._end(state, arguments)
        async with self.passthrough.serving(ctx) as progress:
            return await self._forward(state, params, progress)

    async def _begin(self, state: _Connection, arguments: Mapping[str, Any]) -> CallToolResult:
        task, task_params = arguments.get("task"), arguments.get("params") or {}
        if not isinstance(task, str) or not task.strip():
            return _error(f"{BEGIN} needs the task in words: task must be a non-empty string")
        if not isinstance(task_params, Mapping):
            return _error(f"{BEGIN}: params must be an object of names to values")
        if state.task is not None:
            return _error(f"a task is open already: call {END}(answer) to finish it first")
        try:
            tags = await self._served(arguments.get("tags"))
        except (MuscleMemError, TypeError, ValueError) as exc:
            return _error(f"{BEGIN} failed: {exc}")
        session = self._engine.session(task, params=dict(task_params), tags=tags)
        open_task = state.task = _OpenTask(session)
        try:
            result = await open_task.session.begin()
        except (MuscleMemError, TypeError, ValueError) as exc:
            state.task = None
            return _error(f"{BEGIN} failed: {exc}")
        finally:
            open_task.begun.set()
        if result is not None:
            state.task, self.last_result = None, result
            logger.info("a task was done by replay in %s", _steps(result.steps_replayed))
            return _text(f"done by replay: {_shown(result.output)} ({_steps(result.steps_replayed)})")
        done = open_task.session.steps
        if not done:
            return _text(f"no recording; proceed, and call {END}(answer) when the task is done")
        lines = [
            f"{n}. {s.tool}({_shown(dict(s.kwargs))}) -> {_shown(result_view(s.output))}"
            for n, s in enumerate(done, 1)
        ]
        listing = _text(
            f"replayed {_steps(len(done))}, then the recording stopped fitting. Done already (do not "
            "repeat them), each with its whole output:\n"
            + "\n".join(lines)
            + f"\nProceed from there, and call {END}(answer) when the task is done"
        )
        listing.content.extend(_media(done))
        return listing

    async def _served(self, tags: Any) -> Any:
        """The task's tags, with one naming what the remote model reads of the server.

        That is the upstream's instructions (relayed to the client) and the tools it lists, each
        with its description and input schema: a changed policy or a tool added upstream is another
        task, since the remote model would read it before choosing its calls. The tools are listed
        again for this.
        """
        await self.refresh_tools()
        served = {
            "instructions": self.passthrough.instructions(INSTRUCTIONS),
            "tools": tools_offered(
                (t.name, t.description, field_of(t, "input_schema", "inputSchema"))
                for t in self.upstream.tools
            ),
        }
        return with_context(tags, served)

    async def _end(self, state: _Connection, arguments: Mapping[str, Any]) -> CallToolResult:
        open_task = state.task
        if open_task is None:
            return _text("no task is open (it was done by replay, or never begun): nothing to store")
        await open_task.begun.wait()
        if state.task is not open_task:
            return _text("no task is open: nothing to store")
        state.task = None
        answer = arguments.get("answer", "")
        open_task.session.end(answer)
        try:
            result = await open_task.session.wait()
        except Exception as exc:
            logger.warning("the task's run could not be stored: %s", exc)
            return _error(f"the task ended, but its recording failed: {exc}")
        self.last_result = result
        if result is not None and result.stored:
            return _text("stored: the next task like this one is done by replay")
        why = result.not_stored if result is not None else "the session was abandoned"
        return _text(f"not stored: {why}")

    async def _forward(
        self, state: _Connection, params: CallToolRequestParams, progress: Any
    ) -> CallToolResult:
        open_task = state.task
        if open_task is not None:
            await open_task.begun.wait()
        options: dict[str, Any] = {"progress_callback": progress, "meta": forwarded_meta(params).meta}
        name, arguments = params.name, params.arguments or {}
        if open_task is None or state.task is not open_task:
            result: CallToolResult = await self.upstream.session.call_tool(name, dict(arguments), **options)
        else:
            result = await self.upstream.call_tool_in(open_task.session, name, arguments, **options)
        return unstamped(result)


class _ProxyServer(Server[_Connection]):
    """The lowlevel server, announcing the list changes and experimental capabilities the upstream does."""

    def __init__(self, passthrough: Passthrough, name: str, **kwargs: Any) -> None:
        super().__init__(name, **kwargs)
        self._passthrough = passthrough

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The options of ``Server``, the upstream's list changes and experimental capabilities by default."""
        return super().create_initialization_options(
            notification_options or self._passthrough.notification_options(),
            experimental_capabilities
            if experimental_capabilities is not None
            else self._passthrough.capabilities.experimental,
            extensions,
        )


@asynccontextmanager
async def proxy_for(
    engine: Engine, upstream: Any, *, checks: Checks | None = None
) -> AsyncIterator[CachingProxy]:
    """A :class:`CachingProxy` connected to ``upstream`` (an in-process server, a transport, stdio params).

    The upstream is spoken to with the initialize handshake, and its notifications reach the
    proxy's clients.
    """
    proxies: list[CachingProxy] = []

    async def relay(message: Any) -> None:
        for proxy in proxies:
            await proxy.passthrough.on_message(message)

    async with Client(upstream, mode="legacy", message_handler=relay) as client:
        proxy = CachingProxy(engine, client, checks=checks)
        proxies.append(proxy)
        await proxy.refresh_tools()
        yield proxy


async def serve_stdio(
    engine: Engine, command: Sequence[str], *, checks: Checks | None = None, cwd: str | None = None
) -> None:
    """Start the upstream server ``command`` over stdio and serve the proxy on this process's stdio.

    The upstream gets this process's environment (what the client configured for the server).
    Raises :class:`UpstreamError` if the upstream cannot be started or does not answer.
    """
    if not command:
        raise ValueError("the upstream server's command is empty")
    params = StdioServerParameters(command=command[0], args=list(command[1:]), env=dict(os.environ), cwd=cwd)
    async with AsyncExitStack() as stack:
        try:
            proxy = await stack.enter_async_context(proxy_for(engine, params, checks=checks))
        except Exception as exc:
            raise UpstreamError(
                f"cannot use the upstream MCP server `{shlex.join(command)}`: {_cause(exc)}"
            ) from exc
        logger.info("proxying %d tools of %s", len(proxy.upstream.tools), command[0])
        read, write = await stack.enter_async_context(stdio_server())
        await proxy.server.run(read, write, proxy.server.create_initialization_options())


class UpstreamError(MuscleMemError):
    """The upstream MCP server of the proxy cannot be started or used."""


def _cause(exc: BaseException) -> str:
    """The first error inside nested exception groups, in words."""
    inner = getattr(exc, "exceptions", None)  # an exception group (a backport's on Python 3.10)
    while isinstance(inner, tuple) and inner:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return str(exc) or type(exc).__name__


async def _abandoned(session: Session, why: str) -> None:
    try:
        session.abandon(why)
    except RuntimeError:  # not begun yet, or ended meanwhile
        return
    await session.wait()


def _begin_tool() -> Tool:
    return Tool(
        name=BEGIN,
        description=(
            "Call first, before any other tool of a task. task: the task in words; params: the values in "
            "it that change between such tasks. Answers 'done by replay: <answer>' when the task is done "
            f"already; otherwise do the task, then call {END}."
        ),
        input_schema={
            "type": "object",
            "properties": {
                "task": {"type": "string", "description": "the task in words, params values included"},
                "params": {
                    "type": "object",
                    "description": "the values that change between such tasks, by name",
                    "additionalProperties": {"type": ["string", "number", "integer", "boolean"]},
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "optional: tasks with other tags are never replayed for these",
                },
            },
            "required": ["task"],
        },
    )


def _end_tool() -> Tool:
    return Tool(
        name=END,
        description=f"Call last, once the task begun with {BEGIN} is done: answer is your final answer.",
        input_schema={
            "type": "object",
            "properties": {"answer": {"type": "string", "description": "the task's final answer"}},
            "required": ["answer"],
        },
    )


def _text(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)])


def _error(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _shown(value: Any) -> str:
    """A value as whole JSON text (a text as itself): the client reads all of it."""
    return value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)


def _media(done: Sequence[Any]) -> list[Any]:
    """The image, audio and resource blocks of the replayed steps, each after a line naming its step.

    The listing shows them by a digest; the client sees them as the upstream sent them.
    """
    blocks: list[Any] = []
    for n, step in enumerate(done, 1):
        for block in getattr(step.output, "content", None) or ():
            if getattr(block, "type", None) != "text":
                blocks.append(
                    TextContent(type="text", text=f"\nstep {n} ({step.tool}) returned this {block.type}:")
                )
                blocks.append(block)
    return blocks
