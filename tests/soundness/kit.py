"""Small helpers the scenarios' policies share: reading the calls so far and the task text."""

from __future__ import annotations

import re
from typing import Any

from .harness import Policy, Run, Scenario, Step, Tool


def out(history: list[Step], tool: str) -> Any:
    """The latest output of ``tool`` in the calls so far (None if not called)."""
    for name, _args, output in reversed(history):
        if name == tool:
            return output
    return None


def done(history: list[Step], tool: str) -> bool:
    """Whether ``tool`` has been called."""
    return any(name == tool for name, _args, _output in history)


def calls(history: list[Step], tool: str) -> list[dict[str, Any]]:
    """The arguments of every call to ``tool`` so far."""
    return [args for name, args, _output in history if name == tool]


def count(history: list[Step], tool: str) -> int:
    """How many times ``tool`` was called."""
    return len(calls(history, tool))


def num(text: str, after: str) -> int:
    """The whole number that follows the word ``after`` in ``text``."""
    found = re.search(rf"\b{re.escape(after)}\s+(\d+)", text)
    assert found, f"no number after {after!r} in {text!r}"
    return int(found.group(1))


def word(text: str, after: str) -> str:
    """The word (letters, digits, @ . _ -) that follows ``after`` in ``text``."""
    found = re.search(rf"\b{re.escape(after)}\s+([\w@.\-]+)", text)
    assert found, f"no word after {after!r} in {text!r}"
    return found.group(1).rstrip(".")


def sc(
    name: str,
    cls: str,
    tools: list[Tool],
    policy: Policy,
    records: list[Run],
    probes: list[Run],
    doc: str,
    **options: Any,
) -> Scenario:
    """A scenario through the core engine (the plain Python agent)."""
    return Scenario(name, cls, "core", tools, policy, records, probes, doc=doc, **options)
