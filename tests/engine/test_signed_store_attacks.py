"""Four ways around a signed store's promise, each closed: unsigned bytes never decide what replays."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from test_signed_records import KEY, sql, url_of

from conftest import StoreSpec
from muscle_mem import Check, Engine


@dataclass
class Desk:
    """An engine on one durable store and the world its tools act on; ``done`` lists the calls made."""

    engine: Engine
    world: dict[str, Any]
    done: list[str] = field(default_factory=list)


@pytest.fixture
def desks(durable: StoreSpec) -> Iterator[Callable[..., Desk]]:
    """Makes signed workers of one bank desk on one durable store (closed at the end).

    Tools: ``balance``, ``close`` (an account), ``charge`` (an amount), ``lookup`` (a customer),
    ``refund`` (pre-checked on the world's ledger) and ``deny``. The agent acts on the task's last
    word as it is told by ``world``.
    """
    made: list[Engine] = []

    def make(world: dict[str, Any], **options: Any) -> Desk:
        engine = Engine(url_of(durable), signing_key=KEY, **options)
        desk = Desk(engine, world)
        made.append(engine)

        @engine.tool()
        def balance(user: str) -> str:
            desk.done.append(f"balance {user}")
            return "4,471"

        @engine.tool()
        def close(user: str) -> str:
            desk.done.append(f"close {user}")
            return "closed"

        @engine.tool()
        def charge(amount: int) -> str:
            desk.done.append(f"charge {amount}")
            return "charged"

        @engine.tool()
        def lookup(customer: str) -> str:
            desk.done.append(f"lookup {customer}")
            return "a customer"

        @engine.tool(pre_check=Check.equal(lambda customer: desk.world["ledger"]))
        def refund(customer: str) -> str:
            desk.done.append(f"refund {customer}")
            return "refunded"

        @engine.tool()
        def deny(customer: str) -> str:
            desk.done.append(f"deny {customer}")
            return "denied"

        def agent(task: str) -> str:
            user = task.rpartition(" ")[2]
            if task.startswith("close"):
                return close(user)
            if task.startswith("look up"):
                return balance(user)
            if task.startswith("charge"):
                return charge(desk.world["fee"])
            lookup(user)
            return refund(user) if desk.world["refunds"] else deny(user)

        engine.set_agent(agent)
        return desk

    yield make
    for engine in made:
        engine.close()


def _refusals(logs: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage() for r in logs.records if r.levelno == logging.WARNING and "refusing" in r.getMessage()
    ]


def test_a_rewritten_task_text_never_routes_a_semantic_lookup(
    desks: Callable[..., Desk], durable: StoreSpec, logs: pytest.LogCaptureFixture
) -> None:
    """A task's stored text is checked against its signed records before a semantic match is used.

    The attacker gives the task "close the account of {user}" the text of a balance lookup; asked
    for a balance, the worker does not close the account: the agent looks the balance up, and the
    stored text is refused (counted in ``rejected_records``, named once).
    """
    writer = desks({}, match="semantic")
    assert not writer.engine("close the account of u-1001", params={"user": "u-1001"}).hit
    sql(durable, "UPDATE {s}tasks SET task = 'look up the balance of {user}'")
    victim = desks({}, match="semantic")
    for _ in range(2):
        victim.engine("look up the balance of u-2002", params={"user": "u-2002"})
    assert victim.done == ["balance u-2002"] * 2  # the agent, then its own recording replayed
    assert victim.engine.metrics.rejected_records == 1
    assert len([m for m in _refusals(logs) if "stored text" in m]) == 1


def test_a_row_moved_forward_in_time_never_outlives_the_ttl(
    desks: Callable[..., Desk], durable: StoreSpec
) -> None:
    """The TTL holds by the signed record's own time, whatever the row's ``created_at`` says.

    A worker that had the trajectory in memory, and a new one, both let the agent charge the new fee.
    """
    world = {"fee": 1500}
    early = desks(world, ttl=1.0)
    assert not early.engine("charge the monthly fee").hit
    assert early.engine("charge the monthly fee").hit
    sql(durable, "UPDATE {s}trajectories SET created_at = created_at + 1000000")
    time.sleep(1.5)
    world["fee"] = 1525
    assert not early.engine("charge the monthly fee").hit
    later = desks(world, ttl=1.0)
    fresh = sql(durable, "SELECT id FROM {s}trajectories WHERE created_at < 2000000000")
    early.engine.store.remove([str(tid) for (tid,) in fresh])  # the agent's new run: not for the newcomer
    assert not later.engine("charge the monthly fee").hit
    assert early.done == ["charge 1500", "charge 1500", "charge 1525"]
    assert later.done == ["charge 1525"]


def test_use_statistics_never_choose_which_branch_replays(
    desks: Callable[..., Desk], durable: StoreSpec
) -> None:
    """Two recorded branches that both pass: a raised ``usage.last_used`` does not pick the older one.

    Recorded: a refund (ledger 1), then a denial (ledger 2, where the refund's check fails). With the
    ledger back at 1 both branches pass; the store without the edit replays the denial, the agent's
    current answer, and so does the store with the refund's last use moved far ahead.
    """
    world = {"ledger": 1, "refunds": True}
    recorder = desks(world)
    assert not recorder.engine("handle the refund of c-7", params={"customer": "c-7"}).hit
    world.update(ledger=2, refunds=False)
    assert not recorder.engine("handle the refund of c-7", params={"customer": "c-7"}).hit
    (refund_id,) = [
        tid for (tid,) in sql(durable, "SELECT id FROM {s}trajectories ORDER BY created_at LIMIT 1")
    ]
    world["ledger"] = 1
    unedited = desks(world)
    assert unedited.engine("handle the refund of c-7", params={"customer": "c-7"}).hit
    sql(durable, "UPDATE {s}usage SET last_used = 4000000000, hits = 1000 WHERE id = ?", (refund_id,))
    edited = desks(world)
    assert edited.engine("handle the refund of c-7", params={"customer": "c-7"}).hit
    assert edited.done == unedited.done
    assert unedited.done[-1] == "deny c-7" and "refund c-7" not in edited.done


_ROWS = {"trajectories": "id", "usage": "id", "steps": "trajectory_id"}
"""The tables that hold one trajectory's rows, by the column that names it."""


def _copy_rows(spec: StoreSpec, tid: str) -> dict[str, list[tuple[object, ...]]]:
    """Every row of a trajectory and of its task, as an attacker keeps an earlier copy of them."""
    copied = {t: sql(spec, f"SELECT * FROM {{s}}{t} WHERE {c} = ?", (tid,)) for t, c in _ROWS.items()}
    copied["tasks"] = sql(
        spec,
        "SELECT * FROM {s}tasks WHERE task_key = (SELECT task_key FROM {s}trajectories WHERE id = ?)",
        (tid,),
    )
    return copied


def _put_back(spec: StoreSpec, copied: dict[str, list[tuple[object, ...]]]) -> None:
    """Insert the copied rows again by SQL, stamped as a new change so that every reader reads them."""
    if spec[0] == "sqlite":
        sql(spec, "UPDATE {s}state SET revision = revision + 1")
        [(stamp,)] = sql(spec, "SELECT revision FROM {s}state")
    else:
        [(stamp,)] = sql(spec, "SELECT nextval('{s}revs')")
    for table, rows in copied.items():
        for row in rows:
            if table == "tasks":
                sql(spec, "DELETE FROM {s}tasks WHERE task_key = ?", (row[0],))
                row = (*row[:-1], stamp)
            elif table == "trajectories":
                row = (stamp, *row[1:]) if spec[0] == "sqlite" else (stamp, *row[1:-1], stamp)
            elif table == "usage":
                row = (row[0], stamp, *row[2:])
            sql(spec, f"INSERT INTO {{s}}{table} VALUES ({', '.join('?' * len(row))})", row)


@pytest.mark.parametrize("marks_too", [False, True], ids=["row-put-back", "row-and-removal-mark"])
def test_a_removed_trajectory_put_back_is_refused(
    desks: Callable[..., Desk], durable: StoreSpec, logs: pytest.LogCaptureFixture, marks_too: bool
) -> None:
    """A trajectory removed and put back from an earlier copy of its rows never replays.

    A worker that starts afterwards refuses it by the store's removal mark; one that saw the
    removal refuses it even when the attacker deletes that mark too. Each refusal is counted in
    ``rejected_records`` and named once.
    """
    world = {"fee": 1500}
    writer = desks(world)
    assert not writer.engine("charge the invoice").hit
    witness = desks(world)
    assert witness.engine("charge the invoice").hit
    [(tid,)] = sql(durable, "SELECT id FROM {s}trajectories")
    copied = _copy_rows(durable, str(tid))
    writer.engine.store.remove([str(tid)])
    assert not witness.engine("charge the invoice").hit  # saw the removal; the agent's run is stored
    writer.engine.store.remove([str(t) for (t,) in sql(durable, "SELECT id FROM {s}trajectories")])
    if marks_too:
        sql(durable, "DELETE FROM {s}removed")
    _put_back(durable, copied)
    assert not witness.engine("charge the invoice").hit
    assert witness.engine.metrics.rejected_records == 1
    if not marks_too:
        others = sql(durable, "SELECT id FROM {s}trajectories WHERE id <> ?", (tid,))
        writer.engine.store.remove([str(t) for (t,) in others])  # the witness's new run
        newcomer = desks(world)
        assert not newcomer.engine("charge the invoice").hit
        assert newcomer.engine.metrics.rejected_records == 1
    assert len([m for m in _refusals(logs) if str(tid) in m]) == 1 + (not marks_too)


@pytest.mark.parametrize("how", ["clear", "eviction", "ttl"])
def test_a_trajectory_cleared_evicted_or_expired_and_put_back_is_refused(
    desks: Callable[..., Desk], durable: StoreSpec, how: str
) -> None:
    """``clear``, eviction and the TTL leave a removal mark too: the rows put back are refused."""
    world = {"fee": 1500}
    writer = (
        desks(world, capacity=1)
        if how == "eviction"
        else desks(world, ttl=0.5)
        if how == "ttl"
        else desks(world)
    )
    assert not writer.engine("charge the invoice").hit
    [(tid,)] = sql(durable, "SELECT id FROM {s}trajectories")
    copied = _copy_rows(durable, str(tid))
    if how == "clear":
        writer.engine.store.clear()
    elif how == "eviction":
        assert not writer.engine("charge the monthly fee").hit  # evicts the invoice's
    else:
        time.sleep(0.6)
        writer.engine.store.expire(time.time() - 0.5)
    assert sql(durable, "SELECT id FROM {s}trajectories WHERE id = ?", (tid,)) == []
    _put_back(durable, copied)
    newcomer = desks(world)
    assert not newcomer.engine("charge the invoice").hit
    assert newcomer.engine.metrics.rejected_records == 1
