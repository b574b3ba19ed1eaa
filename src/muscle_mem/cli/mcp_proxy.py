"""``muscle-mem mcp-proxy [--checks MODULE:ATTR] [--mode MODE] -- COMMAND...``: an MCP server over stdio, tasks recorded and replayed."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import sys
from collections.abc import Mapping
from typing import Any

from muscle_mem.cli.common import UsageError, store_url
from muscle_mem.modes import DEFAULT_PROOF, MODES

NAME = "mcp-proxy"
HELP = (
    "Serve an MCP server over stdio as it is, with muscle_mem_begin/muscle_mem_end to record a task "
    "and replay it the next time: muscle-mem mcp-proxy [--store URL] [--checks MODULE:ATTR] "
    "[--mode MODE] -- <upstream server command...>"
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--checks",
        metavar="MODULE:ATTR",
        help="a mapping of the upstream's tool names to a Check or a (pre_check, post_check) pair, "
        "imported from MODULE (the working directory is on the path)",
    )
    parser.add_argument(
        "--mode",
        choices=MODES,
        default="replay",
        help="replay (default): replay what is safe; shadow: the model does every task and each run is compared "
        "with what a replay would have done (muscle-mem stats shows it); proven: a task family replays once "
        "--proof shadow runs agreed; frozen: replay, store nothing",
    )
    parser.add_argument(
        "--proof",
        type=positive_int,
        default=DEFAULT_PROOF,
        metavar="N",
        help=f"shadow agreements a family needs before --mode proven replays it ({DEFAULT_PROOF})",
    )
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
    checks = load_checks(args.checks) if args.checks else None
    try:
        from muscle_mem.integrations import mcp_proxy
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    from muscle_mem import Engine

    with Engine(store_url(args), mode=args.mode, proof=args.proof) as engine:
        asyncio.run(mcp_proxy.serve_stdio(engine, command, checks=checks))
    return 0


def positive_int(text: str) -> int:
    """An argument that must be a whole number above 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def load_checks(spec: str) -> Mapping[str, Any]:
    """The checks map ``MODULE:ATTR`` names: each value a ``Check`` or a ``(pre_check, post_check)`` pair."""
    from muscle_mem import Check

    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise UsageError(f"--checks takes MODULE:ATTR (a module and a mapping in it), got {spec!r}")
    if "" not in sys.path:
        sys.path.insert(0, "")  # as `python -m` does: the working directory's modules
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"--checks: cannot import {module_name!r}: {exc}") from None
    checks = getattr(module, attr, None)
    if not isinstance(checks, Mapping):
        found = "nothing" if checks is None else type(checks).__name__
        raise UsageError(f"--checks: {spec} must be a mapping of tool names to checks, found {found}")
    for name, given in checks.items():
        pair = (
            isinstance(given, tuple)
            and len(given) == 2
            and all(c is None or isinstance(c, Check) for c in given)
        )
        if not isinstance(name, str) or not (isinstance(given, Check) or pair):
            raise UsageError(
                f"--checks: {spec}[{name!r}] must be a Check or a (pre_check, post_check) pair, got {given!r}"
            )
    return checks
