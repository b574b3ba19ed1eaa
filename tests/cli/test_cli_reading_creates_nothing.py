"""Reading commands never create a store, and show every value a store holds, however large."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from cli_support import run_cli
from conftest import POSTGRES_URL, drop_schema
from hostile_rows import execute, fetch
from muscle_mem import Engine

READING = (["ls"], ["show", "abcd"], ["stats"], ["report"], ["export"], ["verify", "--key", "k" * 32])


@pytest.mark.postgres
def test_reading_a_missing_postgres_schema_exits_2_and_creates_nothing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``ls``, ``show``, ``stats``, ``report``, ``export``, ``verify`` on a schema that does not exist.

    Each exits with status 2 and one line naming the schema; the schema is still missing after.
    """
    schema = f"mm_test_{uuid.uuid4().hex[:12]}"
    try:
        for command in READING:
            ran = run_cli(capsys, *command, "--store", f"{POSTGRES_URL}?schema={schema}")
            assert ran.status == 2, (command, ran.err)
            assert ran.err.count("\n") == 1 and f"(schema {schema})" in ran.err, ran.err
        found = fetch(
            ("postgres", POSTGRES_URL, schema), "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
        )
        assert found == []
    finally:
        drop_schema(schema)


def test_a_huge_int_is_shown_and_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``show`` and ``export --python`` of a trajectory holding an int of 5,000 digits succeed.

    ``show`` says what the value is instead of writing it out; ``export --python`` writes it in
    hexadecimal, the same int.
    """
    path = tmp_path / "cache.db"
    engine = Engine(f"sqlite:///{path}")

    @engine.tool()
    def put(n: int) -> str:
        return "ok"

    engine.set_agent(lambda task: put(2**70))
    assert engine("store it").stored
    engine.close()
    huge = 10**5000
    spec = ("sqlite", str(path), "")
    [(tid, record)] = fetch(spec, "SELECT id, record FROM {s}.trajectories")
    data = json.loads(str(record))
    data["steps"][0]["args"][0] = {"static": {"$t": "int", "v": format(huge, "x")}}
    execute(spec, "UPDATE {s}.trajectories SET record = %s", (json.dumps(data),))
    store = f"sqlite:///{path}"
    shown = run_cli(capsys, "show", str(tid), "--store", store)
    assert shown.status == 0, shown.err
    assert "<a int too large to show>" in shown.out
    script = tmp_path / "replay.py"
    exported = run_cli(capsys, "export", "--python", str(tid), str(script), "--store", store)
    assert exported.status == 0, exported.err
    assert format(huge, "#x") in script.read_text()


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE {s}.meta SET value = '3' WHERE key = 'schema_version'",
        "DROP TABLE {s}.usage",
        "ALTER TABLE {s}.steps RENAME COLUMN signature TO sig",
    ],
    ids=["lowered-version", "dropped-table", "renamed-column"],
)
def test_verify_reports_a_damaged_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    """``verify`` on a store whose schema cannot be used: exit status 1 and what is damaged."""
    path = tmp_path / "cache.db"
    engine = Engine(f"sqlite:///{path}")

    @engine.tool()
    def put(n: int) -> str:
        return "ok"

    engine.set_agent(lambda task: put(1))
    assert engine("store it").stored
    engine.close()
    spec = ("sqlite", str(path), "")
    execute(spec, damage)
    ran = run_cli(capsys, "verify", "--key", "k" * 32, "--store", f"sqlite:///{path}")
    assert ran.status == 1
    assert f"sqlite:///{path} is damaged: " in ran.out


def test_verify_lists_a_trajectory_put_back_after_its_removal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A removed trajectory whose row is back: ``verify`` names it and exits with status 1."""
    path, key = tmp_path / "cache.db", "k" * 32
    engine = Engine(f"sqlite:///{path}", signing_key=key)

    @engine.tool()
    def put(n: int) -> str:
        return "ok"

    engine.set_agent(lambda task: put(1))
    tid = engine("store it").trajectory_id
    engine.close()
    spec = ("sqlite", str(path), "")
    execute(spec, "INSERT INTO {s}.removed VALUES (%s, 0)", (tid,))
    ran = run_cli(capsys, "verify", "--key", key, "--store", f"sqlite:///{path}")
    assert ran.status == 1
    assert f"{tid}  it was removed, then put back" in ran.out
