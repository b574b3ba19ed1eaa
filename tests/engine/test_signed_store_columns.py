"""No column of a signed store, rewritten by SQL, makes a worker do what the agent alone would not.

For each table and column of the store, the column's values are rewritten (random values, rotated
between rows, one row's copied to all, an earlier copy's) on a signed store with recorded tasks,
then every task runs again on a fresh worker and is judged against the agent alone on a copy of the
same world: the same effects on the world and the same answer, or it is unsafe. Every recording is
safe alone in that world (its checks see what the agent decides on), since an attacker may always
delete rows: what is judged is that no rewrite makes a worker replay something no recording, or a
removed one, would. A column may change whether a task replays or which safe recording does (a miss
costs the agent's time), never what is done. Bounded to ``MUSCLE_MEM_COLUMN_SECONDS`` seconds per store (default 12): every column once,
then random rewrites while time is left.
"""

from __future__ import annotations

import copy
import os
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_signed_records import KEY, url_of

from column_rewrites import KINDS, Column, Rows, Snapshot, columns, put_back, rewrite, rows
from conftest import StoreSpec
from muscle_mem import Check, Engine

SECONDS = float(os.environ.get("MUSCLE_MEM_COLUMN_SECONDS", "12"))
"""How long each store's rewrites may run (set it higher to explore longer)."""
EFFECTS = ("close", "charge", "refund", "deny", "send")
"""The tools that act on the world (the others only read it)."""
JUDGED: tuple[tuple[str, dict[str, str]], ...] = (
    ("close the account of u-2002", {"user": "u-2002"}),
    ("look up the balance of u-2002", {"user": "u-2002"}),
    ("please look up the balance of u-2002", {"user": "u-2002"}),
    ("charge the fee of u-2002", {"user": "u-2002"}),
    ("handle the refund of c-7", {}),
    ("send the newsletter to u-2002", {"user": "u-2002"}),
)
"""The tasks run again after each rewrite (a paraphrase among them, matched semantically)."""


def make_worker(url: str, world: dict[str, Any]) -> tuple[Engine, Callable[[str], str]]:
    """A signed engine on the store whose tools act on ``world``, and its agent (callable alone too)."""
    engine = Engine(url, signing_key=KEY, match="semantic", store_retry=60.0)
    world.setdefault("done", [])

    def done(effect: str) -> None:
        world["done"].append(effect)

    @engine.tool()
    def balance(user: str) -> str:
        return f"4,471 on {user}"

    @engine.tool()
    def lookup(customer: str) -> str:
        return "a customer"

    @engine.tool()
    def close(user: str) -> str:
        done(f"close {user}")
        return "closed"

    @engine.tool(pre_check=Check.equal(lambda user, amount: world["fee"]))
    def charge(user: str, amount: int) -> str:
        done(f"charge {user} {amount}")
        return "charged"

    @engine.tool(pre_check=Check.equal(lambda customer: (world["ledger"], world["refunds"])))
    def refund(customer: str) -> str:
        done(f"refund {customer}")
        return "refunded"

    @engine.tool()
    def deny(customer: str) -> str:
        done(f"deny {customer}")
        return "denied"

    @engine.tool()
    def send(user: str, edition: str) -> str:
        done(f"send {edition} to {user}")
        return "sent"

    def agent(task: str) -> str:
        who = task.rpartition(" ")[2]
        if task.startswith("close"):
            return close(who)
        if "balance" in task:
            return balance(who)
        if task.startswith("charge"):
            return charge(who, world["fee"])
        if task.startswith("send"):
            return send(who, world["newsletter"])
        lookup(who)
        return refund(who) if world["refunds"] else deny(who)

    engine.set_agent(agent)
    return engine, agent


def record(spec: StoreSpec) -> Rows:
    """Record the tasks on the store in two rounds; returns the rows after the first (an earlier copy).

    First: an account closed, a balance looked up, a fee charged (1,500), a refund granted (ledger 1,
    refunds allowed), a newsletter sent (edition 1). Then: those replayed, a refund denied (ledger 2,
    refunds stopped: the refund's check fails), the newsletter's trajectory removed.
    """
    world = {"fee": 1500, "ledger": 1, "refunds": True, "newsletter": "edition 1"}
    engine, _ = make_worker(url_of(spec), world)
    for task in ("close the account of u-1001", "look up the balance of u-1001", "charge the fee of u-1001"):
        assert engine(task, params={"user": "u-1001"}).stored
    assert engine("handle the refund of c-7").stored
    sent = engine("send the newsletter to u-1001", params={"user": "u-1001"})
    engine.close()
    earlier = rows(spec)
    engine, _ = make_worker(url_of(spec), world)
    for task in ("close the account of u-1001", "look up the balance of u-1001", "charge the fee of u-1001"):
        assert engine(task, params={"user": "u-1001"}).hit
    world.update(ledger=2, refunds=False)
    assert engine("handle the refund of c-7").stored
    assert sent.trajectory_id is not None
    engine.store.remove([sent.trajectory_id])
    engine.close()
    return earlier


def judge(spec: StoreSpec) -> tuple[list[str], int]:
    """Every judged task on a fresh worker and by the agent alone: the unsafe ones, and the hits."""
    base = {"fee": 1525, "ledger": 1, "refunds": False, "newsletter": "edition 2"}
    mine: dict[str, Any] = {}
    alone: dict[str, Any] = {}
    engine, _ = make_worker(url_of(spec), mine)
    bystander, agent = make_worker("memory://", alone)
    unsafe, hits = [], 0
    try:
        for task, params in JUDGED:
            for world in (mine, alone):
                world.clear()
                world.update(copy.deepcopy(base), done=[])
            result = engine(task, params=params)
            expected = agent(task)
            hits += result.hit
            if (result.output, mine["done"]) != (expected, alone["done"]):
                unsafe.append(f"{task!r}: {mine['done']} -> {result.output!r}, alone {alone['done']}")
    finally:
        engine.close()
        bystander.close()
    return unsafe, hits


def _trials(found: list[Column], rng: random.Random) -> list[tuple[Column | None, str]]:
    """Every column once (kinds in turn), the rows put back once, then random rewrites."""
    first: list[tuple[Column | None, str]] = [(c, KINDS[i % len(KINDS)]) for i, c in enumerate(found)]
    more: list[tuple[Column | None, str]] = [(rng.choice(found), rng.choice(KINDS)) for _ in range(10_000)]
    return [(None, "put back"), *first, *more]


def test_no_rewritten_column_makes_a_worker_do_what_the_agent_would_not(
    durable: StoreSpec, tmp_path: Path
) -> None:
    """Every column of every table, rewritten: 0 unsafe replays against the agent alone.

    Unedited, the store replays: the test is not vacuous.
    """
    earlier = record(durable)
    snapshot = Snapshot(durable, tmp_path)  # before any judged run is recorded
    unsafe, hits = judge(durable)
    assert unsafe == [] and hits >= 3, (unsafe, hits)
    rng = random.Random(26)
    found = columns(durable)
    deadline = time.monotonic() + SECONDS
    for tried, (column, kind) in enumerate(_trials(found, rng)):
        if tried > len(found) and time.monotonic() > deadline:
            break
        snapshot.restore()
        written = (
            put_back(durable, earlier) if column is None else rewrite(durable, column, kind, earlier, rng)
        )
        if written:
            where = "rows put back" if column is None else f"{column.table}.{column.name} ({kind})"
            unsafe += [f"{where}: {u}" for u in judge(durable)[0]]
    assert unsafe == [], unsafe
