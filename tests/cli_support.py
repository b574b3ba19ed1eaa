"""Shared by the CLI tests: a SQLite cache with varied trajectories and events, and a way to run commands."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import trajectory
from muscle_mem.cli import main
from muscle_mem.model.provenance import Const, Output, Param, Struct, Template, Text
from muscle_mem.model.trajectory import Snapshot, Step, Trajectory, Usage
from muscle_mem.stores import SQLiteStore
from muscle_mem.stores.base import Event

NOW = 1_700_000_000.0


@dataclass
class Ran:
    status: int
    out: str
    err: str


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> Ran:
    """Run ``muscle-mem argv`` in-process; returns its exit status and what it printed."""
    capsys.readouterr()
    status = main(list(argv))
    captured = capsys.readouterr()
    return Ran(status, captured.out, captured.err)


def refund_trajectory(**fields: object) -> Trajectory:
    """A trajectory using every argument form: params, a template, data flow, a struct, odd names."""
    steps = (
        Step(
            tool="lookup_customer",
            version="v1",
            args=(Param("email"),),
            pre=Snapshot.capture(True),
            seconds=0.002,
        ),
        Step(
            tool="Desk.create_ticket",
            version="v2",
            args=(
                Output(0, (("key", "id"),)),
                Template((Text('Refund {"now"}: '), Param("reason"))),
            ),
            kwargs=(("amount", Param("amount")), ("not an identifier", Const([1, 2]))),
            pre=Snapshot.capture({"status": "active", "plan": "pro"}),
            seconds=0.004,
        ),
        Step(
            tool="issue refund",
            version="v3",
            args=(
                Struct(
                    "dict",
                    (
                        ("ticket", Output(1)),
                        ("who", Param("customer email")),
                        ("n", Const(3)),
                    ),
                ),
            ),
            pre=Snapshot.capture(("active", True, "open\x00\u2028")),
            post=Snapshot.capture("issued"),
            seconds=0.01,
        ),
    )
    base: dict[str, object] = {
        "task_key": "task:refund",
        "task": "Refund ${amount} to {email}: {reason}",
        "tags": ("refund", "billing"),
        "steps": steps,
        "result": Struct("tuple", (("", Output(2, (("attr", "refund_id"),))),)),
        "agent_seconds": 4.5,
        "tokens": 3200,
        "created_at": NOW - 3600,
    }
    base.update(fields)
    return Trajectory(**base)  # type: ignore[arg-type]


def events() -> list[Event]:
    """A day of engine calls: misses first, then mostly hits."""
    found = [
        Event(
            at=NOW - 7200,
            task="t",
            task_key="task:refund",
            hit=False,
            reason="no trajectory is stored for this task",
            miss_reason="no_trajectory",
            agent_seconds=5.0,
            tokens_spent=3000,
            elapsed=5.0,
        ),
        Event(
            at=NOW - 7000,
            task="t",
            task_key="task:refund",
            hit=False,
            steps_replayed=2,
            reason="pre-check of tool 'issue refund' failed at step 2; replayed tool 'x' raised KeyError('a; b') at step 3",
            tool="issue refund",
            miss_reason="pre_check_failed",
            not_stored="step 0 (tool 'x') argument 'a': cannot encode <class 'object'>",
            not_stored_reason="unstorable_value",
            agent_seconds=2.0,
            tokens_spent=900,
        ),
    ]
    for i in range(40):
        found.append(
            Event(
                at=NOW - 6000 + i * 100,
                task="t",
                task_key="task:refund",
                hit=i % 5 != 0,
                steps_replayed=3,
                reason=None if i % 5 else "post-check of tool 'issue refund' failed at step 2",
                tool=None if i % 5 else "issue refund",
                miss_reason=None if i % 5 else "post_check_failed",
                trajectory_id="x",
                saved_seconds=4.0 if i % 5 else 0.0,
                tokens_saved=3200 if i % 5 else 0,
                tokens_spent=0 if i % 5 else 700,
                agent_seconds=0.0 if i % 5 else 1.0,
            )
        )
    return found


def make_cache(path: Path) -> dict[str, Trajectory]:
    """A SQLite cache with three trajectories (with use statistics) and a day of events."""
    stored = {
        "plain": trajectory("task-a", n=1, tags=("signup",), created_at=NOW - 7200),
        "refund": refund_trajectory(),
        "unused": trajectory("task-b", n=2, tags=("signup", "new"), created_at=NOW - 60),
    }
    store = SQLiteStore(path)
    try:
        store.add(stored["plain"], Usage(hits=2, last_used=NOW - 100, saved_seconds=3.0, priority=1.0))
        store.add(
            stored["refund"],
            Usage(hits=32, last_used=NOW - 10, saved_seconds=128.0, priority=2.0, attention=0.5),
        )
        store.add(stored["unused"])
        store.log_events(events())
    finally:
        store.close()
    return stored
