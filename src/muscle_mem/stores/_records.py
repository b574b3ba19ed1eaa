"""Trajectories and events as JSON text, shared by the stores; undecodable rows are logged and skipped.

With a :class:`~muscle_mem.stores.signing.Signer`, records are written signed and a record not
signed for where it is filed is refused before it is decoded.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import time
from collections.abc import Iterable, Iterator
from typing import Any

from muscle_mem.model import codec
from muscle_mem.model.trajectory import (
    RecordError,
    Trajectory,
    Usage,
    from_record,
    record_signature,
    record_text,
    to_record,
)
from muscle_mem.stores import steps as step_index
from muscle_mem.stores.base import Event, Summary
from muscle_mem.stores.signing import Signer

log = logging.getLogger(__name__)

TOMBSTONE_REVISIONS = 10_000
"""Removals are remembered for this many revisions; a reader further behind gets ``Changes.reset``."""
EVENTS_KEPT = 100_000
"""How many engine events a store keeps; older ones are pruned."""
_EVENT_FIELDS = frozenset(f.name for f in dataclasses.fields(Event))
_EVENT_KINDS: dict[str, tuple[type, ...]] = {
    "at": (int, float),
    "task": (str,),
    "task_key": (str,),
    "hit": (bool,),
    "steps_replayed": (int,),
    "reason": (str, type(None)),
    "tool": (str, type(None)),
    "trajectory_id": (str, type(None)),
    "elapsed": (int, float),
    "agent_seconds": (int, float),
    "saved_seconds": (int, float),
    "tokens_spent": (int,),
    "tokens_saved": (int,),
    "miss_reason": (str, type(None)),
    "not_stored": (str, type(None)),
    "not_stored_reason": (str, type(None)),
    "usage": (list,),
    "shadow": (str, type(None)),
    "shadow_step": (int, type(None)),
    "shadow_expected": (str, type(None)),
    "shadow_actual": (str, type(None)),
    "shadow_saved_seconds": (int, float),
}
assert _EVENT_KINDS.keys() == _EVENT_FIELDS
_SHADOW_FIELDS = ("shadow", "shadow_step", "shadow_expected", "shadow_actual", "shadow_saved_seconds")
"""An event's fields that only a shadow run's event sets."""


MAX_RECORD_BYTES = 16 * 2**20
"""The largest record text a store writes or reads (the work one row can cost is bounded)."""


def marks_kept(created_before: float) -> float:
    """The creation time before which removal marks are pruned, when the TTL expires records created
    before ``created_before``: twice as far back (a worker with a TTL up to twice as long still finds
    the marks of the records it would take)."""
    return created_before - max(time.time() - created_before, 0.0)


class Undecodable(str):
    """A stored text that is not valid UTF-8, shown with its bad bytes replaced; its row is skipped."""


def dumps(trajectory: Trajectory, signer: Signer | None = None) -> str:
    """The stored JSON text (ASCII) of a trajectory, signed if there is a signer.

    Raises :class:`codec.CodecError` on unstorable values, and on a record over :data:`MAX_RECORD_BYTES`.
    """
    return _encoded(trajectory, signer)[0]


def _encoded(trajectory: Trajectory, signer: Signer | None) -> tuple[str, list[str]]:
    """The stored text of a trajectory and its steps' signatures, each argument encoded once."""
    if signer is None:
        text, signatures = record_text(trajectory)
    else:
        record = to_record(trajectory)
        text = signer.stamp(trajectory.task_key, record)
        signatures = [record_signature(r) for r in record["steps"]]
    if len(text) > MAX_RECORD_BYTES:
        raise codec.CodecError(
            f"the trajectory's record is {len(text):,} bytes (at most {MAX_RECORD_BYTES:,})"
        )
    return text, signatures


def loads(
    text: str | bytes,
    row_id: str,
    task_key: str,
    where: str,
    signer: Signer | None = None,
    removed: bool = False,
) -> Trajectory | None:
    """The trajectory stored as ``text`` in row ``row_id`` under ``task_key``, or None if it cannot be read.

    A record the signer refuses (``removed``: the store lists it as removed), or one that cannot be
    decoded, is named in a warning. Only JSON
    parsing and :func:`from_record` run on stored data: nothing is unpickled or evaluated, and
    whatever the text holds, reading it raises nothing.
    """
    try:
        if isinstance(text, Undecodable):
            raise RecordError("it is not valid UTF-8")
        if len(text) > MAX_RECORD_BYTES:
            raise RecordError(f"it is {len(text):,} bytes (at most {MAX_RECORD_BYTES:,})")
        data = json.loads(text)
        if not isinstance(data, dict):
            raise RecordError(f"expected a JSON object, found {type(data).__name__}")
        if signer is not None and not signer.accepts(data, task_key, row_id, where, bool(removed)):
            return None
        return from_record(data)
    except Exception as exc:  # a row never breaks a read: it is skipped, named
        log.warning("skipping trajectory %s in %s: it cannot be decoded (%s)", row_id, where, _short(exc))
        return None


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


def initial_usage(trajectory: Trajectory, usage: Usage | None) -> Usage:
    """The use statistics a trajectory is stored with: as given, else last used when created."""
    return usage if usage is not None else Usage(last_used=trajectory.created_at)


@dataclasses.dataclass(frozen=True, slots=True)
class Prepared:
    """A trajectory ready to insert: its record text, size and initial use statistics."""

    trajectory: Trajectory
    usage: Usage
    text: str
    nbytes: int
    steps: list[step_index.StepRow]
    """The trajectory's rows in the step index."""

    def row(self, rev: int) -> tuple[Any, ...]:
        """The values of a ``trajectories`` row.

        In order: rev, id, task_key, task, tags, steps, created_at, nbytes, record.
        """
        t = self.trajectory
        tags = json.dumps(list(t.tags))
        return (rev, t.id, t.task_key, t.task, tags, len(t.steps), t.created_at, self.nbytes, self.text)

    def usage_row(self, rev: int) -> tuple[Any, ...]:
        """The values of a ``usage`` row (id, rev, hits, last_used, saved_seconds, priority, attention)."""
        u = self.usage
        return (self.trajectory.id, rev, u.hits, u.last_used, u.saved_seconds, u.priority, u.attention)


def prepare(
    items: Iterable[tuple[Trajectory, Usage | None]], signer: Signer | None = None, *, local: bool = False
) -> list[Prepared]:
    """Serialise trajectories to add, signed if there is a signer (the first of repeated ids wins).

    ``local``: the store keeps the trajectories in this process, so a Check snapshot kept as the
    object itself (with no stored form) is taken. Raises ``CodecError`` early.
    """
    found: dict[str, Prepared] = {}
    for trajectory, usage in items:
        if trajectory.id not in found:
            if local:
                text, signatures = _encoded(trajectory, signer)
            else:
                with codec.portable():
                    text, signatures = _encoded(trajectory, signer)
            rows = step_index.step_rows(trajectory, signatures)
            found[trajectory.id] = Prepared(
                trajectory, initial_usage(trajectory, usage), text, len(text), rows
            )
    return list(found.values())


def summaries(rows: Iterable[Any], where: str) -> Iterator[Summary]:
    """Summaries from rows; a row whose columns are not what a store writes is skipped, named.

    Each row is (id, task, tags JSON, steps, created_at, hits, last_used, saved, priority, attention).
    """
    found = []
    for row in rows:
        try:
            found.append(_summary(*row))
        except Exception as exc:
            log.warning("skipping trajectory %s in %s: %s", row[0], where, _short(exc))
    return iter(found)


def _summary(tid: Any, task: Any, tags: Any, steps: Any, created_at: Any, *usage: Any) -> Summary:
    for name, text in (("id", tid), ("task", task), ("tags", tags)):
        if not isinstance(text, str) or isinstance(text, Undecodable):
            raise ValueError(f"its {name} is not text in UTF-8")
    tag_list = json.loads(tags)
    if not isinstance(tag_list, list) or not all(isinstance(t, str) for t in tag_list):
        raise ValueError("its tags are not a list of texts")
    if type(steps) is not int or type(usage[0]) is not int:
        raise ValueError("its step or hit count is not an integer")
    for number in (created_at, *usage[1:]):
        if type(number) not in (int, float) or not math.isfinite(number):
            raise ValueError(f"it holds {number!r} where a number belongs")
    return Summary(tid, task, tuple(tag_list), steps, float(created_at), Usage(*usage))


def dump_event(event: Event) -> str:
    """The stored JSON text of an event (without the shadow fields when it is no shadow run's)."""
    data = dataclasses.asdict(event)
    if event.shadow is None:
        for name in _SHADOW_FIELDS:
            del data[name]
    return json.dumps(data, separators=(",", ":"))


def load_events(rows: Iterable[tuple[Any, str]], where: str) -> list[Event]:
    """Events from (row id, JSON text) rows; a row that cannot be read is skipped with a warning."""
    found = []
    for row_id, text in rows:
        try:
            if isinstance(text, Undecodable):
                raise ValueError("it is not valid UTF-8")
            found.append(_event(json.loads(text)))
        except Exception as exc:
            log.warning("skipping event %s in %s: it cannot be decoded (%s)", row_id, where, _short(exc))
    return found


def _event(data: Any) -> Event:
    """An :class:`Event` from its stored JSON object, each field of its type (ValueError if not)."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, found {type(data).__name__}")
    fields = {k: v for k, v in data.items() if k in _EVENT_FIELDS}
    for name, value in fields.items():
        kinds = _EVENT_KINDS[name]
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise ValueError(f"field {name!r} is {value!r}, not a {' or '.join(k.__name__ for k in kinds)}")
    if "usage" in fields:
        fields["usage"] = _usage(fields["usage"])
    return Event(**fields)


def _usage(rows: list[Any]) -> tuple[tuple[str, int, int, int], ...]:
    """An event's usage rows: each ``[model, input tokens, output tokens, requests]`` (ValueError if not)."""
    for row in rows:
        if not (
            isinstance(row, list)
            and len(row) == 4
            and isinstance(row[0], str)
            and all(type(n) is int and n >= 0 for n in row[1:])
        ):
            raise ValueError(f"a usage row is {row!r}, not [model, input tokens, output tokens, requests]")
    return tuple((row[0], row[1], row[2], row[3]) for row in rows)
