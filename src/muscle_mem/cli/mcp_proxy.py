"""``muscle-mem mcp-proxy -- COMMAND...``: an MCP server's tools over stdio, tasks recorded and replayed."""

from __future__ import annotations

import argparse
import asyncio

from muscle_mem.cli.common import UsageError, store_url

NAME = "mcp-proxy"
HELP = (
    "Serve an MCP server's tools over stdio, with muscle_mem_begin/muscle_mem_end to record a task "
    "and replay it the next time: muscle-mem mcp-proxy [--store URL] -- <upstream server command...>"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "upstream",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="the command that starts the upstream MCP server (stdio), after --",
    )


def run(args: argparse.Namespace) -> int:
    command = list(args.upstream)
    if command[:1] == ["--"]:
        command = command[1:]
    if not command:
        raise UsageError("name the upstream MCP server after --: muscle-mem mcp-proxy -- python server.py")
    try:
        from muscle_mem.integrations import mcp_proxy
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    from muscle_mem import Engine

    with Engine(store_url(args)) as engine:
        asyncio.run(mcp_proxy.serve_stdio(engine, command))
    return 0
