"""What the MCP proxy passes through unchanged: the upstream's identity, its other requests, its notifications.

:class:`Passthrough` stands between the proxy's clients and one upstream session (mcp 2.x,
``mcp.Client`` or ``ClientSession``):

- identity: the upstream's ``serverInfo`` (name, version, title, description, website, icons),
  instructions and capabilities, advertised as the proxy's own;
- requests other than tools: resources (list, templates, read, subscribe), prompts, completions
  and the log level, each forwarded as it came (its ``_meta`` too) and answered with the upstream's
  result or error, its progress relayed to the client that asked;
- notifications: the upstream's log messages, list changes and resource updates, relayed to the
  proxy's clients (a log message to the request in progress when there is one).

A request a client cancels is cancelled upstream too (the SDK sends the cancellation on). Requests
the upstream sends to the client (sampling, elicitation, roots) are not relayed.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import mcp_types as types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPDeprecationWarning
from pydantic import BaseModel

__all__ = ["Passthrough", "forwarded_meta", "unstamped"]

_RESERVED = "io.modelcontextprotocol/"
"""The prefix of the ``_meta`` keys the protocol itself writes (each hop writes its own)."""
_PROGRESS = ("progress_token", "progressToken")
"""The progress token's key in a ``_meta`` mapping, by field name or wire name."""
_LIST_CHANGES = (
    types.ToolListChangedNotification,
    types.PromptListChangedNotification,
    types.ResourceListChangedNotification,
    types.ResourceUpdatedNotification,
)
_Result = TypeVar("_Result", bound=BaseModel)
Handler = Callable[[ServerRequestContext[Any], Any], Awaitable[Any]]


class Passthrough:
    """The upstream's identity, requests and notifications, for the proxy's server and its clients."""

    def __init__(self, upstream: Any) -> None:
        self._upstream = upstream
        self._clients: weakref.WeakSet[ServerSession] = weakref.WeakSet()
        self._serving: list[ServerSession] = []
        """The sessions of the client requests in progress, the latest last."""

    @property
    def _session(self) -> ClientSession:
        session: ClientSession = (
            self._upstream.session if isinstance(self._upstream, Client) else self._upstream
        )
        return session

    @property
    def capabilities(self) -> types.ServerCapabilities:
        """The upstream's capabilities (none known: tools only)."""
        return self._session.server_capabilities or types.ServerCapabilities(tools=types.ToolsCapability())

    def identity(self) -> dict[str, Any]:
        """The upstream's ``serverInfo`` as ``Server`` keyword arguments (an anonymous one: ``upstream``)."""
        info = self._session.server_info
        if info is None:
            return {"name": "upstream"}
        return {
            "name": info.name,
            "version": info.version,
            "title": info.title,
            "description": info.description,
            "website_url": info.website_url,
            "icons": info.icons,
        }

    def instructions(self, own: str) -> str:
        """The upstream's instructions, then the proxy's paragraph ``own``."""
        theirs = (self._session.instructions or "").rstrip()
        return f"{theirs}\n\n{own}" if theirs else own

    def notification_options(self) -> NotificationOptions:
        """The list changes the upstream says it announces."""
        caps = self.capabilities
        return NotificationOptions(
            prompts_changed=bool(caps.prompts and caps.prompts.list_changed),
            resources_changed=bool(caps.resources and caps.resources.list_changed),
            tools_changed=bool(caps.tools and caps.tools.list_changed),
        )

    def handlers(self) -> dict[str, Any]:
        """The ``Server`` handlers of every request the upstream serves, but tools (the proxy's own)."""
        caps, found = self.capabilities, dict[str, Handler]()
        if caps.resources is not None:
            found["on_list_resources"] = self._forwarder(
                types.ListResourcesRequest, types.ListResourcesResult
            )
            found["on_list_resource_templates"] = self._forwarder(
                types.ListResourceTemplatesRequest, types.ListResourceTemplatesResult
            )
            found["on_read_resource"] = self._forwarder(types.ReadResourceRequest, types.ReadResourceResult)
            if caps.resources.subscribe:
                found["on_subscribe_resource"] = self._forwarder(types.SubscribeRequest, types.EmptyResult)
                found["on_unsubscribe_resource"] = self._forwarder(
                    types.UnsubscribeRequest, types.EmptyResult
                )
        if caps.prompts is not None:
            found["on_list_prompts"] = self._forwarder(types.ListPromptsRequest, types.ListPromptsResult)
            found["on_get_prompt"] = self._forwarder(types.GetPromptRequest, types.GetPromptResult)
        if caps.completions is not None:
            found["on_completion"] = self._forwarder(types.CompleteRequest, types.CompleteResult)
        if caps.logging is not None:
            found["on_set_logging_level"] = self._forwarder(types.SetLevelRequest, types.EmptyResult)
        return found

    def seen(self, ctx: ServerRequestContext[Any]) -> None:
        """Note the client a request came from: the upstream's notifications reach it from now on."""
        self._clients.add(ctx.session)

    @asynccontextmanager
    async def serving(self, ctx: ServerRequestContext[Any]) -> AsyncIterator[ProgressFnT | None]:
        """A client request in progress: log messages go to it; yields its progress relay, if it asked."""
        session = ctx.session
        self.seen(ctx)
        self._serving.append(session)
        try:
            yield _progress_relay(ctx)
        finally:
            self._serving.remove(session)

    async def on_message(self, message: Any) -> None:
        """The upstream's notification relayed to the proxy's clients (the ``message_handler`` of its client)."""
        if isinstance(message, types.LoggingMessageNotification):
            targets = self._serving[-1:] or list(self._clients)
            params = message.params
            for session in targets:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await session.send_log_message(params.level, params.data, params.logger)
        elif isinstance(message, _LIST_CHANGES):
            for session in list(self._clients):
                await session.send_notification(message)

    def _forwarder(self, request_type: Any, result_type: type[_Result]) -> Handler:
        async def forward(ctx: ServerRequestContext[Any], params: Any) -> _Result:
            async with self.serving(ctx) as progress:
                request = request_type(params=forwarded_meta(params))
                result = await self._session.send_request(request, result_type, progress_callback=progress)
            return unstamped(result)

        return forward


def forwarded_meta(params: Any) -> Any:
    """The request's params with the ``_meta`` the next hop should see: no progress token, no protocol keys."""
    meta = getattr(params, "meta", None)
    if not meta:
        return params
    kept = {
        key: value for key, value in meta.items() if key not in _PROGRESS and not key.startswith(_RESERVED)
    }
    return params.model_copy(update={"meta": kept or None})


def unstamped(result: _Result) -> _Result:
    """A result without the upstream's own protocol ``_meta`` keys (its ``serverInfo`` stamp)."""
    meta = getattr(result, "meta", None)
    if not isinstance(meta, dict) or not any(key.startswith(_RESERVED) for key in meta):
        return result
    kept = {key: value for key, value in meta.items() if not key.startswith(_RESERVED)}
    return result.model_copy(update={"meta": kept or None})


def _progress_relay(ctx: ServerRequestContext[Any]) -> ProgressFnT | None:
    if not ctx.meta or not any(ctx.meta.get(key) is not None for key in _PROGRESS):
        return None
    return ctx.session.report_progress
