"""Secrets kept out of the store and the logs, and corrupt data skipped, found in review: each test
failed before its fix (the docstrings say what went wrong)."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from muscle_mem import Check, Engine, Secret
from muscle_mem.cli import main as cli_main
from muscle_mem.provenance import Const
from muscle_mem.stores import SQLiteStore
from muscle_mem.trajectory import Snapshot, Step, Trajectory, to_record


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="muscle_mem")
    return caplog


def _all_text(store: Any) -> str:
    """Everything a store holds that a report or export could show: records, task texts, events."""
    parts = [json.dumps(to_record(t)) for s in store.summaries() if (t := store.get(s.id)) is not None]
    parts += list(store.tasks().values())
    parts += [repr(e) for e in store.events()]
    return "\n".join(parts)


# ---------------------------------------------------------------- NOTHING LOST: corrupt rows


def _good(task_key: str = "task-a", n: int = 0) -> Trajectory:
    return Trajectory(
        task_key=task_key,
        task=f"do {task_key}",
        steps=(
            Step(
                tool="tool0",
                version="v1",
                args=(Const(n),),
                pre=Snapshot.capture({"state": n}),
            ),
        ),
        result=Const("done"),
    )


def _corrupt(record: dict[str, Any], how: str) -> dict[str, Any]:
    if how == "decimal":  # decimal.InvalidOperation is an ArithmeticError, not a ValueError
        record["steps"][0]["args"][0] = {"static": {"$t": "decimal", "v": "not-a-number"}}
    elif how == "timedelta":  # OverflowError
        record["steps"][0]["pre"]["data"] = {"$t": "timedelta", "v": [10**10, 0, 0]}
    elif how == "tokens":  # json accepts Infinity; int(inf) raises OverflowError
        record["tokens"] = float("inf")
    return record


@pytest.mark.parametrize("how", ["decimal", "timedelta", "tokens"])
def test_a_corrupt_row_is_skipped_not_fatal(tmp_path: Path, how: str, logs: pytest.LogCaptureFixture) -> None:
    """A corrupt row must be skipped with a warning naming it. `_records.loads` catches only
    ValueError/RecordError/CodecError/RecursionError, and `codec._dec` / `trajectory.from_record` only
    wrap KeyError/TypeError/ValueError(/AttributeError): a record whose decimal is not a number
    (decimal.InvalidOperation), whose timedelta overflows, or whose `tokens` is Infinity (OverflowError)
    makes `store.get` and `store.changes` raise instead, so the good trajectories of the same task can
    never be read again."""
    path = tmp_path / "cache.db"
    store = SQLiteStore(path)
    good, bad = _good(n=1), _good(n=2)
    store.add(good)
    store.add(bad)
    store.close()
    db = sqlite3.connect(path)
    text = db.execute("SELECT record FROM trajectories WHERE id = ?", (bad.id,)).fetchone()[0]
    corrupt = json.dumps(_corrupt(json.loads(text), how))
    db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (corrupt, bad.id))
    db.commit()
    db.close()

    store = SQLiteStore(path)
    try:
        assert store.get(bad.id) is None
        changes = store.changes("task-a", 0)
        assert [t.id for t in changes.added] == [good.id]
    finally:
        store.close()
    assert any(bad.id in r.getMessage() for r in logs.records if r.levelno == logging.WARNING)


def test_engine_keeps_replaying_next_to_a_corrupt_row(tmp_path: Path) -> None:
    """One corrupt row (a decimal that is not a number) makes every lookup of its task fail with
    'the store could not be read' in every worker, instead of being skipped: the good trajectory
    recorded for the same task is never replayed again (engine._begin -> index -> _records.loads)."""
    path = tmp_path / "cache.db"
    state = {"v": 1}

    def build() -> Engine:
        engine = Engine(f"sqlite:///{path}")

        @engine.tool(pre_check=Check.equal(lambda x: state["v"]))
        def act(x: str) -> str:
            return x.upper()

        engine.set_agent(lambda task: act("hello"))
        return engine

    engine = build()
    first = engine("say hello")
    state["v"] = 2
    second = engine("say hello")
    assert first.stored and second.stored
    engine.close()
    db = sqlite3.connect(path)
    text = db.execute("SELECT record FROM trajectories WHERE id = ?", (first.trajectory_id,)).fetchone()[0]
    record = json.loads(text)
    record["steps"][0]["args"][0] = {"static": {"$t": "decimal", "v": "oops"}}
    db.execute("UPDATE trajectories SET record = ? WHERE id = ?", (json.dumps(record), first.trajectory_id))
    db.commit()
    db.close()

    engine = build()
    try:
        result = engine("say hello")  # state v == 2: the intact trajectory matches
        assert result.hit, result.reason
    finally:
        engine.close()


def test_cli_import_of_a_corrupt_line_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`muscle-mem import` promises that the first bad line raises a UsageError naming it (exit 2).
    `records.parse` catches only ValueError/RecordError/RecursionError, so a line whose decimal is not
    a number escapes as decimal.InvalidOperation and the user gets
    `error: [<class 'decimal.ConversionSyntax'>]` (exit 1) with no line number."""
    record = to_record(_good())
    record["steps"][0]["args"][0] = {"static": {"$t": "decimal", "v": "oops"}}
    source = tmp_path / "export.jsonl"
    source.write_text(json.dumps(record) + "\n", encoding="utf-8")
    status = cli_main(["import", str(source), "--store", f"sqlite:///{tmp_path / 'c.db'}"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "line 1" in err, err


def test_cli_import_of_a_huge_usage_number_names_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`records._usage` calls math.isfinite on an int, which raises OverflowError for a huge one
    (`"hits": 1e400` written as an integer): the CLI prints `error: int too large to convert to float`
    with exit 1 instead of a UsageError naming the line."""
    line = json.dumps(to_record(_good()))[:-1] + ',"usage":{"hits":1' + "0" * 400 + "}}"
    source = tmp_path / "export.jsonl"
    source.write_text(line + "\n", encoding="utf-8")
    status = cli_main(["import", str(source), "--store", f"sqlite:///{tmp_path / 'c.db'}"])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "line 1" in err, err


# ---------------------------------------------------------------- SECRETS


def test_a_secret_in_a_replayed_tool_error_is_redacted_from_reason_events_and_logs(
    logs: pytest.LogCaptureFixture,
) -> None:
    """When a replayed tool raises, replay.Replayer.replay builds `Ending.reason` from
    `repr(exception)`; an exception naming its (secret) argument then lands in `Result.reason`, the
    journal event stored in the events table, and the `muscle_mem` log ('miss (%s)')."""
    engine = Engine()
    failures = {"left": 0}

    @engine.tool()
    def login(password: str) -> str:
        if failures["left"]:
            failures["left"] -= 1
            raise PermissionError(f"login refused for password {password!r}")
        return "session"

    current = {"pw": "first-horse-staple"}
    engine.set_agent(lambda task: login(current["pw"]))
    assert engine("log in", params={"password": Secret(current["pw"])}).stored
    current["pw"] = "second-battery-staple"
    failures["left"] = 1  # the replayed call fails once; the agent then succeeds
    result = engine("log in", params={"password": Secret(current["pw"])})
    engine.journal.flush()
    assert "second-battery-staple" not in (result.reason or "")
    assert "second-battery-staple" not in _all_text(engine.store)
    assert not any("second-battery-staple" in r.getMessage() for r in logs.records)


def test_a_secret_inside_a_container_argument_is_redacted_from_the_task_text(
    logs: pytest.LogCaptureFixture,
) -> None:
    """keys._readable templates a secret only in a str argument or one equal to it; for a dict/list
    agent argument it returns repr(value), so the task text shows the secret. The engine then logs it
    ('the trajectory of task {...'password': 's3cret-pass'} contains a secret') and the journal writes
    it to the events table."""
    engine = Engine()

    @engine.tool()
    def noop(x: str) -> str:
        return x

    engine.set_agent(lambda creds: noop("ok-value"))
    engine({"user": "bob", "password": "s3cret-pass"}, params={"password": Secret("s3cret-pass")})
    engine.journal.flush()
    assert "s3cret-pass" not in _all_text(engine.store)
    assert not any("s3cret-pass" in r.getMessage() for r in logs.records)


def test_a_numeric_secret_in_the_task_string_never_reaches_the_tasks_table() -> None:
    """keys.split_template (used for task text) only substitutes str params, and
    engine._leaks_secret matches a numeric secret only as a whole leaf (`leaf == str(n)`): with
    params={"pin": Secret(987654)}, the task text 'open the vault with pin 987654' is stored as is
    (tasks table, trajectory record, events)."""
    engine = Engine()

    @engine.tool()
    def noop(x: str) -> str:
        return x

    engine.set_agent(lambda task: noop("ok-value"))
    engine("open the vault with pin 987654", params={"pin": Secret(987654)})
    engine.journal.flush()
    assert "987654" not in _all_text(engine.store)


def test_a_secret_under_a_bookkeeping_named_key_is_refused() -> None:
    """engine._user_leaves skips every dict key named like a bookkeeping field ('id', 'key',
    'tokens', ...) anywhere in the record, including inside user data: a pre-check snapshot
    `{"id": token}` holding the secret is not seen by _leaks_secret and is stored in clear."""
    engine = Engine()
    token = "tok-abcdef123456"

    @engine.tool(pre_check=Check.equal(lambda token: {"id": token}))
    def use(token: str) -> str:
        return "done"

    engine.set_agent(lambda task: use(token))
    engine("use the token", params={"token": Secret(token)})
    assert token not in _all_text(engine.store)


@pytest.mark.parametrize(
    "secret",
    [b"supersecretkey99", 2**60 + 12345],
    ids=["bytes", "big-int"],
)
def test_a_secret_the_codec_encodes_is_still_recognised(secret: Any) -> None:
    """engine._leaks_secret compares secrets with the JSON leaves of the record, but the codec stores
    bytes as base64 and ints beyond 2**53 as hex: a pre-check snapshot equal to the secret itself
    is stored (recoverable by decoding the record)."""
    engine = Engine()

    @engine.tool(pre_check=Check.equal(lambda k: k))
    def sign(k: Any) -> str:
        return "signed"

    engine.set_agent(lambda task: sign(secret))
    result = engine("sign it", params={"k": Secret(secret)})
    assert not result.stored, "a snapshot equal to the secret was stored"
    for summary in engine.store.summaries():
        trajectory = engine.store.get(summary.id)
        assert trajectory is not None
        assert all(s.pre is None or s.pre.value != secret for s in trajectory.steps)


def test_a_secret_in_a_capture_error_is_redacted_from_the_logs(logs: pytest.LogCaptureFixture) -> None:
    """Run._capture records `repr(exception)` of a pre-check capture that raised as a problem, and
    engine._store logs the problems ('cannot store the trajectory of task ...: ... raised ...'): an
    exception naming the (secret) argument is logged at ERROR level."""
    engine = Engine()

    def capture(password: str) -> str:
        raise RuntimeError(f"cannot read state for {password}")

    @engine.tool(pre_check=Check.equal(capture))
    def login(password: str) -> str:
        return "ok"

    engine.set_agent(lambda task: login("p4ssw0rd-xyz"))
    engine("log in", params={"password": Secret("p4ssw0rd-xyz")})
    assert not any("p4ssw0rd-xyz" in r.getMessage() for r in logs.records)


@pytest.mark.parametrize(
    ("field", "value"), [("steps_replayed", "x"), ("tokens_spent", None), ("hit", "yes")]
)
def test_a_corrupt_event_row_is_skipped_not_fatal(
    tmp_path: Path, field: str, value: Any, capsys: pytest.CaptureFixture[str], logs: pytest.LogCaptureFixture
) -> None:
    """_records.load_events only checks that an event row is a JSON object with known keys; it never
    checks the field types, so one event row with a wrong-typed field is returned as an Event and makes
    `muscle-mem stats` / `report` fail as a whole ('error: unsupported operand type(s) for +: 'int' and
    'str'') instead of being skipped with a warning naming it."""
    path = tmp_path / "cache.db"
    engine = Engine(f"sqlite:///{path}")

    @engine.tool()
    def act(x: str) -> str:
        return x

    engine.set_agent(lambda task: act("abcd"))
    engine("hello")
    engine("hello")
    engine.close()
    db = sqlite3.connect(path)
    seq, data = db.execute("SELECT seq, data FROM events ORDER BY seq").fetchone()
    event = json.loads(data)
    event[field] = value
    db.execute("UPDATE events SET data = ? WHERE seq = ?", (json.dumps(event), seq))
    db.commit()
    db.close()

    store = SQLiteStore(path)
    try:
        assert len(store.events()) == 1, "the corrupt event was not skipped"
    finally:
        store.close()
    assert any(r.levelno == logging.WARNING and "event" in r.getMessage() for r in logs.records)
    url = f"sqlite:///{path}"
    assert cli_main(["stats", "--store", url]) == 0, capsys.readouterr().err
    assert cli_main(["report", "--out", str(tmp_path / "r.html"), "--store", url]) == 0, (
        capsys.readouterr().err
    )
