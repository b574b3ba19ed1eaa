"""The export file: JSON Lines, one trajectory a line.

Each line is :func:`trajectory.to_record` plus the trajectory's ``usage``.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Iterable, Iterator
from typing import Any

from muscle_mem.cli.common import UsageError
from muscle_mem.model.trajectory import RecordError, Trajectory, Usage, from_record, to_record

_USAGE_FIELDS = {f.name: f.type for f in dataclasses.fields(Usage)}


def line(trajectory: Trajectory, usage: Usage | None) -> str:
    """One line of an export file (ASCII, without its newline)."""
    record: dict[str, Any] = to_record(trajectory)
    if usage is not None:
        record["usage"] = dataclasses.asdict(usage)
    return json.dumps(record, separators=(",", ":"), allow_nan=False)


def parse(lines: Iterable[str], source: str) -> Iterator[tuple[Trajectory, Usage | None]]:
    """The trajectories of an export file; the first bad line raises :class:`UsageError` naming it."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            yield _parse(text)
        except (ValueError, RecordError, RecursionError) as exc:
            raise UsageError(f"{source}, line {number}: {_why(exc)}") from None


def _parse(text: str) -> tuple[Trajectory, Usage | None]:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, found {type(data).__name__}")
    usage = data.pop("usage", None)
    return from_record(data), None if usage is None else _usage(usage)


def _usage(data: Any) -> Usage:
    if not isinstance(data, dict):
        raise ValueError(f"usage must be an object, found {type(data).__name__}")
    unknown = sorted(set(data) - set(_USAGE_FIELDS))
    if unknown:
        raise ValueError(f"unknown usage fields {unknown}")
    for name, value in data.items():
        number = isinstance(value, int) if name == "hits" else isinstance(value, (int, float))
        if isinstance(value, bool) or not number or not _finite(value):
            raise ValueError(f"usage field {name!r} must be a finite {_USAGE_FIELDS[name]}, got {value!r}")
    return Usage(**data)


def _finite(value: float) -> bool:
    try:
        return math.isfinite(value)
    except OverflowError:  # an int too large for a float
        return False


def _why(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    return " ".join(str(exc).split())
