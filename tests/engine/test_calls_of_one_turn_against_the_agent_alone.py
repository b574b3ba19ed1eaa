"""Calls of one model turn replayed together, attacked through the core engine.

Each test runs the cached engine and the agent alone on deep copies of the same world and compares
the final world and the answer (or the exception).
"""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Check, Engine, current_run
from muscle_mem.model.trajectory import RecordError, from_record
from muscle_mem.stores import open_store
from muscle_mem.stores.signing import Signer

Agent = Callable[[str], Any]


def _outcome(fn: Callable[[], Any]) -> Any:
    try:
        return ("ok", fn())
    except Exception as exc:  # the exception is part of how the run ended
        return ("raised", type(exc).__name__, str(exc))


def desk(
    world: dict[str, Any], build: Callable[[Engine, dict[str, Any]], Agent], engine: Engine | None = None
) -> Engine:
    engine = engine or Engine()
    engine.set_agent(build(engine, world))
    return engine


def alone(build: Callable[[Engine, dict[str, Any]], Agent], world: dict[str, Any], task: str) -> Any:
    """The agent alone: a fresh engine whose store is never read (its agent runs every time)."""
    engine = Engine()
    engine.set_agent(build(engine, world))
    return _outcome(lambda: engine(task).output)


def compare(
    build: Callable[[Engine, dict[str, Any]], Agent],
    records: list[dict[str, Any]],
    probe: dict[str, Any],
    task: str = "go",
) -> tuple[Any, Any, Any]:
    """Record a run per world of ``records``, then run ``probe`` cached and alone; the two outcomes and the result."""
    world: dict[str, Any] = {}
    engine = desk(world, build)
    for start in records:
        world.clear()
        world.update(copy.deepcopy(start))
        engine(task)
    alone_world = copy.deepcopy(probe)
    expected = alone(build, alone_world, task)
    world.clear()
    world.update(copy.deepcopy(probe))
    result_box: list[Any] = []

    def cached() -> Any:
        result = engine(task)
        result_box.append(result)
        return result.output

    got = _outcome(cached)
    return (got, world), (expected, alone_world), (result_box[0] if result_box else None)


def _turn() -> None:
    run = current_run()
    assert run is not None
    run.begin_turn()


def _done() -> list[tuple[str, tuple[Any, ...], Any]]:
    run = current_run()
    assert run is not None
    return [(s.tool, tuple(s.args), s.output) for s in run.steps]


# --- 1. one family, two groupings: one run makes two calls in one turn, another in two turns


def grouping_agent(engine: Engine, world: dict[str, Any]) -> Agent:
    """Turn 1: mode(). Eager: a() and b() in one turn. Lazy: a(), then b() only if a() said ok."""

    @engine.tool()
    def mode() -> str:
        return str(world["mode"])

    @engine.tool()
    def a() -> str:
        return str(world["a"])

    @engine.tool()
    def b(x: str) -> str:
        world.setdefault("b", []).append(x)
        return "b done"

    def agent(task: str) -> str:
        done = _done()
        names = [d[0] for d in done]
        if "mode" not in names:
            _turn()
            mode()
            done = _done()
        m = done[0][2]
        if m == "eager":
            if "a" not in names:
                _turn()
                a()
                b("k")
            return f"eager {_done()[1][2]}"
        if "a" not in [d[0] for d in _done()]:
            _turn()
            a()
        got = next(d for d in _done() if d[0] == "a")[2]
        if got == "ok" and "b" not in [d[0] for d in _done()]:
            _turn()
            b("k")
        return f"lazy {got}"

    return agent


@pytest.mark.parametrize(
    "probe",
    [
        {"mode": "lazy", "a": "bad"},
        {"mode": "eager", "a": "bad"},
        {"mode": "lazy", "a": "ok"},
    ],
    ids=["lazy-bad", "eager-bad", "lazy-ok"],
)
def test_family_of_mixed_groupings(probe: dict[str, Any]) -> None:
    records = [
        {"mode": "eager", "a": "ok"},
        {"mode": "eager", "a": "bad"},
        {"mode": "lazy", "a": "ok"},
        {"mode": "lazy", "a": "ok2"},
    ]
    got, expected, _ = compare(grouping_agent, records, probe)
    assert got == expected


# --- 2. coincidence in a turn vs a real copy in a later turn


def label_agent(engine: Engine, world: dict[str, Any]) -> Agent:
    """Fast: code_of() and label('A7') in one turn (a guess). Slow: code_of(), then label(code)."""

    @engine.tool()
    def mode() -> str:
        return str(world["mode"])

    @engine.tool()
    def code_of(item: str) -> str:
        return str(world["code"])

    @engine.tool()
    def label(text: str) -> str:
        world.setdefault("labels", []).append(text)
        return f"label {text}"

    def agent(task: str) -> str:
        if not _done():
            _turn()
            mode()
        m = _done()[0][2]
        if len(_done()) == 1:
            _turn()
            code_of("item")
            if m == "fast":
                label("A7")
        if m == "slow" and len(_done()) == 2:
            _turn()
            label(_done()[1][2])
        return f"labelled {world.get('labels', [])[-1:]}"

    return agent


@pytest.mark.parametrize(
    "probe",
    [
        {"mode": "fast", "code": "B2"},
        {"mode": "slow", "code": "B2"},
        {"mode": "slow", "code": "C3"},
    ],
    ids=["fast-B2", "slow-B2", "slow-C3"],
)
def test_coincidence_in_a_turn_vs_copy_in_a_later_turn(probe: dict[str, Any]) -> None:
    records = [
        {"mode": "fast", "code": "A7"},
        {"mode": "slow", "code": "A7"},
        {"mode": "slow", "code": "Z9"},
        {"mode": "fast", "code": "Q1"},
    ]
    got, expected, _ = compare(label_agent, records, probe)
    assert got == expected


# --- 3. a turn of three calls whose first output changes; a replayed call that raises mid-turn


def three_agent(engine: Engine, world: dict[str, Any]) -> Agent:
    @engine.tool()
    def look(k: str) -> str:
        if world.get("boom") == k:
            raise RuntimeError(f"look {k} failed")
        return str(world["vals"][k])

    @engine.tool()
    def act(k: str) -> str:
        world.setdefault("acted", []).append(k)
        return "acted"

    def agent(task: str) -> str:
        if not _done():
            _turn()
            look("x")
            look("y")
            look("z")
        vals = {d[1][0]: d[2] for d in _done() if d[0] == "look"}
        targets = [k for k in ("x", "y", "z") if vals.get(k) == "low"]
        if targets and not any(d[0] == "act" for d in _done()):
            _turn()
            for k in targets:
                act(k)
        return f"acted on {targets}"

    return agent


@pytest.mark.parametrize(
    "probe",
    [
        {"vals": {"x": "low", "y": "hi", "z": "hi"}},
        {"vals": {"x": "hi", "y": "hi", "z": "low"}},
        pytest.param(
            {"vals": {"x": "hi", "y": "low", "z": "hi"}, "boom": "y"},
            marks=pytest.mark.xfail(
                strict=True, reason="a replayed call raising mid-turn hands over mid-turn"
            ),
        ),
        pytest.param(
            {"vals": {"x": "low", "y": "hi", "z": "hi"}, "boom": "z"},
            marks=pytest.mark.xfail(
                strict=True, reason="a replayed call raising mid-turn hands over mid-turn"
            ),
        ),
    ],
    ids=["first-changes", "last-changes", "raises-mid-turn", "raises-last-of-turn"],
)
def test_turn_of_three_first_output_changes_or_raises(probe: dict[str, Any]) -> None:
    records = [{"vals": {"x": "hi", "y": "hi", "z": "hi"}}, {"vals": {"x": "hi", "y": "hi", "z": "hi"}}]
    got, expected, _ = compare(three_agent, records, probe)
    assert got == expected


# --- 4. a write whose pre-check fails mid-turn


def precheck_agent(engine: Engine, world: dict[str, Any]) -> Agent:
    """One turn: read the balance and pay 10 at once (the model decided both); then answer on the balance."""

    @engine.tool()
    def balance() -> int:
        return int(world["balance"])

    def version() -> int:
        return int(world["version"])

    @engine.tool(pre_check=Check.equal(lambda amount: version()))
    def pay(amount: int) -> str:
        world["paid"].append(amount)
        world["version"] += 1
        return "paid"

    def agent(task: str) -> str:
        done = _done()
        if not done:
            _turn()
            balance()
            pay(10)
        done = _done()
        if not any(d[0] == "pay" for d in done):
            # a model reading a turn with only the balance in it: it pays only if the balance is high
            bal = done[0][2]
            if bal >= 50:
                _turn()
                pay(10)
        return f"balance {_done()[0][2]} paid {world['paid']}"

    return agent


@pytest.mark.xfail(strict=True, reason="a pre-check failing mid-turn hands over mid-turn")
def test_write_whose_pre_check_fails_mid_turn() -> None:
    records = [{"balance": 100, "version": 1, "paid": []}, {"balance": 90, "version": 1, "paid": []}]
    got, expected, result = compare(precheck_agent, records, {"balance": 20, "version": 7, "paid": []})
    assert got == expected, result


# --- 5. a hostile record: every step claims to be decided at 0


def hostile_agent(engine: Engine, world: dict[str, Any]) -> Agent:
    @engine.tool()
    def stock(sku: str) -> int:
        return int(world["stock"][sku])

    @engine.tool()
    def order(sku: str) -> str:
        world["ordered"].append(sku)
        return "ordered"

    def agent(task: str) -> str:
        if not _done():
            _turn()
            stock("a")
        if _done()[0][2] == 0 and len(_done()) == 1:
            _turn()
            order("a")
        return f"ordered {world['ordered']}"

    return agent


def _tamper(path: Path, signed: bool) -> int:
    """Rewrite every stored step to claim it was decided at 0; how many records were changed."""
    db = sqlite3.connect(path)
    rows = db.execute("SELECT id, record FROM trajectories").fetchall()
    for tid, text in rows:
        record = json.loads(text)
        for step in record["steps"]:
            step["decided_at"] = 0
        db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (json.dumps(record), tid))
    db.commit()
    db.close()
    return len(rows)


@pytest.mark.parametrize(
    "signed",
    [
        pytest.param(
            False,
            marks=pytest.mark.xfail(
                strict=True, reason="an unsigned store is trusted: its writer chooses any step"
            ),
        ),
        True,
    ],
    ids=["unsigned", "signed"],
)
def test_hostile_record_claims_every_step_decided_at_zero(tmp_path: Path, signed: bool) -> None:
    path = tmp_path / "s.db"
    store = open_store(f"sqlite:///{path}")
    if signed:
        store.signer = Signer("store-signing-key-0123456789abcdef")  # type: ignore[attr-defined]
    world: dict[str, Any] = {}
    engine = desk(world, hostile_agent, Engine(store=store))
    for start in ({"stock": {"a": 0}, "ordered": []}, {"stock": {"a": 0}, "ordered": []}):
        world.clear()
        world.update(copy.deepcopy(start))
        assert not engine("restock a").hit or True
    assert _tamper(path, signed) >= 1
    store2 = open_store(f"sqlite:///{path}")
    if signed:
        store2.signer = Signer("store-signing-key-0123456789abcdef")  # type: ignore[attr-defined]
    world2: dict[str, Any] = {"stock": {"a": 5}, "ordered": []}
    engine2 = desk(world2, hostile_agent, Engine(store=store2))
    alone_world = copy.deepcopy(world2)
    expected = alone(hostile_agent, alone_world, "restock a")
    got = _outcome(lambda: engine2("restock a").output)
    assert (got, world2) == (expected, alone_world)


def test_record_whose_turns_are_not_contiguous_is_refused() -> None:
    """Step 2 claims to be of step 0's turn, though step 1 began another: no front makes that."""
    engine = Engine()
    world: dict[str, Any] = {"vals": {"x": "hi", "y": "hi", "z": "hi"}}
    engine.set_agent(three_agent(engine, world))
    stored = engine("go")
    t = engine.store.get(stored.trajectory_id)
    assert t is not None
    from muscle_mem.model.trajectory import to_record

    record = to_record(t)
    record["steps"][1]["decided_at"] = 1
    record["steps"][2]["decided_at"] = 0
    with pytest.raises(RecordError):
        from_record(record)
