"""An audit hook for the tests: what code the interpreter was asked to run, import or open meanwhile.

``sys.addaudithook`` cannot be removed, so one hook is installed once and records only inside
:func:`audited`.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

MARKER = "pwned"
"""Every hostile payload in the tests names this: an audit event mentioning it means it ran."""
RUNS_CODE = frozenset(
    {
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "subprocess.Popen",
        "socket.connect",
        "ctypes.dlopen",
    }
)
"""Events that start a program, reach the network or load native code: never expected."""

_lock = threading.Lock()
_events: list[tuple[str, tuple[Any, ...]]] | None = None
_installed = False


def _hook(event: str, args: tuple[Any, ...]) -> None:
    found = _events
    if found is not None and (event in RUNS_CODE or event in ("import", "open", "exec", "compile")):
        found.append((event, args))


@contextmanager
def audited() -> Iterator[list[tuple[str, tuple[Any, ...]]]]:
    """The audit events (imports, opens, exec, compile and those of :data:`RUNS_CODE`) raised inside."""
    global _events, _installed
    with _lock:
        if not _installed:
            sys.addaudithook(_hook)
            _installed = True
        found: list[tuple[str, tuple[Any, ...]]] = []
        _events = found
        try:
            yield found
        finally:
            _events = None


def attacker_ran(events: list[tuple[str, tuple[Any, ...]]]) -> list[str]:
    """The events that show a hostile payload ran: an import or open naming :data:`MARKER` (the
    payloads import or open a name holding it), and any event of :data:`RUNS_CODE`.

    Compiling and running the generated module are expected: its literals and comments may hold
    the marker as data.
    """
    return [
        f"{event} {args!r}"[:200]
        for event, args in events
        if event in RUNS_CODE or (event in ("import", "open") and any(MARKER in str(a) for a in args))
    ]


def import_file(path: Path, name: str) -> ModuleType:
    """Import a Python file as a module (its bytes, so a coding line in it counts) without keeping it."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
