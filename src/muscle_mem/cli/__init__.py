"""The ``muscle-mem`` command, one module per subcommand.

Each subcommand module has ``NAME``, ``HELP``, ``add_arguments`` and ``run``. Errors are one clear line on stderr and a non-zero exit status, never a traceback (set
``MUSCLE_MEM_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any, NoReturn

from muscle_mem import __version__
from muscle_mem.cli import clear, export, importing, ls, mcp_proxy, report, rm, show, sign, stats, verify
from muscle_mem.cli import demo as demo
from muscle_mem.cli.common import DEFAULT_STORE, STORE_ENV, UsageError
from muscle_mem.cli.untrusted import printable, shown
from muscle_mem.secrecy.patterns import scrub

COMMANDS: tuple[ModuleType, ...] = (
    demo,
    ls,
    show,
    stats,
    rm,
    clear,
    export,
    importing,
    report,
    verify,
    sign,
    mcp_proxy,
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="muscle-mem", description="Muscle memory for AI agents: run the demo, inspect the cache."
    )
    parser.add_argument("--version", action="version", version=f"muscle-mem {__version__}")
    _add_global_options(parser, default=None)
    common = _Parser(add_help=False)
    _add_global_options(common, default=argparse.SUPPRESS)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        sub = commands.add_parser(module.NAME, help=module.HELP, description=module.HELP, parents=[common])
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    return parser


def _add_global_options(parser: argparse.ArgumentParser, *, default: object) -> None:
    """The options every command takes, before or after its name; given in both places, the latter wins.

    After the name they default to :data:`argparse.SUPPRESS`, so that leaving them out there keeps the
    value given before the name.
    """
    parser.add_argument(
        "--store",
        metavar="URL",
        default=default,
        help=f"sqlite:///path, postgresql://user@host:port/db or memory:// (default: ${STORE_ENV}, "
        f"else {DEFAULT_STORE})",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    _route_logs()
    try:
        args = build_parser().parse_args(argv)
        status: int = args.run(args)
        sys.stdout.flush()
        return status
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except UsageError as exc:
        return _fail(f"error: {exc}", 2)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)
    except Exception as exc:
        if os.environ.get("MUSCLE_MEM_DEBUG"):
            raise
        return _fail(f"error: {_describe(exc)}", 1)


def _route_logs() -> None:
    """Where nothing else handles logging: muscle-mem's warnings reach stderr, one line each, and other
    libraries' (psycopg's retries) do not; ``MUSCLE_MEM_DEBUG`` shows every record."""
    root = logging.getLogger()
    if root.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine("muscle-mem: %(levelname)s: %(message)s"))
    if not os.environ.get("MUSCLE_MEM_DEBUG"):
        handler.addFilter(
            lambda record: record.name.startswith("muscle_mem") and record.levelno >= logging.WARNING
        )
    root.addHandler(handler)


class _OneLine(logging.Formatter):
    """A log message as one printable line, secret-looking texts redacted: it may quote a stored row."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return shown(super().formatMessage(record))

    def formatException(self, ei: Any) -> str:
        return printable(scrub(super().formatException(ei)), lines=True)


def _silence_stdout() -> None:
    """After the reader of stdout went away (``muscle-mem export | head``): send what is left to
    /dev/null, so that the interpreter's last flush does not fail too."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (captured in tests)
        pass


def _describe(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (
        text
        if text and type(exc).__name__.endswith("Error")
        else f"{type(exc).__name__}: {text}".rstrip(": ")
    )


def _fail(message: str, status: int) -> int:
    print(f"muscle-mem: {shown(message)}", file=sys.stderr)
    return status
